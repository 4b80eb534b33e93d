//===- UnaryMath.h - the elementwise unary functions and derivatives ------===//
//
// Each elementwise unary function's forward rule and derivative, written
// once for the CPU and the CUDA backend (MPTRT_HOST_DEVICE, as Numerics.h
// does for the conversions). The kinds themselves, and which of them take
// integers or have a gradient, come from mptrt/generated/UnaryKinds.def
// (generated from include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td); the
// backends expand that list into their dispatch, so a function is one
// struct here and one record there.
//
// A function `Name` is a struct template over a libm `L`, with
//   static float f(float x, const UnaryConsts &c)               the function
//   static float grad(float x, float dy, const UnaryConsts &c)  f'(x) * dy
//   static int64_t fi(int64_t x, const UnaryConsts &c)          on integers
// in float32 arithmetic, rounded as written (the CPU's and CUDA's results
// follow these expressions operation by operation). `grad` and `fi` have
// defaults (UnaryBase) for the functions that have no gradient or take no
// integers: the decoders never select them there.
//
// L supplies exp, expm1, log, log1p, erf, tanh, sqrt, sin, cos and pow on
// float:
//   - HostLibm: the CPU's <cmath> (glibc);
//   - on CUDA (cuda/CpuMath.cuh): DeviceLibm, CUDA's own functions (the
//     forward kernels), and CpuLikeLibm, exp/erf/tanh evaluated in double
//     and rounded once, which agree with glibc wherever it rounds
//     correctly (the gradients, where cancellation magnifies an ulp).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_ELEMENTWISE_UNARYMATH_H
#define MPTRT_SRC_KERNELS_ELEMENTWISE_UNARYMATH_H

#include "mptrt/Numerics.h" // MPTRT_HOST_DEVICE

#include <cmath>
#include <cstdint>
#include <limits>

namespace mptrt {
namespace math {

/// The attributes of the functions that take some.
struct UnaryConsts {
  float alpha = 0.01f;                      // leaky_relu's slope; a parameter
  float beta = 0, gamma = 0;                // the other float parameters
  float lo = -INFINITY, hi = INFINITY;      // clip's bounds on floats
  int64_t ilo = INT64_MIN, ihi = INT64_MAX; // and on integers
};

/// A double bound clamped into int64 (ceil for a lower, floor for an upper).
inline int64_t intBound(double v, bool lower) {
  const double r = lower ? std::ceil(v) : std::floor(v);
  if (r >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (r <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(r);
}

/// The constants of decoded unary or unary_grad parameters (ops/OpParams.h).
template <class Params> UnaryConsts unaryConstsOf(const Params &p) {
  UnaryConsts c;
  c.alpha = p.alpha;
  c.beta = p.beta;
  c.gamma = p.gamma;
  if (p.hasMin) {
    c.lo = static_cast<float>(p.clipMin);
    c.ilo = intBound(p.clipMin, true);
  }
  if (p.hasMax) {
    c.hi = static_cast<float>(p.clipMax);
    c.ihi = intBound(p.clipMax, false);
  }
  return c;
}

/// The CPU's libm.
struct HostLibm {
  static float exp(float x) { return std::exp(x); }
  static float expm1(float x) { return std::expm1(x); }
  static float log(float x) { return std::log(x); }
  static float log1p(float x) { return std::log1p(x); }
  static float erf(float x) { return std::erf(x); }
  static float tanh(float x) { return std::tanh(x); }
  static float sqrt(float x) { return std::sqrt(x); }
  static float sin(float x) { return std::sin(x); }
  static float cos(float x) { return std::cos(x); }
  static float pow(float x, float y) { return std::pow(x, y); }
};

constexpr float kSqrtHalf = 0.70710678118654752f;      // 1 / sqrt(2)
constexpr float kInvSqrtTwoPi = 0.39894228040143268f;  // 1 / sqrt(2 pi)
constexpr float kTwoOverSqrtPi = 1.12837916709551257f; // 2 / sqrt(pi)
constexpr float kSqrtTwoOverPi = 0.79788456080286536f; // sqrt(2 / pi)
constexpr float kGeluTanhCoeff = 0.044715f;

/// Two's-complement negation of an int64 (wraps at the minimum).
MPTRT_HOST_DEVICE inline int64_t wrapNeg(int64_t x) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
}

/// Defaults: no integer form, no gradient (never decoded).
struct UnaryBase {
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) { return x; }
  MPTRT_HOST_DEVICE static float grad(float, float dy, const UnaryConsts &) { return dy; }
};

template <class L> struct Sqrt : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::sqrt(x); }
  // dy / (2 sqrt(x)); the doubling is exact.
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return dy / (2.0f * L::sqrt(x));
  }
};

template <class L> struct Exp : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::exp(x); }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return dy * L::exp(x);
  }
};

template <class L> struct Log : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::log(x); }
  // One rounding: dy / x.
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) { return dy / x; }
};

template <class L> struct Erf : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::erf(x); }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return dy * (kTwoOverSqrtPi * L::exp(-x * x));
  }
};

template <class L> struct Tanh : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::tanh(x); }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    const float t = L::tanh(x);
    return dy * (1.0f - t * t);
  }
};

template <class L> struct Sigmoid : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return 1.0f / (1.0f + L::exp(-x));
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    const float s = f(x, c);
    return dy * (s * (1.0f - s));
  }
};

// log(1 + exp(x)), and x itself above 20 (PyTorch's threshold, where the
// two agree in float32); the derivative is the logistic sigmoid.
template <class L> struct Softplus : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return x > 20.0f ? x : L::log1p(L::exp(x));
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    if (x > 20.0f)
      return dy;
    const float z = L::exp(x);
    return dy * (z / (z + 1.0f));
  }
};

template <class L> struct Sin : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::sin(x); }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return dy * L::cos(x);
  }
};

template <class L> struct Cos : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return L::cos(x); }
  // dy * -sin(x), as PyTorch rounds it (the negation is exact).
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return dy * -L::sin(x);
  }
};

// x * min(max(x + 3, 0), 6) / 6, PyTorch's order of operations; the
// derivative is 0 below -3, x / 3 + 1/2 from -3 to 3 (both included, as
// PyTorch's), 1 above. NaN stays NaN.
template <class L> struct HardSwish : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    const float s = x + 3.0f;
    const float r = s < 0.0f ? 0.0f : (s > 6.0f ? 6.0f : s);
    return x * r / 6.0f;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    if (x < -3.0f)
      return 0.0f;
    if (x <= 3.0f)
      return dy * (x / 3.0f + 0.5f);
    return dy;
  }
};

// The exponential linear units, as PyTorch computes them: expm1 below 0,
// and the derivative (dy * coefficient) * exp there. celu divides its input
// by alpha (multiplying by 1 / alpha, as PyTorch). NaN stays NaN.
template <class L> struct Elu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x <= 0.0f ? L::expm1(x) * c.alpha : x;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return x <= 0.0f ? dy * c.alpha * L::exp(x) : dy;
  }
};

template <class L> struct Selu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x <= 0.0f ? L::expm1(x) * (c.alpha * c.gamma) : x * c.gamma;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return x <= 0.0f ? dy * (c.alpha * c.gamma) * L::exp(x) : dy * c.gamma;
  }
};

template <class L> struct Celu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x <= 0.0f ? L::expm1(x * (1.0f / c.alpha)) * c.alpha : x;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    const float inv = 1.0f / c.alpha;
    return x <= 0.0f ? dy * inv * c.alpha * L::exp(x * inv) : dy;
  }
};

// min(max(alpha x + beta, 0), 1); the derivative is alpha strictly inside,
// 0 at and beyond the bounds (as PyTorch's). NaN stays NaN.
template <class L> struct HardSigmoid : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    const float t = c.alpha * x + c.beta;
    return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    const float t = c.alpha * x + c.beta;
    return t > 0.0f && t < 1.0f ? dy * c.alpha : 0.0f;
  }
};

// x above alpha, else 0; NaN stays NaN.
template <class L> struct ThresholdedRelu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x <= c.alpha ? 0.0f : x;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return x > c.alpha ? dy : 0.0f;
  }
};

// Piecewise constant: no gradient (the compiler's rule contributes none).
// std::floor, std::ceil and std::nearbyint are exact; nearbyint rounds
// halves to even in the default rounding mode, as ONNX's Round does.
template <class L> struct Floor : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return std::floor(x); }
};
template <class L> struct Ceil : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return std::ceil(x); }
};
template <class L> struct Round : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return std::nearbyint(x); }
};
// Zero (of either sign) and NaN map to themselves.
template <class L> struct Sign : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
  }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) {
    return x > 0 ? 1 : (x < 0 ? -1 : 0);
  }
};

// NaN stays NaN.
template <class L> struct Relu {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return x < 0.0f ? 0.0f : x; }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) { return x < 0 ? 0 : x; }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return x > 0.0f ? dy : 0.0f;
  }
};

// Its gradient is a neg of dy (an mpt rule), not a unary_grad kind.
template <class L> struct Neg : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return -x; }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) { return wrapNeg(x); }
};

template <class L> struct Abs {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return std::fabs(x); }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) {
    return x < 0 ? wrapNeg(x) : x;
  }
  // sign(x) dy; 0 at 0 (and for NaN).
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    return x > 0.0f ? dy : (x < 0.0f ? -dy : 0.0f);
  }
};

// Booleans only (0 or 1 in int64); the float form is never decoded.
template <class L> struct Not : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) { return x; }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &) { return x == 0; }
};

template <class L> struct LeakyRelu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x < 0.0f ? c.alpha * x : x;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return x > 0.0f ? dy : c.alpha * dy;
  }
};

// 0.5 x (1 + erf(x / sqrt 2)); derivative Phi(x) + x phi(x).
template <class L> struct Gelu : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return 0.5f * x * (1.0f + L::erf(x * kSqrtHalf));
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    const float cdf = 0.5f * (1.0f + L::erf(x * kSqrtHalf));
    const float pdf = kInvSqrtTwoPi * L::exp(-0.5f * x * x);
    return dy * (cdf + x * pdf);
  }
};

// 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
template <class L> struct GeluTanh : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return 0.5f * x * (1.0f + L::tanh(kSqrtTwoOverPi * (x + kGeluTanhCoeff * x * x * x)));
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    const float t = L::tanh(kSqrtTwoOverPi * (x + kGeluTanhCoeff * x * x * x));
    const float du = kSqrtTwoOverPi * (1.0f + 3.0f * kGeluTanhCoeff * x * x);
    return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
  }
};

// x / (1 + |x|); the derivative 1 / (1 + |x|)^2.
template <class L> struct Softsign : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    return x / (1.0f + (x < 0.0f ? -x : x));
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    const float d = 1.0f + (x < 0.0f ? -x : x);
    return dy / (d * d);
  }
};

// e^a / 2 for a = |x| past 88, where exp(a) overflows before sinh and cosh
// do (at 89.4): (e^(a/2) / 2) e^(a/2).
template <class L> MPTRT_HOST_DEVICE inline float halfExpLarge(float a) {
  const float h = L::exp(0.5f * a);
  return 0.5f * h * h;
}

// sinh x = (e^x - e^-x) / 2 = (m + m / (m + 1)) / 2 with m = expm1(|x|),
// without the cancellation near 0; the sign of x. The derivative is cosh.
template <class L> struct Cosh;
template <class L> struct Sinh : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    const float a = x < 0.0f ? -x : x;
    float r;
    if (a > 88.0f) {
      r = halfExpLarge<L>(a);
    } else {
      const float m = L::expm1(a);
      r = 0.5f * (m + m / (m + 1.0f));
    }
    return x < 0.0f ? -r : r;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return dy * Cosh<L>::f(x, c);
  }
};

// cosh x = (e^|x| + e^-|x|) / 2; the derivative is sinh.
template <class L> struct Cosh : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    const float a = x < 0.0f ? -x : x;
    if (a > 88.0f)
      return halfExpLarge<L>(a);
    const float e = L::exp(a);
    return 0.5f * (e + 1.0f / e);
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return dy * Sinh<L>::f(x, c);
  }
};

// asinh x = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), the sign of x (accurate
// near 0, where log(x + sqrt(1 + x^2)) cancels); past 2^12, where x^2 + 1
// rounds to x^2, log(2|x|) = log(|x|) + log 2. The derivative is
// 1 / sqrt(1 + x^2).
template <class L> struct Asinh : UnaryBase {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &) {
    const float a = x < 0.0f ? -x : x;
    float r;
    if (a > 4096.0f) {
      r = L::log(a) + 0.69314718055994531f;
    } else {
      const float s = a * a;
      r = L::log1p(a + s / (1.0f + L::sqrt(1.0f + s)));
    }
    return x < 0.0f ? -r : r;
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &) {
    const float a = x < 0.0f ? -x : x;
    if (a > 4096.0f)
      return dy / a;
    return dy / L::sqrt(1.0f + x * x);
  }
};

// Clamps into [lo, hi]; the gradient passes inside the bounds, included.
template <class L> struct Clip {
  MPTRT_HOST_DEVICE static float f(float x, const UnaryConsts &c) {
    return x < c.lo ? c.lo : (x > c.hi ? c.hi : x);
  }
  MPTRT_HOST_DEVICE static int64_t fi(int64_t x, const UnaryConsts &c) {
    return x < c.ilo ? c.ilo : (x > c.ihi ? c.ihi : x);
  }
  MPTRT_HOST_DEVICE static float grad(float x, float dy, const UnaryConsts &c) {
    return c.lo <= x && x <= c.hi ? dy : 0.0f;
  }
};

} // namespace math
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_ELEMENTWISE_UNARYMATH_H
