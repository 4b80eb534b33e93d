//===- ElementwiseKernels.cu - unary, binary, where, cast, quantize, grad ===//
//
// Each element is loaded into float32 (int64 for integer kernels), computed
// with the CPU backend's formula (kernels/elementwise/ElementwiseKernels.cpp)
// and rounded once into the result's dtype (Device.cuh, Elements.cuh).
// Transcendental functions are CUDA's own (expf, erff, tanhf, powf: within
// 2 ulp of the correctly rounded result; glibc's are within 1), so f32
// results may differ from the CPU's in the last bit or two; everything
// else, rounding included, is bit for bit the CPU's. unary_grad, the
// gradient of unary (last), evaluates exp, erf and tanh in double instead
// (see its section).
//
// Two kernels per kind, chosen when the kernel is prepared (the Prepare
// section, last):
//   - specialised (the ...As run functions): the dtypes are template
//     arguments (Element<D>), indices 32-bit, contiguous operands moved 16
//     bytes at a time (Vectorized.cuh), and binary's scalar and row
//     broadcasts without per-axis index math (Broadcast.cuh);
//   - generic: the dtypes read per element, 64-bit indices, one element
//     per access, for the other dtype combinations, 2^31 elements or more,
//     and under MPTRT_CUDA_GENERIC_KERNELS (the tests' reference).
// Both run the same per-element code, so they give the same bits.
//
//===----------------------------------------------------------------------===//
#include "cuda/Broadcast.cuh"
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "cuda/Vectorized.cuh"
#include "kernels/elementwise/BinaryMath.h"
#include "kernels/elementwise/UnaryMath.h"
#include "ops/Backward.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

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

/// unary on dtype D in and out, specialised at prepare: x -> f(x) in
/// float32 (int64 for integer kernels), rounded once into D.
template <DType D> struct UnaryFn {
  using S = typename Element<D>::Storage;
  static constexpr int kMaxPack = 4; // a large body (Vectorized.cuh)
  UnaryOp op;
  math::UnaryConsts c;
  __device__ S operator()(S x) const {
    if constexpr (Element<D>::isFloat)
      return Element<D>::fromF32(unaryF32(op, c, Element<D>::toF32(x)), false);
    else
      return fromI64<D>(unaryI64(op, c, toI64<D>(x)));
  }
};

template <DType D>
Status runUnaryAs(const Context &c, const UnaryParams &p, const KernelArgs &args) {
  using S = typename Element<D>::Storage;
  const int64_t n = args.results[0].desc->numel;
  if (n == 0)
    return Status::ok();
  return launchContiguous(c, "unary kernel", UnaryFn<D>{p.op, math::unaryConstsOf(p)}, n,
                          static_cast<S *>(args.results[0].data),
                          static_cast<const S *>(args.operands[0].data));
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

/// lhs op rhs on operands of dtype A into dtype O (A, or i1 for the
/// comparisons), specialised at prepare: in int64 for integer and i1
/// operands, else in float32, rounded once into O.
template <DType A, DType O> struct BinaryFn {
  using S = typename Element<A>::Storage;
  static constexpr int kMaxPack = 4; // a large body (Vectorized.cuh)
  BinaryOp op;
  __device__ typename Element<O>::Storage operator()(S a, S b) const {
    if constexpr (Element<A>::isFloat)
      return Element<O>::fromF32(
          math::binaryF32<DeviceLibm>(op, Element<A>::toF32(a), Element<A>::toF32(b)), false);
    else
      return fromI64<O>(math::binaryI64(op, toI64<A>(a), toI64<A>(b)));
  }
};

/// The specialised binary kernel: operands of the output's shape (16-byte
/// packs), one of them a scalar or a row (rowLength), or any broadcast
/// (Broadcast32's divisions).
template <DType A, DType O>
Status runBinaryAs(const Context &c, const BinaryParams &p, const KernelArgs &args) {
  using S = typename Element<A>::Storage;
  using SO = typename Element<O>::Storage;
  const int64_t n = p.bc.numel;
  if (n == 0)
    return Status::ok();
  const S *lhs = static_cast<const S *>(args.operands[0].data);
  const S *rhs = static_cast<const S *>(args.operands[1].data);
  SO *out = static_cast<SO *>(args.results[0].data);
  const BinaryFn<A, O> f{p.op};
  const char *what = "binary kernel";
  const int64_t lhsRow = rowLength(p.bc, 0), rhsRow = rowLength(p.bc, 1);
  if (lhsRow == n && rhsRow == n)
    return launchContiguous(c, what, f, n, out, lhs, rhs);
  if (lhsRow == n && rhsRow > 0)
    return launchRow(c, what, f, n, out, lhs, rhs, /*partFirst=*/false, rhsRow);
  if (rhsRow == n && lhsRow > 0)
    return launchRow(c, what, f, n, out, rhs, lhs, /*partFirst=*/true, lhsRow);
  return launchBroadcast(c, what, f, p.bc, out, lhs, rhs);
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

/// where on elements of T (1, 2, 4 or 8 bytes), specialised at prepare.
template <class T> struct WhereFn {
  __device__ T operator()(uint8_t cond, T x, T y) const { return cond ? x : y; }
};

template <class T>
Status runWhereAs(const Context &c, const WhereParams &p, const KernelArgs &args) {
  const int64_t n = p.bc.numel;
  if (n == 0)
    return Status::ok();
  const auto *cond = static_cast<const uint8_t *>(args.operands[0].data);
  const T *x = static_cast<const T *>(args.operands[1].data);
  const T *y = static_cast<const T *>(args.operands[2].data);
  T *out = static_cast<T *>(args.results[0].data);
  if (p.bc.sameShape[0] && p.bc.sameShape[1] && p.bc.sameShape[2])
    return launchContiguous(c, "where kernel", WhereFn<T>{}, n, out, cond, x, y);
  return launchBroadcast(c, "where kernel", WhereFn<T>{}, p.bc, out, cond, x, y);
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

/// cast from dtype I to dtype O, specialised at prepare: floats through
/// float32, integers and i1 through int64 (as castKernel).
template <DType I, DType O> struct CastFn {
  bool saturate;
  __device__ typename Element<O>::Storage operator()(typename Element<I>::Storage x) const {
    if constexpr (Element<I>::isFloat)
      return Element<O>::fromF32(Element<I>::toF32(x), saturate);
    else
      return fromI64<O>(toI64<I>(x));
  }
};

template <DType I, DType O>
Status runCastAs(const Context &c, const CastParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  return launchContiguous(c, "cast kernel", CastFn<I, O>{p.saturate}, p.numel,
                          static_cast<typename Element<O>::Storage *>(args.results[0].data),
                          static_cast<const typename Element<I>::Storage *>(args.operands[0].data));
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

/// quantize from float dtype I into fp8 dtype O, specialised at prepare.
template <DType I, DType O> struct QuantizeFn {
  const float *scale;
  __device__ typename Element<O>::Storage operator()(typename Element<I>::Storage x) const {
    return Element<O>::fromF32(Element<I>::toF32(x) * *scale, /*saturate=*/true);
  }
};

template <DType I, DType O>
Status runQuantizeAs(const Context &c, const QuantizeParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  return launchContiguous(
      c, "quantize kernel", QuantizeFn<I, O>{static_cast<const float *>(args.operands[1].data)},
      p.numel, static_cast<typename Element<O>::Storage *>(args.results[0].data),
      static_cast<const typename Element<I>::Storage *>(args.operands[0].data));
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

/// unary_grad with x, dy and dx all of float dtype D, specialised at
/// prepare.
template <DType D> struct UnaryGradFn {
  using S = typename Element<D>::Storage;
  static constexpr int kMaxPack = 4; // a large body (Vectorized.cuh)
  UnaryOp op;
  math::UnaryConsts c;
  __device__ S operator()(S x, S dy) const {
    return Element<D>::fromF32(unaryGrad(op, c, Element<D>::toF32(x), Element<D>::toF32(dy)),
                               false);
  }
};

template <DType D>
Status runUnaryGradAs(const Context &c, const UnaryGradParams &p, const KernelArgs &args) {
  using S = typename Element<D>::Storage;
  if (p.numel == 0)
    return Status::ok();
  return launchContiguous(c, "unary_grad kernel", UnaryGradFn<D>{p.op, math::unaryConstsOf(p)},
                          p.numel, static_cast<S *>(args.results[0].data),
                          static_cast<const S *>(args.operands[0].data),
                          static_cast<const S *>(args.operands[1].data));
}

//===----------------------------------------------------------------------===//
// Prepare: decode, then choose the kernel for the operands' dtypes. The
// specialised ones (the ...As functions) cover the dtypes plans use (one
// dtype throughout, comparisons into i1, every cast) and fewer than 2^31
// elements; any other combination, a larger tensor, or
// MPTRT_CUDA_GENERIC_KERNELS keeps the generic kernel, which reads the
// dtypes at run time.
//===----------------------------------------------------------------------===//

template <typename Params>
using RunFn = Status (*)(const Context &, const Params &, const KernelArgs &);

/// Whether a kernel over `numel` elements may be specialised.
bool specialise(int64_t numel) { return numel <= kMaxIndex32 && !genericKernelsForced(); }

/// The kernel of `run`, with the decoded `p`.
template <typename Params>
Status preparedAs(const Context &c, Params p, RunFn<Params> run,
                  std::unique_ptr<PreparedKernel> *out) {
  *out = std::make_unique<ParamsKernel<Params>>(c, std::move(p), run);
  return Status::ok();
}

} // namespace

Status prepareUnary(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  UnaryParams p;
  MPTRT_TRY(decodeUnary(v, &p));
  RunFn<UnaryParams> run = runUnary;
  const DType dtype = v.operand(0).dtype;
  if (specialise(v.result(0).numel) && v.result(0).dtype == dtype)
    run = withDType(dtype, [&](auto d) -> RunFn<UnaryParams> {
      constexpr DType D = decltype(d)::value;
      return p.integer == !Element<D>::isFloat ? runUnaryAs<D> : runUnary;
    });
  return preparedAs(c, std::move(p), run, out);
}

Status prepareBinary(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  BinaryParams p;
  MPTRT_TRY(decodeBinary(v, &p));
  RunFn<BinaryParams> run = runBinary;
  const DType dtype = v.operand(0).dtype, result = v.result(0).dtype;
  if (specialise(p.bc.numel) && v.operand(1).dtype == dtype)
    run = withDType(dtype, [&](auto d) -> RunFn<BinaryParams> {
      constexpr DType A = decltype(d)::value;
      if (p.integer != !Element<A>::isFloat)
        return runBinary;
      if (result == DType::I1)
        return runBinaryAs<A, DType::I1>;
      if constexpr (A != DType::I1)
        if (result == A)
          return runBinaryAs<A, A>;
      return runBinary;
    });
  return preparedAs(c, std::move(p), run, out);
}

Status prepareWhere(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  WhereParams p;
  MPTRT_TRY(decodeWhere(v, &p));
  RunFn<WhereParams> run = runWhere;
  if (specialise(p.bc.numel)) {
    switch (p.elementSize) {
    case 1:
      run = runWhereAs<uint8_t>;
      break;
    case 2:
      run = runWhereAs<uint16_t>;
      break;
    case 4:
      run = runWhereAs<uint32_t>;
      break;
    default:
      run = runWhereAs<uint64_t>;
      break;
    }
  }
  return preparedAs(c, std::move(p), run, out);
}

Status prepareCast(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  CastParams p;
  MPTRT_TRY(decodeCast(v, &p));
  RunFn<CastParams> run = runCast;
  const DType result = v.result(0).dtype;
  if (specialise(p.numel))
    run = withDType(v.operand(0).dtype, [&](auto i) {
      return withDType(result, [&](auto o) -> RunFn<CastParams> {
        return runCastAs<decltype(i)::value, decltype(o)::value>;
      });
    });
  return preparedAs(c, std::move(p), run, out);
}

Status prepareQuantize(const Context &c, const KernelView &v,
                       std::unique_ptr<PreparedKernel> *out) {
  QuantizeParams p;
  MPTRT_TRY(decodeQuantize(v, &p));
  RunFn<QuantizeParams> run = runQuantize;
  const DType result = v.result(0).dtype;
  if (specialise(p.numel))
    run = withDType(v.operand(0).dtype, [&](auto i) -> RunFn<QuantizeParams> {
      constexpr DType I = decltype(i)::value;
      if constexpr (Element<I>::isFloat) {
        if (result == DType::F8E4M3FN)
          return runQuantizeAs<I, DType::F8E4M3FN>;
        if (result == DType::F8E5M2)
          return runQuantizeAs<I, DType::F8E5M2>;
      }
      return runQuantize;
    });
  return preparedAs(c, std::move(p), run, out);
}

Status prepareUnaryGrad(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  UnaryGradParams p;
  MPTRT_TRY(decodeUnaryGrad(v, &p));
  RunFn<UnaryGradParams> run = runUnaryGrad;
  const DType dtype = v.result(0).dtype;
  if (specialise(p.numel) && v.operand(0).dtype == dtype && v.operand(1).dtype == dtype)
    run = withDType(dtype, [&](auto d) -> RunFn<UnaryGradParams> {
      constexpr DType D = decltype(d)::value;
      if constexpr (Element<D>::isFloat)
        return runUnaryGradAs<D>;
      return runUnaryGrad;
    });
  return preparedAs(c, std::move(p), run, out);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
