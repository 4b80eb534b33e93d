//===- FastDivmod.h - division by a loop-invariant divisor, multiplied --===//
//
// The index math of broadcasts and strided views divides an element index
// by the same extents over and over. A 32-bit integer division is a long
// sequence on the GPU; dividing by a divisor fixed at prepare is a high
// multiply and a shift (Granlund and Montgomery, "Division by invariant
// integers using multiplication", 1994; CUTLASS's FastDivmod):
//
//   p = 31 + ceil(log2 d),  m = ceil(2^p / d),  q = umulhi(n, m) >> (p - 32)
//
// exact for every dividend n < 2^31 and divisor 1 <= d < 2^31 (d = 1 is
// special-cased: m would not fit 32 bits). The kernels that use it index
// tensors of fewer than 2^31 elements; larger ones take the 64-bit path.
//
// Plain C++ with MPTRT_HOST_DEVICE, so the host computes the multiplier at
// prepare and a CPU test checks the quotients (FastDivmodTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_FASTDIVMOD_H
#define MPTRT_SRC_CUDA_FASTDIVMOD_H

#include "mptrt/Numerics.h" // MPTRT_HOST_DEVICE

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cuda {

struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  FastDivmod() = default;
  /// `d` in [1, 2^31).
  explicit FastDivmod(uint32_t d) : divisor(d) {
    if (d == 1)
      return;
    uint32_t log2 = 0; // ceil(log2 d)
    while ((uint64_t(1) << log2) < d)
      ++log2;
    const uint32_t p = 31 + log2;
    multiplier = static_cast<uint32_t>(((uint64_t(1) << p) + d - 1) / d);
    shift = p - 32;
  }

  MPTRT_HOST_DEVICE uint32_t div(uint32_t n) const {
    if (divisor == 1)
      return n;
#ifdef __CUDA_ARCH__
    return __umulhi(n, multiplier) >> shift;
#else
    return static_cast<uint32_t>((uint64_t(n) * multiplier) >> 32) >> shift;
#endif
  }

  /// n / divisor, and n % divisor in `*rem`.
  MPTRT_HOST_DEVICE uint32_t divmod(uint32_t n, uint32_t *rem) const {
    const uint32_t q = div(n);
    *rem = n - q * divisor;
    return q;
  }
};

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_FASTDIVMOD_H
