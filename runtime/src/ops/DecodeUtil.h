//===- DecodeUtil.h - small checks shared by the kernel decoders -*- C++ -*-===//
#ifndef MPTRT_SRC_OPS_DECODEUTIL_H
#define MPTRT_SRC_OPS_DECODEUTIL_H

#include "ops/KernelView.h"
#include "ops/OpParams.h"

#include <string>

namespace mptrt {
namespace rt {

/// This rank's first element of a stream drawn element by element across
/// the data-parallel world: rank x numel (a dropout's rows of the global
/// batch, a sharded update's shard; ops/Training.cpp). 0 in a world of one.
Status rankElementOffset(const KernelView &v, int64_t numel, int64_t *offset);

inline bool isFloat(const TensorDesc &d) { return plan::isFloatDType(d.dtype); }
inline bool isInt(const TensorDesc &d) { return d.dtype == DType::I32 || d.dtype == DType::I64; }

inline std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// "operand 0 (2x3xbf16)".
inline std::string operandLabel(const KernelView &v, size_t i) {
  return "operand " + std::to_string(i) + " (" + describe(v.operand(i)) + ")";
}
inline std::string resultLabel(const KernelView &v, size_t i) {
  return "result " + std::to_string(i) + " (" + describe(v.result(i)) + ")";
}

inline Status expectFloatOperand(const KernelView &v, size_t i) {
  if (!isFloat(v.operand(i)))
    return v.error(operandLabel(v, i) + " must have a float element type");
  return Status::ok();
}
inline Status expectFloatResult(const KernelView &v, size_t i) {
  if (!isFloat(v.result(i)))
    return v.error(resultLabel(v, i) + " must have a float element type");
  return Status::ok();
}

/// Every operand and result is a float tensor.
inline Status expectAllFloat(const KernelView &v) {
  for (size_t i = 0; i < v.numOperands(); ++i)
    MPTRT_TRY(expectFloatOperand(v, i));
  for (size_t i = 0; i < v.numResults(); ++i)
    MPTRT_TRY(expectFloatResult(v, i));
  return Status::ok();
}
inline Status expectIndexOperand(const KernelView &v, size_t i) {
  if (!isInt(v.operand(i)))
    return v.error(operandLabel(v, i) + " must have element type i32 or i64");
  return Status::ok();
}

inline Status expectResultShape(const KernelView &v, size_t i, const std::vector<int64_t> &shape) {
  if (v.result(i).shape != shape)
    return v.error(resultLabel(v, i) + " must have shape " + shapeString(shape));
  return Status::ok();
}

/// Normalises `axis` (negative counts from the end) into [0, rank).
inline Status normalizeAxis(const KernelView &v, int64_t axis, int rank, int64_t *out) {
  if (axis < -rank || axis >= rank)
    return v.error("axis " + std::to_string(axis) + " out of range for rank " +
                   std::to_string(rank));
  *out = axis < 0 ? axis + rank : axis;
  return Status::ok();
}

/// Bound on strides, dilations, pads and pooling windows: with tensor dims
/// below 2^48 (plan rule), window arithmetic on values below it cannot
/// overflow an int64_t.
inline constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

inline int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_OPS_DECODEUTIL_H
