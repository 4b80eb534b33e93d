//===- NormalizationKernelTest.cpp - batch/layer norm and softmax --------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mptrt;
using namespace mptrt::test;

namespace {

// Tests batch_norm (running statistics) on 2-D and 4-D inputs.
TEST(BatchNormKernel, Inference) {
  std::mt19937 rng(30);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 3}, std::vector<int64_t>{2, 3, 4, 5}})
    for (DType t : floatDTypes()) {
      const int64_t C = shape[1];
      HostTensor x = randomTensor(t, shape, rng);
      HostTensor scale = randomTensor(t, {C}, rng), bias = randomTensor(t, {C}, rng);
      HostTensor mean = randomTensor(t, {C}, rng), var = randomTensor(t, {C}, rng, 0.5, 2);
      KernelRun r = runKernel("batch_norm", {x, scale, bias, mean, var}, {HostTensor(t, shape)},
                              {Attribute::makeFloat("epsilon", 1e-3)});
      ASSERT_TRUE(r.ok) << r.error;
      const int64_t inner = x.numel() / (shape[0] * C);
      std::vector<double> ref(x.numel());
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t c = (i / inner) % C;
        ref[i] =
            (x.get(i) - mean.get(c)) / std::sqrt(var.get(c) + 1e-3) * scale.get(c) + bias.get(c);
      }
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-5)) << plan::dtypeName(t);
    }
}

// Tests the fused epilogue of batch_norm and batch_norm_train (what
// mpt-fuse-batch-norm makes): with `activation = relu`, and with a
// `residual` and relu, the result has exactly the bits of the unfused
// kernels (batch_norm, then add, then relu) in every float dtype; inputs
// around 0 so that relu's kink, signed zeros and the add's rounding occur.
TEST(BatchNormFusion, EpilogueHasTheUnfusedBits) {
  std::mt19937 rng(33);
  const std::vector<int64_t> shape = {3, 4, 5, 6};
  const int64_t C = 4;
  for (const char *kind : {"batch_norm", "batch_norm_train"})
    for (DType t : floatDTypes()) {
      HostTensor x = randomTensor(t, shape, rng);
      HostTensor scale = randomTensor(DType::F32, {C}, rng),
                 bias = randomTensor(DType::F32, {C}, rng);
      HostTensor mean = randomTensor(DType::F32, {C}, rng),
                 var = randomTensor(DType::F32, {C}, rng, 0.5, 2);
      HostTensor skip = randomTensor(t, shape, rng);
      std::vector<HostTensor> results = {HostTensor(t, shape)};
      const std::vector<HostTensor> ops = {x, scale, bias, mean, var};
      KernelRun plain = runKernel(kind, ops, results);
      ASSERT_TRUE(plain.ok) << plain.error;
      KernelRun relu = runKernel("relu", {plain.outputs[0]}, {HostTensor(t, shape)});
      KernelRun added = runKernel("add", {plain.outputs[0], skip}, {HostTensor(t, shape)});
      ASSERT_TRUE(relu.ok && added.ok) << relu.error << added.error;
      KernelRun addedRelu = runKernel("relu", {added.outputs[0]}, {HostTensor(t, shape)});
      const Attribute act = Attribute::makeString("activation", "relu");
      KernelRun fused = runKernel(kind, ops, results, {act});
      std::vector<HostTensor> withSkip = ops;
      withSkip.push_back(skip);
      KernelRun fusedResidual = runKernel(kind, withSkip, results, {act});
      ASSERT_TRUE(fused.ok) << fused.error;
      ASSERT_TRUE(fusedResidual.ok) << fusedResidual.error;
      const std::string label = std::string(kind) + " " + plan::dtypeName(t);
      EXPECT_TRUE(fused.outputs[0].bytes == relu.outputs[0].bytes) << label << ": relu";
      EXPECT_TRUE(fusedResidual.outputs[0].bytes == addedRelu.outputs[0].bytes)
          << label << ": residual + relu";
      // The relu did something: some outputs are 0, some are not.
      int zeros = 0;
      for (int64_t i = 0; i < fused.outputs[0].numel(); ++i)
        zeros += fused.outputs[0].get(i) == 0.0;
      EXPECT_GT(zeros, 0) << label;
      EXPECT_LT(zeros, fused.outputs[0].numel()) << label;
    }
}

// Tests batch_norm_grad with `activation = relu`: given relu(y)'s gradient
// dz and that output, it has the bits of relu's unary_grad followed by the
// plain batch_norm_grad, in every float dtype.
TEST(BatchNormFusion, GradientHasTheUnfusedBits) {
  std::mt19937 rng(34);
  const std::vector<int64_t> shape = {3, 4, 5, 6};
  const int64_t C = 4;
  for (DType t : floatDTypes()) {
    HostTensor x = randomTensor(t, shape, rng);
    HostTensor scale = randomTensor(DType::F32, {C}, rng);
    HostTensor bias = randomTensor(DType::F32, {C}, rng), rm = randomTensor(DType::F32, {C}, rng),
               rv = randomTensor(DType::F32, {C}, rng, 0.5, 2);
    KernelRun fwd = runKernel("batch_norm_train", {x, scale, bias, rm, rv}, {HostTensor(t, shape)},
                              {Attribute::makeString("activation", "relu")});
    ASSERT_TRUE(fwd.ok) << fwd.error;
    const HostTensor &z = fwd.outputs[0];
    HostTensor dz = randomTensor(t, shape, rng);
    const std::vector<HostTensor> grads = {HostTensor(t, shape), HostTensor(DType::F32, {C}),
                                           HostTensor(DType::F32, {C})};
    KernelRun masked = runKernel("unary_grad", {z, dz}, {HostTensor(t, shape)},
                                 {Attribute::makeString("kind", "relu")});
    ASSERT_TRUE(masked.ok) << masked.error;
    KernelRun plain = runKernel("batch_norm_grad", {x, scale, masked.outputs[0]}, grads);
    KernelRun fused = runKernel("batch_norm_grad", {x, scale, dz, z}, grads,
                                {Attribute::makeString("activation", "relu")});
    ASSERT_TRUE(plain.ok) << plain.error;
    ASSERT_TRUE(fused.ok) << fused.error;
    for (size_t r = 0; r < 3; ++r)
      EXPECT_TRUE(fused.outputs[r].bytes == plain.outputs[r].bytes)
          << plan::dtypeName(t) << " result " << r;
  }
}

// Tests the fused forms' load errors: an activation other than relu, and
// batch_norm_grad's operand 3 without relu or relu without it, each named.
TEST(BatchNormFusion, LoadErrors) {
  HostTensor x(DType::F32, {2, 3, 4}), c(DType::F32, {3});
  KernelRun gelu = runKernel("batch_norm", {x, c, c, c, c}, {HostTensor(DType::F32, {2, 3, 4})},
                             {Attribute::makeString("activation", "gelu")});
  EXPECT_FALSE(gelu.ok);
  EXPECT_NE(gelu.error.find("activation 'gelu' is not supported"), std::string::npos) << gelu.error;
  KernelRun badResidual =
      runKernel("batch_norm", {x, c, c, c, c, HostTensor(DType::F32, {2, 3, 5})},
                {HostTensor(DType::F32, {2, 3, 4})});
  EXPECT_FALSE(badResidual.ok);
  EXPECT_NE(badResidual.error.find("residual"), std::string::npos) << badResidual.error;
  const std::vector<HostTensor> grads = {HostTensor(DType::F32, {2, 3, 4}),
                                         HostTensor(DType::F32, {3}), HostTensor(DType::F32, {3})};
  KernelRun noOutput =
      runKernel("batch_norm_grad", {x, c, x}, grads, {Attribute::makeString("activation", "relu")});
  EXPECT_FALSE(noOutput.ok);
  EXPECT_NE(noOutput.error.find("needs the forward output"), std::string::npos) << noOutput.error;
  KernelRun noRelu = runKernel("batch_norm_grad", {x, c, x, x}, grads);
  EXPECT_FALSE(noRelu.ok);
  EXPECT_NE(noRelu.error.find("only with activation relu"), std::string::npos) << noRelu.error;
}

// Tests batch_norm_train: batch mean and biased variance, and the running
// statistics update running * momentum + batch * (1 - momentum) with the
// unbiased batch variance (PyTorch's BatchNorm buffers).
TEST(BatchNormKernel, Training) {
  std::mt19937 rng(31);
  const std::vector<int64_t> shape = {3, 4, 5, 2};
  const int64_t C = 4, inner = 10, N = 3;
  for (DType t : floatDTypes()) {
    HostTensor x = randomTensor(t, shape, rng);
    HostTensor scale = randomTensor(t, {C}, rng), bias = randomTensor(t, {C}, rng);
    HostTensor rm = randomTensor(DType::F32, {C}, rng),
               rv = randomTensor(DType::F32, {C}, rng, 0.5, 2);
    KernelRun r =
        runKernel("batch_norm_train", {x, scale, bias, rm, rv},
                  {HostTensor(t, shape), HostTensor(DType::F32, {C}), HostTensor(DType::F32, {C})},
                  {Attribute::makeFloat("epsilon", 1e-5), Attribute::makeFloat("momentum", 0.8)});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> mean(C, 0), var(C, 0), ref(x.numel()), newMean(C), newVar(C);
    for (int64_t i = 0; i < x.numel(); ++i)
      mean[(i / inner) % C] += x.get(i) / (N * inner);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / inner) % C;
      var[c] += (x.get(i) - mean[c]) * (x.get(i) - mean[c]) / (N * inner);
    }
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / inner) % C;
      ref[i] = (x.get(i) - mean[c]) / std::sqrt(var[c] + 1e-5) * scale.get(c) + bias.get(c);
    }
    for (int64_t c = 0; c < C; ++c) {
      newMean[c] = rm.get(c) * 0.8 + mean[c] * 0.2;
      newVar[c] = rv.get(c) * 0.8 + var[c] * (N * inner) / (N * inner - 1) * 0.2;
    }
    EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-5)) << plan::dtypeName(t);
    EXPECT_TRUE(closeTo(r.outputs[1], newMean, 1e-6));
    EXPECT_TRUE(closeTo(r.outputs[2], newVar, 1e-6));
  }
}

// Tests layer_norm over trailing axes from several `axis` values, with and
// without bias and statistics, and a single-value scale.
TEST(LayerNormKernel, Variants) {
  std::mt19937 rng(32);
  const std::vector<int64_t> shape = {2, 3, 8};
  for (int64_t axis : {-1, 1, 2, 0})
    for (DType t : floatDTypes())
      for (int variant = 0; variant < 3; ++variant) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < 3; ++d)
          (d < a ? outer : inner) *= shape[d];
        std::vector<int64_t> normShape(shape.begin() + a, shape.end());
        HostTensor x = randomTensor(t, shape, rng);
        HostTensor scale =
            variant == 2 ? randomTensor(t, {1}, rng) : randomTensor(t, normShape, rng);
        std::vector<HostTensor> ops = {x, scale};
        if (variant != 1)
          ops.push_back(randomTensor(t, normShape, rng));
        std::vector<int64_t> statShape(shape.begin(), shape.begin() + a);
        statShape.resize(3, 1);
        std::vector<HostTensor> results = {HostTensor(t, shape)};
        if (variant != 2) {
          results.push_back(HostTensor(DType::F32, statShape));
          results.push_back(HostTensor(DType::F32, statShape));
        }
        KernelRun r =
            runKernel("layer_norm", ops, results,
                      {Attribute::makeInt("axis", axis), Attribute::makeFloat("epsilon", 1e-4)});
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref(x.numel()), means(outer), invs(outer);
        for (int64_t o = 0; o < outer; ++o) {
          double m = 0, v = 0;
          for (int64_t i = 0; i < inner; ++i)
            m += x.get(o * inner + i) / inner;
          for (int64_t i = 0; i < inner; ++i)
            v += (x.get(o * inner + i) - m) * (x.get(o * inner + i) - m) / inner;
          means[o] = m;
          invs[o] = 1 / std::sqrt(v + 1e-4);
          for (int64_t i = 0; i < inner; ++i)
            ref[o * inner + i] =
                (x.get(o * inner + i) - m) * invs[o] * scale.get(variant == 2 ? 0 : i) +
                (ops.size() == 3 ? ops[2].get(i) : 0.0);
        }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-5))
            << plan::dtypeName(t) << " axis " << axis << " variant " << variant;
        if (variant != 2) {
          EXPECT_TRUE(closeTo(r.outputs[1], means, 1e-6, 1e-6));
          EXPECT_TRUE(closeTo(r.outputs[2], invs, 1e-6));
        }
      }
}

// Tests softmax and log_softmax along every axis, in every float dtype.
TEST(SoftmaxKernel, EveryAxis) {
  std::mt19937 rng(33);
  const std::vector<int64_t> shape = {3, 4, 5};
  for (const char *kind : {"softmax", "log_softmax"})
    for (int64_t axis : {0, 1, 2, -1})
      for (DType t : floatDTypes()) {
        HostTensor x = randomTensor(t, shape, rng, -4, 4);
        KernelRun r =
            runKernel(kind, {x}, {HostTensor(t, shape)}, {Attribute::makeInt("axis", axis)});
        ASSERT_TRUE(r.ok) << r.error;
        const int64_t a = axis < 0 ? axis + 3 : axis;
        const std::vector<int64_t> st = stridesOf(shape);
        std::vector<double> ref(x.numel());
        for (int64_t i = 0; i < x.numel(); ++i) {
          std::vector<int64_t> idx = unflatten(i, shape);
          double sum = 0;
          for (int64_t d = 0; d < shape[a]; ++d)
            sum += std::exp(x.get(i + (d - idx[a]) * st[a]));
          ref[i] =
              std::string(kind) == "softmax" ? std::exp(x.get(i)) / sum : x.get(i) - std::log(sum);
        }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-6))
            << kind << " axis " << axis << " " << plan::dtypeName(t);
      }
}

} // namespace
