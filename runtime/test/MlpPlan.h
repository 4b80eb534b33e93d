//===- MlpPlan.h - a two-layer MLP plan for end-to-end tests -----*- C++ -*-===//
//
//   h = relu(x W1 + b1)      gemm, relu   (h in the arena)
//   y = h W2 + b2            gemm         (y an output)
//
// W1, b1, W2, b2 are parameters whose initial values are embedded in the
// plan's constants blob; x is an input.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_MLPPLAN_H
#define MPTRT_TEST_MLPPLAN_H

#include "PlanBuilder.h"

#include <random>
#include <vector>

namespace mptrt {
namespace test {

struct Mlp {
  int64_t batch, in, hidden, out;
  std::vector<float> w1, b1, w2, b2;

  Mlp(int64_t batch, int64_t in, int64_t hidden, int64_t out, unsigned seed)
      : batch(batch), in(in), hidden(hidden), out(out) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto *v : {&w1, &b1, &w2, &b2}) {
      int64_t n = v == &w1 ? in * hidden : v == &b1 ? hidden : v == &w2 ? hidden * out : out;
      v->resize(n);
      for (float &x : *v)
        x = dist(rng);
    }
  }

  plan::Plan plan() const {
    using plan::DType;
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {batch, in});
    uint32_t w1p = b.param("w1", DType::F32, {in, hidden}, w1.data(), w1.size() * 4);
    uint32_t b1p = b.param("b1", DType::F32, {hidden}, b1.data(), b1.size() * 4);
    uint32_t w2p = b.param("w2", DType::F32, {hidden, out}, w2.data(), w2.size() * 4);
    uint32_t b2p = b.param("b2", DType::F32, {out}, b2.data(), b2.size() * 4);
    uint32_t pre = b.temp(DType::F32, {batch, hidden});
    uint32_t h = b.temp(DType::F32, {batch, hidden});
    uint32_t y = b.output("y", DType::F32, {batch, out});
    b.kernel("gemm", {x, w1p, b1p}, {pre});
    b.kernel("relu", {pre}, {h});
    b.kernel("gemm", {h, w2p, b2p}, {y});
    b.entry("forward");
    return b.plan;
  }

  /// float64 reference of y for input x.
  std::vector<double> reference(const std::vector<float> &x) const {
    std::vector<double> y(batch * out);
    std::vector<double> h(hidden);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t j = 0; j < hidden; ++j) {
        double s = b1[j];
        for (int64_t k = 0; k < in; ++k)
          s += double(x[n * in + k]) * w1[k * hidden + j];
        h[j] = s > 0 ? s : 0;
      }
      for (int64_t j = 0; j < out; ++j) {
        double s = b2[j];
        for (int64_t k = 0; k < hidden; ++k)
          s += h[k] * w2[k * out + j];
        y[n * out + j] = s;
      }
    }
    return y;
  }
};

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_MLPPLAN_H
