//===- ReductionKernelTest.cpp - reduce_* and the losses -----------------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mptrt;
using namespace mptrt::test;

namespace {

/// Reduces `x` over `axes` (empty: all) in float64.
std::vector<double> reduceRef(const HostTensor &x, std::vector<int64_t> axes,
                              const std::string &kind, std::vector<int64_t> *outShape,
                              bool keepdims) {
  const int64_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[a < 0 ? a + rank : a] = true;
  std::vector<int64_t> kept; // output shape without the reduced axes
  outShape->clear();
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      kept.push_back(x.shape[d]);
    if (!reduced[d] || keepdims)
      outShape->push_back(reduced[d] ? 1 : x.shape[d]);
  }
  int64_t n = 1;
  for (int64_t d : kept)
    n *= d;
  std::vector<double> acc(n, kind == "reduce_max" ? -INFINITY : 0.0);
  std::vector<int64_t> count(n, 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unflatten(i, x.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        o = o * x.shape[d] + idx[d];
    const double v = x.get(i);
    if (kind == "reduce_max")
      acc[o] = std::max(acc[o], v);
    else if (kind == "reduce_l2")
      acc[o] += v * v;
    else
      acc[o] += v;
    ++count[o];
  }
  for (int64_t o = 0; o < n; ++o) {
    if (kind == "reduce_mean")
      acc[o] /= count[o];
    if (kind == "reduce_l2")
      acc[o] = std::sqrt(acc[o]);
  }
  return acc;
}

// Tests the four reductions over several axis sets (leading, middle,
// trailing, all, negative), with and without keepdims, in every float dtype.
TEST(ReduceKernels, FloatAxesAndKeepdims) {
  std::mt19937 rng(40);
  const std::vector<int64_t> shape = {3, 4, 5, 2};
  const std::vector<std::vector<int64_t>> axesSets = {{},     {0},    {1},     {3},
                                                      {2, 3}, {0, 2}, {-1, 1}, {0, 1, 2, 3}};
  for (const char *kind : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_l2"})
    for (const auto &axes : axesSets)
      for (bool keepdims : {true, false})
        for (DType t : floatDTypes()) {
          HostTensor x = randomTensor(t, shape, rng);
          std::vector<int64_t> outShape;
          std::vector<double> ref = reduceRef(x, axes, kind, &outShape, keepdims);
          KernelRun r = runKernel(
              kind, {x}, {HostTensor(t, outShape)},
              {Attribute::makeInts("axes", axes), Attribute::makeInt("keepdims", keepdims)});
          ASSERT_TRUE(r.ok) << kind << ": " << r.error;
          EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-6, 1e-5))
              << kind << " axes " << axes.size() << " " << plan::dtypeName(t);
        }
}

// Tests integer reduce_sum / reduce_max, and that keepdims defaults to 1.
TEST(ReduceKernels, Integers) {
  std::mt19937 rng(41);
  for (DType t : {DType::I32, DType::I64})
    for (const char *kind : {"reduce_sum", "reduce_max"}) {
      HostTensor x = randomTensor(t, {4, 3, 5}, rng, -100, 100);
      std::vector<int64_t> outShape;
      std::vector<double> ref = reduceRef(x, {0, 2}, kind, &outShape, true);
      KernelRun r =
          runKernel(kind, {x}, {HostTensor(t, outShape)}, {Attribute::makeInts("axes", {0, 2})});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0)) << kind;
    }
}

//===----------------------------------------------------------------------===//
// Losses.
//===----------------------------------------------------------------------===//

struct LossRef {
  std::vector<double> perSample, logProb;
  double sum = 0, weightSum = 0;
};

LossRef lossRef(const HostTensor &scores, const HostTensor &labels, const HostTensor *weights,
                bool fromLogits, bool hasIgnore, int64_t ignore) {
  const int64_t N = scores.shape[0], C = scores.shape[1];
  const int64_t D = scores.numel() / (N * C);
  LossRef r;
  r.logProb.resize(scores.numel());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      double sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(scores.get((n * C + c) * D + d));
      for (int64_t c = 0; c < C; ++c)
        r.logProb[(n * C + c) * D + d] = scores.get((n * C + c) * D + d) - std::log(sum);
      const int64_t t = labels.getInt(n * D + d);
      if (hasIgnore && t == ignore) {
        r.perSample.push_back(0);
        continue;
      }
      const double w = weights ? weights->get(t) : 1.0;
      const double lp =
          fromLogits ? r.logProb[(n * C + t) * D + d] : scores.get((n * C + t) * D + d);
      r.perSample.push_back(-w * lp);
      r.sum += -w * lp;
      r.weightSum += w;
    }
  return r;
}

// Tests softmax_cross_entropy_loss and nll_loss: every reduction, with and
// without weights and ignore_index, 2-D and 3-D scores, i32 and i64 labels.
TEST(LossKernels, Variants) {
  std::mt19937 rng(42);
  const std::vector<std::vector<int64_t>> shapes = {{6, 5}, {3, 4, 7}};
  for (const char *kind : {"softmax_cross_entropy_loss", "nll_loss"})
    for (const auto &shape : shapes)
      for (const char *reduction : {"none", "sum", "mean"})
        for (int variant = 0; variant < 4; ++variant)
          for (DType t : {DType::F32, DType::BF16, DType::F16}) {
            const bool fromLogits = std::string(kind) != "nll_loss";
            const bool weighted = variant & 1, ignoring = variant & 2;
            const int64_t C = shape[1];
            std::vector<int64_t> labelShape = {shape[0]};
            labelShape.insert(labelShape.end(), shape.begin() + 2, shape.end());
            HostTensor scores = randomTensor(t, shape, rng, -3, 3);
            HostTensor labels =
                randomTensor(variant == 3 ? DType::I32 : DType::I64, labelShape, rng, 0, C - 1);
            labels.set(0, 1); // so that ignore_index = 1 hits at least once
            std::vector<HostTensor> ops = {scores, labels};
            if (weighted)
              ops.push_back(randomTensor(t, {C}, rng, 0.2, 2));
            std::vector<Attribute> attrs = {Attribute::makeString("reduction", reduction)};
            if (ignoring)
              attrs.push_back(Attribute::makeInt("ignore_index", 1));
            const bool none = std::string(reduction) == "none";
            std::vector<HostTensor> results = {
                HostTensor(DType::F32, none ? labelShape : std::vector<int64_t>{})};
            if (fromLogits)
              results.push_back(HostTensor(t, shape));
            KernelRun r = runKernel(kind, ops, results, attrs);
            ASSERT_TRUE(r.ok) << r.error;
            LossRef ref =
                lossRef(scores, labels, weighted ? &ops[2] : nullptr, fromLogits, ignoring, 1);
            std::vector<double> want = none ? ref.perSample
                                            : std::vector<double>{std::string(reduction) == "sum"
                                                                      ? ref.sum
                                                                      : ref.sum / ref.weightSum};
            EXPECT_TRUE(closeTo(r.outputs[0], want, 1e-5, 1e-5))
                << kind << " " << reduction << " variant " << variant << " " << plan::dtypeName(t);
            if (fromLogits) {
              EXPECT_TRUE(closeTo(r.outputs[1], ref.logProb, 1e-5, 1e-5));
            }
          }
}

// Tests that a label outside [0, C) fails the run with its value.
TEST(LossKernels, LabelOutOfRange) {
  HostTensor scores(DType::F32, {2, 3});
  HostTensor labels = fromValues(DType::I64, {2}, {0, 3});
  KernelRun r = runKernel("nll_loss", {scores, labels}, {HostTensor(DType::F32, {})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("label 3 at sample 1 is outside [0, 3)"), std::string::npos) << r.error;
}

// Tests mean reduction when every sample is ignored: 0 / 0 = NaN.
TEST(LossKernels, AllIgnoredMeanIsNaN) {
  HostTensor scores(DType::F32, {2, 3});
  HostTensor labels = fromValues(DType::I64, {2}, {-100, -100});
  KernelRun r = runKernel("softmax_cross_entropy_loss", {scores, labels},
                          {HostTensor(DType::F32, {})}, {Attribute::makeInt("ignore_index", -100)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(std::isnan(r.outputs[0].get(0)));
}

} // namespace
