//===- DropoutTrainingTest.cpp - training-mode dropout end to end --------===//
//
// A small MLP with two training-mode ONNX Dropout nodes (written below as
// ONNX text, so it goes through the real importer):
//
//   w1d = Dropout(w1, 0.5, true)          stream 0 (on a weight, so its
//                                          gradient shows the mask)
//   a   = relu(x @ w1d + b1)
//   ad  = Dropout(a, 0.1, true)           stream 1
//   loss = mean((ad @ w2 - t)^2)
//
// compiled by the real mpt-compile --train, and checks that
//   - grad.w1 is zero exactly where philox::dropoutKeep(seed, step, 0, i)
//     drops element i of w1, at every step (the mask is the documented pure
//     function of seed, train.step, stream and index, end to end);
//   - mpt-train trains it (the loss falls), is deterministic for a --seed,
//     and a different --seed gives a different loss curve;
//   - N steps, --save, --resume to 2N gives a checkpoint byte-identical to an
//     uninterrupted 2N-step run (train.seed and train.step are in it);
//   - the eval_step entry runs the MLP with both dropouts off.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include "mptrt/Philox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <sstream>

using namespace mpt::training_test;

namespace {

constexpr int kIn = 16, kHidden = 32, kOut = 4, kBatch = 8, kBatches = 8;

std::string values(int n, double (*f)(int)) {
  std::ostringstream os;
  os.precision(6);
  for (int i = 0; i < n; ++i)
    os << (i ? "," : "") << f(i);
  return os.str();
}

std::string modelText() {
  std::ostringstream os;
  os << "<ir_version: 8, opset_import: [\"\" : 17]>\n"
     << "dropout_mlp (float[" << kBatch << "," << kIn << "] x, float[" << kBatch
     << "," << kOut << "] t, float[" << kIn << "," << kHidden << "] w1 = {"
     << values(kIn * kHidden,
               [](int i) { return 0.3 * std::sin(1.7 * i + 0.3); })
     << "}, float[" << kHidden << "] b1 = {"
     << values(kHidden, [](int i) { return 0.01 * i; }) << "}, float["
     << kHidden << "," << kOut << "] w2 = {"
     << values(kHidden * kOut, [](int i) { return 0.3 * std::cos(0.9 * i); })
     << "}) => (float loss) {\n"
     << "  half = Constant <value = float {0.5}> ()\n"
     << "  tenth = Constant <value = float {0.1}> ()\n"
     << "  on = Constant <value = bool {1}> ()\n"
     << "  w1d = Dropout (w1, half, on)\n"
     << "  h = MatMul (x, w1d)\n"
     << "  hb = Add (h, b1)\n"
     << "  a = Relu (hb)\n"
     << "  ad = Dropout (a, tenth, on)\n"
     << "  y = MatMul (ad, w2)\n"
     << "  d = Sub (y, t)\n"
     << "  sq = Mul (d, d)\n"
     << "  loss = ReduceMean <keepdims = 0> (sq)\n"
     << "}\n";
  return os.str();
}

/// x: smooth features; t: a linear function of x that the MLP can learn.
Tensor dataX() {
  std::vector<float> v(kBatches * kBatch * kIn);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.37 * i) + 0.5 * std::cos(0.11 * i));
  return Tensor::fromF32({kBatches * kBatch, kIn}, v);
}
Tensor dataT(const Tensor &x) {
  const std::vector<float> xv = x.f32();
  std::vector<float> v(kBatches * kBatch * kOut);
  for (int r = 0; r < kBatches * kBatch; ++r)
    for (int o = 0; o < kOut; ++o)
      v[r * kOut + o] = 0.5f * xv[r * kIn + o] - 0.25f * xv[r * kIn + o + kOut];
  return Tensor::fromF32({kBatches * kBatch, kOut}, v);
}

bool writeFile(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

/// A little-endian f32 .npy file (format 1.0).
bool writeNpyF32(const std::string &path, const Tensor &t) {
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ",";
  shape += ")";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  return writeFile(path, out);
}

std::vector<double> losses(const std::string &metrics) {
  std::vector<double> out;
  static const std::regex re(R"("loss"\s*:\s*([-+0-9.eE]+))");
  std::stringstream ss(metrics);
  std::string line;
  while (std::getline(ss, line)) {
    std::smatch m;
    if (std::regex_search(line, m, re))
      out.push_back(std::stod(m[1]));
  }
  return out;
}

class DropoutTraining : public ::testing::Test {
protected:
  void SetUp() override {
    model = dir.file("dropout_mlp.onnxtext");
    ASSERT_TRUE(writeFile(model, modelText()));
    x = dataX();
    t = dataT(x);
    ASSERT_TRUE(writeNpyF32(dir.file("x.npy"), x));
    ASSERT_TRUE(writeNpyF32(dir.file("t.npy"), t));
  }

  /// Runs mpt-train on `plan`; false (with its log as a failure) on error.
  bool train(const std::string &plan, const std::vector<std::string> &extra,
             const std::string &log) {
    std::vector<std::string> argv = {MPT_TRAIN_PATH, plan,
                                     "--input",      "x=" + dir.file("x.npy"),
                                     "--input",      "t=" + dir.file("t.npy"),
                                     "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const int rc = runProcess(argv, dir.file(log));
    EXPECT_EQ(rc, 0) << readTextFile(dir.file(log));
    return rc == 0;
  }

  TempDir dir;
  std::string model;
  Tensor x, t;
};

// Tests that grad.w1 is zero exactly where the Philox mask of stream 0 drops
// w1's element, at steps 0-3 with train.seed = 1234 (about half of the 512
// elements each step: ratio 0.5), and that the masks of different steps
// differ.
TEST_F(DropoutTraining, GradientIsZeroExactlyWhereDropped) {
  std::string msg;
  const std::string plan = dir.file("grad.mptp");
  ASSERT_TRUE(compileTrainingPlan(
      model, {"--optimizer=sgd", "--lr=0.05", "--emit-gradients=true"}, plan,
      &msg))
      << msg;
  Trainer trainer;
  ASSERT_TRUE(trainer.load(plan, &msg)) << msg;
  const int64_t seed = 1234;
  ASSERT_TRUE(trainer.model().bindParameter("train.seed", MPTRT_I64, {}, &seed,
                                            sizeof seed))
      << mptrt::lastError();
  const uint64_t threshold = mptrt::philox::dropThreshold(0.5);
  std::vector<bool> previous;
  for (int64_t step = 0; step < 4; ++step) {
    ASSERT_TRUE(trainer.bind("x", x.rows(step * kBatch, kBatch), &msg)) << msg;
    ASSERT_TRUE(trainer.bind("t", t.rows(step * kBatch, kBatch), &msg)) << msg;
    int64_t trainStep = -1;
    ASSERT_TRUE(trainer.parameterI64("train.step", &trainStep, &msg)) << msg;
    ASSERT_EQ(trainStep, step);
    StepOutputs out;
    ASSERT_TRUE(trainer.step(&out, &msg)) << msg;
    ASSERT_FALSE(out.skipped);
    ASSERT_TRUE(std::isfinite(out.loss));
    std::vector<float> g;
    ASSERT_TRUE(trainer.outputF32("grad.w1", &g, &msg)) << msg;
    ASSERT_EQ(g.size(), size_t(kIn * kHidden));
    std::vector<bool> keep(g.size());
    // Hidden units with a zero gradient column: dead under the relu for the
    // whole batch or dropped by the second dropout in every row (step 0 has
    // none; steps 1 and 2 have one each, measured).
    std::vector<bool> liveUnit(kHidden, false);
    int dropped = 0, droppedNonZero = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      keep[i] = mptrt::philox::dropoutKeep(uint64_t(seed), uint64_t(step), 0,
                                           int64_t(i), threshold);
      dropped += !keep[i];
      droppedNonZero += !keep[i] && g[i] != 0.0f;
      if (g[i] != 0.0f)
        liveUnit[i % kHidden] = true;
    }
    // Dropped: exactly zero. Kept: non-zero unless its whole unit is dead.
    int keptZero = 0, deadUnits = 0;
    for (size_t i = 0; i < g.size(); ++i)
      keptZero += keep[i] && g[i] == 0.0f && liveUnit[i % kHidden];
    for (bool live : liveUnit)
      deadUnits += !live;
    EXPECT_EQ(droppedNonZero, 0) << "step " << step;
    EXPECT_EQ(keptZero, 0) << "step " << step;
    EXPECT_LE(deadUnits, 4)
        << "step " << step << ": too few live units for the check";
    std::printf(
        "step %lld: %d of 512 w1 elements dropped, %d dead hidden units\n",
        static_cast<long long>(step), dropped, deadUnits);
    EXPECT_GT(dropped, 160) << "ratio 0.5 of 512 elements; step " << step;
    EXPECT_LT(dropped, 352) << "ratio 0.5 of 512 elements; step " << step;
    if (!previous.empty()) {
      EXPECT_NE(keep, previous)
          << "step " << step << " drew the previous step's mask";
    }
    previous = keep;
  }
}

// Tests mpt-train on the dropout model: the loss falls over 40 steps (mean of
// the last 8 below 0.7x the mean of the first 8), the same --seed gives the
// same curve, another --seed another curve (every one of the first 5 losses
// differs: both dropouts draw new masks), and --seed 0 is the plan's default.
TEST_F(DropoutTraining, SeedSetsTheLossCurve) {
  std::string msg;
  const std::string plan = dir.file("train.mptp");
  ASSERT_TRUE(
      compileTrainingPlan(model, {"--optimizer=sgd", "--lr=0.05"}, plan, &msg))
      << msg;
  auto curve = [&](const std::vector<std::string> &extra,
                   const std::string &name) {
    std::vector<std::string> args = {"--steps", "40", "--metrics",
                                     dir.file(name + ".jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_TRUE(train(plan, args, name + ".log"));
    return losses(readTextFile(dir.file(name + ".jsonl")));
  };
  const std::vector<double> a = curve({"--seed", "1"}, "a"),
                            again = curve({"--seed", "1"}, "again"),
                            b = curve({"--seed", "2"}, "b"),
                            none = curve({}, "none"),
                            zero = curve({"--seed", "0"}, "zero");
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 40u);
  EXPECT_EQ(a, again) << "the same --seed must give the same curve";
  EXPECT_EQ(none, zero) << "train.seed starts at 0";
  for (int i = 0; i < 5; ++i)
    EXPECT_NE(a[i], b[i]) << "step " << i + 1
                          << ": --seed 2 gave --seed 1's loss";
  const double first = mean(a, 0, 8), last = mean(a, 32, 40);
  EXPECT_LT(last, 0.7 * first)
      << "the loss did not fall: " << first << " -> " << last;
  std::printf(
      "dropout MLP loss (seed 1): steps 1-8 mean %.4f, steps 33-40 mean %.4f\n",
      first, last);
}

// Tests that --resume draws the same masks: 6 steps, --save, --resume to 12
// gives the byte-identical checkpoint of an uninterrupted 12-step run, with
// --seed 7 on the first part only (the checkpoint's train.seed wins; a
// different --seed on the resume must not change it).
TEST_F(DropoutTraining, ResumedRunIsBitIdentical) {
  std::string msg;
  const std::string plan = dir.file("resume.mptp");
  ASSERT_TRUE(compileTrainingPlan(model, {"--optimizer=adamw", "--lr=1e-2"},
                                  plan, &msg))
      << msg;
  const std::string a = dir.file("a.ckpt"), b = dir.file("b.ckpt"),
                    c = dir.file("c.ckpt");
  ASSERT_TRUE(
      train(plan, {"--steps", "12", "--seed", "7", "--save", a}, "a.log"));
  ASSERT_TRUE(
      train(plan, {"--steps", "6", "--seed", "7", "--save", b}, "b1.log"));
  ASSERT_TRUE(
      train(plan, {"--steps", "12", "--seed", "99", "--resume", b, "--save", b},
            "b2.log"));
  ASSERT_TRUE(
      train(plan, {"--steps", "12", "--seed", "8", "--save", c}, "c.log"));
  const std::vector<uint8_t> straight = readBinaryFile(a),
                             resumed = readBinaryFile(b),
                             otherSeed = readBinaryFile(c);
  ASSERT_FALSE(straight.empty());
  EXPECT_TRUE(resumed == straight)
      << "resumed checkpoint differs from the uninterrupted run's";
  EXPECT_FALSE(otherSeed == straight) << "--seed 8 gave --seed 7's checkpoint";
}

// Tests that eval_step runs without dropout: its loss on a batch is the
// host's float64 evaluation of the MLP with no dropout (within f32
// rounding), the same for any train.seed, while train_step's loss on the
// same batch and weights differs (its masks drop half of w1).
TEST_F(DropoutTraining, EvalStepHasNoDropout) {
  std::string msg;
  const std::string plan = dir.file("eval.mptp");
  ASSERT_TRUE(
      compileTrainingPlan(model, {"--optimizer=sgd", "--lr=0.05"}, plan, &msg))
      << msg;
  Trainer trainer;
  ASSERT_TRUE(trainer.load(plan, &msg)) << msg;
  const Tensor xb = x.rows(0, kBatch), tb = t.rows(0, kBatch);
  ASSERT_TRUE(trainer.bind("x", xb, &msg)) << msg;
  ASSERT_TRUE(trainer.bind("t", tb, &msg)) << msg;
  std::vector<float> w1, b1, w2;
  ASSERT_TRUE(trainer.parameterF32("w1", &w1, &msg)) << msg;
  ASSERT_TRUE(trainer.parameterF32("b1", &b1, &msg)) << msg;
  ASSERT_TRUE(trainer.parameterF32("w2", &w2, &msg)) << msg;
  const std::vector<float> xv = xb.f32(), tv = tb.f32();
  double want = 0;
  for (int r = 0; r < kBatch; ++r)
    for (int o = 0; o < kOut; ++o) {
      double y = 0;
      for (int h = 0; h < kHidden; ++h) {
        double a = b1[h];
        for (int i = 0; i < kIn; ++i)
          a += double(xv[r * kIn + i]) * w1[i * kHidden + h];
        y += std::max(a, 0.0) * w2[h * kOut + o];
      }
      const double d = y - tv[r * kOut + o];
      want += d * d;
    }
  want /= kBatch * kOut;

  float got = 0, again = 0;
  ASSERT_TRUE(trainer.evaluate(&got, &msg)) << msg;
  EXPECT_NEAR(got, want, 1e-5 * want)
      << "eval_step is not the MLP without dropout";
  const int64_t seed = 1234;
  ASSERT_TRUE(trainer.model().bindParameter("train.seed", MPTRT_I64, {}, &seed,
                                            sizeof seed))
      << mptrt::lastError();
  ASSERT_TRUE(trainer.evaluate(&again, &msg)) << msg;
  EXPECT_EQ(got, again) << "eval_step depends on train.seed";
  StepOutputs o;
  ASSERT_TRUE(trainer.step(&o, &msg)) << msg;
  EXPECT_GT(std::fabs(o.loss - want), 1e-3 * want)
      << "train_step's loss equals the no-dropout loss: are its dropouts on?";
  std::printf("dropout MLP: eval_step loss %.7g, float64 without dropout %.7g, "
              "train_step %.7g\n",
              got, want, o.loss);
}

} // namespace
