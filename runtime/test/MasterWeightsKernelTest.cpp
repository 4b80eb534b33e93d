//===- MasterWeightsKernelTest.cpp - bf16 master weights -----------------===//
//
// adamw_update with a bf16 parameter (master-weights=bf16 and bf16-sr,
// docs/training.md "Master weights"): stochastic rounding into bf16
// (numerics::f32ToBf16Stochastic with philox::roundingBits) is unbiased,
// deterministic for one (seed, step, stream, element) and different across
// steps; a round-to-nearest bf16 master stalls on an update below half its
// spacing, while a stochastically rounded one moves by it in expectation.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "mptrt/Numerics.h"
#include "mptrt/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

HostTensor filled(DType dtype, int64_t n, double v) {
  return fromValues(dtype, {n}, std::vector<double>(n, v));
}
double mean(const HostTensor &t) {
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    s += t.get(i);
  return s / t.numel();
}

constexpr uint32_t kStream = philox::kRoundingStreamBase;

/// One adamw_update over a bf16 param (no weight decay); stochastic when
/// `seed` >= 0. Returns param', exp_avg', exp_avg_sq'.
KernelRun adamwBf16(const HostTensor &param, const HostTensor &grad, int64_t step, float lr,
                    int64_t seed, uint32_t stream = kStream) {
  const int64_t n = param.numel();
  std::vector<HostTensor> operands = {param,
                                      grad,
                                      filled(DType::F32, n, 0),
                                      filled(DType::F32, n, 0),
                                      scalarI64(step),
                                      scalarF32(lr),
                                      scalarI1(true)};
  std::vector<Attribute> attrs = {Attribute::makeFloat("weight_decay", 0)};
  if (seed >= 0) {
    operands.push_back(scalarI64(seed));
    attrs.push_back(Attribute::makeInt("stochastic_rounding", 1));
    attrs.push_back(Attribute::makeInt("stream", stream));
  }
  return runKernel(
      "adamw_update", operands,
      {HostTensor(DType::BF16, {n}), HostTensor(DType::F32, {n}), HostTensor(DType::F32, {n})},
      attrs);
}

// Tests that stochastic rounding is unbiased: the mean of 2^17 roundings
// (one Philox word each) of a value between two bf16 neighbours is the
// value, within 5 standard errors (sd of one rounding: spacing *
// sqrt(p (1 - p))), and every rounding is one of the two neighbours.
// Positive, negative, near a binade edge and subnormal values.
TEST(StochasticRounding, IsUnbiased) {
  const float values[] = {1.0f + 0.3f * 0x1p-7f, -3.14159f,      0.0123456f, 255.9f,
                          0x1.2345p-130f,        1.0f - 0x1p-12f};
  const int64_t n = int64_t(1) << 17;
  for (float x : values) {
    SCOPED_TRACE(x);
    const uint16_t down = static_cast<uint16_t>(numerics::bitsOfF32(x) >> 16); // toward 0
    const double lo = numerics::bf16ToF32(down), hi = numerics::bf16ToF32(down + 1);
    const double spacing = std::fabs(hi - lo);
    const double p = std::fabs(x - lo) / spacing; // P(away from zero)
    ASSERT_GT(p, 0.0);
    ASSERT_LT(p, 1.0);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t r = numerics::f32ToBf16Stochastic(x, philox::roundingBits(42, 7, kStream, i));
      ASSERT_TRUE(r == down || r == down + 1) << i;
      sum += numerics::bf16ToF32(r);
    }
    const double bound = 5 * spacing * std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(sum / n, x, bound);
  }
  // Exact bf16 values, infinities and NaN are left as round to nearest does.
  for (float x : {1.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-133f})
    for (uint32_t r : {0u, 0x7FFFFFFFu, 0xFFFFFFFFu})
      EXPECT_EQ(numerics::f32ToBf16Stochastic(x, r), numerics::f32ToBf16(x)) << x << " " << r;
}

// Tests that a stochastically rounded update is a pure function of (seed,
// step, stream, element): the same bits on a second run, different bits at
// another step, seed or stream (4096 updates that each land between two
// bf16 values), and the bits the shared header gives for each element.
TEST(StochasticRounding, DeterministicPerSeedStepAndStream) {
  const int64_t n = 4096;
  const HostTensor p = filled(DType::BF16, n, 1.0);
  const HostTensor g = filled(DType::F32, n, 0.5);
  const float lr = 1e-3f; // moves 1.0 by lr: between 1 - 2^-8 and 1
  KernelRun a = adamwBf16(p, g, 3, lr, 1234);
  KernelRun b = adamwBf16(p, g, 3, lr, 1234);
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_EQ(a.outputs[0].bytes, b.outputs[0].bytes);
  for (KernelRun other : {adamwBf16(p, g, 4, lr, 1234), adamwBf16(p, g, 3, lr, 1235),
                          adamwBf16(p, g, 3, lr, 1234, kStream + 1)}) {
    ASSERT_TRUE(other.ok) << other.error;
    EXPECT_NE(other.outputs[0].bytes, a.outputs[0].bytes);
  }
  // Element k rounds the f32 update with philox::roundingBits(seed, step,
  // stream, k): recompute the f32 weight from the nearest-rounded run's
  // arithmetic (the same f32 operations) and round it here.
  const HostTensor f32Result = [&] {
    KernelRun f = runKernel(
        "adamw_update",
        {filled(DType::F32, n, 1.0), g, filled(DType::F32, n, 0), filled(DType::F32, n, 0),
         scalarI64(3), scalarF32(lr), scalarI1(true)},
        {HostTensor(DType::F32, {n}), HostTensor(DType::F32, {n}), HostTensor(DType::F32, {n})},
        {Attribute::makeFloat("weight_decay", 0)});
    EXPECT_TRUE(f.ok) << f.error;
    return f.outputs[0];
  }();
  for (int64_t k = 0; k < n; ++k) {
    const uint16_t want = numerics::f32ToBf16Stochastic(static_cast<float>(f32Result.get(k)),
                                                        philox::roundingBits(1234, 3, kStream, k));
    uint16_t got;
    std::memcpy(&got, a.outputs[0].bytes.data() + 2 * k, 2);
    ASSERT_EQ(got, want) << k;
  }
}

// Tests the stall: an AdamW step of lr = 1e-3 on a bf16 weight of 1.0
// (spacing 2^-8 below 1, so half a spacing is 0.00195) rounds back to 1.0
// under round to nearest, on every one of 50 steps, while stochastic
// rounding moves the weights by -lr per step in expectation (the mean of
// 4096 weights within 5 standard errors), and a FP32 master moves by lr.
TEST(Bf16Master, NearestStallsStochasticMovesInExpectation) {
  const int64_t n = 4096;
  const float lr = 1e-3f;
  const HostTensor g = filled(DType::F32, n, 0.25);
  HostTensor nearest = filled(DType::BF16, n, 1.0);
  for (int64_t step = 0; step < 50; ++step) {
    KernelRun r = adamwBf16(nearest, g, step, lr, -1);
    ASSERT_TRUE(r.ok) << r.error;
    nearest = r.outputs[0];
  }
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(nearest.get(i), 1.0) << i;

  KernelRun sr = adamwBf16(filled(DType::BF16, n, 1.0), g, 0, lr, 99);
  ASSERT_TRUE(sr.ok) << sr.error;
  const double spacing = 0x1p-8, p = lr / spacing;
  EXPECT_NEAR(mean(sr.outputs[0]), 1.0 - lr, 5 * spacing * std::sqrt(p * (1 - p) / n));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_TRUE(sr.outputs[0].get(i) == 1.0 || sr.outputs[0].get(i) == 1.0 - spacing) << i;
}

// Tests that a round-to-nearest bf16 master is the FP32 update of the
// widened weight rounded once (moments identical to the FP32 master's),
// over random weights, gradients and moments.
TEST(Bf16Master, NearestIsTheFp32UpdateRoundedOnce) {
  std::mt19937 rng(5);
  const int64_t n = 1000;
  const HostTensor p = randomTensor(DType::BF16, {n}, rng);
  HostTensor p32(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(p.get(i));
    std::memcpy(p32.bytes.data() + 4 * i, &v, 4);
  }
  const HostTensor g = randomTensor(DType::F32, {n}, rng);
  const HostTensor m = randomTensor(DType::F32, {n}, rng);
  const HostTensor v = randomTensor(DType::F32, {n}, rng, 0.5, 2.0);
  auto run = [&](const HostTensor &param) {
    return runKernel(
        "adamw_update", {param, g, m, v, scalarI64(4), scalarF32(0.01f), scalarI1(true)},
        {HostTensor(param.dtype, {n}), HostTensor(DType::F32, {n}), HostTensor(DType::F32, {n})});
  };
  KernelRun b = run(p), f = run(p32);
  ASSERT_TRUE(b.ok && f.ok) << b.error << f.error;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t got;
    std::memcpy(&got, b.outputs[0].bytes.data() + 2 * i, 2);
    ASSERT_EQ(got, numerics::f32ToBf16(static_cast<float>(f.outputs[0].get(i)))) << i;
  }
  EXPECT_EQ(b.outputs[1].bytes, f.outputs[1].bytes);
  EXPECT_EQ(b.outputs[2].bytes, f.outputs[2].bytes);
}

// Tests that a skipped step (finite = 0) copies a bf16 master bit for bit.
TEST(Bf16Master, SkippedStepKeepsTheBits) {
  const HostTensor p = fromValues(DType::BF16, {3}, {1.5, -2.0, 0.1});
  const HostTensor z = filled(DType::F32, 3, 0);
  KernelRun r = runKernel(
      "adamw_update",
      {p, filled(DType::F32, 3, 1), z, z, scalarI64(0), scalarF32(0.1f), scalarI1(false),
       scalarI64(1)},
      {HostTensor(DType::BF16, {3}), HostTensor(DType::F32, {3}), HostTensor(DType::F32, {3})},
      {Attribute::makeInt("stochastic_rounding", 1), Attribute::makeInt("stream", 5)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].bytes, p.bytes);
}

// Tests the decoder's checks of the variants.
TEST(Bf16Master, LoadErrors) {
  const HostTensor z = filled(DType::F32, 4, 0);
  const HostTensor b16 = filled(DType::BF16, 4, 1);
  const std::vector<HostTensor> results = {
      HostTensor(DType::BF16, {4}), HostTensor(DType::F32, {4}), HostTensor(DType::F32, {4})};
  const std::vector<HostTensor> base = {b16,           z, z, z, scalarI64(0), scalarF32(0.1f),
                                        scalarI1(true)};
  const Attribute sr = Attribute::makeInt("stochastic_rounding", 1);
  auto error = [](const KernelRun &r) { return r.ok ? std::string("(ran)") : r.error; };
  // stochastic_rounding without the seed, and the seed without it.
  EXPECT_NE(error(runKernel("adamw_update", base, results, {sr})).find("needs the seed"),
            std::string::npos);
  std::vector<HostTensor> seeded = base;
  seeded.push_back(scalarI64(1));
  EXPECT_NE(error(runKernel("adamw_update", seeded, results)).find("only meaningful"),
            std::string::npos);
  // Stochastic rounding into an f32 param; a bf16 param with an f32 result.
  std::vector<HostTensor> f32Seeded = seeded;
  f32Seeded[0] = z;
  std::vector<HostTensor> f32Results = results;
  f32Results[0] = HostTensor(DType::F32, {4});
  EXPECT_NE(error(runKernel("adamw_update", f32Seeded, f32Results, {sr})).find("bf16 param"),
            std::string::npos);
  EXPECT_NE(error(runKernel("adamw_update", base, f32Results)).find("must be bf16"),
            std::string::npos);
  // `sharded` offsets stochastic rounding's draws: meaningless without it.
  EXPECT_NE(error(runKernel("adamw_update", base, results, {Attribute::makeInt("sharded", 1)}))
                .find("'sharded' is meaningful only with stochastic_rounding"),
            std::string::npos);
}

// Tests that a sharded update in a world of one (rank 0, offset 0) rounds
// as the unsharded update does, bit for bit.
TEST(Bf16Master, ShardedOnRankZeroIsUnsharded) {
  const int64_t n = 64;
  HostTensor p(DType::BF16, {n}), g(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) {
    p.set(i, 1.0 + 0.01 * i);
    g.set(i, 0.3 - 0.01 * i);
  }
  std::vector<HostTensor> operands = {p,
                                      g,
                                      filled(DType::F32, n, 0),
                                      filled(DType::F32, n, 0),
                                      scalarI64(3),
                                      scalarF32(0.01f),
                                      scalarI1(true),
                                      scalarI64(7)};
  const std::vector<HostTensor> results = {
      HostTensor(DType::BF16, {n}), HostTensor(DType::F32, {n}), HostTensor(DType::F32, {n})};
  const Attribute sr = Attribute::makeInt("stochastic_rounding", 1);
  const Attribute stream = Attribute::makeInt("stream", kStream);
  KernelRun plain = runKernel("adamw_update", operands, results, {sr, stream});
  KernelRun sharded =
      runKernel("adamw_update", operands, results, {sr, stream, Attribute::makeInt("sharded", 1)});
  ASSERT_TRUE(plain.ok) << plain.error;
  ASSERT_TRUE(sharded.ok) << sharded.error;
  EXPECT_EQ(plain.outputs[0].bytes, sharded.outputs[0].bytes);
}

} // namespace
