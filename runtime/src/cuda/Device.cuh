//===- Device.cuh - element access and launch helpers for CUDA kernels -----===//
//
// CUDA kernels follow the CPU backend's numerics (cpu/Convert.h): every
// element is loaded into float32 (or int64 for integer kernels), computed
// on, and rounded once into the result's dtype with mptrt/Numerics.h, the
// same integer-arithmetic round-to-nearest-even code the CPU runs. The
// conversions that are not exact are the CPU's, element for element:
//
//   float -> bf16/f16/fp8   round to nearest even (fp8: overflow to NaN/inf,
//                           or saturating)
//   float -> i32/i64        truncate toward zero; NaN -> 0; clamp at the ends
//   float -> i1             x != 0
//   int64 -> narrow floats  round to odd into f32, then to nearest even
//   int64 -> i32            wraps
//
// Only nvcc includes this file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_DEVICE_CUH
#define MPTRT_SRC_CUDA_DEVICE_CUH

#include "TensorDesc.h"
#include "cuda/CudaContext.h"
#include "cuda/Elements.cuh"
#include "mptrt/Numerics.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cuda {

/// The element at `i` of a `dtype` tensor, into float32 (Element<D>::toF32).
__device__ inline float loadF32(DType dtype, const void *base, int64_t i) {
  return withDType(dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return Element<D>::toF32(static_cast<const typename Element<D>::Storage *>(base)[i]);
  });
}

/// The element at `i`, into int64 (exact for integers and i1).
__device__ inline int64_t loadI64(DType dtype, const void *base, int64_t i) {
  return withDType(dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toI64<D>(static_cast<const typename Element<D>::Storage *>(base)[i]);
  });
}

/// The value of `dtype` nearest v, as float32 (round to nearest even): what
/// storing v and loading it back gives.
__device__ inline float roundedTo(DType dtype, float v) {
  return withDType(dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return Element<D>::toF32(Element<D>::fromF32(v, false));
  });
}

/// The fused relu of a kernel whose result has `dtype`: relu of the rounded
/// value, so the bits are an unfused relu's (x < 0 ? 0 : x; a -0 stays -0).
__device__ inline float reluRounded(DType dtype, float v) {
  v = roundedTo(dtype, v);
  return v < 0.0f ? 0.0f : v;
}

/// v rounded once into element `i` of a `dtype` tensor.
__device__ inline void storeF32(DType dtype, void *base, int64_t i, float v,
                                bool saturate = false) {
  withDType(dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    static_cast<typename Element<D>::Storage *>(base)[i] = Element<D>::fromF32(v, saturate);
  });
}

/// v rounded once into element `i` (integers wrap, floats as fromI64).
__device__ inline void storeI64(DType dtype, void *base, int64_t i, int64_t v) {
  withDType(dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    static_cast<typename Element<D>::Storage *>(base)[i] = fromI64<D>(v);
  });
}

/// Raises a device error about `value` at `position` breaking `bound`; the
/// first one raised is kept, with its details.
__device__ inline void raise(DeviceErrorRecord *errorWord, DeviceError e, int64_t value,
                             int64_t position, int64_t bound) {
  if (atomicCAS(&errorWord->code, 0, static_cast<int32_t>(e)) == 0) {
    errorWord->value = value;
    errorWord->position = position;
    errorWord->bound = bound;
  }
}

/// The grid-stride loop over [0, n) with int64_t indices.
#define MPTRT_FOR_EACH(i, n)                                                                       \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);                        \
       i += int64_t(gridDim.x) * blockDim.x)

/// The grid-stride loop with an index of type Index: int64_t in the
/// generic kernels, uint32_t where prepare knew n < 2^31.
#define MPTRT_FOR_EACH_AS(Index, i, n)                                                             \
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < Index(n);                       \
       i += Index(gridDim.x) * blockDim.x)

/// Threads per block of the elementwise grid-stride loops.
inline constexpr int kThreads = 256;

/// Blocks for n elements: enough to fill the device a few times over, at
/// most one element per thread.
inline unsigned blocksFor(const Context &c, int64_t n) {
  const int64_t perBlock = kThreads;
  int64_t blocks = (n + perBlock - 1) / perBlock;
  const int64_t cap = static_cast<int64_t>(c.smCount > 0 ? c.smCount : 80) * 32;
  if (blocks > cap)
    blocks = cap;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

/// The status of the last launch (a bad configuration shows here; faults
/// inside the kernel show at synchronize()).
inline Status launched(const char *what) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::ok() : cudaStatus(static_cast<int>(e), what);
}

inline cudaStream_t streamOf(const Context &c) { return reinterpret_cast<cudaStream_t>(c.stream); }

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_DEVICE_CUH
