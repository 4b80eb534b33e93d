//===- Elements.cuh - one dtype's element: storage, load and store ------===//
//
// Element<D> is dtype D at compile time: its storage type and the four
// conversions of Device.cuh (into float32 or int64 on load, rounded once
// out of them on store), with the CPU's rules (cpu/Convert.h, Numerics.h):
//
//   toF32    exact for every dtype but i64 / i32 beyond 2^24 (rounded to
//            nearest even, as static_cast<float>)
//   toI64    integers and i1 exactly; floats through float32, truncated
//            toward zero, NaN -> 0, clamped at the ends
//   fromF32  round to nearest even (fp8: overflow to NaN/inf, or
//            saturating); to integers as toI64; to i1 x != 0
//   fromI64  to i32 wraps; to narrow floats round to odd into f32, then to
//            nearest even
//
// Device.cuh's loadF32 / storeF32 (the dtype known only at run time)
// switch over these, so a kernel specialised on its dtypes at prepare
// (Element<D> in its template) computes each element with the very code
// the generic kernels run: the specialisation changes dispatch, never
// numerics. forEachDType calls a functor with each DType as a constant, for
// the prepare-time tables.
//
// Only nvcc includes this file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_ELEMENTS_CUH
#define MPTRT_SRC_CUDA_ELEMENTS_CUH

#include "TensorDesc.h"
#include "mptrt/Numerics.h"

#include <cstdint>
#include <type_traits>

namespace mptrt {
namespace rt {
namespace cuda {

__host__ __device__ inline int64_t f32ToI64(float x) {
  if (x != x)
    return 0;
  if (x >= 9223372036854775808.0f)
    return INT64_MAX;
  if (x < -9223372036854775808.0f)
    return INT64_MIN;
  return static_cast<int64_t>(x);
}

__host__ __device__ inline int32_t f32ToI32(float x) {
  if (x != x)
    return 0;
  if (x >= 2147483648.0f)
    return INT32_MAX;
  if (x < -2147483648.0f)
    return INT32_MIN;
  return static_cast<int32_t>(x);
}

template <DType D> struct Element;

/// The float dtypes: float32 in registers, `fromF32` rounds once.
template <> struct Element<DType::F32> {
  using Storage = float;
  static constexpr bool isFloat = true;
  __device__ static float toF32(float v) { return v; }
  __device__ static float fromF32(float v, bool) { return v; }
};
template <> struct Element<DType::F16> {
  using Storage = uint16_t;
  static constexpr bool isFloat = true;
  __device__ static float toF32(uint16_t v) { return numerics::f16ToF32(v); }
  __device__ static uint16_t fromF32(float v, bool) { return numerics::f32ToF16(v); }
};
template <> struct Element<DType::BF16> {
  using Storage = uint16_t;
  static constexpr bool isFloat = true;
  __device__ static float toF32(uint16_t v) { return numerics::bf16ToF32(v); }
  __device__ static uint16_t fromF32(float v, bool) { return numerics::f32ToBf16(v); }
};
template <> struct Element<DType::F8E4M3FN> {
  using Storage = uint8_t;
  static constexpr bool isFloat = true;
  __device__ static float toF32(uint8_t v) { return numerics::f8E4M3FNToF32(v); }
  __device__ static uint8_t fromF32(float v, bool saturate) {
    return saturate ? numerics::f32ToF8E4M3FNSaturating(v) : numerics::f32ToF8E4M3FN(v);
  }
};
template <> struct Element<DType::F8E5M2> {
  using Storage = uint8_t;
  static constexpr bool isFloat = true;
  __device__ static float toF32(uint8_t v) { return numerics::f8E5M2ToF32(v); }
  __device__ static uint8_t fromF32(float v, bool saturate) {
    return saturate ? numerics::f32ToF8E5M2Saturating(v) : numerics::f32ToF8E5M2(v);
  }
};

/// The integer dtypes and i1.
template <> struct Element<DType::I64> {
  using Storage = int64_t;
  static constexpr bool isFloat = false;
  __device__ static float toF32(int64_t v) { return static_cast<float>(v); }
  __device__ static int64_t toI64(int64_t v) { return v; }
  __device__ static int64_t fromF32(float v, bool) { return f32ToI64(v); }
  __device__ static int64_t fromI64(int64_t v) { return v; }
};
template <> struct Element<DType::I32> {
  using Storage = int32_t;
  static constexpr bool isFloat = false;
  __device__ static float toF32(int32_t v) { return static_cast<float>(v); }
  __device__ static int64_t toI64(int32_t v) { return v; }
  __device__ static int32_t fromF32(float v, bool) { return f32ToI32(v); }
  __device__ static int32_t fromI64(int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  }
};
template <> struct Element<DType::I1> {
  using Storage = uint8_t;
  static constexpr bool isFloat = false;
  __device__ static float toF32(uint8_t v) { return v ? 1.0f : 0.0f; }
  __device__ static int64_t toI64(uint8_t v) { return v != 0; }
  __device__ static uint8_t fromF32(float v, bool) { return v != 0.0f; }
  __device__ static uint8_t fromI64(int64_t v) { return v != 0; }
};

/// An element loaded into int64: exactly for integers and i1, through
/// float32 for floats (Device.cuh's loadI64).
template <DType D> __device__ inline int64_t toI64(typename Element<D>::Storage v) {
  if constexpr (Element<D>::isFloat)
    return f32ToI64(Element<D>::toF32(v));
  else
    return Element<D>::toI64(v);
}

/// An int64 rounded once into D (Device.cuh's storeI64): f32 by
/// static_cast, the narrow floats through round-to-odd f32.
template <DType D> __device__ inline typename Element<D>::Storage fromI64(int64_t v) {
  if constexpr (D == DType::F32)
    return static_cast<float>(v);
  else if constexpr (Element<D>::isFloat)
    return Element<D>::fromF32(numerics::int64ToF32RoundToOdd(v), false);
  else
    return Element<D>::fromI64(v);
}

template <DType D> using DTypeConstant = std::integral_constant<DType, D>;

/// Calls `f(DTypeConstant<D>{})` for D == `dtype`; returns f's result. On
/// the host (prepare's tables) and on the device (Device.cuh's loadF32).
#pragma nv_exec_check_disable
template <class F> __host__ __device__ auto withDType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F32:
    return f(DTypeConstant<DType::F32>{});
  case DType::F16:
    return f(DTypeConstant<DType::F16>{});
  case DType::BF16:
    return f(DTypeConstant<DType::BF16>{});
  case DType::F8E4M3FN:
    return f(DTypeConstant<DType::F8E4M3FN>{});
  case DType::F8E5M2:
    return f(DTypeConstant<DType::F8E5M2>{});
  case DType::I64:
    return f(DTypeConstant<DType::I64>{});
  case DType::I32:
    return f(DTypeConstant<DType::I32>{});
  case DType::I1:
    break;
  }
  return f(DTypeConstant<DType::I1>{});
}

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_ELEMENTS_CUH
