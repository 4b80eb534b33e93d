//===- ElementwiseKernelTest.cpp - unary, binary, where, cast ------------===//
#include "KernelTestUtil.h"
#include "UnaryOracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

using namespace mptrt;
using namespace mptrt::test;

namespace {

//===----------------------------------------------------------------------===//
// Unary.
//===----------------------------------------------------------------------===//

struct UnaryCase {
  const char *kind;
  std::function<double(double)> ref;
  double lo, hi;
  std::vector<Attribute> attrs;
};

/// Every float function without attributes of UnaryKinds.def, on inputs in
/// its domain, and the functions with attributes with some values of them.
std::vector<UnaryCase> unaryCases() {
  std::vector<UnaryCase> cases;
  for (const oracle::UnaryFunctionInfo &u : oracle::unaryFunctions()) {
    if (!u.kernel || u.attrs || !u.floating)
      continue;
    const std::string kind = u.kind;
    auto ref = [kind](double x) {
      double f, df;
      EXPECT_TRUE(oracle::evalUnary(kind, x, oracle::defaultArgs(kind), &f, &df)) << kind;
      return f;
    };
    cases.push_back({u.kind, ref, u.positive ? 0.1 : -u.width(2), u.positive ? 4 : u.width(2), {}});
  }
  auto with = [](const char *kind, oracle::UnaryArgs a) {
    return [kind, a](double x) {
      double f, df;
      EXPECT_TRUE(oracle::evalUnary(kind, x, a, &f, &df)) << kind;
      return f;
    };
  };
  oracle::UnaryArgs leaky, clip, clipMin;
  leaky.alpha = 0.2;
  clip.lo = clipMin.lo = -0.5;
  clip.hi = 1.25;
  cases.push_back(
      {"leaky_relu", with("leaky_relu", leaky), -2, 2, {Attribute::makeFloat("alpha", 0.2)}});
  cases.push_back({"gelu", with("gelu", {}), -3, 3, {}});
  cases.push_back(
      {"gelu", with("gelu_tanh", {}), -3, 3, {Attribute::makeString("approximate", "tanh")}});
  cases.push_back({"clip",
                   with("clip", clip),
                   -2,
                   2,
                   {Attribute::makeFloat("min", -0.5), Attribute::makeFloat("max", 1.25)}});
  cases.push_back({"clip", with("clip", clipMin), -2, 2, {Attribute::makeFloat("min", -0.5)}});
  return cases;
}

// Tests every float unary kind in every float dtype (same in and out), and
// with a bf16 input and f32 output, against float64.
TEST(UnaryKernels, FloatKindsAllDTypes) {
  std::mt19937 rng(1);
  for (const UnaryCase &c : unaryCases()) {
    std::vector<std::pair<DType, DType>> types;
    for (DType t : floatDTypes())
      types.push_back({t, t});
    types.push_back({DType::BF16, DType::F32});
    types.push_back({DType::F32, DType::F8E4M3FN});
    for (auto [in, out] : types) {
      HostTensor x = randomTensor(in, {3, 7, 5}, rng, c.lo, c.hi);
      KernelRun r = runKernel(c.kind, {x}, {HostTensor(out, {3, 7, 5})}, c.attrs);
      ASSERT_TRUE(r.ok) << c.kind << ": " << r.error;
      std::vector<double> ref;
      for (double v : x.values())
        ref.push_back(c.ref(v));
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 2e-6))
          << c.kind << " " << plan::dtypeName(in) << " -> " << plan::dtypeName(out);
    }
  }
}

// Tests the integer unary kinds (relu, neg, abs, clip) and not on i1.
TEST(UnaryKernels, IntegerKinds) {
  std::mt19937 rng(2);
  for (DType t : {DType::I32, DType::I64}) {
    HostTensor x = randomTensor(t, {4, 6}, rng, -50, 50);
    struct {
      const char *kind;
      std::function<double(double)> ref;
      std::vector<Attribute> attrs;
    } cases[] = {{"relu", [](double v) { return v > 0 ? v : 0; }, {}},
                 {"neg", [](double v) { return -v; }, {}},
                 {"abs", [](double v) { return std::fabs(v); }, {}},
                 {"clip",
                  [](double v) { return std::min(std::max(v, -7.0), 20.0); },
                  {Attribute::makeFloat("min", -7.5), Attribute::makeFloat("max", 20.5)}}};
    for (auto &c : cases) {
      KernelRun r = runKernel(c.kind, {x}, {HostTensor(t, {4, 6})}, c.attrs);
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> ref;
      for (double v : x.values())
        ref.push_back(c.ref(v));
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0)) << c.kind;
    }
  }
  HostTensor b = randomTensor(DType::I1, {9}, rng);
  KernelRun r = runKernel("not", {b}, {HostTensor(DType::I1, {9})});
  ASSERT_TRUE(r.ok) << r.error;
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(r.outputs[0].get(i), 1 - b.get(i));
}

// Tests that a big tensor (split across threads) gives the same as a small one.
TEST(UnaryKernels, LargeTensorUsesAllChunks) {
  std::mt19937 rng(3);
  HostTensor x = randomTensor(DType::BF16, {300001}, rng);
  KernelRun r = runKernel("tanh", {x}, {HostTensor(DType::BF16, {300001})});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<double> ref;
  for (double v : x.values())
    ref.push_back(std::tanh(v));
  EXPECT_TRUE(closeTo(r.outputs[0], ref));
}

//===----------------------------------------------------------------------===//
// Binary.
//===----------------------------------------------------------------------===//

/// Element of `t` that broadcasts to output index `idx` (numpy rules).
double broadcastGet(const HostTensor &t, const std::vector<int64_t> &idx) {
  const size_t lead = idx.size() - t.shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < t.shape.size(); ++d)
    flat = flat * t.shape[d] + (t.shape[d] == 1 ? 0 : idx[lead + d]);
  return t.get(flat);
}

std::vector<double> binaryRef(const HostTensor &a, const HostTensor &b,
                              const std::vector<int64_t> &outShape,
                              const std::function<double(double, double)> &f) {
  int64_t n = 1;
  for (int64_t d : outShape)
    n *= d;
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unflatten(i, outShape);
    ref[i] = f(broadcastGet(a, idx), broadcastGet(b, idx));
  }
  return ref;
}

struct BinaryCase {
  const char *kind;
  std::function<double(double, double)> ref;
  bool positiveLhs;
};

const std::vector<BinaryCase> &floatBinaryCases() {
  static const std::vector<BinaryCase> cases = {
      {"add", [](double a, double b) { return a + b; }, false},
      {"sub", [](double a, double b) { return a - b; }, false},
      {"mul", [](double a, double b) { return a * b; }, false},
      {"div", [](double a, double b) { return a / b; }, false},
      {"pow", [](double a, double b) { return std::pow(a, b); }, true},
      {"max", [](double a, double b) { return std::max(a, b); }, false},
      {"min", [](double a, double b) { return std::min(a, b); }, false},
  };
  return cases;
}

struct ShapeCase {
  std::vector<int64_t> lhs, rhs, out;
};
const ShapeCase kShapes[] = {
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}, {2, 3, 4}},
    {{4}, {2, 3, 4}, {2, 3, 4}},       {{}, {2, 3}, {2, 3}},
    {{2, 1, 5}, {1, 3, 1}, {2, 3, 5}}, {{1}, {1}, {1}},
};

// Tests the float binary kinds with broadcasting in every float dtype.
TEST(BinaryKernels, FloatKindsBroadcastAllDTypes) {
  std::mt19937 rng(4);
  for (const BinaryCase &c : floatBinaryCases())
    for (const ShapeCase &s : kShapes)
      for (DType t : floatDTypes()) {
        HostTensor a =
            c.positiveLhs ? randomTensor(t, s.lhs, rng, 0.5, 2) : randomTensor(t, s.lhs, rng);
        HostTensor b = randomTensor(t, s.rhs, rng);
        KernelRun r = runKernel(c.kind, {a, b}, {HostTensor(t, s.out)});
        ASSERT_TRUE(r.ok) << c.kind << ": " << r.error;
        EXPECT_TRUE(closeTo(r.outputs[0], binaryRef(a, b, s.out, c.ref), 2e-6))
            << c.kind << " " << plan::dtypeName(t);
      }
}

// Tests mixed operand dtypes: bf16 + f32 -> f32, and f8 * f16 -> bf16.
TEST(BinaryKernels, MixedFloatDTypes) {
  std::mt19937 rng(5);
  HostTensor a = randomTensor(DType::BF16, {3, 4}, rng);
  HostTensor b = randomTensor(DType::F32, {4}, rng);
  KernelRun r = runKernel("add", {a, b}, {HostTensor(DType::F32, {3, 4})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(closeTo(r.outputs[0], binaryRef(a, b, {3, 4}, std::plus<double>())));
  HostTensor c = randomTensor(DType::F8E4M3FN, {3, 4}, rng);
  HostTensor d = randomTensor(DType::F16, {3, 1}, rng);
  r = runKernel("mul", {c, d}, {HostTensor(DType::BF16, {3, 4})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(closeTo(r.outputs[0], binaryRef(c, d, {3, 4}, std::multiplies<double>())));
}

// Tests integer arithmetic: truncating division, division by zero gives 0,
// INT64_MIN / -1 wraps, integer pow, i32 wrap-around.
TEST(BinaryKernels, Integers) {
  std::mt19937 rng(6);
  for (DType t : {DType::I32, DType::I64}) {
    HostTensor a = randomTensor(t, {3, 5}, rng, -40, 40);
    HostTensor b = randomTensor(t, {5}, rng, -9, 9);
    struct {
      const char *kind;
      std::function<double(double, double)> ref;
    } cases[] = {
        {"add", [](double x, double y) { return x + y; }},
        {"sub", [](double x, double y) { return x - y; }},
        {"mul", [](double x, double y) { return x * y; }},
        {"div", [](double x, double y) { return y == 0 ? 0 : std::trunc(x / y); }},
        {"max", [](double x, double y) { return std::max(x, y); }},
        {"min", [](double x, double y) { return std::min(x, y); }},
    };
    for (auto &c : cases) {
      KernelRun r = runKernel(c.kind, {a, b}, {HostTensor(t, {3, 5})});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_TRUE(closeTo(r.outputs[0], binaryRef(a, b, {3, 5}, c.ref), 0, 0)) << c.kind;
    }
  }
  const int64_t mn = std::numeric_limits<int64_t>::min();
  HostTensor a(DType::I64, {4}), b(DType::I64, {4});
  const int64_t av[4] = {mn, 7, 3, -2}, bv[4] = {-1, 0, 4, 3};
  std::memcpy(a.bytes.data(), av, 32);
  std::memcpy(b.bytes.data(), bv, 32);
  KernelRun r = runKernel("div", {a, b}, {HostTensor(DType::I64, {4})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].getInt(0), mn);
  EXPECT_EQ(r.outputs[0].getInt(1), 0);
  r = runKernel("pow", {a, b}, {HostTensor(DType::I64, {4})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].getInt(1), 1);  // 7^0
  EXPECT_EQ(r.outputs[0].getInt(2), 81); // 3^4
  EXPECT_EQ(r.outputs[0].getInt(3), -8); // (-2)^3
  HostTensor big = fromValues(DType::I32, {1}, {2147483647});
  HostTensor one = fromValues(DType::I32, {1}, {1});
  r = runKernel("add", {big, one}, {HostTensor(DType::I32, {1})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].getInt(0), -2147483648LL);
}

// Tests comparisons on floats (any dtype), integers and booleans.
TEST(BinaryKernels, Comparisons) {
  std::mt19937 rng(7);
  struct {
    const char *kind;
    std::function<double(double, double)> ref;
  } cases[] = {{"equal", [](double x, double y) { return x == y; }},
               {"less", [](double x, double y) { return x < y; }},
               {"greater", [](double x, double y) { return x > y; }}};
  for (auto &c : cases)
    for (DType t : {DType::F32, DType::BF16, DType::F8E5M2, DType::I32, DType::I64, DType::I1}) {
      // Few distinct values so that equality happens.
      HostTensor a = randomTensor(t, {4, 3}, rng, -2, 2, 0.0);
      HostTensor b = randomTensor(t, {3}, rng, -2, 2, 0.0);
      for (HostTensor *h : {&a, &b})
        if (plan::isFloatDType(t))
          for (int64_t i = 0; i < h->numel(); ++i)
            h->set(i, std::round(h->get(i)));
      KernelRun r = runKernel(c.kind, {a, b}, {HostTensor(DType::I1, {4, 3})});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_TRUE(closeTo(r.outputs[0], binaryRef(a, b, {4, 3}, c.ref), 0, 0))
          << c.kind << " " << plan::dtypeName(t);
    }
}

// Tests that NaN propagates through max / min and compares false.
TEST(BinaryKernels, NaN) {
  HostTensor a = fromValues(DType::F32, {2}, {NAN, 1});
  HostTensor b = fromValues(DType::F32, {2}, {1, NAN});
  for (const char *kind : {"max", "min"}) {
    KernelRun r = runKernel(kind, {a, b}, {HostTensor(DType::F32, {2})});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(std::isnan(r.outputs[0].get(0)) && std::isnan(r.outputs[0].get(1))) << kind;
  }
  KernelRun r = runKernel("equal", {a, a}, {HostTensor(DType::I1, {2})});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.outputs[0].get(0), 0);
  EXPECT_EQ(r.outputs[0].get(1), 1);
}

//===----------------------------------------------------------------------===//
// Where.
//===----------------------------------------------------------------------===//

// Tests where with three-way broadcasting over several element types.
TEST(WhereKernel, Broadcast) {
  std::mt19937 rng(8);
  for (DType t : {DType::F32, DType::BF16, DType::F8E4M3FN, DType::I64, DType::I32, DType::I1}) {
    HostTensor cond = randomTensor(DType::I1, {2, 1, 4}, rng);
    HostTensor x = randomTensor(t, {3, 4}, rng);
    HostTensor y = randomTensor(t, {2, 3, 1}, rng);
    KernelRun r = runKernel("where", {cond, x, y}, {HostTensor(t, {2, 3, 4})});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> ref(24);
    for (int64_t i = 0; i < 24; ++i) {
      std::vector<int64_t> idx = unflatten(i, {2, 3, 4});
      ref[i] = broadcastGet(cond, idx) != 0 ? broadcastGet(x, idx) : broadcastGet(y, idx);
    }
    EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0)) << plan::dtypeName(t);
  }
}

//===----------------------------------------------------------------------===//
// Cast: every dtype pair.
//===----------------------------------------------------------------------===//

/// Expected bit pattern of casting element i of `src` to `to`.
uint64_t expectedCastBits(const HostTensor &src, int64_t i, DType to, bool saturate) {
  HostTensor one(to, {1});
  const bool fromFloat = plan::isFloatDType(src.dtype);
  if (fromFloat) {
    const float v = static_cast<float>(src.get(i)); // exact
    switch (to) {
    case DType::I64: {
      int64_t r = std::isnan(v)  ? 0
                  : v >= 0x1p63f ? std::numeric_limits<int64_t>::max()
                  : v < -0x1p63f ? std::numeric_limits<int64_t>::min()
                                 : static_cast<int64_t>(v);
      std::memcpy(one.bytes.data(), &r, 8);
      break;
    }
    case DType::I32: {
      int32_t r = std::isnan(v)  ? 0
                  : v >= 0x1p31f ? std::numeric_limits<int32_t>::max()
                  : v < -0x1p31f ? std::numeric_limits<int32_t>::min()
                                 : static_cast<int32_t>(v);
      std::memcpy(one.bytes.data(), &r, 4);
      break;
    }
    case DType::I1:
      one.bytes[0] = v != 0.0f;
      break;
    case DType::F8E4M3FN:
      one.bytes[0] = saturate ? numerics::f32ToF8E4M3FNSaturating(v) : numerics::f32ToF8E4M3FN(v);
      break;
    case DType::F8E5M2:
      one.bytes[0] = saturate ? numerics::f32ToF8E5M2Saturating(v) : numerics::f32ToF8E5M2(v);
      break;
    default:
      one.set(0, v);
      break;
    }
  } else {
    const int64_t v = src.getInt(i);
    switch (to) {
    case DType::I64:
      std::memcpy(one.bytes.data(), &v, 8);
      break;
    case DType::I32: {
      int32_t r = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
      std::memcpy(one.bytes.data(), &r, 4);
      break;
    }
    case DType::I1:
      one.bytes[0] = v != 0;
      break;
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(one.bytes.data(), &f, 4);
      break;
    }
    default:
      one.set(0, numerics::int64ToF32RoundToOdd(v));
      break;
    }
  }
  uint64_t bits = 0;
  std::memcpy(&bits, one.bytes.data(), one.bytes.size());
  return bits;
}

HostTensor castSource(DType t) {
  std::vector<double> values;
  if (plan::isFloatDType(t))
    values = {0.0,  -0.0,  1.0,      -2.5,      2.5, 0.3,     -1e-3, 1000.0, -3e5, 7e4,
              1e-6, 300.0, INFINITY, -INFINITY, NAN, 65519.0, 3e9,   -3e9,   1e20};
  else
    values = {0,
              1,
              -1,
              7,
              -300,
              2147483647.0,
              -2147483648.0,
              4294967297.0,
              1099511627777.0,
              -1099511627777.0,
              16777217,
              33554435,
              100000};
  HostTensor src(t, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    src.set(i, values[i]);
  if (t == DType::I64) { // values beyond double precision too
    int64_t big[2] = {(int64_t{1} << 62) + 12345, std::numeric_limits<int64_t>::min()};
    std::memcpy(src.bytes.data(), big, 16);
  }
  return src;
}

// Tests every dtype pair, with and without saturation, on edge values.
TEST(CastKernel, EveryDTypePair) {
  const DType all[] = {DType::F32,    DType::F16, DType::BF16, DType::F8E4M3FN,
                       DType::F8E5M2, DType::I64, DType::I32,  DType::I1};
  for (DType from : all)
    for (DType to : all)
      for (bool saturate : {false, true}) {
        HostTensor src = castSource(from);
        std::vector<Attribute> attrs;
        if (saturate)
          attrs.push_back(Attribute::makeInt("saturate", 1));
        KernelRun r = runKernel("cast", {src}, {HostTensor(to, src.shape)}, attrs);
        ASSERT_TRUE(r.ok) << r.error;
        for (int64_t i = 0; i < src.numel(); ++i) {
          uint64_t got = 0;
          std::memcpy(&got, r.outputs[0].bytes.data() + i * plan::dtypeSize(to),
                      plan::dtypeSize(to));
          uint64_t want = expectedCastBits(src, i, to, saturate);
          if (plan::isFloatDType(to) && std::isnan(r.outputs[0].get(i))) {
            HostTensor w(to, {1});
            std::memcpy(w.bytes.data(), &want, plan::dtypeSize(to));
            EXPECT_TRUE(std::isnan(w.get(0)));
            continue;
          }
          EXPECT_EQ(got, want) << plan::dtypeName(from) << " -> " << plan::dtypeName(to)
                               << (saturate ? " (saturating)" : "") << " element " << i << " value "
                               << src.get(i);
        }
      }
}

// Tests the documented fp8 overflow results of cast directly.
TEST(CastKernel, Fp8Overflow) {
  HostTensor src = fromValues(DType::F32, {4}, {500, -1e6, INFINITY, 464});
  KernelRun r = runKernel("cast", {src}, {HostTensor(DType::F8E4M3FN, {4})});
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(std::isnan(r.outputs[0].get(0)));
  EXPECT_TRUE(std::isnan(r.outputs[0].get(2)));
  EXPECT_EQ(r.outputs[0].get(3), 448);
  r = runKernel("cast", {src}, {HostTensor(DType::F8E4M3FN, {4})},
                {Attribute::makeInt("saturate", 1)});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.outputs[0].values(), (std::vector<double>{448, -448, 448, 448}));
  r = runKernel("cast", {src}, {HostTensor(DType::F8E5M2, {4})});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.outputs[0].get(1), -INFINITY);
}

// Tests quantize against f32 product + saturating RNE conversion, from
// every float dtype into both FP8 types, on values that overflow, tie and
// underflow, with NaN kept.
TEST(QuantizeKernel, ScaledSaturatingConversion) {
  std::mt19937 rng(7);
  for (DType from : floatDTypes()) {
    if (from == DType::F8E4M3FN)
      continue; // cannot hold -1e4 below; E4M3 inputs go through the same path
    HostTensor x = randomTensor(from, {3, 7}, rng);
    x.set(0, 1.0);  // * 100 = 100: a tie in E4M3 (96 or 104) -> 96
    x.set(1, 20.0); // * 100 = 2000: beyond E4M3's 448, fine in E5M2
    x.set(2, -1e4); // * 100 saturates negative in both
    HostTensor scale = fromValues(DType::F32, {}, {100.0});
    for (DType to : {DType::F8E4M3FN, DType::F8E5M2}) {
      KernelRun r = runKernel("quantize", {x, scale}, {HostTensor(to, {3, 7})});
      ASSERT_TRUE(r.ok) << r.error;
      for (int64_t i = 0; i < 21; ++i) {
        float v = static_cast<float>(x.get(i)) * 100.0f;
        double want = to == DType::F8E4M3FN
                          ? numerics::f8E4M3FNToF32(numerics::f32ToF8E4M3FNSaturating(v))
                          : numerics::f8E5M2ToF32(numerics::f32ToF8E5M2Saturating(v));
        EXPECT_EQ(r.outputs[0].get(i), want)
            << plan::dtypeName(from) << " -> " << plan::dtypeName(to) << " element " << i;
      }
    }
  }
  HostTensor nan = fromValues(DType::F32, {2}, {NAN, INFINITY});
  KernelRun r = runKernel("quantize", {nan, fromValues(DType::F32, {}, {2.0})},
                          {HostTensor(DType::F8E4M3FN, {2})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(std::isnan(r.outputs[0].get(0)));
  EXPECT_EQ(r.outputs[0].get(1), 448);
}

// Tests that quantize checks its operands at load.
TEST(QuantizeKernel, Rejections) {
  HostTensor x = fromValues(DType::F32, {2}, {1, 2});
  EXPECT_FALSE(runKernel("quantize", {x, fromValues(DType::F32, {1}, {1})},
                         {HostTensor(DType::F8E4M3FN, {2})})
                   .ok);
  EXPECT_FALSE(
      runKernel("quantize", {x, fromValues(DType::F32, {}, {1})}, {HostTensor(DType::BF16, {2})})
          .ok);
  EXPECT_FALSE(
      runKernel("quantize", {x, fromValues(DType::F32, {}, {1})}, {HostTensor(DType::F8E5M2, {3})})
          .ok);
}

} // namespace
