//===- NumericsTest.cpp - exhaustive tests of mptrt/Numerics.h -----------===//
//
// Checks the conversions against an independent reference: every format's
// values are decoded with ldexp, and rounding picks the nearer of the two
// representable neighbours of the input (ties to the even bit pattern),
// computed in long double, which holds every float32 and int64 exactly.
//
//===----------------------------------------------------------------------===//
#include "mptrt/Numerics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mptrt::numerics;

namespace {

enum class Mode { Apfloat, Saturating };

/// A narrow float format described by its field widths, with a table of its
/// non-negative finite values built without the code under test.
struct Format {
  const char *name;
  int ebits;
  int mbits;
  bool finiteOnly; // no infinities; only S.1..1.1..1 is NaN (f8E4M3FN)
  uint32_t (*encode)(float);
  uint32_t (*encodeSat)(float); // null if the format has no such variant
  float (*decode)(uint32_t);

  int bias() const { return (1 << (ebits - 1)) - 1; }
  int width() const { return 1 + ebits + mbits; }
  uint32_t count() const { return 1u << width(); }
  uint32_t signBit() const { return 1u << (ebits + mbits); }

  bool isNaN(uint32_t v) const {
    uint32_t e = (v >> mbits) & ((1u << ebits) - 1);
    uint32_t m = v & ((1u << mbits) - 1);
    if (e != (1u << ebits) - 1)
      return false;
    return finiteOnly ? m == (1u << mbits) - 1 : m != 0;
  }
  bool isInf(uint32_t v) const {
    uint32_t e = (v >> mbits) & ((1u << ebits) - 1);
    uint32_t m = v & ((1u << mbits) - 1);
    return !finiteOnly && e == (1u << ebits) - 1 && m == 0;
  }

  /// Value of a bit pattern by the textbook formula.
  long double refDecode(uint32_t v) const {
    bool neg = v & signBit();
    if (isNaN(v))
      return std::numeric_limits<long double>::quiet_NaN();
    if (isInf(v))
      return neg ? -INFINITY : INFINITY;
    uint32_t e = (v >> mbits) & ((1u << ebits) - 1);
    uint32_t m = v & ((1u << mbits) - 1);
    long double mag = e == 0
                          ? std::ldexp((long double)m, 1 - bias() - mbits)
                          : std::ldexp((long double)((1u << mbits) + m), (int)e - bias() - mbits);
    return neg ? -mag : mag;
  }
};

uint32_t encBf16(float x) { return f32ToBf16(x); }
uint32_t encF16(float x) { return f32ToF16(x); }
uint32_t encE4(float x) { return f32ToF8E4M3FN(x); }
uint32_t encE4Sat(float x) { return f32ToF8E4M3FNSaturating(x); }
uint32_t encE5(float x) { return f32ToF8E5M2(x); }
uint32_t encE5Sat(float x) { return f32ToF8E5M2Saturating(x); }
float decBf16(uint32_t v) { return bf16ToF32((uint16_t)v); }
float decF16(uint32_t v) { return f16ToF32((uint16_t)v); }
float decE4(uint32_t v) { return f8E4M3FNToF32((uint8_t)v); }
float decE5(uint32_t v) { return f8E5M2ToF32((uint8_t)v); }

const Format kBf16{"bf16", 8, 7, false, encBf16, nullptr, decBf16};
const Format kF16{"f16", 5, 10, false, encF16, nullptr, decF16};
const Format kE4M3FN{"f8E4M3FN", 4, 3, true, encE4, encE4Sat, decE4};
const Format kE5M2{"f8E5M2", 5, 2, false, encE5, encE5Sat, decE5};
const Format *const kFormats[] = {&kBf16, &kF16, &kE4M3FN, &kE5M2};

/// Round-to-nearest-even reference by enumeration of representable values.
class Reference {
public:
  explicit Reference(const Format &f) : fmt(f) {
    for (uint32_t v = 0; v < fmt.signBit(); ++v)
      if (!fmt.isNaN(v) && !fmt.isInf(v))
        values.push_back({fmt.refDecode(v), v});
    std::sort(values.begin(), values.end(),
              [](const Entry &a, const Entry &b) { return a.value < b.value; });
    // The value one step past the largest finite one, had the format more
    // exponent range: where rounding up out of range would land.
    uint32_t maxCode = values.back().code;
    uint32_t m = maxCode & ((1u << fmt.mbits) - 1);
    uint32_t e = maxCode >> fmt.mbits;
    uint32_t nextM = m + 1 == (1u << fmt.mbits) ? 0 : m + 1;
    uint32_t nextE = nextM == 0 ? e + 1 : e;
    virtualNext =
        std::ldexp((long double)((1u << fmt.mbits) + nextM), (int)nextE - fmt.bias() - fmt.mbits);
    virtualNextEven = (nextM & 1) == 0;
  }

  /// Expected bit pattern for `x`; NaN results use the canonical NaN.
  uint32_t round(long double x, Mode mode) const {
    const uint32_t sign = std::signbit(x) ? fmt.signBit() : 0;
    const uint32_t maxFinite = values.back().code;
    const uint32_t nan = fmt.finiteOnly
                             ? (fmt.signBit() - 1)
                             : (((1u << fmt.ebits) - 1) << fmt.mbits) | (1u << (fmt.mbits - 1));
    const uint32_t inf = ((1u << fmt.ebits) - 1) << fmt.mbits;
    auto overflow = [&]() -> uint32_t {
      if (mode == Mode::Saturating)
        return sign | maxFinite;
      return sign | (fmt.finiteOnly ? nan : inf);
    };
    if (std::isnan(x))
      return sign | nan;
    long double a = std::fabs(x);
    if (std::isinf(a))
      return overflow();
    auto it = std::upper_bound(values.begin(), values.end(), a,
                               [](long double v, const Entry &e) { return v < e.value; });
    const Entry &lo = *(it - 1);
    if (lo.value == a)
      return sign | lo.code;
    long double hiValue = it == values.end() ? virtualNext : it->value;
    bool hiIsVirtual = it == values.end();
    bool hiEven = hiIsVirtual ? virtualNextEven : (it->code & 1) == 0;
    long double dLo = a - lo.value, dHi = hiValue - a;
    bool takeHi = dHi < dLo || (dHi == dLo && hiEven);
    if (!takeHi)
      return sign | lo.code;
    if (hiIsVirtual)
      return overflow();
    return sign | it->code;
  }

  struct Entry {
    long double value;
    uint32_t code;
  };
  const Format &fmt;
  std::vector<Entry> values; // non-negative finite values, ascending
  long double virtualNext;
  bool virtualNextEven;
};

/// Compares one float32 input; NaN results compare as "NaN with this sign".
::testing::AssertionResult sameRounding(const Format &fmt, const Reference &ref, float x,
                                        Mode mode) {
  uint32_t got = mode == Mode::Saturating ? fmt.encodeSat(x) : fmt.encode(x);
  uint32_t want = ref.round(x, mode);
  if (got == want)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << fmt.name << (mode == Mode::Saturating ? " (saturating)" : "") << ": input " << x
         << " (bits 0x" << std::hex << bitsOfF32(x) << ") gave 0x" << got << ", reference 0x"
         << want;
}

/// Float32 inputs around every representable value: the value, its float32
/// neighbours, the exact midpoints to both neighbours and the float32 values
/// a few ulps either side of the midpoints.
std::vector<float> inputsNearEveryValue(const Reference &ref) {
  std::vector<float> out;
  std::vector<long double> grid;
  for (const auto &e : ref.values)
    grid.push_back(e.value);
  grid.push_back(ref.virtualNext);
  grid.push_back(2 * ref.virtualNext);
  for (size_t i = 0; i < grid.size(); ++i) {
    float v = (float)grid[i];
    out.push_back(v);
    out.push_back(std::nextafter(v, INFINITY));
    out.push_back(std::nextafter(v, -INFINITY));
    if (i + 1 < grid.size()) {
      float mid = (float)((grid[i] + grid[i + 1]) / 2);
      float up = mid, down = mid;
      out.push_back(mid);
      for (int k = 0; k < 3; ++k) {
        up = std::nextafter(up, INFINITY);
        down = std::nextafter(down, -INFINITY);
        out.push_back(up);
        out.push_back(down);
      }
    }
  }
  size_t n = out.size();
  for (size_t i = 0; i < n; ++i)
    out.push_back(-out[i]);
  for (float special :
       {INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, -FLT_MAX, FLT_MIN,
        std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()})
    out.push_back(special);
  return out;
}

class NumericsTest : public ::testing::TestWithParam<const Format *> {};

// Tests that decoding every bit pattern matches the textbook formula.
TEST_P(NumericsTest, DecodeEveryPattern) {
  const Format &fmt = *GetParam();
  for (uint32_t v = 0; v < fmt.count(); ++v) {
    float got = fmt.decode(v);
    long double want = fmt.refDecode(v);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << fmt.name << " 0x" << std::hex << v;
      ASSERT_EQ(std::signbit(got), (v & fmt.signBit()) != 0);
    } else {
      ASSERT_EQ((long double)got, want) << fmt.name << " 0x" << std::hex << v;
      ASSERT_EQ(std::signbit(got), std::signbit(want));
    }
  }
}

// Tests that encode(decode(b)) == b for every non-NaN pattern, in both
// variants, and that NaN patterns encode back to a NaN with the same sign.
TEST_P(NumericsTest, RoundTripEveryPattern) {
  const Format &fmt = *GetParam();
  for (uint32_t v = 0; v < fmt.count(); ++v) {
    float f = fmt.decode(v);
    uint32_t back = fmt.encode(f);
    if (fmt.isNaN(v)) {
      ASSERT_TRUE(fmt.isNaN(back)) << fmt.name << " 0x" << std::hex << v;
      ASSERT_EQ(back & fmt.signBit(), v & fmt.signBit());
      continue;
    }
    ASSERT_EQ(back, v) << fmt.name << " 0x" << std::hex << v;
    if (fmt.encodeSat && !fmt.isInf(v)) {
      ASSERT_EQ(fmt.encodeSat(f), v) << fmt.name << " 0x" << std::hex << v;
    }
  }
}

// Tests rounding of float32 values at, beside and halfway between every pair
// of neighbouring representable values (ties and tie +- 1..3 ulp).
TEST_P(NumericsTest, RoundingNearEveryValue) {
  const Format &fmt = *GetParam();
  Reference ref(fmt);
  for (float x : inputsNearEveryValue(ref)) {
    ASSERT_TRUE(sameRounding(fmt, ref, x, Mode::Apfloat));
    if (fmt.encodeSat) {
      ASSERT_TRUE(sameRounding(fmt, ref, x, Mode::Saturating));
    }
  }
}

// Tests rounding of random float32 bit patterns, half of them drawn with an
// exponent near the format's range where the interesting cases are.
TEST_P(NumericsTest, RoundingRandomSample) {
  const Format &fmt = *GetParam();
  Reference ref(fmt);
  std::mt19937_64 rng(1234 + fmt.width());
  const int lowExp = 1 - fmt.bias() - fmt.mbits - 3;
  const int highExp = (1 << fmt.ebits) - fmt.bias() + 2;
  std::uniform_int_distribution<int> expDist(lowExp + 127, std::min(highExp + 127, 254));
  const int kSamples = 2'000'000;
  for (int i = 0; i < kSamples; ++i) {
    uint32_t bits = (uint32_t)rng();
    if (i & 1)
      bits = (bits & 0x807FFFFFu) | ((uint32_t)std::max(expDist(rng), 0) << 23);
    float x = f32OfBits(bits);
    ASSERT_TRUE(sameRounding(fmt, ref, x, Mode::Apfloat));
    if (fmt.encodeSat) {
      ASSERT_TRUE(sameRounding(fmt, ref, x, Mode::Saturating));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, NumericsTest, ::testing::ValuesIn(kFormats), [](const auto &info) {
      std::string n = info.param->name;
      n.erase(std::remove_if(n.begin(), n.end(), [](char c) { return !isalnum(c); }), n.end());
      return n;
    });

// Tests the APFloat-compatible overflow behaviour at the documented edges.
TEST(NumericsEdges, Fp8Overflow) {
  EXPECT_EQ(f32ToF8E4M3FN(448.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3FN(464.0f), 0x7E);                       // tie goes to the even 448
  EXPECT_EQ(f32ToF8E4M3FN(std::nextafter(464.0f, 1e9f)), 0x7F); // NaN
  EXPECT_EQ(f32ToF8E4M3FN(-500.0f), 0xFF);
  EXPECT_EQ(f32ToF8E4M3FN(INFINITY), 0x7F);
  EXPECT_EQ(f32ToF8E4M3FNSaturating(INFINITY), 0x7E);
  EXPECT_EQ(f32ToF8E4M3FNSaturating(-1e30f), 0xFE);
  EXPECT_EQ(f32ToF8E4M3FNSaturating(NAN), 0x7F);
  EXPECT_EQ(f32ToF8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(f32ToF8E5M2(61440.0f), 0x7C); // tie goes to the even inf
  EXPECT_EQ(f32ToF8E5M2Saturating(61440.0f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Saturating(-INFINITY), 0xFB);
  EXPECT_EQ(f32ToF8E5M2(NAN), 0x7E);
  EXPECT_EQ(f32ToF16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7C00);
  EXPECT_EQ(f32ToBf16(-NAN), 0xFFC0);
  EXPECT_EQ(f32ToF16(-NAN), 0xFE00);
}

// Tests that int64 -> float32 (round to odd) -> narrow equals rounding the
// integer directly, for integers near representable values and at random.
TEST(NumericsEdges, Int64ThroughRoundToOdd) {
  std::mt19937_64 rng(99);
  for (const Format *fmt : kFormats) {
    Reference ref(*fmt);
    auto check = [&](int64_t v) {
      uint32_t got = fmt->encode(int64ToF32RoundToOdd(v));
      uint32_t want = ref.round((long double)v, Mode::Apfloat);
      ASSERT_EQ(got, want) << fmt->name << " int " << v;
    };
    for (const auto &e : ref.values) {
      if (e.value > 9.2e18L || e.value < 1)
        continue;
      auto base = (int64_t)e.value;
      for (int64_t d = -3; d <= 3; ++d) {
        check(base + d);
        check(-(base + d));
      }
    }
    for (int i = 0; i < 200000; ++i) {
      int64_t v = (int64_t)rng() >> (rng() % 63);
      check(v);
    }
    check(std::numeric_limits<int64_t>::min());
    check(std::numeric_limits<int64_t>::max());
  }
  // And into float32 itself: round to odd, checked on the boundary.
  EXPECT_EQ(int64ToF32RoundToOdd((1 << 24) + 1), 16777218.0f);
  EXPECT_EQ(int64ToF32RoundToOdd(-(1 << 24)), -16777216.0f);
}

} // namespace

// Tests the float32 -> FP8 conversions against ml_dtypes, an independent
// implementation, over the dense sample of scripts/gen_fp8_reference.py
// (every float32 with its low 16 bits zero, and its two float32 neighbours:
// every FP8 value, every rounding tie and both sides of it, subnormals,
// overflow, infinities and NaNs). ml_dtypes converts without saturating;
// the saturating variants must agree with it wherever it gives a finite
// value, and give the largest finite value with the input's sign where it
// overflows (cuBLASLt's output path).
TEST(NumericsEdges, Fp8MatchesMlDtypes) {
  std::FILE *f = std::fopen(MPTRT_FP8_REFERENCE_TABLE, "rb");
  ASSERT_NE(f, nullptr) << MPTRT_FP8_REFERENCE_TABLE;
  std::vector<uint8_t> table(65536 * 3 * 2);
  const size_t got = std::fread(table.data(), 1, table.size(), f);
  std::fclose(f);
  ASSERT_EQ(got, table.size());
  const int deltas[3] = {0, 1, -1};
  int checked = 0, saturated = 0;
  for (uint32_t i = 0; i < 65536; ++i)
    for (int d = 0; d < 3; ++d) {
      const uint32_t bits = (i << 16) + static_cast<uint32_t>(deltas[d]);
      float x;
      std::memcpy(&x, &bits, sizeof(x));
      const uint8_t *want = &table[(i * 3 + d) * 2];
      struct {
        uint8_t plain, sat, ref, maxFinite;
        bool (*isNaN)(uint8_t);
      } fmts[2] = {
          {f32ToF8E4M3FN(x), f32ToF8E4M3FNSaturating(x), want[0], 0x7E,
           [](uint8_t v) { return (v & 0x7F) == 0x7F; }},
          {f32ToF8E5M2(x), f32ToF8E5M2Saturating(x), want[1], 0x7B,
           [](uint8_t v) { return (v & 0x7C) == 0x7C && (v & 0x03) != 0; }},
      };
      for (int k = 0; k < 2; ++k) {
        const auto &fm = fmts[k];
        const bool refInf = k == 1 && (fm.ref & 0x7F) == 0x7C;
        if (fm.isNaN(fm.ref)) {
          EXPECT_TRUE(fm.isNaN(fm.plain)) << "format " << k << " bits 0x" << std::hex << bits;
        } else {
          EXPECT_EQ(fm.plain, fm.ref) << "format " << k << " bits 0x" << std::hex << bits;
        }
        // Saturating: NaN only from NaN; an overflow clamps with its sign.
        const bool overflow = !std::isnan(x) && (fm.isNaN(fm.ref) || refInf);
        if (overflow) {
          EXPECT_EQ(fm.sat, (std::signbit(x) ? 0x80 : 0) | fm.maxFinite)
              << "format " << k << " bits 0x" << std::hex << bits;
          saturated += 1;
        } else if (std::isnan(x)) {
          EXPECT_TRUE(fm.isNaN(fm.sat));
        } else {
          EXPECT_EQ(fm.sat, fm.ref) << "format " << k << " bits 0x" << std::hex << bits;
        }
        checked += 1;
      }
    }
  EXPECT_EQ(checked, 65536 * 3 * 2);
  EXPECT_GT(saturated, 1000);
}
