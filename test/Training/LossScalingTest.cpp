//===- LossScalingTest.cpp - skipped steps and the dynamic loss scale ----===//
//
// mlp_step compiled with --loss-scale=dynamic, fed the fixture's batch on
// most steps and, on chosen steps, the same batch with one element of x set
// to +inf. The forward pass then produces a non-finite loss and non-finite
// gradients, so train_step must skip the update (docs/training.md):
//
//  * `skipped` is 1 exactly on the poisoned steps;
//  * a skipped step leaves every parameter -- master weights, optimizer
//    state, optimizer.step -- bit for bit as it was (memcmp), while
//    train.step advances and loss_scale.scale is multiplied by the backoff
//    factor (growth_tracker reset to 0);
//  * a finite step changes every weight tensor and advances optimizer.step;
//  * the scale follows PyTorch's GradScaler.update exactly: growth after
//    `growth_interval` consecutive finite steps, backoff on a non-finite
//    one, the tracker reset on both (ScaleSequence below, checked step by
//    step against a model of GradScaler).
//
// All comparisons here are exact: the scales are powers of two and a
// skipped update must be a bit-exact no-op.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>

using namespace mpt::training_test;

namespace {

using Snapshot = std::map<std::string, std::vector<uint8_t>>;

/// The fixture's batch and a poisoned copy (x[0, 0] = +inf).
struct Batches {
  Tensor x, poisonedX, labels;
};

void loadBatches(Batches *b) {
  std::string msg;
  ASSERT_TRUE(loadNpy(fixturePath("mlp_step/x.npy"), &b->x, &msg)) << msg;
  ASSERT_TRUE(loadNpy(fixturePath("mlp_step/labels.npy"), &b->labels, &msg))
      << msg;
  b->poisonedX = b->x;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(b->poisonedX.bytes.data(), &inf, sizeof(float));
}

void compileAndLoad(const TempDir &dir, const std::vector<std::string> &flags,
                    Trainer *t) {
  std::vector<std::string> all = {
      "--loss-kind=cross_entropy", "--loss-output=logits",
      "--label-input=labels", "--loss-scale=dynamic"};
  all.insert(all.end(), flags.begin(), flags.end());
  std::string msg;
  const std::string plan = dir.file("mlp.mptp");
  ASSERT_TRUE(
      compileTrainingPlan(fixturePath("mlp_step/model.onnx"), all, plan, &msg))
      << msg;
  ASSERT_TRUE(t->load(plan, &msg)) << msg;
}

float scalarF32(const Snapshot &s, const std::string &name) {
  float v = NAN;
  auto it = s.find(name);
  if (it != s.end() && it->second.size() == sizeof(float))
    std::memcpy(&v, it->second.data(), sizeof(float));
  else
    ADD_FAILURE() << "no f32 scalar parameter '" << name << "'";
  return v;
}

int64_t scalarI64(const Snapshot &s, const std::string &name) {
  int64_t v = -1;
  auto it = s.find(name);
  if (it != s.end() && it->second.size() == sizeof(int64_t))
    std::memcpy(&v, it->second.data(), sizeof(int64_t));
  else
    ADD_FAILURE() << "no i64 scalar parameter '" << name << "'";
  return v;
}

/// The parameters a skipped step may change.
const std::set<std::string> kStepBookkeeping = {
    "train.step", "loss_scale.scale", "loss_scale.growth_tracker"};

struct FaultCase {
  const char *name;
  std::vector<std::string> flags;
};

void PrintTo(const FaultCase &c, std::ostream *os) { *os << c.name; }

class FaultInjection : public ::testing::TestWithParam<FaultCase> {};

} // namespace

// 8 steps; steps 3 and 6 (1-based) get the poisoned batch.
TEST_P(FaultInjection, SkipsExactlyThePoisonedStepsAndLeavesStateUntouched) {
  TempDir dir;
  Trainer t;
  Batches b;
  ASSERT_NO_FATAL_FAILURE(loadBatches(&b));
  ASSERT_NO_FATAL_FAILURE(compileAndLoad(dir, GetParam().flags, &t));
  std::string msg;
  ASSERT_TRUE(t.bind("labels", b.labels, &msg)) << msg;

  // The plan's state: the four weights plus the optimizer's and the
  // counters, all parameters of train_step.
  const std::vector<std::string> weights = {"fc1.weight", "fc1.bias",
                                            "fc2.weight", "fc2.bias"};
  Snapshot before;
  ASSERT_TRUE(t.snapshot(&before, &msg)) << msg;
  for (const char *p : {"optimizer.step", "train.step", "loss_scale.scale",
                        "loss_scale.growth_tracker", "fc1.weight", "fc2.bias"})
    EXPECT_TRUE(before.count(p)) << "train_step has no parameter '" << p << "'";
  EXPECT_EQ(scalarF32(before, "loss_scale.scale"), 65536.0f)
      << "GradScaler's default";

  const std::set<int> poisoned = {3, 6};
  const int kSteps = 8;
  int skippedCount = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const bool poison = poisoned.count(step) != 0;
    ASSERT_TRUE(t.bind("x", poison ? b.poisonedX : b.x, &msg)) << msg;
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    Snapshot after;
    ASSERT_TRUE(t.snapshot(&after, &msg)) << msg;
    SCOPED_TRACE("step " + std::to_string(step) +
                 (poison ? " (poisoned)" : ""));

    EXPECT_EQ(o.skipped, poison);
    skippedCount += o.skipped;
    EXPECT_EQ(std::isfinite(o.loss), !poison) << "loss " << o.loss;
    // The scale this step used is the one the previous step left.
    EXPECT_EQ(o.lossScale, scalarF32(before, "loss_scale.scale"));
    EXPECT_EQ(scalarI64(after, "train.step"),
              scalarI64(before, "train.step") + 1);
    if (poison) {
      for (const auto &[name, bytes] : before) {
        if (kStepBookkeeping.count(name))
          continue;
        const std::vector<uint8_t> &now = after.at(name);
        EXPECT_TRUE(now.size() == bytes.size() &&
                    std::memcmp(now.data(), bytes.data(), bytes.size()) == 0)
            << "parameter '" << name << "' changed on a skipped step";
      }
      EXPECT_EQ(scalarF32(after, "loss_scale.scale"), 0.5f * o.lossScale)
          << "backoff 0.5";
      EXPECT_EQ(scalarI64(after, "loss_scale.growth_tracker"), 0);
    } else {
      EXPECT_TRUE(std::isfinite(o.gradNorm) && o.gradNorm > 0) << o.gradNorm;
      for (const std::string &w : weights)
        EXPECT_NE(after.at(w), before.at(w))
            << "weight '" << w << "' unchanged by a finite step";
      EXPECT_EQ(scalarI64(after, "optimizer.step"),
                scalarI64(before, "optimizer.step") + 1);
      // The default growth interval (2000) is not reached: the scale stays.
      EXPECT_EQ(scalarF32(after, "loss_scale.scale"), o.lossScale);
      EXPECT_EQ(scalarI64(after, "loss_scale.growth_tracker"),
                scalarI64(before, "loss_scale.growth_tracker") + 1);
    }
    before = std::move(after);
  }
  EXPECT_EQ(skippedCount, int(poisoned.size()));
  EXPECT_EQ(scalarI64(before, "optimizer.step"), kSteps - int(poisoned.size()));
  EXPECT_EQ(scalarI64(before, "train.step"), kSteps);
  EXPECT_EQ(scalarF32(before, "loss_scale.scale"), 65536.0f / 4);
  std::cout << GetParam().name << ": " << skippedCount << " of " << kSteps
            << " steps skipped, final scale "
            << scalarF32(before, "loss_scale.scale") << "\n";

  // Since skipped steps are exact no-ops and scaling by a power of two is
  // exact in FP32, the 6 finite steps must leave the FP32 plan exactly
  // where 6 clean steps leave it (the same weights and optimizer state).
  if (GetParam().flags.empty()) {
    Trainer clean;
    ASSERT_TRUE(clean.load(dir.file("mlp.mptp"), &msg)) << msg;
    ASSERT_TRUE(clean.bind("labels", b.labels, &msg)) << msg;
    ASSERT_TRUE(clean.bind("x", b.x, &msg)) << msg;
    for (int step = 0; step < kSteps - int(poisoned.size()); ++step) {
      StepOutputs o;
      ASSERT_TRUE(clean.step(&o, &msg)) << msg;
    }
    Snapshot cleanState;
    ASSERT_TRUE(clean.snapshot(&cleanState, &msg)) << msg;
    for (const auto &[name, bytes] : cleanState) {
      if (kStepBookkeeping.count(name))
        continue;
      EXPECT_EQ(before.at(name), bytes)
          << "parameter '" << name
          << "' differs from a run without the poisoned steps";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    MlpStep, FaultInjection,
    ::testing::Values(FaultCase{"fp32_adamw", {}},
                      FaultCase{"fp16_adamw", {"--precision=fp16"}},
                      FaultCase{"fp16_momentum",
                                {"--precision=fp16", "--optimizer=momentum",
                                 "--lr=0.05", "--weight-decay=1e-4"}}),
    [](const ::testing::TestParamInfo<FaultCase> &info) {
      return info.param.name;
    });

namespace {

struct ScalerCase {
  const char *name;
  double growth, backoff;
  std::vector<std::string> flags;
};

void PrintTo(const ScalerCase &c, std::ostream *os) { *os << c.name; }

class ScaleSequence : public ::testing::TestWithParam<ScalerCase> {};

} // namespace

// --growth-interval=3 --init-scale=1024: 16 steps, poisoned at 5, 6 (two in
// a row) and 12 (right before the tracker would reach 3), checked step by
// step against GradScaler.update:
//   finite:     tracker += 1; if tracker == interval: scale *= growth, tracker
//   = 0 not finite: scale *= backoff, tracker = 0
TEST_P(ScaleSequence, FollowsGradScaler) {
  const ScalerCase &c = GetParam();
  TempDir dir;
  Trainer t;
  Batches b;
  ASSERT_NO_FATAL_FAILURE(loadBatches(&b));
  std::vector<std::string> flags = {"--growth-interval=3", "--init-scale=1024"};
  flags.insert(flags.end(), c.flags.begin(), c.flags.end());
  ASSERT_NO_FATAL_FAILURE(compileAndLoad(dir, flags, &t));
  std::string msg;
  ASSERT_TRUE(t.bind("labels", b.labels, &msg)) << msg;

  const std::set<int> poisoned = {5, 6, 12};
  double scale = 1024;
  int64_t tracker = 0;
  std::string sequence;
  float param = NAN;
  {
    std::vector<float> s0;
    ASSERT_TRUE(t.parameterF32("loss_scale.scale", &s0, &msg)) << msg;
    ASSERT_EQ(s0, std::vector<float>{1024.0f}) << "--init-scale";
  }
  for (int step = 1; step <= 16; ++step) {
    const bool poison = poisoned.count(step) != 0;
    SCOPED_TRACE("step " + std::to_string(step) +
                 (poison ? " (poisoned)" : ""));
    ASSERT_TRUE(t.bind("x", poison ? b.poisonedX : b.x, &msg)) << msg;
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    EXPECT_EQ(o.skipped, poison);
    EXPECT_EQ(double(o.lossScale), scale) << "the scale this step used";
    sequence += (sequence.empty() ? "" : " ") +
                std::to_string(int64_t(o.lossScale)) + (o.skipped ? "*" : "");
    if (poison) {
      scale *= c.backoff;
      tracker = 0;
    } else if (++tracker == 3) {
      scale *= c.growth;
      tracker = 0;
    }
    std::vector<float> s;
    int64_t tr = -1;
    ASSERT_TRUE(t.parameterF32("loss_scale.scale", &s, &msg)) << msg;
    ASSERT_TRUE(t.parameterI64("loss_scale.growth_tracker", &tr, &msg)) << msg;
    ASSERT_EQ(s.size(), 1u);
    param = s[0];
    EXPECT_EQ(double(param), scale) << "loss_scale.scale after the step";
    EXPECT_EQ(tr, tracker) << "loss_scale.growth_tracker after the step";
  }
  std::cout << c.name << ": scale used per step (* = skipped): " << sequence
            << "; final scale " << param << "\n";
  RecordProperty("scale_sequence", sequence);
}

INSTANTIATE_TEST_SUITE_P(MlpStep, ScaleSequence,
                         ::testing::Values(ScalerCase{"defaults", 2.0, 0.5, {}},
                                           ScalerCase{
                                               "growth4_backoff0_25",
                                               4.0,
                                               0.25,
                                               {"--growth-factor=4",
                                                "--backoff-factor=0.25"}}),
                         [](const ::testing::TestParamInfo<ScalerCase> &info) {
                           return info.param.name;
                         });

// Where MPT deliberately differs from GradScaler (docs/training.md, "Which
// gradients are checked"): PyTorch checks the *scaled* gradients for inf and
// NaN and then multiplies by 1/S; MPT checks the *unscaled* FP32 gradients.
// The two agree whenever S >= 1 (unscaling then only shrinks values). With
// S < 1 a finite scaled gradient can overflow when it is unscaled: PyTorch
// would apply that infinite update, MPT skips the step.
//
// The model: loss = sum(x * w * w), w = [1, 1]; dloss/dw = 2 w x. With
// x = [3e38, -3e38] the loss is 3e38 - 3e38 = 0 (finite), the true gradient
// is +-6e38 (beyond FLT_MAX, 3.4e38). With static S = 0.25 the backward pass
// computes scaled gradients of +-2 * 0.25 * 3e38 = +-1.5e38, all finite, so
// GradScaler's check would pass; unscaling by 4 gives +-inf, and MPT skips.
// The control, x = [1e38, -1e38], unscales to +-2e38 (finite): not skipped.
TEST(LossScaleCheck,
     ChecksUnscaledGradientsSoAScaleBelowOneCannotLetInfThrough) {
  TempDir dir;
  const std::string model = dir.file("sumxww.onnxtext");
  {
    std::ofstream out(model);
    out << "<ir_version: 8, opset_import: [\"\" : 17]>\n"
           "g (float[2] x, float[2] w = {1.0, 1.0}) => (float loss) {\n"
           "  ww = Mul (w, w)\n"
           "  xww = Mul (x, ww)\n"
           "  loss = ReduceSum <keepdims = 0> (xww)\n"
           "}\n";
  }
  const std::string plan = dir.file("sumxww.mptp");
  std::string msg;
  ASSERT_TRUE(compileTrainingPlan(
      model, {"--loss-scale=static:0.25", "--optimizer=sgd", "--lr=2e-38"},
      plan, &msg))
      << msg;
  struct Case {
    float x;
    bool skipped;
  };
  for (Case c : {Case{3e38f, true}, Case{1e38f, false}}) {
    SCOPED_TRACE("x = +-" + std::to_string(c.x));
    Trainer t;
    ASSERT_TRUE(t.load(plan, &msg)) << msg;
    ASSERT_TRUE(t.bind("x", Tensor::fromF32({2}, {c.x, -c.x}), &msg)) << msg;
    Snapshot before, after;
    ASSERT_TRUE(t.snapshot(&before, &msg)) << msg;
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    ASSERT_TRUE(t.snapshot(&after, &msg)) << msg;
    EXPECT_EQ(o.loss, 0.0f) << "the forward pass is finite";
    EXPECT_EQ(o.lossScale, 0.25f);
    EXPECT_EQ(o.skipped, c.skipped);
    EXPECT_EQ(before.at("w") == after.at("w"), c.skipped)
        << "w changes exactly when the step is taken";
    std::vector<float> w;
    ASSERT_TRUE(t.parameterF32("w", &w, &msg)) << msg;
    for (float v : w)
      EXPECT_TRUE(std::isfinite(v)) << "w = " << v;
  }
}
