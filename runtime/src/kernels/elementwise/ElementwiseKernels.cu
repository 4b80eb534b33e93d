//===- ElementwiseKernels.cu - unary, binary, where, cast, quantize, grad ===//
//
// One thread per output element (grid-stride loops). Each element is loaded
// into float32 (int64 for integer kernels), computed with the CPU backend's
// formula (kernels/elementwise/ElementwiseKernels.cpp) and rounded once into the result's
// dtype (Device.cuh). Transcendental functions are CUDA's own (expf, erff,
// tanhf, powf: within 2 ulp of the correctly rounded result; glibc's are
// within 1), so f32 results may differ from the CPU's in the last bit or
// two; everything else, rounding included, is bit for bit the CPU's.
// unary_grad, the gradient of unary (last), evaluates exp, erf and tanh in
// double instead (see its section).
//
//===----------------------------------------------------------------------===//
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "kernels/elementwise/BinaryMath.h"
#include "kernels/elementwise/UnaryMath.h"
#include "ops/Backward.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

//===----------------------------------------------------------------------===//
// Broadcasting: the element offset of each input for an output index.
//===----------------------------------------------------------------------===//

/// BroadcastIndex in a form a kernel takes by value.
struct DeviceBroadcast {
  int rank;
  int64_t outShape[kMaxRank];
  int64_t strides[3][kMaxRank];
};

DeviceBroadcast deviceBroadcast(const BroadcastIndex &bc) {
  DeviceBroadcast d{};
  d.rank = bc.rank;
  for (int i = 0; i < bc.rank; ++i) {
    d.outShape[i] = bc.outShape[i];
    for (int k = 0; k < 3; ++k)
      d.strides[k][i] = bc.strides[k][i];
  }
  return d;
}

__device__ inline void offsetsOf(const DeviceBroadcast &bc, int64_t index, int inputs,
                                 int64_t *off) {
  for (int k = 0; k < inputs; ++k)
    off[k] = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const int64_t i = index % bc.outShape[d];
    index /= bc.outShape[d];
    for (int k = 0; k < inputs; ++k)
      off[k] += i * bc.strides[k][d];
  }
}

//===----------------------------------------------------------------------===//
// Unary.
//===----------------------------------------------------------------------===//

__device__ inline float unaryF32(UnaryOp op, const math::UnaryConsts &c, float x) {
  switch (op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    return math::Name<DeviceLibm>::f(x, c);
#include "mptrt/generated/UnaryKinds.def"
  }
  return x;
}

__device__ inline int64_t unaryI64(UnaryOp op, const math::UnaryConsts &c, int64_t x) {
  switch (op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    return math::Name<DeviceLibm>::fi(x, c);
#include "mptrt/generated/UnaryKinds.def"
  }
  return x;
}

__global__ void unaryKernel(UnaryOp op, math::UnaryConsts c, bool integer, DType it, const void *in,
                            DType ot, void *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (integer)
      storeI64(ot, out, i, unaryI64(op, c, loadI64(it, in, i)));
    else
      storeF32(ot, out, i, unaryF32(op, c, loadF32(it, in, i)));
  }
}

Status runUnary(const Context &c, const UnaryParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0], &out = args.results[0];
  const int64_t n = out.desc->numel;
  if (n == 0)
    return Status::ok();
  unaryKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(p.op, math::unaryConstsOf(p),
                                                             p.integer, in.desc->dtype, in.data,
                                                             out.desc->dtype, out.data, n);
  return launched("unary kernel");
}

//===----------------------------------------------------------------------===//
// Binary.
//===----------------------------------------------------------------------===//

__global__ void binaryKernel(BinaryOp op, bool integer, DeviceBroadcast bc, bool same, DType lt,
                             const void *lhs, DType rt, const void *rhs, DType ot, void *out,
                             int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2] = {i, i};
    if (!same)
      offsetsOf(bc, i, 2, off);
    if (integer)
      storeI64(ot, out, i, math::binaryI64(op, loadI64(lt, lhs, off[0]), loadI64(rt, rhs, off[1])));
    else
      storeF32(ot, out, i,
               math::binaryF32<DeviceLibm>(op, loadF32(lt, lhs, off[0]), loadF32(rt, rhs, off[1])));
  }
}

Status runBinary(const Context &c, const BinaryParams &p, const KernelArgs &args) {
  const TensorArg &lhs = args.operands[0], &rhs = args.operands[1], &out = args.results[0];
  const int64_t n = p.bc.numel;
  if (n == 0)
    return Status::ok();
  binaryKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
      p.op, p.integer, deviceBroadcast(p.bc), p.bc.sameShape[0] && p.bc.sameShape[1],
      lhs.desc->dtype, lhs.data, rhs.desc->dtype, rhs.data, out.desc->dtype, out.data, n);
  return launched("binary kernel");
}

//===----------------------------------------------------------------------===//
// Where, cast, quantize.
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void whereKernel(DeviceBroadcast bc, const uint8_t *cond, const T *x, const T *y, T *out,
                            int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    offsetsOf(bc, i, 3, off);
    out[i] = cond[off[0]] ? x[off[1]] : y[off[2]];
  }
}

Status runWhere(const Context &c, const WhereParams &p, const KernelArgs &args) {
  const int64_t n = p.bc.numel;
  if (n == 0)
    return Status::ok();
  const auto *cond = static_cast<const uint8_t *>(args.operands[0].data);
  const void *x = args.operands[1].data, *y = args.operands[2].data;
  void *out = args.results[0].data;
  const DeviceBroadcast bc = deviceBroadcast(p.bc);
  const unsigned blocks = blocksFor(c, n);
  cudaStream_t s = streamOf(c);
  switch (p.elementSize) {
  case 1:
    whereKernel<<<blocks, kThreads, 0, s>>>(bc, cond, static_cast<const uint8_t *>(x),
                                            static_cast<const uint8_t *>(y),
                                            static_cast<uint8_t *>(out), n);
    break;
  case 2:
    whereKernel<<<blocks, kThreads, 0, s>>>(bc, cond, static_cast<const uint16_t *>(x),
                                            static_cast<const uint16_t *>(y),
                                            static_cast<uint16_t *>(out), n);
    break;
  case 4:
    whereKernel<<<blocks, kThreads, 0, s>>>(bc, cond, static_cast<const uint32_t *>(x),
                                            static_cast<const uint32_t *>(y),
                                            static_cast<uint32_t *>(out), n);
    break;
  default:
    whereKernel<<<blocks, kThreads, 0, s>>>(bc, cond, static_cast<const uint64_t *>(x),
                                            static_cast<const uint64_t *>(y),
                                            static_cast<uint64_t *>(out), n);
    break;
  }
  return launched("where kernel");
}

/// Float sources through float32, integer and bool sources through int64:
/// each element is rounded once, into the target (as cpu runCast).
__global__ void castKernel(bool fromFloat, bool saturate, DType it, const void *in, DType ot,
                           void *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (fromFloat)
      storeF32(ot, out, i, loadF32(it, in, i), saturate);
    else
      storeI64(ot, out, i, loadI64(it, in, i));
  }
}

Status runCast(const Context &c, const CastParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0], &out = args.results[0];
  if (p.numel == 0)
    return Status::ok();
  castKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
      plan::isFloatDType(in.desc->dtype), p.saturate, in.desc->dtype, in.data, out.desc->dtype,
      out.data, p.numel);
  return launched("cast kernel");
}

/// y = saturate(rne(f32(x) * scale)), the scale read on the device.
__global__ void quantizeKernel(DType it, const void *in, const float *scale, DType ot, void *out,
                               int64_t n) {
  const float s = *scale;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeF32(ot, out, i, loadF32(it, in, i) * s, /*saturate=*/true);
}

Status runQuantize(const Context &c, const QuantizeParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0], &out = args.results[0];
  if (p.numel == 0)
    return Status::ok();
  quantizeKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
      in.desc->dtype, in.data, static_cast<const float *>(args.operands[1].data), out.desc->dtype,
      out.data, p.numel);
  return launched("quantize kernel");
}

//===----------------------------------------------------------------------===//
// unary_grad: dx = f'(x) * dy, one thread per element, with
// kernels/elementwise/UnaryMath.h's rules. exp, erf and tanh are evaluated
// in double and rounded once (CpuLikeLibm), so they agree with glibc's
// wherever it rounds correctly.
//===----------------------------------------------------------------------===//

__device__ inline float unaryGrad(UnaryOp op, const math::UnaryConsts &c, float x, float g) {
  switch (op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    return math::Name<CpuLikeLibm>::grad(x, g, c);
#include "mptrt/generated/UnaryKinds.def"
  }
  return g;
}

__global__ void unaryGradKernel(UnaryOp op, math::UnaryConsts c, DType xt, const void *x, DType gt,
                                const void *dy, DType ot, void *dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeF32(ot, dx, i, unaryGrad(op, c, loadF32(xt, x, i), loadF32(gt, dy, i)));
}

Status runUnaryGrad(const Context &c, const UnaryGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[1], &dx = args.results[0];
  if (p.numel == 0)
    return Status::ok();
  unaryGradKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
      p.op, math::unaryConstsOf(p), x.desc->dtype, x.data, dy.desc->dtype, dy.data, dx.desc->dtype,
      dx.data, p.numel);
  return launched("unary_grad kernel");
}

} // namespace

Status prepareUnary(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnaryParams>(c, v, out, decodeUnary, runUnary);
}
Status prepareBinary(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<BinaryParams>(c, v, out, decodeBinary, runBinary);
}
Status prepareWhere(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<WhereParams>(c, v, out, decodeWhere, runWhere);
}
Status prepareCast(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<CastParams>(c, v, out, decodeCast, runCast);
}
Status prepareQuantize(const Context &c, const KernelView &v,
                       std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<QuantizeParams>(c, v, out, decodeQuantize, runQuantize);
}
Status prepareUnaryGrad(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnaryGradParams>(c, v, out, decodeUnaryGrad, runUnaryGrad);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
