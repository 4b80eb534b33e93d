//===- Convert.h - blocks of elements to and from f32 / i64 ------*- C++ -*-===//
//
// CPU kernels compute in float32 (or int64 for integer kernels): they load a
// block of elements of any dtype into a float or int64 buffer, compute, and
// store the block back in the result's dtype. Rounding into bf16, f16 and
// fp8 is mptrt/Numerics.h's round-to-nearest-even.
//
// Conversions that are not exact:
//   float -> bf16/f16/fp8   round to nearest even (fp8: APFloat overflow
//                           semantics, or saturating if asked)
//   float -> i32/i64        truncate toward zero; NaN -> 0; out-of-range
//                           values clamp to the integer's min / max
//   float -> i1             x != 0 (NaN -> 1)
//   int64 -> float types    round to nearest even (one rounding: narrow
//                           types go through a round-to-odd float32)
//   int64 -> i32            wraps (two's complement truncation)
//   int -> i1               x != 0
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_CONVERT_H
#define MPTRT_SRC_CPU_CONVERT_H

#include "TensorDesc.h"

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

/// Elements per block in the load / compute / store loops.
inline constexpr int64_t kBlock = 512;

/// Address of element `index` of a tensor of `dtype`.
inline void *elementPtr(void *base, DType dtype, int64_t index) {
  return static_cast<uint8_t *>(base) + index * static_cast<int64_t>(plan::dtypeSize(dtype));
}
inline const void *elementPtr(const void *base, DType dtype, int64_t index) {
  return static_cast<const uint8_t *>(base) + index * static_cast<int64_t>(plan::dtypeSize(dtype));
}

/// dst[i] = src[i] as float, i < n.
void loadF32(DType dtype, const void *src, int64_t n, float *dst);
/// dst[i] = base[offsets[i]] as float.
void gatherF32(DType dtype, const void *base, const int64_t *offsets, int64_t n, float *dst);
/// Rounds src[i] into dst's dtype; `saturate` selects the saturating fp8
/// conversions.
void storeF32(const float *src, int64_t n, DType dtype, void *dst, bool saturate = false);
/// Rounds double totals (a kernel's double accumulators) into dst's dtype:
/// to float32 first (nearest even), then as storeF32.
void storeF64(const double *src, int64_t n, DType dtype, void *dst);

/// The same for integer computation (float sources truncate, see above).
void loadI64(DType dtype, const void *src, int64_t n, int64_t *dst);
void gatherI64(DType dtype, const void *base, const int64_t *offsets, int64_t n, int64_t *dst);
void storeI64(const int64_t *src, int64_t n, DType dtype, void *dst);

/// One element, for loops that are not worth blocking.
float loadOneF32(DType dtype, const void *base, int64_t index);
int64_t loadOneI64(DType dtype, const void *base, int64_t index);

/// float -> integer as documented above.
int64_t f32ToI64(float x);
int32_t f32ToI32(float x);

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_CONVERT_H
