//===- TrainerTest.cpp - the training library (mptrt/train.hpp, C API) ---===//
//
// Drives mptrt::train::Trainer and the mptrt_trainer_* / mptrt_checkpoint_*
// C API on a toy train_step whose every value is computed by hand: the
// batches each step gets, the outputs read by role, the metrics line, the
// on-skip rerun, evaluation, and checkpoints (the C and C++ paths write the
// same bytes, and a resumed run continues exactly).
//
//===----------------------------------------------------------------------===//
#include "ParamsFiles.h"
#include "PlanBuilder.h"
#include "mptrt.h"
#include "mptrt/train.hpp"
#include "mptrt/train/Params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;
namespace fs = std::filesystem;
using DType = plan::DType;

namespace {

const float kLr = 0.125f;
const float kW0[4] = {1, 2, 3, 4};
const float kScale0 = 8;

/// train_step: input x (f32 [2, 4]); parameters w (f32 [4]), train.step
/// (i64 []) and loss_scale.scale (f32 []):
///   loss = sum(x * w), grad_norm = |colsum(x)|, skipped = loss > 1000,
///   loss_scale = scale (then scale *= 2), lr = 0.125,
///   w -= lr * colsum(x), train.step += 1.
/// eval_step: loss = sum(x * w), writing nothing.
std::vector<uint8_t> toyPlan() {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 4});
  uint32_t w = b.param("w", DType::F32, {4}, kW0, sizeof kW0);
  const int64_t zero = 0, one = 1;
  uint32_t count = b.param("train.step", DType::I64, {}, &zero, 8);
  uint32_t scale = b.param("loss_scale.scale", DType::F32, {}, &kScale0, 4);
  uint32_t lr = b.constant(DType::F32, {}, &kLr, 4);
  uint32_t oneI = b.constant(DType::I64, {}, &one, 8);
  const float two = 2, limit = 1000;
  uint32_t twoF = b.constant(DType::F32, {}, &two, 4);
  uint32_t limitF = b.constant(DType::F32, {}, &limit, 4);
  auto all = [] {
    return std::vector<plan::Attribute>{plan::Attribute::makeInts("axes", {}),
                                        plan::Attribute::makeInt("keepdims", 0)};
  };
  uint32_t xw = b.temp(DType::F32, {2, 4});
  b.kernel("mul", {x, w}, {xw});
  uint32_t loss = b.output("loss", DType::F32, {}, plan::OutputRole::Loss);
  b.kernel("reduce_sum", {xw}, {loss}, all());
  uint32_t g = b.temp(DType::F32, {4});
  b.kernel("reduce_sum", {x}, {g},
           {plan::Attribute::makeInts("axes", {0}), plan::Attribute::makeInt("keepdims", 0)});
  b.kernel("reduce_l2", {g}, {b.output("grad_norm", DType::F32, {}, plan::OutputRole::GradNorm)},
           all());
  b.kernel("greater", {loss, limitF},
           {b.output("skipped", DType::I1, {}, plan::OutputRole::Skipped)});
  b.kernel("copy", {scale}, {b.output("loss_scale", DType::F32, {}, plan::OutputRole::LossScale)});
  b.kernel("mul", {scale, twoF}, {scale});
  b.kernel("copy", {lr}, {b.output("lr", DType::F32, {}, plan::OutputRole::Lr)});
  uint32_t delta = b.temp(DType::F32, {4});
  b.kernel("mul", {g, lr}, {delta});
  b.kernel("sub", {w, delta}, {w});
  b.kernel("add", {count, oneI}, {count});
  b.entry("train_step");
  uint32_t exw = b.temp(DType::F32, {2, 4});
  b.kernel("mul", {x, w}, {exw});
  b.kernel("reduce_sum", {exw}, {loss}, all());
  b.entry("eval_step");
  return b.bytes();
}

/// x [rows, 4]: small integers (row 4, 5 large when `big`: loss > 1000).
std::vector<float> toyX(int rows, bool big = false) {
  std::vector<float> x(rows * 4);
  for (int i = 0; i < rows * 4; ++i)
    x[i] = float((i * 5) % 7 - 3) * (big && i >= 16 && i < 24 ? 100.0f : 1.0f);
  return x;
}

/// The losses of `steps` steps over `batches` batches of x, by hand.
std::vector<double> expectLosses(const std::vector<float> &x, int batches, int steps) {
  std::vector<double> w(kW0, kW0 + 4), losses;
  for (int s = 0; s < steps; ++s) {
    const int b = s % batches;
    double loss = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 4; ++c) {
        const double v = x[(b * 2 + r) * 4 + c];
        loss += v * w[c];
        g[c] += v;
      }
    for (int c = 0; c < 4; ++c)
      w[c] -= kLr * g[c];
    losses.push_back(loss);
  }
  return losses;
}

std::string withoutTime(const std::string &line) {
  const size_t at = line.find(", \"time_ms\": ");
  return at == std::string::npos ? line : line.substr(0, at) + "}";
}

std::vector<uint8_t> fileBytes(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

class TrainerTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mptrt-trainer-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    plan_ = toyPlan();
    std::ofstream(dir_ / "toy.mptp", std::ios::binary)
        .write(reinterpret_cast<const char *>(plan_.data()), plan_.size());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  /// A Trainer on toy.mptp with x (`rows` rows) as its data.
  void open(train::Trainer *t, int rows, train::CheckFinite check = train::CheckFinite::OnSkip,
            bool big = false) {
    train::TrainerOptions options;
    options.checkFinite = check;
    std::string error;
    ASSERT_TRUE(t->open(path("toy.mptp"), "cpu", options, &error)) << error;
    const std::vector<float> x = toyX(rows, big);
    ASSERT_TRUE(t->setData("x", train::Array::of(MPTRT_F32, {rows, 4}, x.data(), x.size() * 4, "x"),
                           &error))
        << error;
  }

  fs::path dir_;
  std::vector<uint8_t> plan_;
};

// Tests the library's and the C API's --params: a .safetensors file's w is
// bound (the losses are those of w = 0), a file missing w binds nothing.
TEST_F(TrainerTest, LoadParams) {
  train::Trainer t;
  open(&t, 4);
  const std::vector<float> zeros(4, 0.0f);
  const std::vector<uint8_t> good = safetensorsFile({{"w", "F32", {4}, bytesOf(zeros)}}),
                             none = safetensorsFile({});
  std::ofstream(path("w.safetensors"), std::ios::binary)
      .write(reinterpret_cast<const char *>(good.data()), good.size());
  std::ofstream(path("none.safetensors"), std::ios::binary)
      .write(reinterpret_cast<const char *>(none.data()), none.size());
  train::ParamsFile file;
  std::string error;
  ASSERT_TRUE(train::readParamsFile(path("none.safetensors"), &file, &error)) << error;
  EXPECT_FALSE(train::loadParams(t, file, {}, &error));
  EXPECT_NE(error.find("no tensor 'w' for the plan's parameter (f32 [4])"), std::string::npos)
      << error;
  EXPECT_TRUE(train::loadParams(t, file, {"w"}, &error)) << error; // w set elsewhere
  ASSERT_TRUE(train::readParamsFile(path("w.safetensors"), &file, &error)) << error;
  ASSERT_TRUE(train::loadParams(t, file, {}, &error)) << error;
  train::StepMetrics m;
  ASSERT_TRUE(t.step(&m, &error)) << error;
  EXPECT_EQ(*m.loss, 0.0);

  mptrt_model *model = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(plan_.data(), plan_.size(), "cpu", &model), MPTRT_OK);
  mptrt_trainer *c = nullptr;
  ASSERT_EQ(mptrt_trainer_create(model, nullptr, MPTRT_CHECK_FINITE_OFF, &c), MPTRT_OK);
  EXPECT_EQ(mptrt_trainer_load_params(c, path("none.safetensors").c_str()), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("no tensor 'w'"), std::string::npos);
  ASSERT_EQ(mptrt_trainer_load_params(c, path("w.safetensors").c_str()), MPTRT_OK)
      << mptrt_last_error();
  std::vector<float> w(4, 1.0f);
  ASSERT_EQ(mptrt_read_parameter(model, "w", w.data(), 16), MPTRT_OK);
  EXPECT_EQ(w, zeros);
  EXPECT_EQ(mptrt_trainer_load_params(nullptr, "x"), MPTRT_ERROR);
  mptrt_trainer_free(c);
  mptrt_model_free(model);
}

// Tests that each step gets batch s mod batches and reports every output by
// role, and that the metrics line is the one mpt-train writes.
TEST_F(TrainerTest, StepsFeedBatchesAndReportOutputs) {
  train::Trainer t;
  open(&t, 7); // 3 batches; the 7th row is in none
  ASSERT_EQ(t.data(0)->batches, 3);
  EXPECT_EQ(t.data(0)->unusedRows, 1);
  EXPECT_TRUE(t.notes().empty());
  const std::vector<double> want = expectLosses(toyX(7), 3, 5);
  std::string error;
  for (int s = 0; s < 5; ++s) {
    train::StepMetrics m;
    ASSERT_TRUE(t.step(&m, &error)) << error;
    EXPECT_EQ(m.step, s + 1);
    EXPECT_EQ(t.steps(), uint64_t(s + 1));
    ASSERT_TRUE(m.loss && m.lr && m.lossScale && m.skipped && m.gradNorm);
    EXPECT_EQ(*m.loss, want[s]) << "step " << s + 1;
    EXPECT_EQ(*m.lossScale, kScale0 * std::pow(2.0, s));
    EXPECT_EQ(*m.lr, 0.125);
    EXPECT_FALSE(*m.skipped);
    EXPECT_FALSE(m.firstNonFinite);
    char loss[32];
    std::snprintf(loss, sizeof loss, "%.9g", want[s]);
    EXPECT_EQ(withoutTime(train::metricsJson(m)),
              "{\"step\": " + std::to_string(s + 1) + ", \"loss\": " + loss +
                  ", \"loss_scale\": " + train::jsonNumber(*m.lossScale) +
                  ", \"skipped\": false, \"grad_norm\": " + train::jsonNumber(*m.gradNorm) +
                  ", \"lr\": 0.125}");
  }
}

// Tests the data errors: a wrong shape, a wrong input, inputs without data.
TEST_F(TrainerTest, DataErrors) {
  train::Trainer t;
  train::TrainerOptions options;
  std::string error;
  ASSERT_TRUE(t.open(path("toy.mptp"), "cpu", options, &error)) << error;
  train::StepMetrics m;
  EXPECT_FALSE(t.step(&m, &error));
  EXPECT_EQ(error, "step 1: input 'x' of entry point 'train_step' has no data");
  const std::vector<float> x = toyX(2);
  EXPECT_FALSE(t.setData("x", train::Array::of(MPTRT_F32, {2, 3}, x.data(), 24, "a.npy"), &error));
  EXPECT_EQ(error, "input 'x': a.npy holds f32 [2, 3], the plan expects f32 [2, 4] (a batch; the "
                   "file may hold f32 [N, 4] with N >= 2): dimension 1 differs");
  EXPECT_FALSE(t.setData("z", train::Array::of(MPTRT_F32, {2, 4}, x.data(), 32, "z"), &error));
  EXPECT_EQ(error, "entry point 'train_step' has no input named 'z' (its inputs: 'x')");
  EXPECT_FALSE(t.setData("x", train::Array::of(MPTRT_F32, {2, 4}, x.data(), 16, "short"), &error));
  EXPECT_NE(error.find("it holds only 16 bytes"), std::string::npos) << error;
  EXPECT_EQ(t.parameter("v", &error), nullptr);
  EXPECT_EQ(error, "entry point 'train_step' has no parameter named 'v' (its parameters: "
                   "'loss_scale.scale', 'train.step', 'w')");
  train::TrainerOptions other;
  other.entry = "nope";
  train::Trainer u;
  EXPECT_FALSE(u.open(path("toy.mptp"), "cpu", other, &error));
  EXPECT_NE(error.find("has no entry point 'nope' (its entry points: 'train_step', 'eval_step')"),
            std::string::npos)
      << error;
}

// Tests that a resumed run continues exactly, and that a checkpoint holds
// the step count and every parameter.
TEST_F(TrainerTest, ResumeContinuesExactly) {
  train::Trainer a;
  open(&a, 6);
  std::string error;
  train::StepMetrics m;
  for (int s = 0; s < 2; ++s)
    ASSERT_TRUE(a.step(&m, &error)) << error;
  ASSERT_TRUE(a.save(path("ck"), &error)) << error;
  std::vector<double> later;
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(a.step(&m, &error)) << error;
    later.push_back(*m.loss);
  }
  train::Trainer b;
  open(&b, 6);
  ASSERT_TRUE(b.resume(path("ck"), &error)) << error;
  EXPECT_EQ(b.steps(), 2u);
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(b.step(&m, &error)) << error;
    EXPECT_EQ(m.step, s + 3);
    EXPECT_EQ(*m.loss, later[s]) << "step " << s + 3;
  }
  train::Checkpoint ck;
  ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 2u);
  ASSERT_EQ(ck.tensors.size(), 3u);
  EXPECT_EQ(ck.tensors[0].name, "w");
}

// Tests the on-skip rerun: a skipped step reports that its rerun found no
// inf or NaN, and leaves the state exactly as a run without the check.
TEST_F(TrainerTest, SkippedStepIsRerunWithoutChangingTheState) {
  train::Trainer checked, plain;
  open(&checked, 6, train::CheckFinite::OnSkip, /*big=*/true);
  open(&plain, 6, train::CheckFinite::Off, /*big=*/true);
  std::string error;
  for (int s = 0; s < 3; ++s) {
    train::StepMetrics m, n;
    ASSERT_TRUE(checked.step(&m, &error)) << error;
    ASSERT_TRUE(plain.step(&n, &error)) << error;
    EXPECT_EQ(*m.loss, *n.loss);
    EXPECT_EQ(*m.skipped, s == 2) << *m.loss;
    EXPECT_EQ(m.firstNonFinite.has_value(), s == 2);
    EXPECT_FALSE(n.firstNonFinite);
    if (s == 2) {
      EXPECT_FALSE(m.firstNonFinite->found);
      EXPECT_TRUE(m.checkMs);
      EXPECT_NE(train::metricsJson(m).find("\"first_nonfinite\": null"), std::string::npos);
    }
  }
  for (const char *name : {"w", "train.step", "loss_scale.scale"}) {
    std::vector<uint8_t> a, b;
    ASSERT_TRUE(checked.model().readParameter(name, &a) && plain.model().readParameter(name, &b));
    EXPECT_EQ(a, b) << name;
  }
}

// Tests the C API: a trainer over a model the caller owns gives the C++
// trainer's steps and metrics lines, evaluates, and its checkpoints are the
// C++ trainer's bytes; bad checkpoints fail through mptrt_last_error.
TEST_F(TrainerTest, CApiMatchesTheLibrary) {
  train::Trainer cpp;
  open(&cpp, 6);
  mptrt_model *model = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(plan_.data(), plan_.size(), "cpu", &model), MPTRT_OK);
  mptrt_trainer *t = nullptr;
  ASSERT_EQ(mptrt_trainer_create(model, nullptr, MPTRT_CHECK_FINITE_ON_SKIP, &t), MPTRT_OK)
      << mptrt_last_error();
  mptrt_step_metrics cm;
  EXPECT_EQ(mptrt_trainer_step(t, &cm), MPTRT_ERROR);
  EXPECT_STREQ(mptrt_last_error(), "step 1: input 'x' of entry point 'train_step' has no data");
  const std::vector<float> x = toyX(6);
  const int64_t shape[2] = {6, 4};
  ASSERT_EQ(mptrt_trainer_set_data(t, "x", MPTRT_F32, shape, 2, x.data(), x.size() * 4), MPTRT_OK)
      << mptrt_last_error();
  EXPECT_EQ(mptrt_trainer_set_data(t, "x", MPTRT_I64, shape, 2, x.data(), x.size() * 4),
            MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("the element types differ"), std::string::npos);
  std::string error;
  for (int s = 0; s < 4; ++s) {
    train::StepMetrics m;
    ASSERT_TRUE(cpp.step(&m, &error)) << error;
    // Binding the shared model between steps must not disturb the trainer.
    const std::vector<float> zeros(8, 0.0f);
    const int64_t one[2] = {2, 4};
    ASSERT_EQ(mptrt_bind_input(model, "x", MPTRT_F32, one, 2, zeros.data(), 32), MPTRT_OK);
    ASSERT_EQ(mptrt_trainer_step(t, &cm), MPTRT_OK) << mptrt_last_error();
    EXPECT_EQ(cm.step, uint64_t(s + 1));
    EXPECT_EQ(cm.present & (MPTRT_METRIC_LOSS | MPTRT_METRIC_SKIPPED | MPTRT_METRIC_LR),
              MPTRT_METRIC_LOSS | MPTRT_METRIC_SKIPPED | MPTRT_METRIC_LR);
    EXPECT_EQ(cm.present & MPTRT_METRIC_VAL_LOSS, 0u);
    EXPECT_EQ(cm.loss, *m.loss);
    EXPECT_EQ(cm.grad_norm, *m.gradNorm);
    EXPECT_EQ(withoutTime(mptrt_trainer_metrics_json(t)), withoutTime(train::metricsJson(m)));
  }
  EXPECT_EQ(mptrt_trainer_steps(t), 4u);

  // Evaluation: eval_step's mean loss over 2 validation batches.
  EXPECT_EQ(mptrt_trainer_set_eval_data(t, "x", MPTRT_F32, shape, 2, x.data(), 96), MPTRT_ERROR);
  ASSERT_EQ(mptrt_trainer_set_eval_entry(t, nullptr), MPTRT_OK) << mptrt_last_error();
  const int64_t four[2] = {4, 4};
  ASSERT_EQ(mptrt_trainer_set_eval_data(t, "x", MPTRT_F32, four, 2, x.data(), 64), MPTRT_OK)
      << mptrt_last_error();
  std::vector<float> w(4);
  ASSERT_EQ(mptrt_read_parameter(model, "w", w.data(), 16), MPTRT_OK);
  double want = 0;
  for (int i = 0; i < 16; ++i)
    want += double(x[i]) * w[i % 4];
  double loss = 0;
  ASSERT_EQ(mptrt_trainer_evaluate(t, &loss), MPTRT_OK) << mptrt_last_error();
  EXPECT_DOUBLE_EQ(loss, want / 2);
  EXPECT_NE(std::string(mptrt_trainer_metrics_json(t)).find("\"val_loss\": "), std::string::npos);

  // Checkpoints: the C paths write the C++ trainer's bytes.
  ASSERT_TRUE(cpp.save(path("cpp.ck"), &error)) << error;
  ASSERT_EQ(mptrt_trainer_save(t, path("c.ck").c_str()), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(mptrt_checkpoint_save(model, "train_step", path("c2.ck").c_str(), 4), MPTRT_OK);
  EXPECT_EQ(fileBytes(path("c.ck")), fileBytes(path("cpp.ck")));
  EXPECT_EQ(fileBytes(path("c2.ck")), fileBytes(path("cpp.ck")));

  // Loading: the step count and the parameters come back.
  mptrt_model *fresh = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(plan_.data(), plan_.size(), "cpu", &fresh), MPTRT_OK);
  uint64_t steps = 0;
  ASSERT_EQ(mptrt_checkpoint_load(fresh, "train_step", path("c.ck").c_str(), &steps), MPTRT_OK)
      << mptrt_last_error();
  EXPECT_EQ(steps, 4u);
  std::vector<float> w2(4);
  ASSERT_EQ(mptrt_read_parameter(fresh, "w", w2.data(), 16), MPTRT_OK);
  EXPECT_EQ(w2, w);
  mptrt_trainer *resumed = nullptr;
  ASSERT_EQ(mptrt_trainer_create(fresh, "train_step", MPTRT_CHECK_FINITE_OFF, &resumed), MPTRT_OK);
  ASSERT_EQ(mptrt_trainer_resume(resumed, path("c.ck").c_str()), MPTRT_OK) << mptrt_last_error();
  EXPECT_EQ(mptrt_trainer_steps(resumed), 4u);

  // Bad checkpoints: a flipped byte, another plan's, no file.
  std::vector<uint8_t> bytes = fileBytes(path("c.ck"));
  bytes[56] ^= 0x10; // in w's data
  std::ofstream(path("bad.ck"), std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  EXPECT_EQ(mptrt_checkpoint_load(fresh, "train_step", path("bad.ck").c_str(), nullptr),
            MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("checksum mismatch"), std::string::npos)
      << mptrt_last_error();
  EXPECT_EQ(mptrt_checkpoint_load(fresh, "eval_step", path("c.ck").c_str(), nullptr), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("it was written for another plan"),
            std::string::npos)
      << mptrt_last_error();
  EXPECT_EQ(mptrt_trainer_resume(resumed, path("none.ck").c_str()), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("cannot open"), std::string::npos);
  mptrt_trainer *none = resumed;
  EXPECT_EQ(mptrt_trainer_create(fresh, "nope", MPTRT_CHECK_FINITE_OFF, &none), MPTRT_ERROR);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(mptrt_trainer_step(nullptr, nullptr), MPTRT_ERROR);

  mptrt_trainer_free(resumed);
  mptrt_trainer_free(t);
  mptrt_model_free(fresh);
  mptrt_model_free(model);
}

} // namespace
