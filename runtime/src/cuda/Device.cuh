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
#include "mptrt/Numerics.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cuda {

__device__ inline float loadF32(DType dtype, const void *base, int64_t i) {
  namespace n = mptrt::numerics;
  switch (dtype) {
  case DType::F32:
    return static_cast<const float *>(base)[i];
  case DType::F16:
    return n::f16ToF32(static_cast<const uint16_t *>(base)[i]);
  case DType::BF16:
    return n::bf16ToF32(static_cast<const uint16_t *>(base)[i]);
  case DType::F8E4M3FN:
    return n::f8E4M3FNToF32(static_cast<const uint8_t *>(base)[i]);
  case DType::F8E5M2:
    return n::f8E5M2ToF32(static_cast<const uint8_t *>(base)[i]);
  case DType::I64:
    return static_cast<float>(static_cast<const int64_t *>(base)[i]);
  case DType::I32:
    return static_cast<float>(static_cast<const int32_t *>(base)[i]);
  case DType::I1:
    return static_cast<const uint8_t *>(base)[i] ? 1.0f : 0.0f;
  }
  return 0.0f;
}

__device__ inline int64_t f32ToI64(float x) {
  if (x != x)
    return 0;
  if (x >= 9223372036854775808.0f)
    return INT64_MAX;
  if (x < -9223372036854775808.0f)
    return INT64_MIN;
  return static_cast<int64_t>(x);
}

__device__ inline int32_t f32ToI32(float x) {
  if (x != x)
    return 0;
  if (x >= 2147483648.0f)
    return INT32_MAX;
  if (x < -2147483648.0f)
    return INT32_MIN;
  return static_cast<int32_t>(x);
}

__device__ inline int64_t loadI64(DType dtype, const void *base, int64_t i) {
  switch (dtype) {
  case DType::I64:
    return static_cast<const int64_t *>(base)[i];
  case DType::I32:
    return static_cast<const int32_t *>(base)[i];
  case DType::I1:
    return static_cast<const uint8_t *>(base)[i] != 0;
  default:
    return f32ToI64(loadF32(dtype, base, i));
  }
}

__device__ inline void storeF32(DType dtype, void *base, int64_t i, float v,
                                bool saturate = false) {
  namespace n = mptrt::numerics;
  switch (dtype) {
  case DType::F32:
    static_cast<float *>(base)[i] = v;
    return;
  case DType::F16:
    static_cast<uint16_t *>(base)[i] = n::f32ToF16(v);
    return;
  case DType::BF16:
    static_cast<uint16_t *>(base)[i] = n::f32ToBf16(v);
    return;
  case DType::F8E4M3FN:
    static_cast<uint8_t *>(base)[i] =
        saturate ? n::f32ToF8E4M3FNSaturating(v) : n::f32ToF8E4M3FN(v);
    return;
  case DType::F8E5M2:
    static_cast<uint8_t *>(base)[i] = saturate ? n::f32ToF8E5M2Saturating(v) : n::f32ToF8E5M2(v);
    return;
  case DType::I64:
    static_cast<int64_t *>(base)[i] = f32ToI64(v);
    return;
  case DType::I32:
    static_cast<int32_t *>(base)[i] = f32ToI32(v);
    return;
  case DType::I1:
    static_cast<uint8_t *>(base)[i] = v != 0.0f;
    return;
  }
}

__device__ inline void storeI64(DType dtype, void *base, int64_t i, int64_t v) {
  switch (dtype) {
  case DType::I64:
    static_cast<int64_t *>(base)[i] = v;
    return;
  case DType::I32:
    static_cast<int32_t *>(base)[i] =
        static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    return;
  case DType::I1:
    static_cast<uint8_t *>(base)[i] = v != 0;
    return;
  case DType::F32:
    static_cast<float *>(base)[i] = static_cast<float>(v);
    return;
  default:
    storeF32(dtype, base, i, mptrt::numerics::int64ToF32RoundToOdd(v));
    return;
  }
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
