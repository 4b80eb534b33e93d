//===- AttentionKernelTest.cpp - attention and attention_grad ------------===//
//
// The CPU kernels against float64 evaluations of softmax(scale q k^T +
// mask) v and of its gradient, computed here from the stored (rounded)
// inputs, in every compute dtype the op takes, with masks of several
// broadcast shapes (and -inf entries), and without one.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mptrt;
using namespace mptrt::test;

namespace {

/// An attention problem: query [..., tq, d], key [..., tk, d], value
/// [..., tk, dv], and a mask broadcast to [..., tq, tk] (or none).
struct Case {
  std::vector<int64_t> batch;
  int64_t tq, tk, d, dv;
  std::vector<int64_t> maskShape; // empty: no mask
  bool hasMask = false;
};

std::vector<int64_t> shapeOf(const std::vector<int64_t> &batch, int64_t a, int64_t b) {
  std::vector<int64_t> s = batch;
  s.push_back(a);
  s.push_back(b);
  return s;
}

int64_t count(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t x : s)
    n *= x;
  return n;
}

/// The mask value at problem b, row i, column j (numpy broadcasting).
double maskAt(const Case &c, const HostTensor &mask, int64_t b, int64_t i, int64_t j) {
  std::vector<int64_t> full = shapeOf(c.batch, c.tq, c.tk), index(full.size());
  int64_t rest = b;
  for (size_t a = c.batch.size(); a-- > 0;) {
    index[a] = rest % c.batch[a];
    rest /= c.batch[a];
  }
  index[full.size() - 2] = i;
  index[full.size() - 1] = j;
  int64_t at = 0;
  const size_t offset = full.size() - c.maskShape.size();
  for (size_t a = 0; a < c.maskShape.size(); ++a)
    at = at * c.maskShape[a] + (c.maskShape[a] == 1 ? 0 : index[a + offset]);
  return mask.get(at);
}

/// Float64 forward and backward of one case.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

Reference reference(const Case &c, const HostTensor &q, const HostTensor &k, const HostTensor &v,
                    const HostTensor *mask, const HostTensor &grad, double scale) {
  const int64_t batch = count(c.batch);
  Reference r;
  r.out.assign(batch * c.tq * c.dv, 0);
  r.lse.assign(batch * c.tq, 0);
  r.dq.assign(batch * c.tq * c.d, 0);
  r.dk.assign(batch * c.tk * c.d, 0);
  r.dv.assign(batch * c.tk * c.dv, 0);
  std::vector<double> s(c.tk), p(c.tk), dp(c.tk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < c.tq; ++i) {
      const int64_t row = b * c.tq + i;
      double max = -INFINITY;
      for (int64_t j = 0; j < c.tk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < c.d; ++t)
          dot += q.get(row * c.d + t) * k.get((b * c.tk + j) * c.d + t);
        s[j] = scale * dot + (mask ? maskAt(c, *mask, b, i, j) : 0.0);
        max = std::max(max, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < c.tk; ++j)
        sum += std::exp(s[j] - max);
      r.lse[row] = max + std::log(sum);
      double rowSum = 0;
      for (int64_t j = 0; j < c.tk; ++j) {
        p[j] = std::exp(s[j] - max) / sum;
        dp[j] = 0;
        for (int64_t t = 0; t < c.dv; ++t) {
          r.out[row * c.dv + t] += p[j] * v.get((b * c.tk + j) * c.dv + t);
          dp[j] += grad.get(row * c.dv + t) * v.get((b * c.tk + j) * c.dv + t);
        }
        rowSum += p[j] * dp[j];
      }
      for (int64_t j = 0; j < c.tk; ++j) {
        const double ds = p[j] * (dp[j] - rowSum);
        for (int64_t t = 0; t < c.d; ++t) {
          r.dq[row * c.d + t] += scale * ds * k.get((b * c.tk + j) * c.d + t);
          r.dk[(b * c.tk + j) * c.d + t] += scale * ds * q.get(row * c.d + t);
        }
        for (int64_t t = 0; t < c.dv; ++t)
          r.dv[(b * c.tk + j) * c.dv + t] += p[j] * grad.get(row * c.dv + t);
      }
    }
  return r;
}

double maxAbs(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

/// Float32 accumulation error plus rounding of the inputs the kernel
/// recomputes from (the forward output and the statistics in the
/// gradient), relative to the largest reference value.
double tolerance(DType t, const std::vector<double> &ref) {
  return (1e-5 + 8 * dtypeEpsilon(t)) * std::max(1.0, maxAbs(ref));
}

const std::vector<Case> &cases() {
  static const std::vector<Case> all = {
      {{2, 3}, 5, 7, 4, 6, {}, false},
      {{2, 3}, 5, 7, 4, 6, {1, 1, 5, 7}, true},
      {{2, 3}, 5, 7, 4, 6, {2, 1, 1, 7}, true},
      {{4}, 3, 3, 8, 2, {3, 3}, true},
      {{}, 6, 4, 3, 5, {4}, true},
  };
  return all;
}

// Tests the forward kernel and then the gradient kernel (fed the forward's
// own output and log-sum-exp, as a training step does) against float64.
TEST(AttentionKernel, MatchesFloat64) {
  std::mt19937 rng(41);
  const double scale = 0.42;
  for (const Case &c : cases())
    for (DType t : {DType::F32, DType::F16, DType::BF16}) {
      SCOPED_TRACE(::testing::Message() << plan::dtypeName(t) << " case tq=" << c.tq
                                        << " tk=" << c.tk << " mask rank " << c.maskShape.size());
      HostTensor q = randomTensor(t, shapeOf(c.batch, c.tq, c.d), rng);
      HostTensor k = randomTensor(t, shapeOf(c.batch, c.tk, c.d), rng);
      HostTensor v = randomTensor(t, shapeOf(c.batch, c.tk, c.dv), rng);
      HostTensor grad = randomTensor(t, shapeOf(c.batch, c.tq, c.dv), rng);
      HostTensor mask = randomTensor(DType::F32, c.maskShape, rng);
      // Remove one key of each row that has at least two (never a whole row).
      if (c.hasMask && c.maskShape.back() > 1)
        for (int64_t at = 0; at < mask.numel(); at += c.maskShape.back())
          mask.set(at + (at / c.maskShape.back()) % c.maskShape.back(), -INFINITY);
      std::vector<HostTensor> operands = {q, k, v};
      if (c.hasMask)
        operands.push_back(mask);
      std::vector<int64_t> rows = c.batch;
      rows.push_back(c.tq);
      KernelRun fwd =
          runKernel("attention", operands,
                    {HostTensor(t, shapeOf(c.batch, c.tq, c.dv)), HostTensor(DType::F32, rows)},
                    {Attribute::makeFloat("scale", scale)});
      ASSERT_TRUE(fwd.ok) << fwd.error;
      Reference ref = reference(c, q, k, v, c.hasMask ? &mask : nullptr, grad, scale);
      EXPECT_TRUE(closeTo(fwd.outputs[0], ref.out, 1e-5, tolerance(t, ref.out)));
      EXPECT_TRUE(closeTo(fwd.outputs[1], ref.lse, 1e-5, 1e-5));

      std::vector<HostTensor> gradOperands = {q, k, v, fwd.outputs[0], fwd.outputs[1], grad};
      if (c.hasMask)
        gradOperands.push_back(mask);
      KernelRun bwd =
          runKernel("attention_grad", gradOperands,
                    {HostTensor(t, q.shape), HostTensor(t, k.shape), HostTensor(t, v.shape)},
                    {Attribute::makeFloat("scale", scale)});
      ASSERT_TRUE(bwd.ok) << bwd.error;
      EXPECT_TRUE(closeTo(bwd.outputs[0], ref.dq, 1e-5, tolerance(t, ref.dq))) << "query_grad";
      EXPECT_TRUE(closeTo(bwd.outputs[1], ref.dk, 1e-5, tolerance(t, ref.dk))) << "key_grad";
      EXPECT_TRUE(closeTo(bwd.outputs[2], ref.dv, 1e-5, tolerance(t, ref.dv))) << "value_grad";

      // Fixed summation order: a second run is bit-identical.
      KernelRun again =
          runKernel("attention_grad", gradOperands,
                    {HostTensor(t, q.shape), HostTensor(t, k.shape), HostTensor(t, v.shape)},
                    {Attribute::makeFloat("scale", scale)});
      ASSERT_TRUE(again.ok) << again.error;
      for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(again.outputs[i].bytes, bwd.outputs[i].bytes) << "result " << i;
    }
}

// Tests the decoder's refusals: each names what is wrong.
TEST(AttentionKernel, RejectsBadShapes) {
  std::mt19937 rng(42);
  const DType t = DType::F32;
  HostTensor q = randomTensor(t, {2, 3, 4}, rng), k = randomTensor(t, {2, 5, 4}, rng);
  HostTensor v = randomTensor(t, {2, 5, 6}, rng);
  const std::vector<HostTensor> results = {HostTensor(t, {2, 3, 6}), HostTensor(t, {2, 3})};
  const Attribute scale = Attribute::makeFloat("scale", 1.0);

  KernelRun r = runKernel("attention", {q, randomTensor(t, {2, 5, 3}, rng), v}, results, {scale});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must have the query's last axis"), std::string::npos) << r.error;

  r = runKernel("attention", {q, k, randomTensor(t, {2, 4, 6}, rng)}, results, {scale});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("as many rows as key"), std::string::npos) << r.error;

  r = runKernel("attention", {q, k, v, randomTensor(t, {3, 3}, rng)}, results, {scale});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("does not broadcast to the scores"), std::string::npos) << r.error;

  r = runKernel("attention", {q, k, v}, results, {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("scale"), std::string::npos) << r.error;
}

} // namespace
