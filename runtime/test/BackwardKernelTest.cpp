//===- BackwardKernelTest.cpp - the backward (gradient) kernel kinds ------===//
//
// Each backward kind of docs/training.md against a float64 reference written
// here from the formulas (not from the kernels' algorithms), on small random
// inputs and the edge cases of its attributes; the linear ones (conv and
// pooling gradients) also against the forward kernels through the adjoint
// identity <f(x), dy> == <x, f'(dy)>; bad kernels rejected at load time;
// and every kind giving the same bits on the pool as on one thread.
//
// Runs with four threads (MPTRT_NUM_THREADS=4 unless the environment says
// otherwise), so the pool is always exercised.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "UnaryOracle.h"
#include "cpu/Parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
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

using Shape = std::vector<int64_t>;

int64_t numelOf(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

/// An i64 tensor holding `values`.
HostTensor intTensor(Shape shape, const std::vector<int64_t> &values, DType t = DType::I64) {
  HostTensor h(t, std::move(shape));
  for (int64_t i = 0; i < h.numel(); ++i)
    h.set(i, static_cast<double>(values[i]));
  return h;
}

/// sum_i a[i] * b[i] and sum_i |a[i] * b[i]| in float64.
std::pair<double, double> dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    s += a[i] * b[i];
    m += std::fabs(a[i] * b[i]);
  }
  return {s, m};
}

/// Expects the load of a one-kernel plan to fail with a message containing
/// `expected` (and naming the kind).
void expectRejected(const std::string &kind, const std::vector<HostTensor> &operands,
                    const std::vector<HostTensor> &results, std::vector<Attribute> attrs,
                    const std::string &expected) {
  KernelRun r = runKernel(kind, operands, results, std::move(attrs));
  ASSERT_FALSE(r.ok) << kind << ": accepted, expected \"" << expected << "\"";
  EXPECT_NE(r.error.find(expected), std::string::npos) << kind << ": " << r.error;
  EXPECT_NE(r.error.find("(" + kind + ")"), std::string::npos) << r.error;
}

//===----------------------------------------------------------------------===//
// unary_grad
//===----------------------------------------------------------------------===//

// Tests every unary_grad kind in f32, bf16 and mixed dtypes, with x at 0
// and on the clip bounds, against f'(x) * dy in float64.
TEST(UnaryGradKernel, EveryKind) {
  std::mt19937 rng(100);
  const Shape shape = {3, 7, 5};
  struct Case {
    std::string kind;
    std::vector<Attribute> attrs;
    double lo = -INFINITY, hi = INFINITY, alpha = 0.01;
  };
  // Every unary_grad kind of UnaryKinds.def with its default attributes,
  // and leaky_relu's and clip's with some values of them.
  std::vector<Case> cases;
  for (const oracle::UnaryFunctionInfo &u : oracle::unaryFunctions())
    if (u.grad)
      cases.push_back({u.kind, {}});
  cases.push_back({"leaky_relu", {Attribute::makeFloat("alpha", 0.25)}, -INFINITY, INFINITY, 0.25});
  cases.push_back(
      {"clip", {Attribute::makeFloat("min", -0.5), Attribute::makeFloat("max", 1.0)}, -0.5, 1.0});
  cases.push_back({"clip", {Attribute::makeFloat("min", -0.5)}, -0.5});
  cases.push_back({"clip", {Attribute::makeFloat("max", 1.0)}, -INFINITY, 1.0});
  const std::vector<std::vector<DType>> dtypes = {// x, dy, dx
                                                  {DType::F32, DType::F32, DType::F32},
                                                  {DType::BF16, DType::BF16, DType::BF16},
                                                  {DType::F16, DType::F32, DType::F16},
                                                  {DType::F32, DType::BF16, DType::F32}};
  for (const Case &c : cases)
    for (const auto &t : dtypes) {
      bool positive = false;
      double width = 3;
      std::vector<double> kinks = {0.0, -0.5, 1.0}; // 0 and the clip bounds
      for (const oracle::UnaryFunctionInfo &u : oracle::unaryFunctions())
        if (c.kind == u.kind) {
          positive = u.positive;
          width = u.width(width);
          kinks.insert(kinks.end(), u.kinks.begin(), u.kinks.end());
        }
      HostTensor x = randomTensor(t[0], shape, rng, positive ? 0.1 : -width, positive ? 3 : width);
      if (!positive) // the kinks, exactly
        for (size_t i = 0; i < kinks.size(); ++i)
          x.set(static_cast<int64_t>(i), kinks[i]);
      HostTensor dy = randomTensor(t[1], shape, rng);
      std::vector<Attribute> attrs = c.attrs;
      attrs.push_back(Attribute::makeString("kind", c.kind));
      KernelRun r = runKernel("unary_grad", {x, dy}, {HostTensor(t[2], shape)}, attrs);
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> ref(x.numel());
      for (int64_t i = 0; i < x.numel(); ++i) {
        oracle::UnaryArgs a = oracle::defaultArgs(c.kind);
        if (c.kind == "leaky_relu")
          a.alpha = c.alpha;
        a.lo = c.lo;
        a.hi = c.hi;
        double f, df;
        ASSERT_TRUE(oracle::evalUnary(c.kind, x.get(i), a, &f, &df)) << c.kind;
        ref[i] = df * dy.get(i);
      }
      // 1 - t^2 cancels as |x| grows: one ulp of t = tanh(.) (glibc's tanhf
      // is within one) moves tanh's derivative by up to 2^-22 absolute, and
      // gelu_tanh's, which multiplies it by 0.5 x du <= 2.6 for |x| <= 3,
      // by up to 2^-20.
      double dyMax = 0;
      for (int64_t i = 0; i < dy.numel(); ++i)
        dyMax = std::max(dyMax, std::fabs(dy.get(i)));
      const double abs = c.kind == "tanh"        ? 0x1p-22 * dyMax
                         : c.kind == "gelu_tanh" ? 0x1p-20 * dyMax
                                                 : 1e-7;
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 2e-6, abs))
          << c.kind << " " << plan::dtypeName(t[0]) << "/" << plan::dtypeName(t[1]) << "->"
          << plan::dtypeName(t[2]);
      for (int64_t i = 0; i < static_cast<int64_t>(kinks.size());
           ++i) { // a zero derivative at a kink is exactly 0
        if (!positive && ref[i] == 0) {
          EXPECT_EQ(r.outputs[0].get(i), 0.0) << c.kind << " at x = " << x.get(i);
        }
      }
    }
}

// Tests that dx is rounded once into bf16: relu's gradient of f32 dy into
// a bf16 dx (x is bf16) is exactly bf16(dy) where x > 0, and +0 elsewhere.
TEST(UnaryGradKernel, RoundsOnceIntoTheResult) {
  std::mt19937 rng(101);
  const Shape shape = {1000};
  HostTensor x = randomTensor(DType::BF16, shape, rng);
  HostTensor dy = randomTensor(DType::F32, shape, rng, -1e3, 1e3, 1e-3);
  KernelRun r = runKernel("unary_grad", {x, dy}, {HostTensor(DType::BF16, shape)},
                          {Attribute::makeString("kind", "relu")});
  ASSERT_TRUE(r.ok) << r.error;
  HostTensor expected(DType::BF16, shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    expected.set(i, x.get(i) > 0 ? dy.get(i) : 0.0);
  EXPECT_TRUE(r.outputs[0].bytes == expected.bytes);
}

//===----------------------------------------------------------------------===//
// softmax_grad
//===----------------------------------------------------------------------===//

// Tests softmax_grad and its log form along every axis, in f32 and bf16,
// with y the (log-)softmax of random scores.
TEST(SoftmaxGradKernel, EveryAxis) {
  std::mt19937 rng(110);
  const Shape shape = {3, 4, 5};
  const Shape st = stridesOf(shape);
  for (int log = 0; log < 2; ++log)
    for (int64_t axis : {0, 1, 2, -1})
      for (DType t : {DType::F32, DType::BF16, DType::F16}) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        HostTensor scores = randomTensor(DType::F32, shape, rng, -3, 3);
        HostTensor y(t, shape);
        for (int64_t i = 0; i < y.numel(); ++i) {
          const Shape idx = unflatten(i, shape);
          double sum = 0;
          for (int64_t d = 0; d < shape[a]; ++d)
            sum += std::exp(scores.get(i + (d - idx[a]) * st[a]));
          y.set(i, log ? scores.get(i) - std::log(sum) : std::exp(scores.get(i)) / sum);
        }
        HostTensor dy = randomTensor(t, shape, rng);
        KernelRun r = runKernel("softmax_grad", {y, dy}, {HostTensor(t, shape)},
                                {Attribute::makeInt("axis", axis), Attribute::makeInt("log", log)});
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref(y.numel());
        for (int64_t i = 0; i < y.numel(); ++i) {
          const Shape idx = unflatten(i, shape);
          double s = 0; // sum(dy * y), or sum(dy) for log
          for (int64_t d = 0; d < shape[a]; ++d) {
            const int64_t j = i + (d - idx[a]) * st[a];
            s += log ? dy.get(j) : dy.get(j) * y.get(j);
          }
          ref[i] = log ? dy.get(i) - std::exp(y.get(i)) * s : y.get(i) * (dy.get(i) - s);
        }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 2e-6))
            << "log " << log << " axis " << axis << " " << plan::dtypeName(t);
      }
}

// Tests that `log` defaults to 0 (plain softmax).
TEST(SoftmaxGradKernel, LogDefaultsToZero) {
  const Shape shape = {1, 2};
  HostTensor y = fromValues(DType::F32, shape, {0.25, 0.75});
  HostTensor dy = fromValues(DType::F32, shape, {1.0, -1.0});
  KernelRun r = runKernel("softmax_grad", {y, dy}, {HostTensor(DType::F32, shape)},
                          {Attribute::makeInt("axis", 1)});
  ASSERT_TRUE(r.ok) << r.error;
  // s = 0.25 - 0.75 = -0.5; dx = y * (dy - s).
  EXPECT_TRUE(closeTo(r.outputs[0], {0.25 * 1.5, 0.75 * -0.5}, 0, 0));
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

// Tests layer_norm_grad with `axis` first, in the middle and last, a full
// and a single-value scale, f32 and bf16 data, against the Jacobian of
// y = xhat * scale + bias summed against dy (float64).
TEST(LayerNormGradKernel, Variants) {
  std::mt19937 rng(120);
  const Shape shape = {2, 3, 4};
  for (int64_t axis : {1, 2, -1, 0})
    for (DType t : {DType::F32, DType::BF16})
      for (bool scalarScale : {false, true}) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < 3; ++d)
          (d < a ? outer : inner) *= shape[d];
        const Shape normShape(shape.begin() + a, shape.end());
        Shape statShape(shape.begin(), shape.begin() + a);
        statShape.resize(3, 1);
        HostTensor x = randomTensor(t, shape, rng);
        HostTensor scale =
            scalarScale ? randomTensor(t, {1}, rng) : randomTensor(t, normShape, rng);
        HostTensor dy = randomTensor(t, shape, rng);
        HostTensor mean(DType::F32, statShape), rstd(DType::F32, statShape);
        for (int64_t o = 0; o < outer; ++o) {
          double m = 0, v = 0;
          for (int64_t i = 0; i < inner; ++i)
            m += x.get(o * inner + i) / inner;
          for (int64_t i = 0; i < inner; ++i)
            v += (x.get(o * inner + i) - m) * (x.get(o * inner + i) - m) / inner;
          mean.set(o, m);
          rstd.set(o, 1 / std::sqrt(v + 1e-5));
        }
        const Shape sShape = scale.shape;
        KernelRun r = runKernel(
            "layer_norm_grad", {x, scale, mean, rstd, dy},
            {HostTensor(t, shape), HostTensor(DType::F32, sShape), HostTensor(DType::F32, sShape)},
            {Attribute::makeInt("axis", axis)});
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> dx(x.numel(), 0), dscale(scale.numel(), 0), dbias(scale.numel(), 0);
        for (int64_t o = 0; o < outer; ++o) {
          const double m = mean.get(o), s = rstd.get(o);
          auto xhat = [&](int64_t i) { return (x.get(o * inner + i) - m) * s; };
          for (int64_t i = 0; i < inner; ++i) {
            const double g = dy.get(o * inner + i) * scale.get(scalarScale ? 0 : i);
            // d xhat_i / d x_j = s * ([i == j] - 1/n - xhat_i xhat_j / n)
            for (int64_t j = 0; j < inner; ++j)
              dx[o * inner + j] +=
                  g * s * ((i == j ? 1.0 : 0.0) - 1.0 / inner - xhat(i) * xhat(j) / inner);
            dscale[scalarScale ? 0 : i] += dy.get(o * inner + i) * xhat(i);
            dbias[scalarScale ? 0 : i] += dy.get(o * inner + i);
          }
        }
        const std::string what = "axis " + std::to_string(axis) + " " + plan::dtypeName(t) +
                                 (scalarScale ? " scalar scale" : "");
        EXPECT_TRUE(closeTo(r.outputs[0], dx, 1e-5, 1e-5)) << what;
        EXPECT_TRUE(closeTo(r.outputs[1], dscale, 1e-5, 1e-5)) << what;
        EXPECT_TRUE(closeTo(r.outputs[2], dbias, 1e-6, 1e-6)) << what;
      }
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss_grad and nll_loss_grad
//===----------------------------------------------------------------------===//

struct LossCase {
  Shape scores; // [N, C, d...]
  std::string reduction;
  bool weights;
  bool ignore; // ignore_index = 1 (a real class), some labels set to it
};

/// The loss gradients in float64: dscores (SCE) or dinput (NLL).
std::vector<double> lossGradReference(bool sce, const LossCase &c, const HostTensor &logProb,
                                      const HostTensor &labels, const HostTensor *weights,
                                      const HostTensor &dloss) {
  const int64_t N = c.scores[0], C = c.scores[1], D = numelOf(c.scores) / (N * C);
  auto ignored = [&](int64_t s) { return c.ignore && labels.getInt(s) == 1; };
  auto w = [&](int64_t cls) { return weights ? weights->get(cls) : 1.0; };
  double weightSum = 0;
  for (int64_t s = 0; s < N * D; ++s)
    if (!ignored(s))
      weightSum += w(labels.getInt(s));
  std::vector<double> ref(numelOf(c.scores), 0.0);
  for (int64_t s = 0; s < N * D; ++s) {
    if (ignored(s))
      continue;
    const int64_t t = labels.getInt(s), n = s / D, d = s % D;
    const double g = c.reduction == "none"  ? dloss.get(s)
                     : c.reduction == "sum" ? dloss.get(0)
                                            : dloss.get(0) / weightSum;
    for (int64_t cls = 0; cls < C; ++cls) {
      const int64_t at = (n * C + cls) * D + d;
      if (sce)
        ref[at] = (std::exp(logProb.get(at)) - (cls == t ? 1.0 : 0.0)) * w(t) * g;
      else if (cls == t)
        ref[at] = -w(t) * g;
    }
  }
  return ref;
}

// Tests both loss gradients over reductions none / sum / mean, with and
// without class weights and ignore_index, on [N, C] and [N, C, d1, d2],
// f32 and bf16; ignored samples' gradients are exactly 0.
TEST(LossGradKernels, ReductionsWeightsIgnoreIndex) {
  std::mt19937 rng(130);
  for (bool sce : {true, false})
    for (const Shape &scores : {Shape{5, 4}, Shape{2, 3, 2, 3}})
      for (const char *reduction : {"none", "sum", "mean"})
        for (bool weights : {false, true})
          for (bool ignore : {false, true})
            for (DType t : {DType::F32, DType::BF16}) {
              const LossCase c = {scores, reduction, weights, ignore};
              const int64_t N = scores[0], C = scores[1];
              Shape labelShape = {N};
              labelShape.insert(labelShape.end(), scores.begin() + 2, scores.end());
              const int64_t samples = numelOf(labelShape);
              std::vector<int64_t> lv(samples);
              for (int64_t s = 0; s < samples; ++s)
                lv[s] = static_cast<int64_t>(rng() % C);
              if (ignore) { // and at least one kept
                lv[0] = 1;
                lv[samples - 1] = 1;
                lv[1] = 2;
              }
              HostTensor labels = intTensor(labelShape, lv, ignore ? DType::I32 : DType::I64);
              // log_prob: log_softmax of random scores over axis 1.
              HostTensor raw = randomTensor(DType::F32, scores, rng, -2, 2);
              HostTensor logProb(t, scores);
              const int64_t D = samples / N;
              for (int64_t s = 0; s < samples; ++s) {
                const int64_t n = s / D, d = s % D;
                double sum = 0;
                for (int64_t cls = 0; cls < C; ++cls)
                  sum += std::exp(raw.get((n * C + cls) * D + d));
                for (int64_t cls = 0; cls < C; ++cls)
                  logProb.set((n * C + cls) * D + d,
                              raw.get((n * C + cls) * D + d) - std::log(sum));
              }
              HostTensor w = randomTensor(t, {C}, rng, 0.2, 2);
              HostTensor dloss = std::string(reduction) == "none"
                                     ? randomTensor(DType::F32, labelShape, rng)
                                     : randomTensor(DType::F32, {}, rng);
              std::vector<HostTensor> ops;
              if (sce)
                ops.push_back(logProb);
              ops.push_back(labels);
              if (weights)
                ops.push_back(w);
              ops.push_back(dloss);
              std::vector<Attribute> attrs = {Attribute::makeString("reduction", reduction)};
              if (ignore)
                attrs.push_back(Attribute::makeInt("ignore_index", 1));
              const char *kind = sce ? "softmax_cross_entropy_loss_grad" : "nll_loss_grad";
              KernelRun r = runKernel(kind, ops, {HostTensor(t, scores)}, attrs);
              ASSERT_TRUE(r.ok) << r.error;
              const std::vector<double> ref =
                  lossGradReference(sce, c, logProb, labels, weights ? &w : nullptr, dloss);
              const std::string what = std::string(kind) + " " + reduction +
                                       (weights ? " weights" : "") + (ignore ? " ignore" : "") +
                                       " rank " + std::to_string(scores.size()) + " " +
                                       plan::dtypeName(t);
              EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-6)) << what;
              if (ignore) {
                const int64_t Dd = samples / N;
                for (int64_t s : {int64_t{0}, samples - 1})
                  for (int64_t cls = 0; cls < C; ++cls)
                    EXPECT_EQ(r.outputs[0].get((s / Dd * C + cls) * Dd + s % Dd), 0.0) << what;
              }
            }
}

// Tests that with every sample ignored the gradient is all zeros (the mean's
// denominator is 0), and that a label outside [0, C) fails the run.
TEST(LossGradKernels, AllIgnoredAndBadLabels) {
  HostTensor logProb = fromValues(DType::F32, {2, 3}, {-1, -2, -0.5, -0.3, -1.2, -2});
  HostTensor labels = intTensor({2}, {-100, -100});
  HostTensor dloss = fromValues(DType::F32, {}, {1.0});
  for (bool sce : {true, false}) {
    const char *kind = sce ? "softmax_cross_entropy_loss_grad" : "nll_loss_grad";
    std::vector<HostTensor> ops = {labels, dloss};
    if (sce)
      ops.insert(ops.begin(), logProb);
    KernelRun r = runKernel(kind, ops, {HostTensor(DType::F32, {2, 3})},
                            {Attribute::makeInt("ignore_index", -100)});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(closeTo(r.outputs[0], std::vector<double>(6, 0.0), 0, 0)) << kind;
    ops[sce ? 1 : 0] = intTensor({2}, {0, 3}, DType::I32);
    r = runKernel(kind, ops, {HostTensor(DType::F32, {2, 3})},
                  {Attribute::makeInt("ignore_index", -100)});
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.error.find("label 3 at sample 1 is outside [0, 3)"), std::string::npos) << r.error;
  }
}

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

// Tests gather_grad along every axis with repeated and negative indices
// (i32 and i64), f32 and bf16, against float64 sums; ddata positions no
// index names are 0.
TEST(GatherGradKernel, RepeatedAndNegativeIndices) {
  std::mt19937 rng(140);
  const Shape data = {5, 4, 3};
  for (int64_t axis : {0, 1, 2, -1})
    for (DType it : {DType::I64, DType::I32})
      for (DType t : {DType::F32, DType::BF16}) {
        const int64_t a = axis < 0 ? axis + 3 : axis, dim = data[a];
        // 2 x 3 indices: repeats, each repeated through a negative alias.
        const std::vector<int64_t> iv = {1, -1, 1, dim - 1, 1 - dim, 0};
        HostTensor indices = intTensor({2, 3}, iv, it);
        Shape dyShape(data.begin(), data.begin() + a);
        dyShape.insert(dyShape.end(), {2, 3});
        dyShape.insert(dyShape.end(), data.begin() + a + 1, data.end());
        HostTensor dy = randomTensor(t, dyShape, rng);
        KernelRun r = runKernel("gather_grad", {indices, dy}, {HostTensor(t, data)},
                                {Attribute::makeInt("axis", axis)});
        ASSERT_TRUE(r.ok) << r.error;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < 3; ++d)
          if (d != a)
            (d < a ? outer : inner) *= data[d];
        std::vector<double> ref(numelOf(data), 0.0);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < 6; ++i)
            for (int64_t n = 0; n < inner; ++n) {
              const int64_t idx = iv[i] < 0 ? iv[i] + dim : iv[i];
              ref[(o * dim + idx) * inner + n] += dy.get((o * 6 + i) * inner + n);
            }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-6, 1e-7))
            << "axis " << axis << " " << plan::dtypeName(t) << " " << plan::dtypeName(it);
      }
}

// Tests that gather_grad adds in double in index order and rounds once
// (docs/runtime.md, "Accumulation"): a large scatter (split over the
// threads) against the same double sums made serially, bit for bit; and
// that an index out of range fails the run.
TEST(GatherGradKernel, DoubleIndexOrderAndBadIndex) {
  std::mt19937 rng(141);
  const int64_t rows = 50, cols = 700, n = 400;
  std::vector<int64_t> iv(n);
  for (int64_t i = 0; i < n; ++i)
    iv[i] = static_cast<int64_t>(rng() % (2 * rows)) - rows; // [-rows, rows)
  HostTensor indices = intTensor({n}, iv);
  HostTensor dy = randomTensor(DType::F32, {n, cols}, rng, -100, 100, 1e-3);
  KernelRun r = runKernel("gather_grad", {indices, dy}, {HostTensor(DType::F32, {rows, cols})},
                          {Attribute::makeInt("axis", 0)});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<double> acc(rows * cols, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < cols; ++c)
      acc[((iv[i] + rows) % rows) * cols + c] += dy.get(i * cols + c);
  HostTensor expected(DType::F32, {rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i)
    expected.set(i, acc[i]);
  EXPECT_TRUE(r.outputs[0].bytes == expected.bytes);

  iv[7] = rows;
  r = runKernel("gather_grad", {intTensor({n}, iv), dy}, {HostTensor(DType::F32, {rows, cols})},
                {Attribute::makeInt("axis", 0)});
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("index 50 at position 7 is outside [-50, 50)"), std::string::npos)
      << r.error;
}

//===----------------------------------------------------------------------===//
// slice_grad
//===----------------------------------------------------------------------===//

// Tests slice_grad with positive, negative and unit steps (a negative step
// running to the start, end = -1), converting between float types.
TEST(SliceGradKernel, StridedAndNegativeSteps) {
  std::mt19937 rng(150);
  const Shape x = {4, 5, 6};
  struct Case {
    std::vector<int64_t> starts, ends, steps;
  };
  const std::vector<Case> cases = {
      {{3, 0, 5}, {-1, 5, 0}, {-2, 2, -3}},
      {{0, 1, 0}, {4, 4, 6}, {1, 1, 1}},
      {{2, 4, 1}, {3, -1, 6}, {1, -1, 4}},
      {{1, 2, 3}, {1, 2, 3}, {1, 1, 1}}, // empty
  };
  for (const Case &c : cases)
    for (DType dyt : {DType::F32, DType::BF16})
      for (DType dxt : {DType::F32, DType::BF16}) {
        Shape dyShape(3);
        for (int d = 0; d < 3; ++d) {
          const int64_t s = c.starts[d], e = c.ends[d], st = c.steps[d];
          dyShape[d] = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
        }
        HostTensor dy = randomTensor(dyt, dyShape, rng);
        KernelRun r =
            runKernel("slice_grad", {dy}, {HostTensor(dxt, x)},
                      {Attribute::makeInts("starts", c.starts), Attribute::makeInts("ends", c.ends),
                       Attribute::makeInts("steps", c.steps)});
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref(numelOf(x), 0.0);
        const Shape xs = stridesOf(x);
        for (int64_t i = 0; i < dy.numel(); ++i) {
          const Shape idx = unflatten(i, dyShape);
          int64_t at = 0;
          for (int d = 0; d < 3; ++d)
            at += (c.starts[d] + idx[d] * c.steps[d]) * xs[d];
          ref[at] = dy.get(i);
        }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0))
            << plan::dtypeName(dyt) << " -> " << plan::dtypeName(dxt);
      }
}

// Tests that slice_grad's steps default to 1s, as slice's do.
TEST(SliceGradKernel, StepsDefaultToOne) {
  HostTensor dy = fromValues(DType::F32, {2}, {5, 7});
  KernelRun r = runKernel("slice_grad", {dy}, {HostTensor(DType::F32, {4})},
                          {Attribute::makeInts("starts", {1}), Attribute::makeInts("ends", {3})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(closeTo(r.outputs[0], {0, 5, 7, 0}, 0, 0));
}

//===----------------------------------------------------------------------===//
// Pooling gradients.
//===----------------------------------------------------------------------===//

struct PoolCase {
  Shape x; // [N, C, d...]
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil = false, countIncludePad = false;

  int nsp() const { return static_cast<int>(x.size()) - 2; }
  std::vector<Attribute> attrs(bool average) const {
    std::vector<Attribute> a = {
        Attribute::makeInts("kernel_shape", kernel), Attribute::makeInts("strides", strides),
        Attribute::makeInts("pads", pads), Attribute::makeInts("dilations", dilations),
        Attribute::makeInt("ceil_mode", ceil)};
    if (average)
      a.push_back(Attribute::makeInt("count_include_pad", countIncludePad));
    return a;
  }
  /// Output spatial sizes, by the rule in docs/runtime.md.
  Shape out() const {
    Shape o = {x[0], x[1]};
    for (int d = 0; d < nsp(); ++d) {
      const int64_t span = dilations[d] * (kernel[d] - 1) + 1;
      const int64_t padded = x[d + 2] + pads[d] + pads[nsp() + d];
      int64_t n = ceil ? (padded - span + strides[d] - 1) / strides[d] + 1
                       : (padded - span) / strides[d] + 1;
      if (ceil && (n - 1) * strides[d] >= x[d + 2] + pads[d])
        --n;
      o.push_back(n);
    }
    return o;
  }
  /// Calls fn(plane, out index in plane, in-input offsets in window order,
  /// the count_include_pad divisor) for every output of every plane.
  void forEachWindow(const std::function<void(int64_t, int64_t, const std::vector<int64_t> &,
                                              int64_t)> &fn) const {
    const Shape o = out();
    const Shape oSp(o.begin() + 2, o.end()), kSp = kernel, inSp(x.begin() + 2, x.end());
    for (int64_t plane = 0; plane < x[0] * x[1]; ++plane)
      for (int64_t oi = 0; oi < numelOf(oSp); ++oi) {
        const Shape op = unflatten(oi, oSp);
        std::vector<int64_t> offsets;
        int64_t padded = 0;
        for (int64_t ki = 0; ki < numelOf(kSp); ++ki) {
          const Shape kp = unflatten(ki, kSp);
          bool inside = true, inPadded = true;
          int64_t offset = 0;
          for (int d = 0; d < nsp(); ++d) {
            const int64_t pos = op[d] * strides[d] - pads[d] + kp[d] * dilations[d];
            inside = inside && pos >= 0 && pos < inSp[d];
            inPadded = inPadded && pos >= -pads[d] && pos < inSp[d] + pads[nsp() + d];
            offset = offset * inSp[d] + pos;
          }
          padded += inPadded;
          if (inside)
            offsets.push_back(plane * numelOf(inSp) + offset);
        }
        fn(plane, plane * numelOf(oSp) + oi, offsets, padded);
      }
  }
};

std::vector<PoolCase> poolCases() {
  return {
      {{2, 3, 7, 6}, {3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 1}},
      {{2, 3, 7, 6}, {3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 1}, /*ceil=*/true, /*countIncludePad=*/true},
      {{1, 2, 8, 9}, {2, 3}, {3, 2}, {1, 1, 0, 2}, {2, 1}, /*ceil=*/true},
      {{1, 2, 5, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, /*countIncludePad=*/true},
      {{2, 2, 11}, {3}, {2}, {1, 1}, {2}, /*ceil=*/true},                     // 1-D
      {{1, 2, 4, 5, 3}, {2, 3, 2}, {2, 1, 1}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}}, // 3-D
  };
}

// Tests max_pool_grad on 1-D, 2-D and 3-D windows with padding, strides,
// dilations and ceil_mode; inputs with ties (few distinct values), so the
// first maximum in row-major window order must get the gradient.
TEST(PoolGradKernels, MaxPoolFirstMaximum) {
  std::mt19937 rng(160);
  for (const PoolCase &c : poolCases()) {
    for (DType t : {DType::F32, DType::BF16}) {
      HostTensor x(t, c.x);
      for (int64_t i = 0; i < x.numel(); ++i)
        x.set(i, static_cast<double>(rng() % 4) - 1.0); // -1, 0, 1, 2: many ties
      HostTensor dy = randomTensor(t, c.out(), rng);
      KernelRun r = runKernel("max_pool_grad", {x, dy}, {HostTensor(t, c.x)}, c.attrs(false));
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> ref(x.numel(), 0.0);
      c.forEachWindow([&](int64_t, int64_t o, const std::vector<int64_t> &offs, int64_t) {
        int64_t best = -1;
        for (int64_t off : offs)
          if (best < 0 || x.get(off) > x.get(best))
            best = off;
        if (best >= 0)
          ref[best] += dy.get(o);
      });
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-6, 1e-7))
          << "rank " << c.x.size() << " " << plan::dtypeName(t);
    }
  }
}

// Tests average_pool_grad with and without count_include_pad and ceil_mode
// (whose extra positions never count), on 1-D, 2-D and 3-D windows.
TEST(PoolGradKernels, AveragePoolDivisors) {
  std::mt19937 rng(161);
  for (PoolCase c : poolCases())
    for (bool include : {false, true}) {
      c.countIncludePad = include;
      for (DType t : {DType::F32, DType::BF16}) {
        HostTensor dy = randomTensor(t, c.out(), rng);
        KernelRun r = runKernel("average_pool_grad", {dy}, {HostTensor(t, c.x)}, c.attrs(true));
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref(numelOf(c.x), 0.0);
        c.forEachWindow([&](int64_t, int64_t o, const std::vector<int64_t> &offs, int64_t padded) {
          const double count = include ? padded : static_cast<double>(offs.size());
          for (int64_t off : offs)
            ref[off] += dy.get(o) / count;
        });
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-6, 1e-7))
            << "rank " << c.x.size() << " include " << include << " ceil " << c.ceil << " "
            << plan::dtypeName(t);
      }
    }
}

// Tests the pooling gradients against the forward kernels:
// <average_pool(x), dy> == <x, average_pool_grad(dy)> and
// <max_pool(x), dy> == <x, max_pool_grad(x, dy)> (max pooling is x times a
// selection matrix).
TEST(PoolGradKernels, AdjointOfTheForward) {
  std::mt19937 rng(162);
  for (PoolCase c : poolCases())
    for (bool average : {false, true}) {
      HostTensor x = randomTensor(DType::F32, c.x, rng);
      HostTensor dy = randomTensor(DType::F32, c.out(), rng);
      const std::vector<Attribute> attrs = c.attrs(average);
      KernelRun fwd = runKernel(average ? "average_pool" : "max_pool", {x},
                                {HostTensor(DType::F32, c.out())}, attrs);
      ASSERT_TRUE(fwd.ok) << fwd.error;
      KernelRun bwd =
          average ? runKernel("average_pool_grad", {dy}, {HostTensor(DType::F32, c.x)}, attrs)
                  : runKernel("max_pool_grad", {x, dy}, {HostTensor(DType::F32, c.x)}, attrs);
      ASSERT_TRUE(bwd.ok) << bwd.error;
      const auto lhs = dot(fwd.outputs[0].values(), dy.values());
      const auto rhs = dot(x.values(), bwd.outputs[0].values());
      EXPECT_NEAR(lhs.first, rhs.first, 1e-6 * (lhs.second + rhs.second))
          << (average ? "average" : "max") << " rank " << c.x.size();
    }
}

//===----------------------------------------------------------------------===//
// Conv gradients.
//===----------------------------------------------------------------------===//

struct ConvCase {
  int64_t N, C, M, group;
  Shape in, kernel, strides, pads, dilations;

  int nsp() const { return static_cast<int>(in.size()); }
  Shape xShape() const {
    Shape s = {N, C};
    s.insert(s.end(), in.begin(), in.end());
    return s;
  }
  Shape wShape() const {
    Shape s = {M, C / group};
    s.insert(s.end(), kernel.begin(), kernel.end());
    return s;
  }
  Shape outSpatial() const {
    Shape o;
    for (int d = 0; d < nsp(); ++d)
      o.push_back((in[d] + pads[d] + pads[nsp() + d] - dilations[d] * (kernel[d] - 1) - 1) /
                      strides[d] +
                  1);
    return o;
  }
  Shape yShape() const {
    Shape s = {N, M};
    const Shape o = outSpatial();
    s.insert(s.end(), o.begin(), o.end());
    return s;
  }
  std::vector<Attribute> attrs() const {
    return {Attribute::makeInts("strides", strides), Attribute::makeInts("pads", pads),
            Attribute::makeInts("dilations", dilations), Attribute::makeInt("group", group)};
  }
  /// Calls fn(x index, w index, y index) for every multiply-add of the conv.
  void forEachTap(const std::function<void(int64_t, int64_t, int64_t)> &fn) const {
    const int64_t Cg = C / group, Mg = M / group;
    const Shape o = outSpatial();
    const int64_t O = numelOf(o), K = numelOf(kernel), I = numelOf(in);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t oi = 0; oi < O; ++oi) {
          const Shape op = unflatten(oi, o);
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t ki = 0; ki < K; ++ki) {
              const Shape kp = unflatten(ki, kernel);
              bool inside = true;
              int64_t offset = 0;
              for (int d = 0; d < nsp(); ++d) {
                const int64_t pos = op[d] * strides[d] - pads[d] + kp[d] * dilations[d];
                inside = inside && pos >= 0 && pos < in[d];
                offset = offset * in[d] + pos;
              }
              if (!inside)
                continue;
              const int64_t channel = m / Mg * Cg + c;
              fn((n * C + channel) * I + offset, (m * Cg + c) * K + ki, (n * M + m) * O + oi);
            }
        }
  }
};

std::vector<ConvCase> convCases() {
  return {
      {2, 4, 6, 2, {6, 5}, {3, 2}, {2, 1}, {1, 0, 0, 1}, {1, 2}}, // grouped, dilated, strided
      {1, 3, 2, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {2, 6, 6, 6, {5, 6}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},                   // depthwise
      {3, 2, 4, 1, {9}, {3}, {2}, {2, 1}, {2}},                                     // 1-D
      {1, 2, 3, 1, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}}, // 3-D
  };
}

// Tests conv_grad_input and conv_grad_weight against float64 sums over
// the conv's taps, with stride, padding, dilation, groups (incl. depthwise)
// and 1-D / 2-D / 3-D, in f32 and bf16 (and mixed operand types).
TEST(ConvGradKernels, AgainstReference) {
  std::mt19937 rng(170);
  for (const ConvCase &c : convCases())
    for (DType t : {DType::F32, DType::BF16})
      for (DType other : {DType::F32, DType::F16}) {
        HostTensor x = randomTensor(other, c.xShape(), rng);
        HostTensor w = randomTensor(other, c.wShape(), rng);
        HostTensor dy = randomTensor(t, c.yShape(), rng);
        KernelRun gi =
            runKernel("conv_grad_input", {dy, w}, {HostTensor(t, c.xShape())}, c.attrs());
        ASSERT_TRUE(gi.ok) << gi.error;
        KernelRun gw =
            runKernel("conv_grad_weight", {x, dy}, {HostTensor(t, c.wShape())}, c.attrs());
        ASSERT_TRUE(gw.ok) << gw.error;
        std::vector<double> dx(x.numel(), 0.0), dw(w.numel(), 0.0);
        c.forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
          dx[xi] += w.get(wi) * dy.get(yi);
          dw[wi] += x.get(xi) * dy.get(yi);
        });
        const std::string what = "rank " + std::to_string(c.nsp()) + " group " +
                                 std::to_string(c.group) + " " + plan::dtypeName(t) + "/" +
                                 plan::dtypeName(other);
        EXPECT_TRUE(closeTo(gi.outputs[0], dx, 1e-5, 1e-5)) << "grad input " << what;
        EXPECT_TRUE(closeTo(gw.outputs[0], dw, 1e-5, 1e-5)) << "grad weight " << what;
      }
}

// Tests both conv gradients against the forward conv kernel:
// <conv(x, w), dy> == <x, conv_grad_input(dy, w)> == <w, conv_grad_weight(x, dy)>,
// including a case large enough for the sgemm / col2im paths to use the pool.
TEST(ConvGradKernels, AdjointOfTheForward) {
  std::mt19937 rng(171);
  std::vector<ConvCase> cases = convCases();
  cases.push_back({2, 16, 24, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  cases.push_back({2, 32, 32, 32, {14, 14}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}});
  for (const ConvCase &c : cases) {
    HostTensor x = randomTensor(DType::F32, c.xShape(), rng);
    HostTensor w = randomTensor(DType::F32, c.wShape(), rng);
    HostTensor dy = randomTensor(DType::F32, c.yShape(), rng);
    KernelRun y = runKernel("conv", {x, w}, {HostTensor(DType::F32, c.yShape())}, c.attrs());
    ASSERT_TRUE(y.ok) << y.error;
    KernelRun gi =
        runKernel("conv_grad_input", {dy, w}, {HostTensor(DType::F32, c.xShape())}, c.attrs());
    ASSERT_TRUE(gi.ok) << gi.error;
    KernelRun gw =
        runKernel("conv_grad_weight", {x, dy}, {HostTensor(DType::F32, c.wShape())}, c.attrs());
    ASSERT_TRUE(gw.ok) << gw.error;
    const auto lhs = dot(y.outputs[0].values(), dy.values());
    const auto viaInput = dot(x.values(), gi.outputs[0].values());
    const auto viaWeight = dot(w.values(), gw.outputs[0].values());
    const std::string what =
        "rank " + std::to_string(c.nsp()) + " group " + std::to_string(c.group);
    EXPECT_NEAR(lhs.first, viaInput.first, 1e-5 * (lhs.second + viaInput.second)) << what;
    EXPECT_NEAR(lhs.first, viaWeight.first, 1e-5 * (lhs.second + viaWeight.second)) << what;
  }
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// Tests batch_norm_grad (batch statistics, biased variance, recomputed from
// x) on [N, C] and [N, C, H, W], f32 and bf16, against the Jacobian of
// y = xhat * scale + bias summed against dy (float64).
TEST(BatchNormGradKernel, TrainingMode) {
  std::mt19937 rng(180);
  for (const Shape &shape : {Shape{6, 3}, Shape{3, 4, 5, 2}})
    for (DType t : {DType::F32, DType::BF16}) {
      const int64_t N = shape[0], C = shape[1], inner = numelOf(shape) / (N * C);
      const int64_t count = N * inner;
      HostTensor x = randomTensor(t, shape, rng);
      HostTensor scale = randomTensor(t, {C}, rng);
      HostTensor dy = randomTensor(t, shape, rng);
      const double eps = 1e-3;
      KernelRun r = runKernel(
          "batch_norm_grad", {x, scale, dy},
          {HostTensor(t, shape), HostTensor(DType::F32, {C}), HostTensor(DType::F32, {C})},
          {Attribute::makeFloat("epsilon", eps)});
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> dx(x.numel(), 0.0), dscale(C, 0.0), dbias(C, 0.0);
      for (int64_t c = 0; c < C; ++c) {
        std::vector<int64_t> at; // the channel's elements
        for (int64_t n = 0; n < N; ++n)
          for (int64_t i = 0; i < inner; ++i)
            at.push_back((n * C + c) * inner + i);
        double m = 0, v = 0;
        for (int64_t i : at)
          m += x.get(i) / count;
        for (int64_t i : at)
          v += (x.get(i) - m) * (x.get(i) - m) / count;
        const double s = 1 / std::sqrt(v + eps);
        auto xhat = [&](int64_t i) { return (x.get(i) - m) * s; };
        for (int64_t i : at) {
          dscale[c] += dy.get(i) * xhat(i);
          dbias[c] += dy.get(i);
          for (int64_t j : at) // d xhat_i / d x_j
            dx[j] += dy.get(i) * scale.get(c) * s *
                     ((i == j ? 1.0 : 0.0) - 1.0 / count - xhat(i) * xhat(j) / count);
        }
      }
      const std::string what = std::to_string(shape.size()) + "-D " + plan::dtypeName(t);
      EXPECT_TRUE(closeTo(r.outputs[0], dx, 1e-5, 1e-5)) << what;
      EXPECT_TRUE(closeTo(r.outputs[1], dscale, 1e-5, 1e-5)) << what;
      EXPECT_TRUE(closeTo(r.outputs[2], dbias, 1e-6, 1e-6)) << what;
    }
}

//===----------------------------------------------------------------------===//
// Load-time checks.
//===----------------------------------------------------------------------===//

// Tests that bad operands, results and attributes of every backward kind
// fail the load with a message naming the problem.
TEST(BackwardKernels, RejectedAtLoad) {
  const DType F = DType::F32;
  auto T = [](DType t, Shape s) { return HostTensor(t, std::move(s)); };
  auto kind = [](const char *k) { return Attribute::makeString("kind", k); };
  auto axis = [](int64_t a) { return Attribute::makeInt("axis", a); };

  // unary_grad
  expectRejected("unary_grad", {T(F, {4}), T(F, {4})}, {T(F, {4})}, {},
                 "missing required attribute 'kind'");
  expectRejected("unary_grad", {T(F, {4}), T(F, {4})}, {T(F, {4})}, {kind("no_such_kind")},
                 "attribute 'kind' must be one of");
  expectRejected("unary_grad", {T(F, {4}), T(F, {5})}, {T(F, {4})}, {kind("relu")},
                 "operand 1 (5xf32) (dy) must have shape [4]");
  expectRejected("unary_grad", {T(F, {4}), T(F, {4})}, {T(DType::BF16, {4})}, {kind("relu")},
                 "(dx) must have the element type of operand 0");
  expectRejected("unary_grad", {T(F, {4}), T(DType::I32, {4})}, {T(F, {4})}, {kind("relu")},
                 "must have a float element type");
  expectRejected("unary_grad", {T(F, {4}), T(F, {4})}, {T(F, {4})},
                 {kind("relu"), Attribute::makeFloat("slope", 1)}, "unknown attribute 'slope'");
  expectRejected("unary_grad", {T(F, {4})}, {T(F, {4})}, {kind("relu")},
                 "expects 2 operands, got 1");
  // softmax_grad
  expectRejected("softmax_grad", {T(F, {2, 3}), T(F, {2, 3})}, {T(F, {2, 3})}, {},
                 "missing required attribute 'axis'");
  expectRejected("softmax_grad", {T(F, {2, 3}), T(F, {2, 3})}, {T(F, {2, 3})}, {axis(2)},
                 "axis 2 out of range for rank 2");
  expectRejected("softmax_grad", {T(F, {2, 3}), T(F, {2, 3})}, {T(F, {2, 3})},
                 {axis(1), Attribute::makeInt("log", 2)}, "'log'");
  expectRejected("softmax_grad", {T(F, {2, 3}), T(F, {3, 2})}, {T(F, {2, 3})}, {axis(1)},
                 "(dy) must have shape [2, 3]");
  // layer_norm_grad: x, scale, mean, inv_std_dev, dy -> dx, dscale, dbias
  const std::vector<HostTensor> ln = {T(F, {2, 3}), T(F, {3}), T(F, {2, 1}), T(F, {2, 1}),
                                      T(F, {2, 3})};
  const std::vector<HostTensor> lnRes = {T(F, {2, 3}), T(F, {3}), T(F, {3})};
  expectRejected("layer_norm_grad", ln, lnRes, {}, "missing required attribute 'axis'");
  expectRejected("layer_norm_grad", ln, {T(F, {2, 3}), T(DType::BF16, {3}), T(F, {3})}, {axis(1)},
                 "(dscale) must be f32");
  expectRejected("layer_norm_grad", ln, {T(F, {2, 3}), T(F, {3}), T(F, {4})}, {axis(1)},
                 "result 2 (4xf32) must have shape [3]");
  expectRejected("layer_norm_grad", {ln[0], T(F, {2}), ln[2], ln[3], ln[4]}, lnRes, {axis(1)},
                 "(scale) must have 3 elements");
  expectRejected("layer_norm_grad", {ln[0], ln[1], T(F, {3, 1}), ln[3], ln[4]}, lnRes, {axis(1)},
                 "(mean) must have 2 elements");
  expectRejected("layer_norm_grad", {ln[0], ln[1], ln[2], ln[3]}, lnRes, {axis(1)},
                 "expects 5 operands, got 4");
  // Loss gradients.
  const HostTensor lp = T(F, {4, 3}), labels = T(DType::I64, {4}), scalar = T(F, {});
  expectRejected("softmax_cross_entropy_loss_grad", {lp, labels, T(F, {4})}, {T(F, {4, 3})}, {},
                 "(dloss) must be a scalar for reduction \"mean\"");
  expectRejected("softmax_cross_entropy_loss_grad", {lp, labels, scalar}, {T(F, {4, 3})},
                 {Attribute::makeString("reduction", "none")}, "(dloss) must have shape [4]");
  expectRejected("softmax_cross_entropy_loss_grad", {lp, labels, scalar}, {T(F, {4, 3})},
                 {Attribute::makeString("reduction", "avg")}, "attribute 'reduction' must be");
  expectRejected("softmax_cross_entropy_loss_grad", {lp, labels, scalar}, {T(F, {4, 4})}, {},
                 "must have shape [4, 3]");
  expectRejected("softmax_cross_entropy_loss_grad", {lp, T(F, {4}), scalar}, {T(F, {4, 3})}, {},
                 "must have element type i32 or i64");
  expectRejected("softmax_cross_entropy_loss_grad", {lp, labels, T(F, {4}), scalar}, {T(F, {4, 3})},
                 {}, "(weights) must have shape [3]");
  expectRejected("nll_loss_grad", {T(DType::I64, {5}), scalar}, {T(F, {4, 3})}, {},
                 "(labels) must have shape [4]");
  expectRejected("nll_loss_grad", {labels, scalar}, {T(DType::I64, {4, 3})}, {},
                 "must have a float element type");
  expectRejected("nll_loss_grad", {labels}, {T(F, {4, 3})}, {}, "expects 2 to 3 operands, got 1");
  // gather_grad: indices, dy -> ddata
  expectRejected("gather_grad", {T(DType::I64, {2}), T(F, {2, 3})}, {T(F, {5, 3})}, {},
                 "missing required attribute 'axis'");
  expectRejected("gather_grad", {T(DType::I64, {2}), T(F, {2, 4})}, {T(F, {5, 3})}, {axis(0)},
                 "(dy) must have shape [2, 3]");
  expectRejected("gather_grad", {T(F, {2}), T(F, {2, 3})}, {T(F, {5, 3})}, {axis(0)},
                 "must have element type i32 or i64");
  // slice_grad
  expectRejected("slice_grad", {T(F, {2})}, {T(F, {4})},
                 {Attribute::makeInts("starts", {0}), Attribute::makeInts("ends", {4}),
                  Attribute::makeInts("steps", {0})},
                 "step must not be 0");
  expectRejected("slice_grad", {T(F, {3})}, {T(F, {4})},
                 {Attribute::makeInts("starts", {0}), Attribute::makeInts("ends", {4}),
                  Attribute::makeInts("steps", {2})},
                 "(dy) must have shape [2]");
  expectRejected("slice_grad", {T(F, {2})}, {T(F, {4})}, {Attribute::makeInts("starts", {0})},
                 "missing required attribute 'ends'");
  expectRejected("slice_grad", {T(F, {2})}, {T(F, {4})},
                 {Attribute::makeInts("starts", {3}), Attribute::makeInts("ends", {5})},
                 "a positive step needs 0 <= start <= end <= dim");
  // Pooling gradients.
  const Attribute k2 = Attribute::makeInts("kernel_shape", {2, 2});
  expectRejected("max_pool_grad", {T(F, {1, 2, 4, 4}), T(F, {1, 2, 3, 3})}, {T(F, {1, 2, 4, 4})},
                 {}, "missing required attribute 'kernel_shape'");
  expectRejected("max_pool_grad", {T(F, {1, 2, 4, 4}), T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 4, 4})},
                 {k2}, "(dy) must have shape [1, 2, 3, 3]");
  expectRejected("max_pool_grad", {T(F, {1, 2, 4, 5}), T(F, {1, 2, 3, 3})}, {T(F, {1, 2, 4, 4})},
                 {k2}, "(x) must have shape [1, 2, 4, 4]");
  expectRejected("max_pool_grad", {T(F, {1, 2, 4, 4}), T(F, {1, 2, 3, 3})}, {T(F, {1, 2, 4, 4})},
                 {k2, Attribute::makeInt("count_include_pad", 1)},
                 "unknown attribute 'count_include_pad'");
  expectRejected("average_pool_grad", {T(F, {1, 2, 3, 3})}, {T(F, {1, 2, 4, 4})},
                 {Attribute::makeInts("kernel_shape", {2, 2, 2})},
                 "kernel_shape, strides and dilations need 2 values");
  // Window attributes so large that the window arithmetic would overflow.
  expectRejected("max_pool_grad", {T(F, {1, 2, 4, 4}), T(F, {1, 2, 3, 3})}, {T(F, {1, 2, 4, 4})},
                 {k2, Attribute::makeInts("pads", {0, 0, int64_t{1} << 62, 0})},
                 "kernel_shape, strides, dilations and pads must be below 2^31");
  expectRejected("average_pool_grad", {T(F, {1, 2, 3})}, {T(F, {2, 4})}, {k2},
                 "(dx) must be [N, C, spatial...]");
  // Conv gradients.
  expectRejected("conv_grad_input", {T(F, {1, 4, 3, 3}), T(F, {4, 2, 3, 3})}, {T(F, {1, 6, 5, 5})},
                 {Attribute::makeInt("group", 4)}, "group 4 must divide the 6 input");
  expectRejected("conv_grad_input", {T(F, {1, 4, 4, 4}), T(F, {4, 3, 3, 3})}, {T(F, {1, 3, 5, 5})},
                 {}, "(dy) must have shape [1, 4, 3, 3]");
  expectRejected("conv_grad_weight", {T(F, {1, 3, 5, 5}), T(F, {1, 4, 3, 3})}, {T(F, {4, 2, 3, 3})},
                 {}, "(weight) must have C / group = 3 input channels");
  expectRejected("conv_grad_weight", {T(F, {1, 3, 5, 5}), T(F, {1, 4, 3, 3})}, {T(F, {4, 3, 3, 3})},
                 {Attribute::makeInts("strides", {0, 1})}, "strides and dilations must be >= 1");
  expectRejected("conv_grad_weight", {T(F, {1, 3, 5, 5}), T(F, {1, 4, 3, 3})}, {T(F, {4, 3, 3, 3})},
                 {Attribute::makeInts("dilations", {int64_t{1} << 40, 1})},
                 "strides, dilations and pads must be below 2^31");
  expectRejected("conv_grad_weight", {T(F, {1, 3, 5, 5}), T(F, {1, 4, 3, 3})}, {T(F, {4, 3, 3, 3})},
                 {Attribute::makeInt("bias", 1)}, "unknown attribute 'bias'");
  // batch_norm_grad
  expectRejected("batch_norm_grad", {T(F, {2, 3, 4}), T(F, {4}), T(F, {2, 3, 4})},
                 {T(F, {2, 3, 4}), T(F, {3}), T(F, {3})}, {}, "(scale) must have shape [3]");
  expectRejected("batch_norm_grad", {T(F, {2, 3, 4}), T(F, {3}), T(F, {2, 3, 4})},
                 {T(F, {2, 3, 4}), T(F, {3})}, {}, "expects 3 results, got 2");
  expectRejected("batch_norm_grad", {T(F, {2, 3, 4}), T(F, {3}), T(F, {2, 3, 4})},
                 {T(F, {2, 3, 4}), T(F, {3}), T(F, {3})}, {Attribute::makeFloat("momentum", 0.9)},
                 "unknown attribute 'momentum'");
}

//===----------------------------------------------------------------------===//
// Threads.
//===----------------------------------------------------------------------===//

/// Runs a kernel inside a pool chunk, where its loops run inline: one thread.
KernelRun runSingleThreaded(const std::string &kind, const std::vector<HostTensor> &operands,
                            const std::vector<HostTensor> &results,
                            const std::vector<Attribute> &attrs) {
  KernelRun run;
  rt::cpu::parallelFor(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0)
      run = runKernel(kind, operands, results, attrs);
  });
  return run;
}

/// The kernel on the pool (which it must use) and on one thread: the same
/// bits.
void expectSameBits(const std::string &kind, const std::vector<HostTensor> &operands,
                    const std::vector<HostTensor> &results,
                    const std::vector<Attribute> &attrs = {}) {
  const auto before = rt::cpu::poolStats();
  KernelRun pooled = runKernel(kind, operands, results, attrs);
  ASSERT_TRUE(pooled.ok) << kind << ": " << pooled.error;
  if (rt::cpu::numThreads() > 1) {
    EXPECT_GT(rt::cpu::poolStats().pooledLoops, before.pooledLoops)
        << kind << " did not use the pool";
  }
  KernelRun single = runSingleThreaded(kind, operands, results, attrs);
  ASSERT_TRUE(single.ok) << kind << ": " << single.error;
  for (size_t i = 0; i < pooled.outputs.size(); ++i)
    EXPECT_TRUE(pooled.outputs[i].bytes == single.outputs[i].bytes)
        << kind << " result " << i << " differs from the single-threaded run";
}

// Tests that every backward kind, on work large enough to be split over
// the threads, gives the bits it gives on one thread.
TEST(BackwardKernels, SameBitsAsOneThread) {
  // Mode: reference, pinned (the fast mode's bits depend on the thread
  // count, and oneDNN does not use the pool).
  CpuNumericsMode reference("reference");
  ASSERT_TRUE(kThreadsSet);
  std::mt19937 rng(190);
  const DType F = DType::F32, B = DType::BF16;
  const Shape big = {64, 96, 33};
  HostTensor x = randomTensor(F, big, rng), dy = randomTensor(F, big, rng);
  expectSameBits("unary_grad", {x, dy}, {HostTensor(F, big)},
                 {Attribute::makeString("kind", "gelu")});
  expectSameBits("softmax_grad", {x, dy}, {HostTensor(B, big)}, {Attribute::makeInt("axis", 1)});
  {
    const Shape s = {256, 512};
    HostTensor lx = randomTensor(B, s, rng), ldy = randomTensor(B, s, rng);
    HostTensor mean = randomTensor(F, {256, 1}, rng), rstd = randomTensor(F, {256, 1}, rng);
    expectSameBits("layer_norm_grad", {lx, randomTensor(F, {512}, rng), mean, rstd, ldy},
                   {HostTensor(B, s), HostTensor(F, {512}), HostTensor(F, {512})},
                   {Attribute::makeInt("axis", 1)});
  }
  {
    std::vector<int64_t> lv(2048);
    for (int64_t &l : lv)
      l = static_cast<int64_t>(rng() % 64);
    HostTensor lp = randomTensor(F, {2048, 64}, rng, -5, -0.1);
    expectSameBits("softmax_cross_entropy_loss_grad",
                   {lp, intTensor({2048}, lv), randomTensor(F, {64}, rng), HostTensor(F, {})},
                   {HostTensor(F, {2048, 64})});
  }
  {
    std::vector<int64_t> iv(300);
    for (int64_t &i : iv)
      i = static_cast<int64_t>(rng() % 1000);
    expectSameBits("gather_grad", {intTensor({300}, iv), randomTensor(F, {300, 512}, rng)},
                   {HostTensor(B, {1000, 512})}, {Attribute::makeInt("axis", 0)});
  }
  expectSameBits("slice_grad", {randomTensor(F, {64, 48, 33}, rng)}, {HostTensor(F, big)},
                 {Attribute::makeInts("starts", {0, 95, 0}),
                  Attribute::makeInts("ends", {64, -1, 33}),
                  Attribute::makeInts("steps", {1, -2, 1})});
  const std::vector<Attribute> pool = {Attribute::makeInts("kernel_shape", {3, 3}),
                                       Attribute::makeInts("strides", {2, 2}),
                                       Attribute::makeInts("pads", {1, 1, 1, 1})};
  HostTensor px = randomTensor(F, {2, 64, 32, 32}, rng);
  expectSameBits("max_pool_grad", {px, randomTensor(F, {2, 64, 16, 16}, rng)},
                 {HostTensor(F, {2, 64, 32, 32})}, pool);
  expectSameBits("average_pool_grad", {randomTensor(F, {2, 64, 16, 16}, rng)},
                 {HostTensor(F, {2, 64, 32, 32})}, pool);
  auto conv = [](int64_t group) {
    return std::vector<Attribute>{Attribute::makeInts("pads", {1, 1, 1, 1}),
                                  Attribute::makeInt("group", group)};
  };
  // One dense image (sgemm rows and col2im / im2col split), and depthwise
  // (units spread).
  expectSameBits("conv_grad_input",
                 {randomTensor(F, {1, 48, 24, 24}, rng), randomTensor(F, {48, 32, 3, 3}, rng)},
                 {HostTensor(F, {1, 32, 24, 24})}, conv(1));
  expectSameBits("conv_grad_weight",
                 {randomTensor(F, {1, 32, 24, 24}, rng), randomTensor(F, {1, 48, 24, 24}, rng)},
                 {HostTensor(F, {48, 32, 3, 3})}, conv(1));
  expectSameBits("conv_grad_input",
                 {randomTensor(B, {2, 96, 20, 20}, rng), randomTensor(B, {96, 1, 3, 3}, rng)},
                 {HostTensor(B, {2, 96, 20, 20})}, conv(96));
  expectSameBits("conv_grad_weight",
                 {randomTensor(B, {2, 96, 20, 20}, rng), randomTensor(B, {2, 96, 20, 20}, rng)},
                 {HostTensor(B, {96, 1, 3, 3})}, conv(96));
  expectSameBits("batch_norm_grad",
                 {randomTensor(F, {8, 64, 16, 16}, rng), randomTensor(F, {64}, rng),
                  randomTensor(F, {8, 64, 16, 16}, rng)},
                 {HostTensor(F, {8, 64, 16, 16}), HostTensor(F, {64}), HostTensor(F, {64})});
}

} // namespace
