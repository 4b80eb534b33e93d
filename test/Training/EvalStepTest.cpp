//===- EvalStepTest.cpp - the eval_step entry against model.eval() -------===//
//
// test/fixtures/training/bn_step (Conv-BatchNorm-ReLU-Linear, exported in
// training mode) also holds PyTorch's model.eval() cross-entropy on a
// held-out batch (x_val, labels_val) before training (eval_loss_initial)
// and after 3 SGD(lr=0.1) steps (eval_loss, eval_logits). The plan's
// eval_step normalises with the running statistics that train_step wrote
// back, so it agrees with PyTorch only if both the inference-mode batch
// norm and the running statistics are right; a batch_norm_train left in
// eval_step (batch statistics of x_val) would give another loss entirely.
//
// Tolerance: |got - want| <= 1e-5 * max(|want|, 0.1 max|want|), as in
// BatchNormStateTest.cpp. Measured: loss before 0 (bit-equal), after
// 1.1e-7; logits 1.5e-6. With eval_step left in training mode (batch
// statistics), the losses are 4.8e-2 and 3.4e-2 off and the logits 2.5.
//
// eval_step writes nothing: every parameter is byte-identical after it,
// and a run that evaluates after every step trains exactly as one that
// does not (their checkpoints are byte-identical).
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <regex>
#include <sstream>

using namespace mpt::training_test;

namespace {

const double kRtol = 1e-5;

const std::vector<std::string> kFlags = {
    "--optimizer=sgd", "--lr=0.1", "--loss-kind=cross_entropy",
    "--loss-output=logits", "--label-input=labels"};

double worstRatio(const std::vector<float> &got,
                  const std::vector<float> &want) {
  return worstScaledError(got, want);
}

std::vector<float> fixtureF32(const std::string &npy) {
  Tensor t;
  std::string msg;
  EXPECT_TRUE(loadNpy(fixturePath("bn_step/" + npy), &t, &msg)) << msg;
  return t.f32();
}

class EvalStep : public ::testing::Test {
protected:
  void SetUp() override {
    std::string msg;
    plan = dir.file("bn.mptp");
    ASSERT_TRUE(compileTrainingPlan(fixturePath("bn_step/model.onnx"), kFlags,
                                    plan, &msg))
        << msg;
    for (const char *name : {"x_train", "labels_train", "x_val", "labels_val"})
      ASSERT_TRUE(loadNpy(fixturePath(std::string("bn_step/") + name + ".npy"),
                          &data[name], &msg))
          << msg;
  }

  /// eval_step on the held-out batch; checks it leaves every parameter as
  /// it was.
  float evaluate(Trainer &t) {
    std::string msg;
    std::map<std::string, std::vector<uint8_t>> before, after;
    EXPECT_TRUE(t.snapshot(&before, &msg)) << msg;
    EXPECT_TRUE(t.bind("x", data["x_val"], &msg)) << msg;
    EXPECT_TRUE(t.bind("labels", data["labels_val"], &msg)) << msg;
    float loss = NAN;
    EXPECT_TRUE(t.evaluate(&loss, &msg)) << msg;
    EXPECT_TRUE(t.snapshot(&after, &msg)) << msg;
    EXPECT_TRUE(before == after) << "eval_step changed a parameter";
    return loss;
  }

  TempDir dir;
  std::string plan;
  std::map<std::string, Tensor> data;
};

} // namespace

// eval_step before and after 3 training steps against PyTorch's model.eval().
TEST_F(EvalStep, MatchesPyTorchEvalLoss) {
  std::string msg;
  Trainer t;
  ASSERT_TRUE(t.load(plan, &msg)) << msg;
  const float initial = evaluate(t);
  const double r0 = worstRatio({initial}, fixtureF32("eval_loss_initial.npy"));
  EXPECT_LE(r0, kRtol) << "eval loss before training: " << initial;
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(t.bind("x", data["x_train"].rows(8 * s, 8), &msg)) << msg;
    ASSERT_TRUE(t.bind("labels", data["labels_train"].rows(8 * s, 8), &msg))
        << msg;
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    ASSERT_FALSE(o.skipped);
  }
  const float trained = evaluate(t);
  const double r1 = worstRatio({trained}, fixtureF32("eval_loss.npy"));
  EXPECT_LE(r1, kRtol) << "eval loss after 3 steps: " << trained;
  std::vector<float> logits;
  ASSERT_TRUE(t.outputF32("logits", &logits, &msg)) << msg;
  const double rl = worstRatio(logits, fixtureF32("eval_logits.npy"));
  EXPECT_LE(rl, kRtol) << "eval logits after 3 steps";
  std::cout << "eval loss before " << initial << " (ratio " << r0 << "), after "
            << trained << " (ratio " << r1 << "), logits ratio " << rl << "\n";
  RecordProperty("max_rel_error", std::to_string(std::max({r0, r1, rl})));
}

// mpt-train --eval-input --eval-every 1: val_loss in every metrics line, the
// last one PyTorch's, and the same training as without evaluation.
TEST_F(EvalStep, MptTrainReportsValidationLoss) {
  auto run = [&](const std::vector<std::string> &extra,
                 const std::string &name) {
    std::vector<std::string> argv = {
        MPT_TRAIN_PATH,
        plan,
        "--input",
        "x=" + fixturePath("bn_step/x_train.npy"),
        "--input",
        "labels=" + fixturePath("bn_step/labels_train.npy"),
        "--steps",
        "3",
        "--quiet",
        "--save",
        dir.file(name + ".ckpt"),
        "--metrics",
        dir.file(name + ".jsonl")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const int rc = runProcess(argv, dir.file(name + ".log"));
    EXPECT_EQ(rc, 0) << readTextFile(dir.file(name + ".log"));
    return rc == 0;
  };
  ASSERT_TRUE(run({}, "plain"));
  ASSERT_TRUE(run(
      {"--eval-input", "x=" + fixturePath("bn_step/x_val.npy"), "--eval-input",
       "labels=" + fixturePath("bn_step/labels_val.npy"), "--eval-every", "1"},
      "eval"));
  EXPECT_TRUE(readBinaryFile(dir.file("plain.ckpt")) ==
              readBinaryFile(dir.file("eval.ckpt")))
      << "evaluating changed the training";

  std::vector<double> val;
  std::stringstream lines(readTextFile(dir.file("eval.jsonl")));
  static const std::regex re(R"("val_loss"\s*:\s*([-+0-9.eE]+))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, re)) << "no val_loss in: " << line;
    val.push_back(std::stod(m[1]));
  }
  ASSERT_EQ(val.size(), 3u);
  EXPECT_NE(val[0], val[2])
      << "the validation loss does not follow the training";
  EXPECT_LE(worstRatio({float(val[2])}, fixtureF32("eval_loss.npy")), kRtol)
      << val[2];
  EXPECT_EQ(readTextFile(dir.file("plain.jsonl")).find("val_loss"),
            std::string::npos);
  const std::string log = readTextFile(dir.file("eval.log"));
  EXPECT_NE(log.find("val loss"), std::string::npos) << log;
}

// Bad uses of the evaluation flags are usage or data errors naming the
// problem, never a crash.
TEST_F(EvalStep, MptTrainRejectsBadEvaluationFlags) {
  struct Case {
    std::vector<std::string> args;
    int rc;
    std::string message;
  };
  const std::string x = "x=" + fixturePath("bn_step/x_val.npy");
  const std::string labels = "labels=" + fixturePath("bn_step/labels_val.npy");
  const Case cases[] = {
      {{"--eval-every", "2"}, 2, "--eval-every needs --eval-input"},
      {{"--eval-input", x}, 1, "needs --eval-input labels=FILE"},
      {{"--eval-input", x, "--eval-input", labels, "--eval-input", "y=" + x},
       1,
       "has no input named 'y'"},
      {{"--eval-input", x, "--eval-input", labels, "--eval-entry", "nope"},
       1,
       "has no entry point 'nope' to evaluate with"},
      {{"--eval-input", "x=" + fixturePath("bn_step/labels_val.npy"),
        "--eval-input", labels},
       1,
       "labels_val.npy"},
  };
  int i = 0;
  for (const Case &c : cases) {
    std::vector<std::string> argv = {
        MPT_TRAIN_PATH, plan,
        "--input",      "x=" + fixturePath("bn_step/x_train.npy"),
        "--input",      "labels=" + fixturePath("bn_step/labels_train.npy"),
        "--steps",      "1",
        "--quiet"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const std::string log = dir.file("bad" + std::to_string(i++) + ".log");
    EXPECT_EQ(runProcess(argv, log), c.rc) << readTextFile(log);
    EXPECT_NE(readTextFile(log).find(c.message), std::string::npos)
        << readTextFile(log);
  }
}
