//===- UnaryOracle.h - float64 references of the unary functions ---------===//
//
// Each elementwise unary function of mptrt/generated/UnaryKinds.def and its
// derivative in float64: the oracle the kernel tests (runtime/test) and the
// compiler's reference interpreter (test/unit/RefOps*.cpp) check against.
// Written from the mathematical definitions, independently of the kernels'
// float32 rules (runtime/src/kernels/elementwise/UnaryMath.h).
//
// A function `Name` is a struct with
//   static double f(double x, const UnaryArgs &a)    the function
//   static double df(double x, const UnaryArgs &a)   its derivative (0 for
//                                                    the functions without
//                                                    a unary_grad kind)
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_UNARYORACLE_H
#define MPTRT_TEST_UNARYORACLE_H

#include <cmath>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

namespace mptrt {
namespace oracle {

/// The attributes of the functions that take some.
struct UnaryArgs {
  double alpha = 0.01;                  // leaky_relu; a float parameter
  double beta = 0, gamma = 0;           // the other float parameters
  double lo = -INFINITY, hi = INFINITY; // clip
};

constexpr double kPi = 3.14159265358979323846;

struct Sqrt {
  static double f(double x, const UnaryArgs &) { return std::sqrt(x); }
  static double df(double x, const UnaryArgs &) { return 0.5 / std::sqrt(x); }
};
struct Exp {
  static double f(double x, const UnaryArgs &) { return std::exp(x); }
  static double df(double x, const UnaryArgs &) { return std::exp(x); }
};
struct Log {
  static double f(double x, const UnaryArgs &) { return std::log(x); }
  static double df(double x, const UnaryArgs &) { return 1.0 / x; }
};
struct Erf {
  static double f(double x, const UnaryArgs &) { return std::erf(x); }
  static double df(double x, const UnaryArgs &) { return 2.0 / std::sqrt(kPi) * std::exp(-x * x); }
};
struct Tanh {
  static double f(double x, const UnaryArgs &) { return std::tanh(x); }
  static double df(double x, const UnaryArgs &) { return 1.0 - std::tanh(x) * std::tanh(x); }
};
struct Sigmoid {
  static double f(double x, const UnaryArgs &) { return 1.0 / (1.0 + std::exp(-x)); }
  static double df(double x, const UnaryArgs &a) {
    const double s = f(x, a);
    return s * (1.0 - s);
  }
};
struct Softplus {
  static double f(double x, const UnaryArgs &) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  static double df(double x, const UnaryArgs &) { return 1.0 / (1.0 + std::exp(-x)); }
};
struct Sin {
  static double f(double x, const UnaryArgs &) { return std::sin(x); }
  static double df(double x, const UnaryArgs &) { return std::cos(x); }
};
struct Cos {
  static double f(double x, const UnaryArgs &) { return std::cos(x); }
  static double df(double x, const UnaryArgs &) { return -std::sin(x); }
};
struct Softsign {
  static double f(double x, const UnaryArgs &) { return x / (1.0 + std::fabs(x)); }
  static double df(double x, const UnaryArgs &) {
    return 1.0 / ((1.0 + std::fabs(x)) * (1.0 + std::fabs(x)));
  }
};
struct Sinh {
  static double f(double x, const UnaryArgs &) { return std::sinh(x); }
  static double df(double x, const UnaryArgs &) { return std::cosh(x); }
};
struct Cosh {
  static double f(double x, const UnaryArgs &) { return std::cosh(x); }
  static double df(double x, const UnaryArgs &) { return std::sinh(x); }
};
struct Asinh {
  static double f(double x, const UnaryArgs &) { return std::asinh(x); }
  static double df(double x, const UnaryArgs &) { return 1.0 / std::sqrt(1.0 + x * x); }
};
// x relu6(x + 3) / 6; at the kinks, the derivative of the middle piece.
struct HardSwish {
  static constexpr double reach = 4.5;
  static constexpr double kinks[] = {-3.0, 3.0};
  static double f(double x, const UnaryArgs &) {
    return x * std::fmin(std::fmax(x + 3.0, 0.0), 6.0) / 6.0;
  }
  static double df(double x, const UnaryArgs &) {
    return x < -3.0 ? 0.0 : (x <= 3.0 ? x / 3.0 + 0.5 : 1.0);
  }
};
struct Elu {
  static double f(double x, const UnaryArgs &a) { return x > 0 ? x : a.alpha * std::expm1(x); }
  static double df(double x, const UnaryArgs &a) { return x > 0 ? 1.0 : a.alpha * std::exp(x); }
};
struct Selu {
  static double f(double x, const UnaryArgs &a) {
    return a.gamma * (x > 0 ? x : a.alpha * std::expm1(x));
  }
  static double df(double x, const UnaryArgs &a) {
    return a.gamma * (x > 0 ? 1.0 : a.alpha * std::exp(x));
  }
};
struct Celu {
  static double f(double x, const UnaryArgs &a) {
    return x > 0 ? x : a.alpha * std::expm1(x / a.alpha);
  }
  static double df(double x, const UnaryArgs &a) { return x > 0 ? 1.0 : std::exp(x / a.alpha); }
};
// Kinks where alpha x + beta is 0 or 1: +-2.5 at the defaults.
struct HardSigmoid {
  static constexpr double reach = 3.5;
  static constexpr double kinks[] = {-2.5, 2.5};
  static double f(double x, const UnaryArgs &a) {
    return std::fmin(std::fmax(a.alpha * x + a.beta, 0.0), 1.0);
  }
  static double df(double x, const UnaryArgs &a) {
    const double t = a.alpha * x + a.beta;
    return t > 0 && t < 1 ? a.alpha : 0.0;
  }
};
struct ThresholdedRelu {
  static constexpr double reach = 2;
  static constexpr double kinks[] = {1.0};
  static double f(double x, const UnaryArgs &a) { return x > a.alpha ? x : 0.0; }
  static double df(double x, const UnaryArgs &a) { return x > a.alpha ? 1.0 : 0.0; }
};
// Piecewise constant: the derivative is 0 away from the steps (the kinks).
struct Floor {
  static constexpr double reach = 2;
  static constexpr double kinks[] = {-2.0, -1.0, 0.0, 1.0, 2.0};
  static double f(double x, const UnaryArgs &) { return std::floor(x); }
  static double df(double, const UnaryArgs &) { return 0.0; }
};
struct Ceil {
  static constexpr double reach = 2;
  static constexpr double kinks[] = {-2.0, -1.0, 0.0, 1.0, 2.0};
  static double f(double x, const UnaryArgs &) { return std::ceil(x); }
  static double df(double, const UnaryArgs &) { return 0.0; }
};
// Halves to even.
struct Round {
  static constexpr double reach = 2;
  static constexpr double kinks[] = {-1.5, -0.5, 0.5, 1.5};
  static double f(double x, const UnaryArgs &) {
    const double r = std::floor(x), d = x - r;
    if (d != 0.5)
      return d < 0.5 ? r : r + 1;
    return std::fmod(r, 2.0) == 0 ? r : r + 1;
  }
  static double df(double, const UnaryArgs &) { return 0.0; }
};
struct Sign {
  static constexpr double reach = 2;
  static constexpr double kinks[] = {0.0};
  static double f(double x, const UnaryArgs &) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }
  static double df(double, const UnaryArgs &) { return 0.0; }
};
struct Relu {
  static double f(double x, const UnaryArgs &) { return x > 0 ? x : 0.0; }
  static double df(double x, const UnaryArgs &) { return x > 0 ? 1.0 : 0.0; }
};
struct Neg {
  static double f(double x, const UnaryArgs &) { return -x; }
  static double df(double, const UnaryArgs &) { return -1.0; }
};
struct Abs {
  static double f(double x, const UnaryArgs &) { return std::fabs(x); }
  static double df(double x, const UnaryArgs &) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
};
struct Not {
  static double f(double x, const UnaryArgs &) { return x == 0 ? 1.0 : 0.0; }
  static double df(double, const UnaryArgs &) { return 0.0; }
};
struct LeakyRelu {
  static double f(double x, const UnaryArgs &a) { return x >= 0 ? x : a.alpha * x; }
  static double df(double x, const UnaryArgs &a) { return x > 0 ? 1.0 : a.alpha; }
};
// x Phi(x); derivative Phi(x) + x phi(x).
struct Gelu {
  static double f(double x, const UnaryArgs &) {
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  static double df(double x, const UnaryArgs &) {
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
           x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi);
  }
};
// PyTorch's tanh approximation of GELU.
struct GeluTanh {
  static double u(double x) { return std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x); }
  static double f(double x, const UnaryArgs &) { return 0.5 * x * (1.0 + std::tanh(u(x))); }
  static double df(double x, const UnaryArgs &) {
    const double t = std::tanh(u(x));
    const double du = std::sqrt(2.0 / kPi) * (1.0 + 3.0 * 0.044715 * x * x);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
  }
};
// The derivative is 1 inside the bounds, included.
struct Clip {
  static double f(double x, const UnaryArgs &a) { return std::fmin(std::fmax(x, a.lo), a.hi); }
  static double df(double x, const UnaryArgs &a) { return a.lo <= x && x <= a.hi ? 1.0 : 0.0; }
};

/// f(x) and f'(x) of the function of kind `kind`; false for an unknown kind.
inline bool evalUnary(const std::string &kind, double x, const UnaryArgs &a, double *f,
                      double *df) {
#define MPTRT_UNARY_FUNCTION(Name, k, ...)                                                         \
  if (kind == #k) {                                                                                \
    *f = Name::f(x, a);                                                                            \
    *df = Name::df(x, a);                                                                          \
    return true;                                                                                   \
  }
#include "mptrt/generated/UnaryKinds.def"
  return false;
}

/// Where tests draw a function's inputs, when not the tests' own default:
/// an oracle whose shape lies further out than [-2, 2] says so with a
/// `reach` member (inputs in [-reach, reach]) and a `kinks` array (points
/// the finite differences keep away from, and the kernel tests hit exactly).
template <class T, class = void> struct DomainOf {
  static constexpr double reach = 0;
  static std::vector<double> kinks() { return {}; }
};
template <class T> struct DomainOf<T, std::void_t<decltype(T::reach)>> {
  static constexpr double reach = T::reach;
  static std::vector<double> kinks() { return {std::begin(T::kinks), std::end(T::kinks)}; }
};

/// The arguments a function of kind `kind` takes when its op or kernel
/// gives none: its record's parameter defaults (UnaryKinds.def).
inline UnaryArgs defaultArgs(const std::string &kind) {
  UnaryArgs a;
#define MPTRT_UNARY_PARAM(Name, k, param, value)                                                   \
  if (kind == #k)                                                                                  \
    a.param = value;
#include "mptrt/generated/UnaryKinds.def"
  return a;
}

/// One row of UnaryKinds.def, for tests that walk every function.
struct UnaryFunctionInfo {
  const char *kind;
  bool kernel, attrs, floating, integer, transcendental, grad, positive;
  /// Piecewise constant: the gradient is zero (MPTRT_UNARY_ZERO_GRAD).
  bool zeroGrad;
  /// 0, or the half-width of the inputs to draw (DomainOf).
  double reach;
  std::vector<double> kinks;
  /// The half-width of a test's inputs: its own default `def`, or the
  /// function's reach where that is wider.
  double width(double def) const { return reach > def ? reach : def; }
};

/// Whether `kind` is piecewise constant (its gradient is zero).
inline bool isZeroGrad(const std::string &kind) {
#define MPTRT_UNARY_ZERO_GRAD(Name, k)                                                             \
  if (kind == #k)                                                                                  \
    return true;
#include "mptrt/generated/UnaryKinds.def"
  return false;
}

/// Every function of UnaryKinds.def, in order.
inline const std::vector<UnaryFunctionInfo> &unaryFunctions() {
  static const std::vector<UnaryFunctionInfo> all = {
#define MPTRT_UNARY_FUNCTION(Name, k, kernel, attrs, floating, integer, transcendental, grad,      \
                             positive)                                                             \
  {#k,                                                                                             \
   kernel,                                                                                         \
   attrs,                                                                                          \
   floating,                                                                                       \
   integer,                                                                                        \
   transcendental,                                                                                 \
   grad,                                                                                           \
   positive,                                                                                       \
   isZeroGrad(#k),                                                                                 \
   DomainOf<Name>::reach,                                                                          \
   DomainOf<Name>::kinks()},
#include "mptrt/generated/UnaryKinds.def"
  };
  return all;
}

} // namespace oracle
} // namespace mptrt

#endif // MPTRT_TEST_UNARYORACLE_H
