//===- Fp8GradientTest.cpp - FP8 gradients against FP32 ------------------===//
//
// The first train_step's gradients of an FP8 plan (E4M3 forward operands,
// E5M2 output gradients, current scaling so that step 1 already has fitted
// scales) against the FP32 plan's, on the gemm model mlp_step and the matmul
// model charlm. They must agree to FP8's precision: a wrong scale factor in
// a gradient rule (a missing or doubled 1/scale) puts a gradient off by the
// scale (10 to 10^4 here), a transposed operand by O(1).
//
// Bound: relative L2 error of every gradient <= 0.25 [worst: mlp_step
// 0.111 (fc1.weight), charlm 0.099 (blocks.1.ln_attn.weight)]. E5M2 rounds
// each gradient element by up to 2^-3 relative and E4M3 each operand by up
// to 2^-4, so one product is off by up to about 0.19; a sum of such
// products without cancellation cannot be further off than its worst term.
// A scale applied wrongly gives errors of 1 or more.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

using namespace mpt::training_test;

namespace {

/// The grad.<p> outputs of one train_step of `onnx` compiled with `flags`.
void firstGradients(const TempDir &dir, const std::string &name,
                    const std::string &onnx,
                    const std::vector<std::string> &flags,
                    const std::vector<std::pair<std::string, Tensor>> &batch,
                    std::map<std::string, std::vector<float>> *grads) {
  std::string msg;
  const std::string plan = dir.file(name + ".mptp");
  std::vector<std::string> all = {"--optimizer=sgd", "--lr=0",
                                  "--emit-gradients=true", "--loss-scale=none"};
  all.insert(all.end(), flags.begin(), flags.end());
  ASSERT_TRUE(compileTrainingPlan(onnx, all, plan, &msg)) << msg;
  Trainer t;
  ASSERT_TRUE(t.load(plan, &msg)) << msg;
  for (const auto &[input, tensor] : batch)
    ASSERT_TRUE(t.bind(input, tensor, &msg)) << msg;
  StepOutputs o;
  ASSERT_TRUE(t.step(&o, &msg)) << msg;
  for (const std::string &out : t.outputs()) {
    // Braced: ASSERT_TRUE is an if/else, which an unbraced if would dangle.
    if (out.rfind("grad.", 0) == 0) {
      ASSERT_TRUE(t.outputF32(out, &(*grads)[out], &msg)) << msg;
    }
  }
}

void compare(const char *model, const std::string &onnx,
             const std::vector<std::string> &extra,
             const std::vector<std::pair<std::string, Tensor>> &batch) {
  TempDir dir;
  std::map<std::string, std::vector<float>> fp32, fp8;
  std::vector<std::string> f32Flags = {"--precision=fp32"},
                           f8Flags = {"--precision=fp8",
                                      "--fp8-scaling=current"};
  f32Flags.insert(f32Flags.end(), extra.begin(), extra.end());
  f8Flags.insert(f8Flags.end(), extra.begin(), extra.end());
  ASSERT_NO_FATAL_FAILURE(
      firstGradients(dir, "fp32", onnx, f32Flags, batch, &fp32));
  ASSERT_NO_FATAL_FAILURE(
      firstGradients(dir, "fp8", onnx, f8Flags, batch, &fp8));
  ASSERT_FALSE(fp32.empty());
  ASSERT_EQ(fp32.size(), fp8.size());
  double worst = 0;
  std::string worstName;
  for (const auto &[name, ref] : fp32) {
    const std::vector<float> &got = fp8[name];
    const double err = relativeL2(std::vector<double>(got.begin(), got.end()),
                                  std::vector<double>(ref.begin(), ref.end()));
    EXPECT_LE(err, 0.25) << model << " " << name;
    if (!(err <= worst)) {
      worst = err;
      worstName = name;
    }
  }
  std::cout << "  " << model << ": worst relative L2 gradient error " << worst
            << " (" << worstName << ", " << fp32.size() << " gradients)\n";
  ::testing::Test::RecordProperty(std::string(model) + "_worst_rel_l2",
                                  std::to_string(worst));
}

Tensor load(const std::string &rel) {
  Tensor t;
  std::string msg;
  EXPECT_TRUE(loadNpy(fixturePath(rel), &t, &msg)) << msg;
  return t;
}

// Tests the FP8 gemm rules (mlp_step: two Gemm layers, transB = 1).
TEST(Fp8Gradients, GemmGradientsTrackFp32) {
  compare(
      "mlp_step", fixturePath("mlp_step/model.onnx"),
      {"--loss-kind=cross_entropy"},
      {{"x", load("mlp_step/x.npy")}, {"labels", load("mlp_step/labels.npy")}});
}

// Tests the FP8 matmul rules (charlm: batched attention matmuls, Linear
// layers as MatMul, transposes of E4M3 copies) on its first 16 windows.
TEST(Fp8Gradients, MatMulGradientsTrackFp32) {
  const Tensor x = load("charlm/train_x.npy"), y = load("charlm/train_y.npy");
  compare("charlm", fixturePath("charlm/model.onnx"), {},
          {{"idx", x.rows(0, 16)}, {"targets", y.rows(0, 16)}});
}

} // namespace
