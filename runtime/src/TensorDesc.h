//===- TensorDesc.h - a tensor's static type, and its bytes ------*- C++ -*-===//
#ifndef MPTRT_SRC_TENSORDESC_H
#define MPTRT_SRC_TENSORDESC_H

#include "mptrt/plan/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

using plan::DType;

/// The dtype and static shape of one plan tensor.
struct TensorDesc {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  uint64_t bytes = 0;

  int rank() const { return static_cast<int>(shape.size()); }
  /// Elements per step along `axis` (row-major).
  int64_t stride(int axis) const {
    int64_t s = 1;
    for (int i = axis + 1; i < rank(); ++i)
      s *= shape[i];
    return s;
  }
  int64_t elementSize() const { return static_cast<int64_t>(plan::dtypeSize(dtype)); }
};

inline TensorDesc makeDesc(DType dtype, const std::vector<int64_t> &shape) {
  TensorDesc d;
  d.dtype = dtype;
  d.shape = shape;
  d.numel = 1;
  for (int64_t s : shape)
    d.numel *= s;
  d.bytes = static_cast<uint64_t>(d.numel) * plan::dtypeSize(dtype);
  return d;
}

/// "2x3xbf16" (MLIR's tensor spelling without the tensor<>).
inline std::string describeType(DType dtype, const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + plan::dtypeName(dtype);
}

inline std::string describe(const TensorDesc &d) { return describeType(d.dtype, d.shape); }

/// A tensor as a kernel sees it: its type and where its bytes are.
struct TensorArg {
  const TensorDesc *desc = nullptr;
  void *data = nullptr;
};

/// The tensors one kernel reads and writes during one run.
struct KernelArgs {
  std::vector<TensorArg> operands;
  std::vector<TensorArg> results;
  /// The model's workspace: device memory of at least the kernel's
  /// PreparedKernel::workspaceBytes(), 64-byte aligned, shared by every
  /// kernel of the model (its contents do not survive from one kernel to
  /// the next); null when no kernel asked for any.
  void *workspace = nullptr;
};

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_TENSORDESC_H
