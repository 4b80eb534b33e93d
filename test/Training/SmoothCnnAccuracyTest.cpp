//===- SmoothCnnAccuracyTest.cpp - FP32 gradients as accurate as PyTorch's
//-===//
//
// test/fixtures/parity/smooth_cnn: a small CNN with no kinks (conv + training
// mode batch norm + GELU, a stride-2 residual block, average pooling, global
// average pooling, fc), one batch of 8 16x16 images, the float64 gradients of
// the cross-entropy loss at the initial weights, and PyTorch float32's
// gradients on the same weights and batch (scripts/gen_parity_fixtures.py).
//
// The claim: MPT's FP32 training step computes every parameter's gradient at
// most 2x as far from the float64 gradient as PyTorch's FP32 does:
//
//   relL2(g_mpt, g64) <= 2 * relL2(g_torch32, g64),  relL2(a, b) = ||a-b|| /
//   ||b||
//
// Why the relative L2 norm per tensor: it is the error of the tensor as the
// optimizer uses it (a step moves the parameter by lr * g, so ||g - g64|| /
// ||g64|| is the relative error of the step), it is scale-free, and it is not
// dominated by single elements whose exact value is near zero (where any FP32
// evaluation, PyTorch's included, has a large relative error from
// cancellation). An element-wise max would compare the two implementations'
// luck on the worst-conditioned element instead.
//
// The model is smooth, so both errors are rounding errors of the same
// computation: an implementation that accumulates like PyTorch (pairwise /
// blocked sums, FP32 accumulators with short chains) lands at ~1x; 2x leaves
// room for a different summation order. Measured (torch 2.15, one thread):
// PyTorch's errors are 1e-8 to 8e-7 per tensor (the largest on the BN
// parameters, whose gradients are sums over N*H*W = 2048 or 512 positions).
//
// History: this test failed for the batch-norm gradients while the CPU
// batch_norm_grad kernel accumulated in FP32: MPT / PyTorch error ratios
// bn1.weight 4.5, bn1.bias 4.4, bn2.bias = down_bn.bias 3.1, bn2.weight 2.5,
// stem_bn.bias 2.4, down.weight 2.2 (upstream of down_bn), down_bn.weight
// 2.01; every other tensor 0.41-1.65. With the reductions accumulated in
// double (docs/runtime.md, Accumulation) it passes: worst ratio 1.22
// (bn1.weight), all others 0.39-0.88.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>

using namespace mpt::training_test;

namespace {

// The bound of the claim (not tuned; see the file comment).
const double kMaxRatioToPyTorch = 2.0;

std::vector<double> widen(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

} // namespace

TEST(SmoothCnnAccuracy, Fp32GradientsWithinTwicePyTorchError) {
  const std::string dir = parityFixturePath("smooth_cnn/");
  TempDir tmp;
  std::string msg;
  const std::string plan = tmp.file("smooth_cnn.mptp");
  ASSERT_TRUE(
      compileTrainingPlan(dir + "model.onnx",
                          {"--loss-kind=cross_entropy", "--loss-output=logits",
                           "--label-input=labels", "--optimizer=sgd",
                           "--lr=0.1", "--emit-gradients=true"},
                          plan, &msg))
      << msg;
  Trainer t;
  ASSERT_TRUE(t.load(plan, &msg)) << msg;
  Tensor x, labels;
  ASSERT_TRUE(loadNpy(dir + "input_x.npy", &x, &msg)) << msg;
  ASSERT_TRUE(loadNpy(dir + "labels.npy", &labels, &msg)) << msg;
  ASSERT_TRUE(t.bind("x", x, &msg)) << msg;
  ASSERT_TRUE(t.bind("labels", labels, &msg)) << msg;
  StepOutputs o;
  ASSERT_TRUE(t.step(&o, &msg)) << msg;

  std::vector<int64_t> shape;
  std::vector<double> loss64, loss32;
  ASSERT_TRUE(loadNpyF64(dir + "loss.npy", &shape, &loss64, &msg)) << msg;
  ASSERT_TRUE(loadNpyF64(dir + "loss32.npy", &shape, &loss32, &msg)) << msg;
  const double lossErr = std::fabs(o.loss - loss64[0]) / std::fabs(loss64[0]);
  const double lossErrTorch =
      std::fabs(loss32[0] - loss64[0]) / std::fabs(loss64[0]);
  std::cout << "loss: MPT " << o.loss << ", float64 " << loss64[0]
            << ", rel error " << lossErr << " (PyTorch fp32 " << lossErrTorch
            << ")\n";

  std::vector<std::string> params = gradientParameters(t);
  std::sort(params.begin(), params.end());
  ASSERT_EQ(params.size(),
            22u - 8u) // 22 initializers, 8 of them BN running stats
      << "the plan should train every parameter of smooth_cnn";
  double worstRatio = 0;
  std::string worstName;
  std::cout << std::setw(22) << "parameter" << std::setw(14) << "MPT relL2"
            << std::setw(14) << "PyTorch relL2" << std::setw(10) << "ratio\n";
  for (const std::string &p : params) {
    std::vector<float> g;
    ASSERT_TRUE(t.outputF32("grad." + p, &g, &msg)) << msg;
    std::vector<double> g64, g32;
    ASSERT_TRUE(loadNpyF64(dir + "grad_" + p + ".npy", &shape, &g64, &msg))
        << msg;
    ASSERT_TRUE(loadNpyF64(dir + "grad32_" + p + ".npy", &shape, &g32, &msg))
        << msg;
    ASSERT_EQ(g.size(), g64.size()) << p;
    const double errMpt = relativeL2(widen(g), g64);
    const double errTorch = relativeL2(g32, g64);
    const double ratio =
        errTorch > 0 ? errMpt / errTorch : (errMpt == 0 ? 0 : INFINITY);
    std::cout << std::setw(22) << p << std::setw(14) << errMpt << std::setw(14)
              << errTorch << std::setw(10) << ratio << "\n";
    EXPECT_LE(errMpt, kMaxRatioToPyTorch * errTorch)
        << "grad." << p << ": MPT's relative L2 error against float64 is "
        << errMpt << ", " << ratio << "x PyTorch fp32's " << errTorch;
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worstName = p;
    }
  }
  RecordProperty("worst_ratio_to_pytorch", std::to_string(worstRatio));
  std::cout << "worst ratio to PyTorch's error: " << worstRatio << " ("
            << worstName << "), bound " << kMaxRatioToPyTorch << "\n";
}
