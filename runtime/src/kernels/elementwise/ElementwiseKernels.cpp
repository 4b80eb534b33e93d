//===- ElementwiseKernels.cpp - unary, binary, where, cast, unary_grad ----===//
//
// Every kernel here walks the output in blocks of kBlock elements: load the
// block's inputs into float (or int64) buffers, compute, store the block in
// the output dtype. Blocks are split over the cores by parallelFor once each
// thread gets enough work (Parallel.h's grain rule; transcendental functions
// count as ~8 element operations each).
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "kernels/elementwise/BinaryMath.h"
#include "kernels/elementwise/UnaryMath.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Cost of one element in Parallel.h's element operations: a load, an
/// arithmetic op and a store; a transcendental function is ~8 of them.
constexpr int64_t kPlainCost = 1, kTranscendentalCost = 8;

int64_t unaryCost(const UnaryParams &p) {
  if (p.integer)
    return kPlainCost;
  switch (p.op) {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  case UnaryOp::Name:                                                                              \
    return transcendental ? kTranscendentalCost : kPlainCost;
#include "mptrt/generated/UnaryKinds.def"
  }
  return kPlainCost;
}

//===----------------------------------------------------------------------===//
// Unary: the functions of kernels/elementwise/UnaryMath.h, one loop each.
//===----------------------------------------------------------------------===//

/// x[i] = f(x[i]) in float32.
void unaryF32(const UnaryParams &p, const math::UnaryConsts &c, float *x, int64_t n) {
  switch (p.op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    for (int64_t i = 0; i < n; ++i)                                                                \
      x[i] = math::Name<math::HostLibm>::f(x[i], c);                                               \
    return;
#include "mptrt/generated/UnaryKinds.def"
  }
}

/// x[i] = f(x[i]) in int64, wrapping like the two's-complement types.
void unaryI64(const UnaryParams &p, const math::UnaryConsts &c, int64_t *x, int64_t n) {
  switch (p.op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    for (int64_t i = 0; i < n; ++i)                                                                \
      x[i] = math::Name<math::HostLibm>::fi(x[i], c);                                              \
    return;
#include "mptrt/generated/UnaryKinds.def"
  }
}

Status runUnary(const UnaryParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0];
  const TensorArg &out = args.results[0];
  const DType inType = in.desc->dtype, outType = out.desc->dtype;
  const math::UnaryConsts c = math::unaryConstsOf(p);
  parallelFor(out.desc->numel, grainForCost(unaryCost(p)), [&](int64_t begin, int64_t end) {
    if (p.integer) {
      int64_t buf[kBlock];
      for (int64_t i = begin; i < end; i += kBlock) {
        const int64_t m = std::min(kBlock, end - i);
        loadI64(inType, elementPtr(in.data, inType, i), m, buf);
        unaryI64(p, c, buf, m);
        storeI64(buf, m, outType, elementPtr(out.data, outType, i));
      }
      return;
    }
    float buf[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(inType, elementPtr(in.data, inType, i), m, buf);
      unaryF32(p, c, buf, m);
      storeF32(buf, m, outType, elementPtr(out.data, outType, i));
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Binary.
//===----------------------------------------------------------------------===//

/// out[i] = a[i] op b[i] in float32 (BinaryMath.h); comparisons write 0 / 1.
template <BinaryOp Op> void binaryF32Loop(const float *a, const float *b, float *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = math::binaryF32<math::HostLibm>(Op, a[i], b[i]);
}

/// out[i] = a[i] op b[i] in int64 (BinaryMath.h: two's-complement wrap,
/// x / 0 = 0).
template <BinaryOp Op>
void binaryI64Loop(const int64_t *a, const int64_t *b, int64_t *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = math::binaryI64(Op, a[i], b[i]);
}

/// One loop per op, the op a constant inside it.
#define MPTRT_BINARY_CASE(Name, kind)                                                              \
  case BinaryOp::Name:                                                                             \
    return MPTRT_BINARY_LOOP<BinaryOp::Name>(a, b, out, n);

void binaryF32(BinaryOp op, const float *a, const float *b, float *out, int64_t n) {
#define MPTRT_BINARY_LOOP binaryF32Loop
  switch (op) { MPTRT_BINARY_OPS(MPTRT_BINARY_CASE) }
#undef MPTRT_BINARY_LOOP
}

void binaryI64(BinaryOp op, const int64_t *a, const int64_t *b, int64_t *out, int64_t n) {
#define MPTRT_BINARY_LOOP binaryI64Loop
  switch (op) { MPTRT_BINARY_OPS(MPTRT_BINARY_CASE) }
#undef MPTRT_BINARY_LOOP
}

Status runBinary(const BinaryParams &p, const KernelArgs &args) {
  const TensorArg &lhs = args.operands[0], &rhs = args.operands[1];
  const TensorArg &out = args.results[0];
  const DType lt = lhs.desc->dtype, rt = rhs.desc->dtype, ot = out.desc->dtype;
  const BroadcastIndex &bc = p.bc;
  // Broadcast offsets cost about one more operation per operand.
  const int64_t cost = (p.op == BinaryOp::Pow ? kTranscendentalCost : kPlainCost) + 2;
  parallelFor(bc.numel, grainForCost(cost), [&](int64_t begin, int64_t end) {
    int64_t offA[kBlock], offB[kBlock];
    int64_t *offsets[3] = {offA, offB, nullptr};
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      const bool gather = !bc.sameShape[0] || !bc.sameShape[1];
      if (gather)
        broadcastOffsets(bc, i, m, offsets);
      if (p.integer) {
        int64_t a[kBlock], b[kBlock], r[kBlock];
        if (bc.sameShape[0])
          loadI64(lt, elementPtr(lhs.data, lt, i), m, a);
        else
          gatherI64(lt, lhs.data, offA, m, a);
        if (bc.sameShape[1])
          loadI64(rt, elementPtr(rhs.data, rt, i), m, b);
        else
          gatherI64(rt, rhs.data, offB, m, b);
        binaryI64(p.op, a, b, r, m);
        storeI64(r, m, ot, elementPtr(out.data, ot, i));
      } else {
        float a[kBlock], b[kBlock], r[kBlock];
        if (bc.sameShape[0])
          loadF32(lt, elementPtr(lhs.data, lt, i), m, a);
        else
          gatherF32(lt, lhs.data, offA, m, a);
        if (bc.sameShape[1])
          loadF32(rt, elementPtr(rhs.data, rt, i), m, b);
        else
          gatherF32(rt, rhs.data, offB, m, b);
        binaryF32(p.op, a, b, r, m);
        storeF32(r, m, ot, elementPtr(out.data, ot, i));
      }
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Where and cast.
//===----------------------------------------------------------------------===//

template <typename T>
void selectElements(const uint8_t *cond, const int64_t *offC, const T *x, const int64_t *offX,
                    const T *y, const int64_t *offY, T *out, int64_t m) {
  for (int64_t j = 0; j < m; ++j)
    out[j] = cond[offC[j]] ? x[offX[j]] : y[offY[j]];
}

Status runWhere(const WhereParams &p, const KernelArgs &args) {
  const uint8_t *cond = static_cast<const uint8_t *>(args.operands[0].data);
  const void *x = args.operands[1].data, *y = args.operands[2].data;
  void *out = args.results[0].data;
  parallelFor(p.bc.numel, grainForCost(kPlainCost + 3), [&](int64_t begin, int64_t end) {
    int64_t offC[kBlock], offX[kBlock], offY[kBlock];
    int64_t *offsets[3] = {offC, offX, offY};
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      broadcastOffsets(p.bc, i, m, offsets);
      switch (p.elementSize) {
      case 1:
        selectElements(cond, offC, static_cast<const uint8_t *>(x), offX,
                       static_cast<const uint8_t *>(y), offY, static_cast<uint8_t *>(out) + i, m);
        break;
      case 2:
        selectElements(cond, offC, static_cast<const uint16_t *>(x), offX,
                       static_cast<const uint16_t *>(y), offY, static_cast<uint16_t *>(out) + i, m);
        break;
      case 4:
        selectElements(cond, offC, static_cast<const uint32_t *>(x), offX,
                       static_cast<const uint32_t *>(y), offY, static_cast<uint32_t *>(out) + i, m);
        break;
      default:
        selectElements(cond, offC, static_cast<const uint64_t *>(x), offX,
                       static_cast<const uint64_t *>(y), offY, static_cast<uint64_t *>(out) + i, m);
        break;
      }
    }
  });
  return Status::ok();
}

/// Float sources go through float32 (exact), integer and bool sources
/// through int64 (exact), so each element is rounded once, into the target.
Status runCast(const CastParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0], &out = args.results[0];
  const DType it = in.desc->dtype, ot = out.desc->dtype;
  const bool fromFloat = plan::isFloatDType(it);
  parallelFor(p.numel, grainForCost(kPlainCost), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      if (fromFloat) {
        float buf[kBlock];
        loadF32(it, elementPtr(in.data, it, i), m, buf);
        storeF32(buf, m, ot, elementPtr(out.data, ot, i), p.saturate);
      } else {
        int64_t buf[kBlock];
        loadI64(it, elementPtr(in.data, it, i), m, buf);
        storeI64(buf, m, ot, elementPtr(out.data, ot, i));
      }
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// unary_grad: dx = f'(x) * dy, with kernels/elementwise/UnaryMath.h's rules.
//===----------------------------------------------------------------------===//

/// dy[i] = f'(x[i]) * dy[i].
void unaryGradF32(const UnaryGradParams &p, const math::UnaryConsts &c, const float *x, float *dy,
                  int64_t n) {
  switch (p.op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    for (int64_t i = 0; i < n; ++i)                                                                \
      dy[i] = math::Name<math::HostLibm>::grad(x[i], dy[i], c);                                    \
    return;
#include "mptrt/generated/UnaryKinds.def"
  }
}

/// Whether f' costs like a transcendental function.
bool transcendentalGrad(UnaryOp op) {
  switch (op) {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  case UnaryOp::Name:                                                                              \
    return transcendental;
#include "mptrt/generated/UnaryKinds.def"
  }
  return true;
}

Status runUnaryGrad(const UnaryGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[1], &dx = args.results[0];
  const DType xt = x.desc->dtype, dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  const bool cheap = !transcendentalGrad(p.op);
  const math::UnaryConsts c = math::unaryConstsOf(p);
  // An element: two loads, f' (a transcendental function is ~8) and a store.
  parallelFor(p.numel, grainForCost(cheap ? 2 : 10), [&](int64_t begin, int64_t end) {
    float xs[kBlock], gs[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(xt, elementPtr(x.data, xt, i), m, xs);
      loadF32(dyt, elementPtr(dy.data, dyt, i), m, gs);
      unaryGradF32(p, c, xs, gs, m);
      storeF32(gs, m, dxt, elementPtr(dx.data, dxt, i));
    }
  });
  return Status::ok();
}

} // namespace

void broadcastOffsets(const BroadcastIndex &bc, int64_t start, int64_t m, int64_t *const *offsets) {
  const int rank = bc.rank;
  int64_t index[kMaxRank];
  int64_t rest = start;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rest % bc.outShape[d];
    rest /= bc.outShape[d];
  }
  int64_t off[3] = {0, 0, 0};
  for (int k = 0; k < bc.numInputs; ++k)
    for (int d = 0; d < rank; ++d)
      off[k] += index[d] * bc.strides[k][d];
  for (int64_t j = 0; j < m; ++j) {
    for (int k = 0; k < bc.numInputs; ++k)
      if (offsets[k])
        offsets[k][j] = off[k];
    // Step the row-major index, carrying into outer axes.
    for (int d = rank - 1; d >= 0; --d) {
      for (int k = 0; k < bc.numInputs; ++k)
        off[k] += bc.strides[k][d];
      if (++index[d] < bc.outShape[d])
        break;
      for (int k = 0; k < bc.numInputs; ++k)
        off[k] -= bc.strides[k][d] * bc.outShape[d];
      index[d] = 0;
    }
  }
}

Status prepareUnary(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnaryParams>(v, out, decodeUnary, runUnary);
}
Status prepareBinary(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<BinaryParams>(v, out, decodeBinary, runBinary);
}
Status prepareWhere(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<WhereParams>(v, out, decodeWhere, runWhere);
}
Status prepareCast(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<CastParams>(v, out, decodeCast, runCast);
}
Status prepareUnaryGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnaryGradParams>(v, out, decodeUnaryGrad, runUnaryGrad);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
