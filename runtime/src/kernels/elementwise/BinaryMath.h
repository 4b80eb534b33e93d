//===- BinaryMath.h - the elementwise binary functions --------------------===//
//
// add sub mul div pow max min and the comparisons, on float32 and on int64,
// written once for the CPU and the CUDA backend (MPTRT_HOST_DEVICE). The
// CPU calls them with a constant op inside its per-op loops; CUDA switches
// per element. Float pow comes from the libm `L` (UnaryMath.h: HostLibm on
// the CPU, cuda/CpuMath.cuh's DeviceLibm on CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_ELEMENTWISE_BINARYMATH_H
#define MPTRT_SRC_KERNELS_ELEMENTWISE_BINARYMATH_H

#include "mptrt/Numerics.h" // MPTRT_HOST_DEVICE
#include "ops/OpParams.h"   // BinaryOp

#include <cmath>
#include <cstdint>

namespace mptrt {
namespace math {

/// a op b in float32; max and min are NaN if either is, comparisons 0 or 1.
template <class L> MPTRT_HOST_DEVICE inline float binaryF32(rt::BinaryOp op, float a, float b) {
  using rt::BinaryOp;
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Pow:
    return L::pow(a, b);
  case BinaryOp::Max:
    return (a != a || b != b) ? NAN : (a < b ? b : a);
  case BinaryOp::Min:
    return (a != a || b != b) ? NAN : (b < a ? b : a);
  case BinaryOp::Equal:
    return a == b;
  case BinaryOp::Less:
    return a < b;
  case BinaryOp::Greater:
    return a > b;
  }
  return 0.0f;
}

/// Integer power with wrap-around; negative exponents truncate like 1/x^n.
MPTRT_HOST_DEVICE inline int64_t powI64(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1) {
    if (e & 1)
      result *= b;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

/// a op b in int64: two's-complement wrap; x / 0 = 0 and division never
/// traps (INT64_MIN / -1 wraps).
MPTRT_HOST_DEVICE inline int64_t binaryI64(rt::BinaryOp op, int64_t a, int64_t b) {
  using rt::BinaryOp;
  switch (op) {
  case BinaryOp::Add:
    return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
  case BinaryOp::Sub:
    return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
  case BinaryOp::Mul:
    return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
  case BinaryOp::Div:
    return b == 0 ? 0 : b == -1 ? static_cast<int64_t>(0 - uint64_t(a)) : a / b;
  case BinaryOp::Pow:
    return powI64(a, b);
  case BinaryOp::Max:
    return a < b ? b : a;
  case BinaryOp::Min:
    return b < a ? b : a;
  case BinaryOp::Equal:
    return a == b;
  case BinaryOp::Less:
    return a < b;
  case BinaryOp::Greater:
    return a > b;
  }
  return 0;
}

} // namespace math
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_ELEMENTWISE_BINARYMATH_H
