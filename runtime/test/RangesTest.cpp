//===- RangesTest.cpp - mpt-train --collect-ranges's statistics -----------===//
//
// The format limits against the formats' definitions, and the counting of a
// RangeCollector on hand-made results: values at and either side of each
// limit, zeros, non-finite values, several steps, and the JSON file.
//
//===----------------------------------------------------------------------===//
#include "mptrt/train/Ranges.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace {

using namespace mptrt::train;

// Tests the limits found by bisection against the formats' definitions:
// the largest finite value, the midpoint above it (fp16 and E5M2 round a
// tie at their odd largest value up to inf; E4M3FN's largest, 448, is even,
// so its tie 464 rounds down and only values above it overflow), and half
// the smallest subnormal (a tie that rounds to zero).
TEST(Ranges, FormatLimits) {
  const FormatLimits f16 = formatLimits(RangeFormat::F16);
  EXPECT_EQ(f16.max, 65504.0f);
  EXPECT_EQ(f16.overflowAt, 65520.0f);
  EXPECT_EQ(f16.flushAtOrBelow, std::ldexp(1.0f, -25));
  const FormatLimits e5m2 = formatLimits(RangeFormat::E5M2);
  EXPECT_EQ(e5m2.max, 57344.0f);
  EXPECT_EQ(e5m2.overflowAt, 61440.0f);
  EXPECT_EQ(e5m2.flushAtOrBelow, std::ldexp(1.0f, -17));
  const FormatLimits e4m3 = formatLimits(RangeFormat::E4M3);
  EXPECT_EQ(e4m3.max, 448.0f);
  EXPECT_EQ(e4m3.overflowAt, std::nextafter(464.0f, 1000.0f));
  EXPECT_EQ(e4m3.flushAtOrBelow, std::ldexp(1.0f, -10));
}

mptrt_result_view view(uint32_t kernel, const std::vector<float> &values, const char *tensor = "") {
  mptrt_result_view v = {};
  v.kernel = kernel;
  v.kind = "matmul";
  v.origin = "fc1";
  v.phase = "forward";
  v.tensor = tensor;
  v.dtype = MPTRT_F32;
  v.values = values.data();
  v.count = values.size();
  return v;
}

// Tests the counts: overflow at exactly the limit and not just below it,
// flush at exactly the limit and not just above it, zeros and non-finite
// values counted apart, max and min nonzero over two steps.
TEST(Ranges, CountsAtTheLimits) {
  RangeCollector c;
  const float below = std::nextafter(65520.0f, 0.0f);
  const float tiny = std::ldexp(1.0f, -25), notTiny = std::nextafter(tiny, 1.0f);
  const std::vector<float> first = {65520.0f, -below, tiny, -notTiny, 0.0f, INFINITY};
  const std::vector<float> second = {1.0f, -70000.0f, NAN, 0.5f};
  mptrt_result_view v = view(3, first);
  RangeCollector::observe(&v, &c);
  c.countStep();
  v = view(3, second);
  RangeCollector::observe(&v, &c);
  c.countStep();
  ASSERT_EQ(c.results().size(), 1u);
  const ResultRange &r = c.results().begin()->second;
  EXPECT_EQ(r.kernel, 3u);
  EXPECT_EQ(r.node, "fc1");
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_EQ(r.nonzero, 7u);
  EXPECT_EQ(r.maxAbs, 70000.0);
  EXPECT_EQ(r.minNonzeroAbs, static_cast<double>(tiny));
  EXPECT_EQ(r.overflow[0], 2u); // 65520 and -70000
  EXPECT_EQ(r.flush[0], 1u);    // 2^-25 only
  // E4M3: everything beyond 464 overflows; E5M2: 65520 and 70000 do.
  EXPECT_EQ(r.overflow[1], 3u);
  EXPECT_EQ(r.overflow[2], 3u);
  EXPECT_LT(r.headroom(formatLimits(RangeFormat::F16)), 0.0);
}

// Tests the file: valid JSON keys for each result, fractions over the
// count, and null for the headroom of an all-zero result.
TEST(Ranges, WritesTheFile) {
  RangeCollector c;
  const std::vector<float> a = {1e5f, 1.0f, 0.0f, 0.0f}, zeros = {0.0f, 0.0f};
  mptrt_result_view v = view(0, a);
  RangeCollector::observe(&v, &c);
  v = view(1, zeros, "y");
  RangeCollector::observe(&v, &c);
  c.countStep();
  const std::string path = ::testing::TempDir() + "ranges.json";
  std::string error;
  ASSERT_TRUE(c.write(path, "p.mptp", "train_step", &error)) << error;
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::string s = text.str();
  EXPECT_NE(s.find("\"steps\": 1"), std::string::npos) << s;
  EXPECT_NE(s.find("\"overflow\": {\"fp16\": 0.25"), std::string::npos) << s;
  EXPECT_NE(s.find("\"headroom\": {\"fp16\": null"), std::string::npos) << s;
  EXPECT_NE(s.find("\"tensor\": \"y\""), std::string::npos) << s;
  EXPECT_FALSE(c.write("/nonexistent/dir/r.json", "p", "e", &error));
  EXPECT_NE(error.find("cannot write the ranges file"), std::string::npos) << error;
}

} // namespace
