//===- DropoutKernelTest.cpp - Philox4x32-10 and training dropout ---------===//
//
// mptrt/Philox.h against the published known-answer vectors, and the
// training-mode dropout kernel: its mask is the documented function of
// (seed, step, stream, index), its keep fraction is binomial, different
// streams and steps give uncorrelated masks, the same inputs give the same
// bits on any thread count, and kept elements are scaled by 1 / (1 - ratio).
//
// Runs with four threads (MPTRT_NUM_THREADS=4 unless the environment says
// otherwise), so the pool is always exercised.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "cpu/Parallel.h"
#include "mptrt/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

// Before main, so before the runtime first reads it.
const bool kThreadsSet = [] {
  setenv("MPTRT_NUM_THREADS", "4", /*overwrite=*/0);
  return true;
}();

HostTensor i64Scalar(int64_t v) {
  HostTensor t(DType::I64, {});
  std::memcpy(t.bytes.data(), &v, sizeof v);
  return t;
}

std::vector<Attribute> trainingAttrs(double ratio, int64_t stream) {
  return {Attribute::makeFloat("ratio", ratio), Attribute::makeInt("training", 1),
          Attribute::makeInt("stream", stream)};
}

/// Runs training dropout over x with a mask result.
KernelRun runTrainingDropout(const HostTensor &x, DType outType, double ratio, int64_t seed,
                             int64_t step, int64_t stream) {
  return runKernel("dropout", {x, i64Scalar(seed), i64Scalar(step)},
                   {HostTensor(outType, x.shape), HostTensor(DType::I1, x.shape)},
                   trainingAttrs(ratio, stream));
}

int64_t countKept(const HostTensor &mask) {
  int64_t kept = 0;
  for (uint8_t b : mask.bytes)
    kept += b != 0;
  return kept;
}

/// Pearson correlation of two 0/1 masks.
double maskCorrelation(const HostTensor &a, const HostTensor &b) {
  const double n = static_cast<double>(a.bytes.size());
  double sa = 0, sb = 0, sab = 0;
  for (size_t i = 0; i < a.bytes.size(); ++i) {
    sa += a.bytes[i];
    sb += b.bytes[i];
    sab += a.bytes[i] * b.bytes[i];
  }
  const double ma = sa / n, mb = sb / n;
  const double cov = sab / n - ma * mb;
  return cov / std::sqrt(ma * (1 - ma) * mb * (1 - mb));
}

// Tests Philox4x32-10 against the three known-answer vectors of Random123's
// tests/kat_vectors (counter words, key words -> output words): all zeros,
// all ones, and the digits of pi.
TEST(Philox, KnownAnswers) {
  struct {
    philox::Block counter;
    uint32_t key0, key1;
    philox::Block expected;
  } cases[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (auto &c : cases) {
    philox::Block out = philox::philox4x32(c.counter, c.key0, c.key1);
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(out.v[w], c.expected.v[w]) << "word " << w;
  }
}

// Tests the dropout stream's documented counter layout: element i reads word
// i % 4 of philox((i / 4, stream, step lo, step hi), (seed lo, seed hi)),
// with the high halves of a 64-bit seed and step in use.
TEST(Philox, DropoutStreamLayout) {
  const uint64_t seed = 0x0123456789abcdefull, step = 0x0000000500000007ull;
  const uint32_t stream = 3;
  for (int64_t i : {0, 1, 2, 3, 4, 5, 1001, 123456789}) {
    philox::Block b =
        philox::philox4x32({{uint32_t(i / 4), stream, uint32_t(step), uint32_t(step >> 32)}},
                           0x89abcdefu, 0x01234567u);
    EXPECT_EQ(philox::dropoutBits(seed, step, stream, i), b.v[i % 4]) << "element " << i;
  }
  EXPECT_EQ(philox::dropThreshold(0.0), 0u);
  EXPECT_EQ(philox::dropThreshold(0.5), 1ull << 31);
  EXPECT_EQ(philox::dropThreshold(1.0), 1ull << 32);
}

// Tests the keep fraction over 10^6 elements for ratios 0.1 and 0.5: within
// 5 binomial standard deviations of n (1 - ratio) (sigma = 300 and 500
// elements); kept elements are x / (1 - ratio) in f32, dropped ones 0, and
// the mask says which is which.
TEST(DropoutKernel, KeepFractionAndScaling) {
  ASSERT_TRUE(kThreadsSet);
  std::mt19937 rng(60);
  const int64_t n = 1000000;
  HostTensor x = randomTensor(DType::F32, {1000, 1000}, rng);
  for (double ratio : {0.1, 0.5}) {
    KernelRun r = runTrainingDropout(x, DType::F32, ratio, 1234, 7, 0);
    ASSERT_TRUE(r.ok) << r.error;
    const double sigma = std::sqrt(n * ratio * (1 - ratio));
    const int64_t kept = countKept(r.outputs[1]);
    EXPECT_LE(std::fabs(kept - n * (1 - ratio)), 5 * sigma)
        << "ratio " << ratio << ": kept " << kept << " of " << n;
    std::printf("ratio %.1f: kept %lld of %lld (expected %.0f, sigma %.0f)\n", ratio,
                static_cast<long long>(kept), static_cast<long long>(n), n * (1 - ratio), sigma);
    const float scale = static_cast<float>(1.0 / (1.0 - ratio));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = r.outputs[1].bytes[i] != 0;
      const float expected = keep ? static_cast<float>(x.get(i)) * scale : 0.0f;
      bad += static_cast<float>(r.outputs[0].get(i)) != expected;
    }
    EXPECT_EQ(bad, 0) << "ratio " << ratio;
  }
}

// Tests that the kernel's mask is philox::dropoutKeep of every element (the
// function both backends share), including a step and seed beyond 32 bits
// and an odd element count.
TEST(DropoutKernel, MaskIsTheDocumentedFunction) {
  std::mt19937 rng(61);
  HostTensor x = randomTensor(DType::F32, {3, 1001}, rng);
  const int64_t seed = -5, step = (int64_t(1) << 33) + 11, stream = 9;
  KernelRun r = runTrainingDropout(x, DType::F32, 0.3, seed, step, stream);
  ASSERT_TRUE(r.ok) << r.error;
  const uint64_t threshold = philox::dropThreshold(0.3);
  int64_t bad = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    bad += (r.outputs[1].bytes[i] != 0) !=
           philox::dropoutKeep(uint64_t(seed), uint64_t(step), stream, i, threshold);
  EXPECT_EQ(bad, 0);
}

// Tests that the same (seed, step, stream) gives the same bits, and that a
// different stream, step or seed gives a different, uncorrelated mask:
// |Pearson correlation| below 5 / sqrt(n) = 0.005 over 10^6 elements.
TEST(DropoutKernel, StreamsAndStepsAreIndependent) {
  HostTensor x(DType::F32, {1000000});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, 1.0);
  KernelRun base = runTrainingDropout(x, DType::F32, 0.5, 42, 3, 1);
  KernelRun again = runTrainingDropout(x, DType::F32, 0.5, 42, 3, 1);
  ASSERT_TRUE(base.ok && again.ok) << base.error << again.error;
  EXPECT_TRUE(base.outputs[0].bytes == again.outputs[0].bytes);
  EXPECT_TRUE(base.outputs[1].bytes == again.outputs[1].bytes);
  struct {
    const char *what;
    int64_t seed, step, stream;
  } others[] = {{"stream", 42, 3, 2}, {"step", 42, 4, 1}, {"seed", 43, 3, 1}};
  for (auto &o : others) {
    KernelRun r = runTrainingDropout(x, DType::F32, 0.5, o.seed, o.step, o.stream);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_FALSE(r.outputs[1].bytes == base.outputs[1].bytes) << o.what;
    const double corr = maskCorrelation(base.outputs[1], r.outputs[1]);
    EXPECT_LT(std::fabs(corr), 5.0 / std::sqrt(1e6)) << "another " << o.what << ": " << corr;
    std::printf("another %s: mask correlation %.5f\n", o.what, corr);
  }
}

// Tests that the pooled run (four threads) and a one-thread run give the
// same bits, on bf16 input and output.
TEST(DropoutKernel, SameBitsOnAnyThreadCount) {
  std::mt19937 rng(62);
  HostTensor x = randomTensor(DType::BF16, {513, 257}, rng);
  const auto before = rt::cpu::poolStats();
  KernelRun pooled = runTrainingDropout(x, DType::BF16, 0.1, 99, 5, 4);
  ASSERT_TRUE(pooled.ok) << pooled.error;
  if (rt::cpu::numThreads() > 1) {
    EXPECT_GT(rt::cpu::poolStats().pooledLoops, before.pooledLoops)
        << "dropout did not use the pool";
  }
  KernelRun single;
  rt::cpu::parallelFor(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0)
      single = runTrainingDropout(x, DType::BF16, 0.1, 99, 5, 4);
  });
  ASSERT_TRUE(single.ok) << single.error;
  EXPECT_TRUE(pooled.outputs[0].bytes == single.outputs[0].bytes);
  EXPECT_TRUE(pooled.outputs[1].bytes == single.outputs[1].bytes);
  // bf16: the f32 product rounded once.
  const float scale = static_cast<float>(1.0 / 0.9);
  int64_t bad = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool keep = pooled.outputs[1].bytes[i] != 0;
    const float expected = numerics::bf16ToF32(
        numerics::f32ToBf16(keep ? static_cast<float>(x.get(i)) * scale : 0.0f));
    bad += static_cast<float>(pooled.outputs[0].get(i)) != expected;
  }
  EXPECT_EQ(bad, 0);
}

// Tests the end points: ratio 0 in training mode is the identity with a
// true mask (seeded or not), ratio 1 gives zeros and a false mask.
TEST(DropoutKernel, RatioZeroAndOne) {
  std::mt19937 rng(63);
  HostTensor x = randomTensor(DType::F32, {4, 9}, rng);
  KernelRun r = runTrainingDropout(x, DType::F32, 0.0, 1, 2, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].bytes, x.bytes);
  EXPECT_EQ(countKept(r.outputs[1]), x.numel());
  r = runKernel("dropout", {x}, {HostTensor(DType::F32, x.shape)}, trainingAttrs(0.0, 0));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].bytes, x.bytes);
  r = runTrainingDropout(x, DType::F32, 1.0, 1, 2, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].values(), std::vector<double>(x.numel(), 0.0));
  EXPECT_EQ(countKept(r.outputs[1]), 0);
}

// Tests the load-time checks: a training dropout without the seed and step,
// a seed that is not a 0-d i64, seed operands in inference, a ratio outside
// [0, 1] and a stream beyond 32 bits.
TEST(DropoutKernel, BadKernelsRejected) {
  HostTensor x(DType::F32, {4});
  struct {
    std::vector<HostTensor> operands;
    std::vector<Attribute> attrs;
    const char *message;
  } cases[] = {
      {{x}, trainingAttrs(0.1, 0), "needs the seed and step operands"},
      {{x, HostTensor(DType::I32, {}), i64Scalar(0)},
       trainingAttrs(0.1, 0),
       "(the seed) must be a 0-d i64"},
      {{x, i64Scalar(0), HostTensor(DType::I64, {1})},
       trainingAttrs(0.1, 0),
       "(the step) must be a 0-d i64"},
      {{x, i64Scalar(0), i64Scalar(0)},
       {Attribute::makeFloat("ratio", 0.1)},
       "only meaningful in training mode"},
      {{x, i64Scalar(0)}, trainingAttrs(0.1, 0), "the input alone or"},
      {{x, i64Scalar(0), i64Scalar(0)}, trainingAttrs(1.5, 0), "'ratio' must be in [0, 1]"},
      {{x, i64Scalar(0), i64Scalar(0)},
       trainingAttrs(0.1, int64_t(1) << 32),
       "'stream' must be in"},
  };
  for (auto &c : cases) {
    KernelRun r = runKernel("dropout", c.operands, {HostTensor(DType::F32, {4})}, c.attrs);
    EXPECT_FALSE(r.ok) << c.message;
    EXPECT_NE(r.error.find(c.message), std::string::npos) << r.error;
  }
}

} // namespace
