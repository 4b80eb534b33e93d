//===- ResumeTest.cpp - mpt-train --resume on a real training plan -------===//
//
// charlm compiled for FP32 AdamW (the fixture's recipe) and trained by the
// real mpt-train binary:
//
//   A: 20 steps straight, --save a.ckpt
//   B: 10 steps, --save b.ckpt; then --resume b.ckpt --steps 20 --save b.ckpt
//
// docs/mpt-train.md promises that the resumed run is bit for bit the
// uninterrupted one: the final checkpoints must be byte-identical (master
// weights, AdamW state, counters) and the metrics of steps 11-20 equal in
// every key but time_ms. A third run, B resumed with
// MPTRT_NUM_THREADS=1, must match too (the CPU backend is deterministic for
// any thread count). The plan has a dynamic loss scale, so the scaler's
// state goes through the checkpoint as well.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <sstream>

using namespace mpt::training_test;

namespace {

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty())
      out.push_back(line);
  return out;
}

/// A metrics line without its "time_ms" entry.
std::string withoutTime(const std::string &line) {
  static const std::regex time(R"(,?\s*"time_ms"\s*:\s*[-+0-9.eE]+)");
  return std::regex_replace(line, time, "");
}

int stepOf(const std::string &line) {
  std::smatch m;
  static const std::regex step(R"("step"\s*:\s*([0-9]+))");
  return std::regex_search(line, m, step) ? std::stoi(m[1]) : -1;
}

/// mpt-train's arguments for a charlm plan on the fixture's training batches.
std::vector<std::string> charlmTrainArgs(const std::string &plan) {
  return {MPT_TRAIN_PATH, plan,
          "--input",      "idx=" + fixturePath("charlm/train_x.npy"),
          "--input",      "targets=" + fixturePath("charlm/train_y.npy"),
          "--quiet"};
}

double numberOf(const std::string &line, const std::string &key) {
  std::smatch m;
  const std::regex re("\"" + key + R"("\s*:\s*([-+0-9.eE]+))");
  return std::regex_search(line, m, re) ? std::stod(m[1]) : -1.0;
}

/// A charlm plan compiled with the fixture's AdamW recipe and `flags` into
/// a fresh directory, and mpt-train runs of it on the training batches.
struct CharLMRuns {
  TempDir dir;
  std::string plan, error;
  std::vector<std::string> base;

  bool compile(const std::string &name, std::vector<std::string> flags) {
    plan = dir.file(name);
    flags.insert(flags.begin(),
                 {"--optimizer=adamw", "--lr=3e-3", "--weight-decay=0"});
    base = charlmTrainArgs(plan);
    return compileTrainingPlan(fixturePath("charlm/model.onnx"), flags, plan,
                               &error);
  }
  bool run(const std::vector<std::string> &extra, const std::string &log) {
    return runTrainer(dir, base, extra, log);
  }
};

} // namespace

TEST(Resume, CharLMResumedRunIsBitIdentical) {
  CharLMRuns runs;
  ASSERT_TRUE(runs.compile("charlm.mptp",
                           {"--loss-scale=dynamic", "--growth-interval=4"}))
      << runs.error;
  TempDir &dir = runs.dir;
  const std::string a = dir.file("a.ckpt"), b = dir.file("b.ckpt"),
                    c = dir.file("c.ckpt");
  ASSERT_TRUE(
      runs.run({"--steps", "20", "--save", a, "--metrics", dir.file("a.jsonl")},
               "a.log"));
  ASSERT_TRUE(
      runs.run({"--steps", "10", "--save", b, "--metrics", dir.file("b.jsonl")},
               "b1.log"));
  const std::vector<uint8_t> half = readBinaryFile(b);
  ASSERT_TRUE(runs.run({"--steps", "20", "--resume", b, "--save", b,
                        "--metrics", dir.file("b.jsonl")},
                       "b2.log"));

  // The same resume on one thread, from a copy of the 10-step checkpoint.
  {
    std::string copy = dir.file("c10.ckpt");
    FILE *f = std::fopen(copy.c_str(), "wb");
    ASSERT_TRUE(f);
    ASSERT_EQ(std::fwrite(half.data(), 1, half.size(), f), half.size());
    std::fclose(f);
    ASSERT_EQ(setenv("MPTRT_NUM_THREADS", "1", 1), 0);
    const bool ok = runs.run({"--steps", "20", "--resume", copy, "--save", c,
                              "--metrics", dir.file("c.jsonl")},
                             "c.log");
    unsetenv("MPTRT_NUM_THREADS");
    ASSERT_TRUE(ok);
  }

  const std::vector<uint8_t> straight = readBinaryFile(a),
                             resumed = readBinaryFile(b),
                             oneThread = readBinaryFile(c);
  ASSERT_GT(straight.size(), 400000u)
      << "109,824 weights plus two AdamW moments in f32";
  EXPECT_NE(half, straight)
      << "the 10-step checkpoint should differ from the 20-step one";
  EXPECT_TRUE(resumed == straight)
      << "resumed checkpoint differs from the uninterrupted run's";
  EXPECT_TRUE(oneThread == straight)
      << "resumed checkpoint (1 thread) differs from the uninterrupted run's";

  const std::vector<std::string> ma = lines(readTextFile(dir.file("a.jsonl"))),
                                 mb = lines(readTextFile(dir.file("b.jsonl"))),
                                 mc = lines(readTextFile(dir.file("c.jsonl")));
  ASSERT_EQ(ma.size(), 20u);
  ASSERT_EQ(mb.size(), 20u) << "10 lines, then 10 appended by --resume";
  ASSERT_EQ(mc.size(), 10u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(stepOf(ma[i]), i + 1);
    EXPECT_EQ(withoutTime(mb[i]), withoutTime(ma[i])) << "step " << i + 1;
    if (i >= 10) {
      EXPECT_EQ(withoutTime(mc[i - 10]), withoutTime(ma[i]))
          << "step " << i + 1;
    }
  }
  // The scaler grew after every 4th step (step 20 used 65536 * 2^4), and at
  // the checkpoint its tracker was mid-interval (2), so its state mattered.
  EXPECT_EQ(numberOf(ma[0], "loss_scale"), 65536.0);
  EXPECT_EQ(numberOf(ma[19], "loss_scale"), 65536.0 * 16);
  std::cout << "step 10: " << withoutTime(ma[9])
            << "\nstep 20: " << withoutTime(ma[19]) << "\ncheckpoint "
            << straight.size() << " bytes\n";
}

// Tests that the FP8 scale state (each tensor's scale and amax history) is
// train_step state that checkpoints carry: charlm in fp8 with delayed
// scaling, 6 steps straight against 3 steps then --resume to 6, must give
// byte-identical checkpoints. Without the state in the checkpoint, the
// resumed run would start again from scales of 1 and empty histories, and
// its steps 4-6 would quantize differently.
TEST(Resume, Fp8ScaleStateIsCheckpointed) {
  CharLMRuns runs;
  ASSERT_TRUE(runs.compile("charlm_fp8.mptp",
                           {"--precision=fp8", "--fp8-scaling=delayed"}))
      << runs.error;
  TempDir &dir = runs.dir;
  const std::string a = dir.file("a.ckpt"), b = dir.file("b.ckpt");
  ASSERT_TRUE(
      runs.run({"--steps", "6", "--save", a, "--metrics", dir.file("a.jsonl")},
               "a.log"));
  ASSERT_TRUE(runs.run({"--steps", "3", "--save", b}, "b1.log"));
  const std::vector<uint8_t> half = readBinaryFile(b);
  ASSERT_TRUE(runs.run({"--steps", "6", "--resume", b, "--save", b}, "b2.log"));
  const std::vector<uint8_t> straight = readBinaryFile(a),
                             resumed = readBinaryFile(b);
  const std::string text(straight.begin(), straight.end());
  EXPECT_NE(text.find("/blocks.0/attn/qkv/MatMul.grad.fp8_scale"),
            std::string::npos)
      << "an output gradient's scale is not in the checkpoint";
  EXPECT_NE(text.find("/lm_head/Transpose.amax_history"), std::string::npos)
      << "the (transposed) LM head weight's amax history is not in the "
         "checkpoint";
  EXPECT_NE(half, straight);
  EXPECT_TRUE(resumed == straight)
      << "resumed FP8 checkpoint differs from the uninterrupted run's";
  // The metrics report the scales' range: after step 1 the scales have left
  // their initial 1 and differ per tensor (measured: about 100 for the E4M3
  // activations, up to 2e9 for small E5M2 gradients).
  const std::vector<std::string> ma = lines(readTextFile(dir.file("a.jsonl")));
  ASSERT_EQ(ma.size(), 6u);
  const double lo = numberOf(ma[0], "fp8_scale_min"),
               hi = numberOf(ma[0], "fp8_scale_max");
  EXPECT_GT(lo, 0.0) << ma[0];
  EXPECT_NE(hi, 1.0) << ma[0];
  EXPECT_GT(hi, lo) << ma[0];
  std::cout << "fp8 scales after step 1: [" << lo << ", " << hi << "]\n";
}

// Tests that bf16 masters with stochastic rounding resume exactly: the
// rounding draws from (train.seed, optimizer.step, stream, element), all
// in the checkpoint or the plan, so 3 + 3 steps give the bytes of 6 (and
// another --seed gives other bytes).
TEST(Resume, StochasticallyRoundedBf16MastersResumeExactly) {
  CharLMRuns runs;
  ASSERT_TRUE(runs.compile("charlm_bf16sr.mptp",
                           {"--precision=bf16", "--master-weights=bf16-sr"}))
      << runs.error;
  TempDir &dir = runs.dir;
  const std::string a = dir.file("a.ckpt"), b = dir.file("b.ckpt"),
                    c = dir.file("c.ckpt");
  ASSERT_TRUE(runs.run({"--steps", "6", "--save", a}, "a.log"));
  ASSERT_TRUE(runs.run({"--steps", "3", "--save", b}, "b1.log"));
  ASSERT_TRUE(runs.run({"--steps", "6", "--resume", b, "--save", b}, "b2.log"));
  ASSERT_TRUE(runs.run({"--steps", "6", "--seed", "1", "--save", c}, "c.log"));
  const std::vector<uint8_t> straight = readBinaryFile(a),
                             resumed = readBinaryFile(b);
  EXPECT_TRUE(resumed == straight)
      << "resumed bf16-sr checkpoint differs from the uninterrupted run's";
  EXPECT_NE(readBinaryFile(c), straight) << "another seed rounded the same way";
}
