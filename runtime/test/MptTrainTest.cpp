//===- MptTrainTest.cpp - the mpt-train tool end to end ------------------===//
//
// Builds toy training plans from existing kernel kinds (a parameter updated
// in place from the batch, a step counter, the train_step outputs), runs the
// real mpt-train binary and checks the batches it feeds, the metrics file,
// the progress and summary lines, checkpoints, --resume, --synthetic and the
// errors. The checkpoint reader and the synthetic generator are also tested
// directly.
//
//===----------------------------------------------------------------------===//
#include "ParamsFiles.h"
#include "PlanBuilder.h"
#include "Progress.h"
#include "TensorFile.h"
#include "mptrt/train.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

using namespace mptrt;
using namespace mptrt::test;
namespace fs = std::filesystem;
using plan::Attribute;
using DType = plan::DType;

namespace {

const float kLr = 0.125f;
const float kW0[4] = {1, 2, 3, 4};
const float kScale0 = 1024;

/// The toy train_step. Inputs y (i64 [2, 3], first: it drives tokens/s) and
/// x (f32 [2, 4]); parameters w (f32 [4]), train.step (i64 []) and
/// loss_scale.scale (f32 []):
///   loss       = sum(x * w) + sum(y)
///   grad_norm  = |colsum(x)|
///   skipped    = loss > 1000
///   loss_scale = scale, then scale *= 2
///   lr         = 0.125
///   w         -= lr * colsum(x);  train.step += 1
/// Two kernels carry an origin: sum(x * w) is the forward node "sum_xw",
/// colsum(x) the backward node "grad_w"; the others have none.
/// `outputs` leaves out the outputs not named in it (empty: all five);
/// `wSize` changes w's shape (for checkpoint mismatches).
std::vector<uint8_t> toyPlan(const std::string &outputs = "", int64_t wSize = 4,
                             const std::string &entry = "train_step") {
  auto want = [&](const char *name) {
    return outputs.empty() ||
           (" " + outputs + " ").find(std::string(" ") + name + " ") != std::string::npos;
  };
  PlanBuilder b;
  uint32_t y = b.input("y", DType::I64, {2, 3});
  uint32_t x = b.input("x", DType::F32, {2, wSize});
  std::vector<float> w0(kW0, kW0 + 4);
  w0.resize(wSize, 0.0f);
  uint32_t w = b.param("w", DType::F32, {wSize}, w0.data(), w0.size() * 4);
  const int64_t zero = 0, one = 1;
  uint32_t count = b.param("train.step", DType::I64, {}, &zero, 8);
  uint32_t scale = b.param("loss_scale.scale", DType::F32, {}, &kScale0, 4);
  uint32_t lr = b.constant(DType::F32, {}, &kLr, 4);
  uint32_t oneI = b.constant(DType::I64, {}, &one, 8);
  const float two = 2, limit = 1000;
  uint32_t twoF = b.constant(DType::F32, {}, &two, 4);
  uint32_t limitF = b.constant(DType::F32, {}, &limit, 4);
  auto all = [] {
    return std::vector<Attribute>{Attribute::makeInts("axes", {}),
                                  Attribute::makeInt("keepdims", 0)};
  };

  uint32_t xw = b.temp(DType::F32, {2, wSize});
  b.kernel("mul", {x, w}, {xw});
  uint32_t sxw = b.temp(DType::F32, {});
  uint32_t sumXw = b.kernel("reduce_sum", {xw}, {sxw}, all());
  b.plan.kernels[sumXw].origin = "sum_xw";
  b.plan.kernels[sumXw].phase = plan::Phase::Forward;
  uint32_t sy = b.temp(DType::I64, {});
  b.kernel("reduce_sum", {y}, {sy}, all());
  uint32_t loss = want("loss") ? b.output("loss", DType::F32, {}, plan::OutputRole::Loss)
                               : b.temp(DType::F32, {});
  b.kernel("add", {sxw, sy}, {loss});
  uint32_t g = b.temp(DType::F32, {wSize});
  uint32_t gradW = b.kernel("reduce_sum", {x}, {g},
                            {Attribute::makeInts("axes", {0}), Attribute::makeInt("keepdims", 0)});
  b.plan.kernels[gradW].origin = "grad_w";
  b.plan.kernels[gradW].phase = plan::Phase::Backward;
  if (want("grad_norm"))
    b.kernel("reduce_l2", {g}, {b.output("grad_norm", DType::F32, {}, plan::OutputRole::GradNorm)},
             all());
  if (want("skipped"))
    b.kernel("greater", {loss, limitF},
             {b.output("skipped", DType::I1, {}, plan::OutputRole::Skipped)});
  if (want("loss_scale"))
    b.kernel("copy", {scale},
             {b.output("loss_scale", DType::F32, {}, plan::OutputRole::LossScale)});
  b.kernel("mul", {scale, twoF}, {scale});
  if (want("lr"))
    b.kernel("copy", {lr}, {b.output("lr", DType::F32, {}, plan::OutputRole::Lr)});
  uint32_t delta = b.temp(DType::F32, {wSize});
  b.kernel("mul", {g, lr}, {delta});
  b.kernel("sub", {w, delta}, {w});
  b.kernel("add", {count, oneI}, {count});
  b.entry(entry);
  return b.bytes();
}

/// A train_step that gathers from a table with the batch's index: an index
/// out of range fails the run at that step.
std::vector<uint8_t> gatherPlan() {
  PlanBuilder b;
  uint32_t idx = b.input("idx", DType::I64, {1});
  const int64_t zero = 0, one = 1;
  uint32_t count = b.param("train.step", DType::I64, {}, &zero, 8);
  const float table[3] = {1, 2, 3};
  uint32_t t = b.constant(DType::F32, {3}, table, 12);
  uint32_t oneI = b.constant(DType::I64, {}, &one, 8);
  uint32_t got = b.temp(DType::F32, {1});
  b.kernel("gather", {t, idx}, {got}, {Attribute::makeInt("axis", 0)});
  b.kernel("reduce_sum", {got}, {b.output("loss", DType::F32, {}, plan::OutputRole::Loss)},
           {Attribute::makeInts("axes", {}), Attribute::makeInt("keepdims", 0)});
  b.kernel("add", {count, oneI}, {count});
  b.entry("train_step");
  return b.bytes();
}

/// The toy's data: x [rows, 4] and y [rows, 3] of small integers.
std::vector<float> toyX(int rows) {
  std::vector<float> x(rows * 4);
  for (int i = 0; i < rows * 4; ++i)
    x[i] = float((i * 5) % 7 - 3);
  return x;
}
std::vector<int64_t> toyY(int rows) {
  std::vector<int64_t> y(rows * 3);
  for (int i = 0; i < rows * 3; ++i)
    y[i] = i % 4;
  return y;
}

/// What the toy plan reports per step, computed by hand (exact: every
/// value is a small multiple of 1/8).
struct Expected {
  std::vector<double> loss, gradNorm, scale;
  std::vector<float> w;
};
Expected expectToy(const std::vector<float> &x, const std::vector<int64_t> &y, int batches,
                   int steps) {
  Expected e;
  std::vector<double> w(kW0, kW0 + 4);
  double scale = kScale0;
  for (int s = 0; s < steps; ++s) {
    const int b = s % batches;
    double loss = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 4; ++c) {
        const double v = x[(b * 2 + r) * 4 + c];
        loss += v * w[c];
        g[c] += v;
      }
      for (int c = 0; c < 3; ++c)
        loss += double(y[(b * 2 + r) * 3 + c]);
    }
    double norm = 0;
    for (int c = 0; c < 4; ++c) {
      norm += g[c] * g[c];
      w[c] -= kLr * g[c];
    }
    e.loss.push_back(loss);
    e.gradNorm.push_back(float(std::sqrt(norm)));
    e.scale.push_back(scale);
    scale *= 2;
  }
  e.w.assign(w.begin(), w.end());
  return e;
}

/// Splits text into lines.
std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);)
    out.push_back(line);
  return out;
}

/// A metrics line without its "time_ms" (which varies from run to run).
std::string withoutTime(const std::string &line) {
  const size_t at = line.find(", \"time_ms\": ");
  return at == std::string::npos ? line : line.substr(0, at) + "}";
}

/// The number after `"key": ` in a metrics line (NaN if absent).
double field(const std::string &line, const std::string &key) {
  const std::string k = "\"" + key + "\": ";
  const size_t at = line.find(k);
  return at == std::string::npos ? std::nan("")
                                 : std::strtod(line.c_str() + at + k.size(), nullptr);
}

class MptTrainTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) /
          ("mpt_train_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
           std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return (dir / name).string(); }

  void writeFile(const std::string &name, const std::vector<uint8_t> &bytes) const {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  std::string readText(const std::string &name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<uint8_t> readBytes(const std::string &name) const {
    const std::string s = readText(name);
    return std::vector<uint8_t>(s.begin(), s.end());
  }

  /// Writes toy.mptp, x.npy (xRows rows) and y.npy (yRows rows).
  void writeToy(int xRows = 5, int yRows = 4) {
    writeFile("toy.mptp", toyPlan());
    std::vector<float> x = toyX(xRows);
    std::vector<int64_t> y = toyY(yRows);
    writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {xRows, 4}, x.data(), x.size() * 4));
    writeFile("y.npy", tools::encodeNpy(MPTRT_I64, {yRows, 3}, y.data(), y.size() * 8));
  }
  std::string toyArgs() const {
    return path("toy.mptp") + " --input x=" + path("x.npy") + " --input y=" + path("y.npy");
  }

  /// Runs mpt-train with `args`; returns its exit status. stdout is in
  /// `out`, stderr in `err`, both in `log`.
  int run(const std::string &args) {
    const std::string cmd = std::string(MPT_TRAIN_PATH) + " " + args + " > " + path("out.txt") +
                            " 2> " + path("err.txt");
    status = std::system(cmd.c_str());
    out = readText("out.txt");
    err = readText("err.txt");
    log = out + err;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  /// Starts mpt-train with `args` in the background, `env` ("NAME=VALUE",
  /// or empty) added to its environment, stdout and stderr to out.txt and
  /// err.txt; returns its process id.
  pid_t start(const std::string &args, const std::string &env = "") {
    const std::string cmd = "exec env " + env + " " + MPT_TRAIN_PATH + " " + args + " > " +
                            path("out.txt") + " 2> " + path("err.txt");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
      ::_exit(127);
    }
    return pid;
  }

  /// Waits until `done()` holds, for at most a minute.
  template <typename Done> bool waitUntil(Done done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!done()) {
      if (std::chrono::steady_clock::now() > limit)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  /// Waits for `pid` to end (killing it after a minute); returns its wait
  /// status and reads out.txt and err.txt as run() does.
  int finish(pid_t pid) {
    int st = 0;
    const bool ended = waitUntil([&] { return ::waitpid(pid, &st, WNOHANG) == pid; });
    if (!ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      ADD_FAILURE() << "mpt-train did not end within a minute";
    }
    out = readText("out.txt");
    err = readText("err.txt");
    log = out + err;
    return st;
  }

  /// Every file in the test directory whose name contains ".tmp.".
  std::vector<std::string> tempFiles() const {
    std::vector<std::string> found;
    for (const auto &e : fs::recursive_directory_iterator(dir))
      if (e.path().filename().string().find(".tmp.") != std::string::npos)
        found.push_back(e.path().string());
    return found;
  }

  fs::path dir;
  std::string out, err, log;
  int status = 0; // the wait status of run()'s last command
};

// Tests the batches: x [5, 4] and y [4, 3] give 2 batches of 2 rows (x's
// last row unused, with a note); 5 steps use batches 0, 1, 0, 1, 0. Each
// metrics line matches the hand computation.
TEST_F(MptTrainTest, BatchesInOrderAndWrapAround) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 5 --metrics " + path("m.jsonl") + " --save " + path("ck")), 0)
      << log;
  EXPECT_NE(err.find("note: input 'x': the last 1 rows of " + path("x.npy") +
                     " are in no batch (the batch size is 2)"),
            std::string::npos)
      << err;
  const Expected e = expectToy(toyX(5), toyY(4), 2, 5);
  const std::vector<std::string> m = lines(readText("m.jsonl"));
  ASSERT_EQ(m.size(), 5u);
  for (int s = 0; s < 5; ++s) {
    SCOPED_TRACE(m[s]);
    EXPECT_EQ(field(m[s], "step"), s + 1);
    EXPECT_EQ(field(m[s], "loss"), e.loss[s]);
    EXPECT_EQ(field(m[s], "loss_scale"), e.scale[s]);
    EXPECT_EQ(field(m[s], "lr"), 0.125);
    EXPECT_NEAR(field(m[s], "grad_norm"), e.gradNorm[s], 1e-6 * e.gradNorm[s]);
    EXPECT_GE(field(m[s], "time_ms"), 0.0);
    EXPECT_NE(m[s].find("\"skipped\": false"), std::string::npos);
  }
  // The exact format of one line.
  char expected[200];
  std::snprintf(expected, sizeof(expected),
                "{\"step\": 1, \"loss\": %.9g, \"loss_scale\": 1024, \"skipped\": false, "
                "\"grad_norm\": %.9g, \"lr\": 0.125}",
                e.loss[0], e.gradNorm[0]);
  EXPECT_EQ(withoutTime(m[0]), expected);
  // The summary line.
  char summary[200];
  std::snprintf(summary, sizeof(summary),
                "mpt-train: ran 5 steps (1-5 of 5), 0 skipped, first loss %.9g, last loss %.9g, "
                "mean step time ",
                e.loss[0], e.loss[4]);
  EXPECT_EQ(out.rfind(summary, 0), 0u) << out;

  // The final parameters, through the checkpoint.
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 5u);
  ASSERT_EQ(ck.tensors.size(), 3u);
  EXPECT_EQ(ck.tensors[0].name, "w");
  EXPECT_EQ(ck.tensors[0].info.dtype, MPTRT_F32);
  EXPECT_EQ(ck.tensors[0].info.shape, (std::vector<int64_t>{4}));
  ASSERT_EQ(ck.tensors[0].bytes.size(), 16u);
  EXPECT_EQ(std::memcmp(ck.tensors[0].bytes.data(), e.w.data(), 16), 0);
  EXPECT_EQ(ck.tensors[1].name, "train.step");
  int64_t count = 0;
  std::memcpy(&count, ck.tensors[1].bytes.data(), 8);
  EXPECT_EQ(count, 5);
  EXPECT_EQ(ck.tensors[2].name, "loss_scale.scale");
  float scale = 0;
  std::memcpy(&scale, ck.tensors[2].bytes.data(), 4);
  EXPECT_EQ(scale, 1024.0f * 32);
}

// Tests arrays whose shape is the plan's exactly: one batch, which every
// step uses.
TEST_F(MptTrainTest, ExactShapeIsOneBatch) {
  writeToy(2, 2);
  ASSERT_EQ(run(toyArgs() + " --steps 3 --quiet --metrics " + path("m.jsonl")), 0) << log;
  EXPECT_EQ(err.find("note: input"), std::string::npos) << err;
  const Expected e = expectToy(toyX(2), toyY(2), 1, 3);
  const std::vector<std::string> m = lines(readText("m.jsonl"));
  ASSERT_EQ(m.size(), 3u);
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(field(m[s], "loss"), e.loss[s]) << m[s];
}

// Tests non-finite outputs: the strings "inf" / "nan" in the metrics, and
// skipped true (loss > 1000) counted in the progress and summary lines.
TEST_F(MptTrainTest, NonFiniteValuesAndSkippedSteps) {
  writeToy();
  // Batch 0: 3e38 in column 0 of both rows: the loss (3e38 + 3e38) is inf.
  // Batch 1: inf and -inf in column 0: the loss and the gradient are nan.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> both(16, 0.0f);
  both[0] = both[4] = 3e38f;
  both[8] = inf;
  both[12] = -inf;
  writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {4, 4}, both.data(), both.size() * 4));
  ASSERT_EQ(run(toyArgs() + " --steps 2 --log-every 1 --metrics " + path("m.jsonl")), 0) << log;
  const std::vector<std::string> m = lines(readText("m.jsonl"));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(m[0].find("\"loss\": \"inf\""), std::string::npos) << m[0];
  EXPECT_NE(m[0].find("\"skipped\": true"), std::string::npos) << m[0];
  EXPECT_NE(m[1].find("\"loss\": \"nan\""), std::string::npos) << m[1];
  EXPECT_NE(m[1].find("\"grad_norm\": \"nan\""), std::string::npos) << m[1];
  EXPECT_NE(m[1].find("\"skipped\": false"), std::string::npos) << m[1]; // nan > 1000 is false
  // --check-finite=on-skip (the default) reran the skipped step 1: 3e38 *
  // w is finite, its sum is not. Step 2 was not skipped: no check.
  EXPECT_NE(m[0].find("\"first_nonfinite\": {\"node\": \"sum_xw\", \"op\": \"reduce_sum\", "
                      "\"phase\": \"forward\", \"output\": 0, \"kernel\": 1}"),
            std::string::npos)
      << m[0];
  EXPECT_NE(m[0].find("\"check_ms\": "), std::string::npos) << m[0];
  EXPECT_EQ(m[1].find("first_nonfinite"), std::string::npos) << m[1];
  EXPECT_NE(err.find("step 1/2  loss inf  scale 1024  skipped 1  first non-finite sum_xw "
                     "(reduce_sum, forward, output 0) at step 1  "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("step 2/2  loss nan  scale 2048  skipped 1  "), std::string::npos) << err;
  EXPECT_NE(out.find("ran 2 steps (1-2 of 2), 1 skipped, first loss inf, last loss nan"),
            std::string::npos)
      << out;
  EXPECT_EQ(train::jsonNumber(-std::numeric_limits<double>::infinity()), "\"-inf\"");
  EXPECT_EQ(train::jsonNumber(0.1f), "0.100000001");
}

// Tests --check-finite: on-skip reruns a skipped step from the state it
// started in and leaves the state as the step left it (the loss scale,
// doubled every step, and w match a run with the check off); every-kernel
// reports every step with a non-finite value, not just skipped ones; off
// reports nothing; a bad mode is a usage error.
TEST_F(MptTrainTest, CheckFiniteModes) {
  writeToy();
  // Batch 0: 3e38 in column 0: the loss is inf (skipped). Batch 1: inf in
  // x: x * w (kernel 0, no origin) is the first non-finite result.
  std::vector<float> x(16, 1.0f);
  x[0] = x[4] = 3e38f;
  x[8] = std::numeric_limits<float>::infinity();
  writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {4, 4}, x.data(), x.size() * 4));
  auto metricsOf = [&](const std::string &mode) {
    EXPECT_EQ(run(toyArgs() + " --steps 2 --log-every 1 --metrics " + path("m.jsonl") + " --save " +
                  path("c.ckpt") + (mode.empty() ? "" : " --check-finite=" + mode)),
              0)
        << log;
    return lines(readText("m.jsonl"));
  };
  auto withoutTimes = [](std::string line) { return line.substr(0, line.find(", \"time_ms\"")); };
  const std::vector<std::string> off = metricsOf("off");
  const std::string offCheckpoint = readText("c.ckpt");
  const std::vector<std::string> onSkip = metricsOf("");
  const std::string onSkipCheckpoint = readText("c.ckpt");
  const std::vector<std::string> every = metricsOf("every-kernel");
  ASSERT_EQ(off.size(), 2u);
  ASSERT_EQ(onSkip.size(), 2u);
  ASSERT_EQ(every.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(off[i].find("first_nonfinite"), std::string::npos) << off[i];
    EXPECT_EQ(withoutTimes(off[i]), withoutTimes(onSkip[i]));
    EXPECT_EQ(withoutTimes(off[i]), withoutTimes(every[i]).substr(0, withoutTimes(off[i]).size()));
  }
  EXPECT_EQ(offCheckpoint, onSkipCheckpoint);
  EXPECT_NE(onSkip[0].find("\"node\": \"sum_xw\""), std::string::npos) << onSkip[0];
  EXPECT_EQ(onSkip[1].find("first_nonfinite"), std::string::npos) << onSkip[1];
  EXPECT_NE(every[0].find("\"node\": \"sum_xw\""), std::string::npos) << every[0];
  EXPECT_NE(every[1].find("\"first_nonfinite\": {\"node\": \"\", \"op\": \"mul\", \"phase\": "
                          "\"unknown\", \"output\": 0, \"kernel\": 0}"),
            std::string::npos)
      << every[1];
  EXPECT_EQ(run(toyArgs() + " --steps 1 --check-finite=sometimes"), 2);
  EXPECT_NE(err.find("--check-finite takes off, on-skip or every-kernel, not 'sometimes'"),
            std::string::npos)
      << err;
}

// Tests the progress line: one per --log-every steps (and the last) when
// stderr is not a terminal, with samples/s, tokens/s (the first input is
// an i64 [2, 3]: 6 tokens a step) and the ETA; --quiet silences it.
TEST_F(MptTrainTest, ProgressLine) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 5 --log-every 2"), 0) << log;
  std::vector<std::string> progress;
  for (const std::string &l : lines(err))
    if (l.rfind("step ", 0) == 0)
      progress.push_back(l);
  ASSERT_EQ(progress.size(), 3u) << err;
  EXPECT_EQ(progress[0].rfind("step 2/5  loss ", 0), 0u) << progress[0];
  EXPECT_EQ(progress[1].rfind("step 4/5  loss ", 0), 0u) << progress[1];
  EXPECT_EQ(progress[2].rfind("step 5/5  loss ", 0), 0u) << progress[2];
  for (const std::string &l : progress) {
    EXPECT_NE(l.find("  scale "), std::string::npos) << l;
    EXPECT_NE(l.find("  skipped 0  "), std::string::npos) << l;
    EXPECT_NE(l.find(" samples/s  "), std::string::npos) << l;
    EXPECT_NE(l.find(" tokens/s  ETA "), std::string::npos) << l;
  }
  EXPECT_NE(progress[2].find("ETA 0:00"), std::string::npos) << progress[2];
  EXPECT_EQ(err.find('\r'), std::string::npos);

  // The default (about once a second) still prints the last step.
  ASSERT_EQ(run(toyArgs() + " --steps 3"), 0) << log;
  EXPECT_NE(err.find("step 3/3  loss "), std::string::npos) << err;

  ASSERT_EQ(run(toyArgs() + " --steps 5 --quiet"), 0) << log;
  EXPECT_EQ(err.find("step "), std::string::npos) << err;
  EXPECT_NE(out.find("mpt-train: ran 5 steps"), std::string::npos) << out;

  // The line itself, with a float first input: no tokens/s.
  tools::Progress::Options po;
  po.totalSteps = 10;
  po.firstStep = 2;
  po.samplesPerStep = 8;
  tools::Progress p(po);
  train::StepMetrics m;
  m.step = 6;
  m.loss = 2.5;
  m.lossScale = 65536;
  EXPECT_EQ(p.line(m, 1, 2.0), "step 6/10  loss 2.5  scale 65536  skipped 1  16.0 samples/s  "
                               "ETA 0:02");
  // A validation loss shows from the step that computed it on, and is in
  // that step's metrics line only.
  train::StepMetrics v = m;
  v.valLoss = 2.75;
  v.evalMs = 1.5;
  p.update(v, 1);
  EXPECT_EQ(p.line(m, 1, 2.0), "step 6/10  loss 2.5  val_loss 2.75  scale 65536  skipped 1  "
                               "16.0 samples/s  ETA 0:02");
  EXPECT_EQ(train::metricsJson(v),
            "{\"step\": 6, \"loss\": 2.5, \"loss_scale\": 65536, \"val_loss\": 2.75, "
            "\"time_ms\": 0.0000, \"eval_ms\": 1.5000}");
  EXPECT_EQ(train::metricsJson(m).find("val_loss"), std::string::npos);
  // The FP8 scale range, for a plan with FP8 scale state only.
  train::StepMetrics f = m;
  f.fp8ScaleMin = 0.5;
  f.fp8ScaleMax = 448;
  EXPECT_EQ(train::metricsJson(f),
            "{\"step\": 6, \"loss\": 2.5, \"loss_scale\": 65536, \"fp8_scale_min\": 0.5, "
            "\"fp8_scale_max\": 448, \"time_ms\": 0.0000}");
  EXPECT_EQ(train::metricsJson(m).find("fp8_scale"), std::string::npos);
  EXPECT_EQ(tools::formatDuration(3725), "1:02:05");
}

// Tests a plan without some optional outputs: their keys are left out, with
// one note each on stderr.
TEST_F(MptTrainTest, MissingOptionalOutputs) {
  writeToy();
  writeFile("toy.mptp", toyPlan("loss lr"));
  ASSERT_EQ(run(toyArgs() + " --steps 3 --metrics " + path("m.jsonl")), 0) << log;
  for (const char *name : {"skipped", "grad_norm", "loss_scale"}) {
    const std::string note = std::string("note: entry point 'train_step' has no output with the "
                                         "role ") +
                             name + "; the metrics leave it out";
    const size_t at = err.find(note);
    EXPECT_NE(at, std::string::npos) << err;
    EXPECT_EQ(err.find(note, at + 1), std::string::npos) << err; // once
  }
  const Expected e = expectToy(toyX(5), toyY(4), 2, 3);
  const std::vector<std::string> m = lines(readText("m.jsonl"));
  ASSERT_EQ(m.size(), 3u);
  char expected[120];
  std::snprintf(expected, sizeof(expected), "{\"step\": 2, \"loss\": %.9g, \"lr\": 0.125}",
                e.loss[1]);
  EXPECT_EQ(withoutTime(m[1]), expected);
  EXPECT_NE(err.find("step 3/3  loss "), std::string::npos) << err;
  EXPECT_EQ(err.find("  scale "), std::string::npos) << err;
}

// Tests data errors: each exits 1 naming the input, the file and the types.
TEST_F(MptTrainTest, DataErrors) {
  writeToy();
  std::vector<int32_t> yi(12, 1);
  writeFile("y_i32.npy", tools::encodeNpy(MPTRT_I32, {4, 3}, yi.data(), yi.size() * 4));
  std::vector<int64_t> y6(18, 1);
  writeFile("y_6.npy", tools::encodeNpy(MPTRT_I64, {6, 3}, y6.data(), y6.size() * 8));
  std::vector<int64_t> y1(3, 1);
  writeFile("y_1.npy", tools::encodeNpy(MPTRT_I64, {1, 3}, y1.data(), y1.size() * 8));
  std::vector<float> x5(15, 1.0f);
  writeFile("x_t.npy", tools::encodeNpy(MPTRT_F32, {5, 3}, x5.data(), x5.size() * 4));
  writeFile("x_r.npy", tools::encodeNpy(MPTRT_F32, {15}, x5.data(), x5.size() * 4));
  writeFile("junk.npy", {1, 2, 3});
  writeFile("fwd.mptp", toyPlan("", 4, "forward"));
  const std::string plan = path("toy.mptp") + " --steps 2";
  const std::string x = " --input x=" + path("x.npy"), y = " --input y=" + path("y.npy");
  struct {
    std::string args;
    std::string message;
  } cases[] = {
      {plan + x + " --input y=" + path("y_i32.npy"),
       "input 'y': " + path("y_i32.npy") +
           " holds '<i4' [4, 3], the plan expects i64 [2, 3] (a batch; the file may hold i64 "
           "[N, 3] with N >= 2): the element types differ"},
      {plan + y + " --input x=" + path("x_t.npy"),
       "input 'x': " + path("x_t.npy") +
           " holds '<f4' [5, 3], the plan expects f32 [2, 4] (a batch; the file may hold f32 "
           "[N, 4] with N >= 2): dimension 1 differs"},
      {plan + y + " --input x=" + path("x_r.npy"), "holds '<f4' [15], the plan expects f32 "
                                                   "[2, 4] (a batch; the file may hold f32 "
                                                   "[N, 4] with N >= 2): the ranks differ"},
      {plan + x + " --input y=" + path("y_1.npy"), "holds '<i8' [1, 3]"},
      {plan + x + " --input y=" + path("y_1.npy"), "fewer rows than one batch"},
      {plan + x + " --input y=" + path("y_6.npy"),
       "input 'x': " + path("x.npy") + " gives 2 batches but input 'y' (" + path("y_6.npy") +
           ") gives 3: every input must give the same number of batches"},
      {plan + x, "entry point 'train_step' needs --input y=FILE (a batch is i64 [2, 3]), or "
                 "--synthetic"},
      {plan + x + y + " --input z=" + path("x.npy"),
       "entry point 'train_step' has no input named 'z' (its inputs: 'y', 'x')"},
      {plan + y + " --input x=" + path("junk.npy"), "input 'x': " + path("junk.npy") + ": "},
      {plan + y + " --input x=" + path("none.npy"), "cannot open '" + path("none.npy") + "'"},
      {plan + x + y + " --param v=" + path("x.npy"), "has no parameter named 'v'"},
      {plan + x + y + " --param w=" + path("x.npy"),
       "parameter 'w': " + path("x.npy") + " holds '<f4' [5, 4], the plan expects f32 [4]"},
      {path("fwd.mptp") + " --steps 1" + x + y,
       "has no entry point 'train_step' (its entry points: 'forward')"},
      {path("none.mptp") + " --steps 1", "cannot open"},
  };
  for (auto &c : cases) {
    EXPECT_EQ(run(c.args), 1) << c.args << "\n" << log;
    EXPECT_NE(err.find("mpt-train: error: "), std::string::npos) << c.args << "\n" << log;
    EXPECT_NE(err.find(c.message), std::string::npos) << c.args << "\n" << log;
  }
  // --entry picks another entry point.
  EXPECT_EQ(run(path("fwd.mptp") + " --steps 1 --entry forward --quiet" + x + y), 0) << log;
}

// Tests --param: a starting value for w instead of the plan's.
TEST_F(MptTrainTest, ParamFile) {
  writeToy();
  const float w[4] = {0, 0, 0, 0};
  writeFile("w.npy", tools::encodeNpy(MPTRT_F32, {4}, w, 16));
  ASSERT_EQ(
      run(toyArgs() + " --steps 1 --param w=" + path("w.npy") + " --metrics " + path("m.jsonl")), 0)
      << log;
  const std::vector<int64_t> y = toyY(4);
  EXPECT_EQ(field(readText("m.jsonl"), "loss"), double(y[0] + y[1] + y[2] + y[3] + y[4] + y[5]));
}

// Tests --params: the model parameter w from a .safetensors (f64, rounded
// to the plan's f32) or an .npz file, training state optional, --param
// winning over the file; and each error, naming the file and the tensor.
TEST_F(MptTrainTest, ParamsFile) {
  writeToy();
  const std::vector<int64_t> y = toyY(4);
  const double sumY = double(y[0] + y[1] + y[2] + y[3] + y[4] + y[5]);
  const std::vector<uint8_t> zeros64 = bytesOf(std::vector<double>(4, 0.0)),
                             ones = bytesOf(std::vector<float>(4, 1.0f)),
                             step = bytesOf(std::vector<int64_t>{0});
  writeFile("w.safetensors", safetensorsFile({{"w", "F64", {4}, zeros64}}));
  const float zeros[4] = {0, 0, 0, 0};
  writeFile("w.npz",
            zipFile({{"w.npy", tools::encodeNpy(MPTRT_F32, {4}, zeros, 16)},
                     {"train.step.npy", tools::encodeNpy(MPTRT_I64, {}, step.data(), 8)}}));
  writeFile("w.npy", tools::encodeNpy(MPTRT_F32, {4}, zeros, 16));
  writeFile("ones.safetensors", safetensorsFile({{"w", "F32", {4}, ones}}));
  const std::string metrics = " --steps 1 --quiet --metrics " + path("m.jsonl");
  for (const std::string &args : std::vector<std::string>{
           " --params " + path("w.safetensors"), " --params " + path("w.npz"),
           " --params " + path("ones.safetensors") + " --param w=" + path("w.npy")}) {
    ASSERT_EQ(run(toyArgs() + metrics + args), 0) << args << "\n" << log;
    EXPECT_EQ(field(readText("m.jsonl"), "loss"), sumY) << args;
  }
  // With ones, the loss is sum(x[0:2]) + sum(y).
  ASSERT_EQ(run(toyArgs() + metrics + " --params " + path("ones.safetensors")), 0) << log;
  const std::vector<float> x = toyX(5);
  double sumX = 0;
  for (int i = 0; i < 8; ++i)
    sumX += x[i];
  EXPECT_FLOAT_EQ(field(readText("m.jsonl"), "loss"), float(sumX + sumY));

  struct Case {
    std::string file;
    std::vector<uint8_t> bytes;
    std::string message;
  } cases[] = {
      {"missing.safetensors", safetensorsFile({{"train.step", "I64", {}, step}}),
       "parameters file '" + path("missing.safetensors") +
           "': no tensor 'w' for the plan's parameter (f32 [4]) (every model parameter needs one; "
           "the file has 1 tensors)"},
      {"extra.safetensors",
       safetensorsFile(
           {{"w", "F32", {4}, ones}, {"v", "F32", {1}, bytesOf(std::vector<float>{1})}}),
       "parameters file '" + path("extra.safetensors") +
           "': tensor 'v' (F32 [1]) names no parameter of entry point 'train_step'"},
      {"shape.safetensors",
       safetensorsFile({{"w", "F32", {5}, bytesOf(std::vector<float>(5, 1.0f))}}),
       "tensor 'w' is F32 [5], the plan's parameter is f32 [4]: the shapes differ"},
      {"dtype.safetensors", safetensorsFile({{"w", "I32", {4}, bytesOf(std::vector<int32_t>(4))}}),
       "tensor 'w' is I32 [4], the plan's parameter is f32 [4]: only f64, f32, f16 and bf16 "
       "tensors are converted to a float parameter"},
      {"step.safetensors",
       safetensorsFile(
           {{"w", "F32", {4}, ones}, {"train.step", "F32", {}, bytesOf(std::vector<float>{0})}}),
       "tensor 'train.step' is F32 [], the plan's parameter is i64 []: an integer or boolean "
       "parameter takes only its own element type"},
      {"trunc.safetensors",
       {16, 0, 0, 0, 0, 0, 0, 0, '{', '}'},
       "parameters file '" + path("trunc.safetensors") +
           "' (safetensors): truncated or not a safetensors file"},
      {"shape.npz", zipFile({{"w.npy", tools::encodeNpy(MPTRT_F32, {2, 2}, zeros, 16)}}),
       "parameters file '" + path("shape.npz") +
           "': tensor 'w' is '<f4' [2, 2], the plan's parameter is f32 [4]: the shapes differ"},
  };
  for (const Case &c : cases) {
    writeFile(c.file, c.bytes);
    EXPECT_EQ(run(toyArgs() + metrics + " --params " + path(c.file)), 1) << c.file << "\n" << log;
    EXPECT_NE(err.find("mpt-train: error: parameters file '" + path(c.file) + "'"),
              std::string::npos)
        << c.file << "\n"
        << log;
    EXPECT_NE(err.find(c.message), std::string::npos) << c.file << "\n" << log;
  }
  EXPECT_EQ(run(toyArgs() + metrics + " --params " + path("none.npz")), 1);
  EXPECT_NE(err.find("parameters file: cannot open '" + path("none.npz") + "'"), std::string::npos)
      << log;
  // --params and --resume exclude each other; --params is an input no
  // output may name.
  EXPECT_EQ(run(toyArgs() + metrics + " --params " + path("w.npz") + " --resume " + path("c.ck")),
            2);
  EXPECT_NE(err.find("--params and --resume exclude each other"), std::string::npos) << log;
  EXPECT_EQ(run(toyArgs() + " --steps 1 --params " + path("w.npz") + " --metrics " + path("w.npz")),
            2);
  EXPECT_NE(err.find("--params"), std::string::npos) << log;
}

// Tests that resuming from a checkpoint continues bit-identically: 7 steps
// in one go versus 3 steps, then a resume to 7 (with 2 batches, so the
// resume starts mid-epoch). The final checkpoints are byte-identical and
// the metrics of steps 4-7 agree; the resumed run appends to the metrics.
TEST_F(MptTrainTest, ResumeIsBitIdentical) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 7 --quiet --save " + path("full.ck") + " --metrics " +
                path("full.jsonl")),
            0)
      << log;
  ASSERT_EQ(run(toyArgs() + " --steps 3 --quiet --save " + path("part.ck") + " --metrics " +
                path("part.jsonl")),
            0)
      << log;
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("part.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 3u);
  ASSERT_EQ(run(toyArgs() + " --steps 7 --quiet --resume " + path("part.ck") + " --save " +
                path("resumed.ck") + " --metrics " + path("part.jsonl")),
            0)
      << log;
  EXPECT_NE(out.find("mpt-train: ran 4 steps (4-7 of 7)"), std::string::npos) << out;
  EXPECT_EQ(readBytes("full.ck"), readBytes("resumed.ck"));
  const std::vector<std::string> full = lines(readText("full.jsonl")),
                                 part = lines(readText("part.jsonl"));
  ASSERT_EQ(full.size(), 7u);
  ASSERT_EQ(part.size(), 7u);
  for (size_t i = 0; i < 7; ++i)
    EXPECT_EQ(withoutTime(full[i]), withoutTime(part[i]));

  // Resuming a finished run does nothing; --steps below the checkpoint's
  // count is an error.
  ASSERT_EQ(run(toyArgs() + " --steps 7 --resume " + path("full.ck")), 0) << log;
  EXPECT_NE(out.find("mpt-train: ran 0 steps (7 of 7 already run)"), std::string::npos) << out;
  EXPECT_EQ(run(toyArgs() + " --steps 6 --resume " + path("full.ck")), 1) << log;
  EXPECT_NE(
      err.find("checkpoint '" + path("full.ck") + "' has already run 7 steps, more than --steps 6"),
      std::string::npos)
      << err;
}

// Tests --save-every: checkpoints after steps 2 and 4 and at the end; a
// run that fails at step 3 (an index out of range) leaves the step-2
// checkpoint intact and no temporary file.
TEST_F(MptTrainTest, SaveEveryAndFailedRun) {
  writeFile("g.mptp", gatherPlan());
  const int64_t idx[4] = {0, 1, 7, 2};
  writeFile("idx.npy", tools::encodeNpy(MPTRT_I64, {4}, idx, sizeof(idx)));
  const std::string args =
      path("g.mptp") + " --input idx=" + path("idx.npy") + " --save " + path("ck/g.ck");
  fs::create_directories(dir / "ck");
  ASSERT_EQ(run(args + " --steps 2 --save-every 1"), 0) << log;
  EXPECT_EQ(run(args + " --steps 4 --save-every 1 --resume " + path("ck/g.ck")), 1) << log;
  EXPECT_NE(err.find("mpt-train: error: step 3: "), std::string::npos) << err;
  EXPECT_NE(err.find("index 7"), std::string::npos) << err;
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("ck/g.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 2u);
  int64_t count = -1;
  std::memcpy(&count, ck.tensors.at(0).bytes.data(), 8);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "ck"), fs::directory_iterator{}), 1);

  // --save-every 2 over 5 steps: the checkpoint is rewritten and ends at 5.
  const int64_t ok[2] = {0, 2};
  writeFile("idx.npy", tools::encodeNpy(MPTRT_I64, {2}, ok, sizeof(ok)));
  ASSERT_EQ(run(args + " --steps 5 --save-every 2"), 0) << log;
  ASSERT_TRUE(train::readCheckpoint(path("ck/g.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 5u);
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
}

// Tests the atomic write: saving into a directory leaves exactly the target
// there; a save that cannot complete fails, leaves no temporary file and
// does not touch what is there: a target that is a directory is refused
// before training (exit 2), a missing directory fails the save (exit 1).
TEST_F(MptTrainTest, AtomicSave) {
  writeToy();
  fs::create_directories(dir / "ckpts");
  ASSERT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("ckpts/a.ck")), 0) << log;
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir / "ckpts"))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"a.ck"});
  // The mode of any new file: 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(static_cast<unsigned>(fs::status(dir / "ckpts/a.ck").permissions()),
            0666u & ~static_cast<unsigned>(mask));
  const std::vector<uint8_t> first = readBytes("ckpts/a.ck");
  // Overwriting an existing checkpoint.
  ASSERT_EQ(run(toyArgs() + " --steps 3 --quiet --save " + path("ckpts/a.ck")), 0) << log;
  EXPECT_NE(readBytes("ckpts/a.ck"), first);
  // Leftovers of a writer killed before its rename: removed if their
  // process is gone, kept if it is alive (this one) or the name has no pid.
  writeFile("ckpts/.a.ck.tmp.999999999.0", {1});
  const std::string alive = ".a.ck.tmp." + std::to_string(::getpid()) + ".0";
  writeFile("ckpts/" + alive, {2});
  writeFile("ckpts/.a.ck.tmp.Xy12Zq", {3});
  writeFile("ckpts/.b.ck.tmp.999999999.0", {4});
  ASSERT_EQ(run(toyArgs() + " --steps 3 --quiet --save " + path("ckpts/a.ck")), 0) << log;
  names.clear();
  for (const auto &e : fs::directory_iterator(dir / "ckpts"))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{alive, ".a.ck.tmp.Xy12Zq", ".b.ck.tmp.999999999.0", "a.ck"}));
  for (const std::string &name :
       {alive, std::string(".a.ck.tmp.Xy12Zq"), std::string(".b.ck.tmp.999999999.0")})
    fs::remove(dir / "ckpts" / name);
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("ckpts/a.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 3u);

  fs::create_directories(dir / "ckpts/isdir");
  writeFile("ckpts/isdir/keep", {1, 2, 3});
  EXPECT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("ckpts/isdir")), 2) << log;
  EXPECT_NE(err.find("mpt-train: --save: checkpoint path '" + path("ckpts/isdir") +
                     "' is a directory: a checkpoint is written only to a regular file or a "
                     "new path"),
            std::string::npos)
      << err;
  EXPECT_EQ(readBytes("ckpts/isdir/keep"), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("nodir/a.ck")), 1) << log;
  EXPECT_NE(err.find("cannot create a temporary file in '" + path("nodir") + "' for checkpoint '" +
                     path("nodir/a.ck") + "'"),
            std::string::npos)
      << err;
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(dir / "nodir"));
}

// Tests that --save writes through a symbolic link to its target (the link
// stays a link, and the target, not a copy, holds the new checkpoint; a
// dangling link creates its target), and that a device, a FIFO or a file
// that is no checkpoint is refused before training, untouched (issue 29,
// finding 2: --save /dev/null replaced the device node as root, and a
// symlinked checkpoint became a plain file while its target stayed stale).
TEST_F(MptTrainTest, SaveThroughSymlinksOnlyToCheckpoints) {
  writeToy();
  fs::create_directories(dir / "real");
  fs::create_symlink(dir / "real" / "a.ck", dir / "link.ck"); // dangling
  ASSERT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("link.ck")), 0) << log;
  EXPECT_TRUE(fs::is_symlink(dir / "link.ck"));
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("real/a.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 2u);
  ASSERT_EQ(run(toyArgs() + " --steps 3 --quiet --resume " + path("link.ck") + " --save " +
                path("link.ck")),
            0)
      << log;
  EXPECT_TRUE(fs::is_symlink(dir / "link.ck"));
  ASSERT_TRUE(train::readCheckpoint(path("real/a.ck"), &ck, &error)) << error;
  EXPECT_EQ(ck.steps, 3u);
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
  EXPECT_TRUE(fs::is_empty(dir / "real") == false);

  ASSERT_EQ(run(toyArgs() + " --steps 1 --quiet --save /dev/null"), 2) << log;
  EXPECT_NE(err.find("mpt-train: --save: checkpoint path '/dev/null' is a device: a checkpoint "
                     "is written only to a regular file or a new path"),
            std::string::npos)
      << err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(run(toyArgs() + " --steps 1 --quiet --save " + path("fifo")), 2) << log;
  EXPECT_NE(err.find("' is a FIFO: a checkpoint is written only"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));
  writeFile("notes.txt", {'h', 'i'});
  ASSERT_EQ(run(toyArgs() + " --steps 1 --quiet --save " + path("notes.txt")), 2) << log;
  EXPECT_NE(err.find("checkpoint path '" + path("notes.txt") +
                     "' exists and is not a checkpoint: refusing to replace it"),
            std::string::npos)
      << err;
  EXPECT_EQ(readBytes("notes.txt"), (std::vector<uint8_t>{'h', 'i'}));
}

// Tests that no output names a file the run reads (issue 29, finding 3:
// --save or --metrics naming the plan, a data file or the --resume
// checkpoint destroyed it with exit status 0), through a symbolic link or
// a hard link too, and that two outputs may not share a file; --save may
// name the --resume checkpoint, which it continues.
TEST_F(MptTrainTest, OutputsNeverDestroyInputs) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("ck")), 0) << log;
  const std::vector<uint8_t> plan = readBytes("toy.mptp"), ck = readBytes("ck");
  fs::create_symlink(dir / "toy.mptp", dir / "plan-link");
  fs::create_hard_link(dir / "ck", dir / "ck-hard");
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {" --metrics " + path("toy.mptp"),
       "--metrics '" + path("toy.mptp") + "' names the same file as the plan"},
      {" --save " + path("plan-link"),
       "--save '" + path("plan-link") + "' names the same file as the plan"},
      {" --collect-ranges=" + path("./toy.mptp"),
       "--collect-ranges '" + path("./toy.mptp") + "' names the same file as the plan"},
      {" --resume " + path("ck") + " --metrics " + path("ck-hard"),
       "--metrics '" + path("ck-hard") + "' names the same file as --resume '" + path("ck") +
           "', which is read: refusing to overwrite it"},
      {" --metrics " + path("m.jsonl") + " --collect-ranges=" + path("m.jsonl"),
       "--collect-ranges '" + path("m.jsonl") + "' and --metrics '" + path("m.jsonl") +
           "' name the same file"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.args);
    EXPECT_EQ(run(toyArgs() + " --steps 3 --quiet" + c.args), 2) << log;
    EXPECT_NE(err.find("mpt-train: " + c.message), std::string::npos) << err;
  }
  EXPECT_EQ(readBytes("toy.mptp"), plan);
  EXPECT_EQ(readBytes("ck"), ck);
  EXPECT_FALSE(fs::exists(dir / "m.jsonl"));
}

// Tests that a checkpoint is never replaced by one of fewer steps (issue
// 29, finding 9: Ctrl-C before step 1 wrote a step-0 checkpoint over a
// 500-step one and suggested resuming from it): refused before training
// when --steps ends below it, and kept, with the reason, when a stop comes
// before the run has caught up.
TEST_F(MptTrainTest, FewerStepsNeverReplaceACheckpoint) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 20000 --quiet --save " + path("ck")), 0) << log;
  const std::vector<uint8_t> old = readBytes("ck");
  EXPECT_EQ(run(toyArgs() + " --steps 3 --quiet --save " + path("ck")), 2) << log;
  EXPECT_NE(err.find("mpt-train: --save: checkpoint path '" + path("ck") +
                     "' holds a checkpoint of 20000 steps: refusing to replace it with one of 3 "
                     "steps (the old one is kept)"),
            std::string::npos)
      << err;
  EXPECT_EQ(readBytes("ck"), old);

  // A run from scratch towards 10^9 steps, interrupted after its first
  // steps: the save of the steps it ran (far fewer than 20000) keeps the
  // old checkpoint.
  const pid_t pid = start(toyArgs() + " --quiet --steps 1000000000 --save " + path("ck") +
                          " --metrics " + path("m.jsonl"));
  ASSERT_TRUE(waitUntil([&] { return !lines(readText("m.jsonl")).empty(); }));
  ::kill(pid, SIGINT);
  const int st = finish(pid);
  ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(st), 1) << log;
  EXPECT_NE(err.find("holds a checkpoint of 20000 steps: refusing to replace it with one of "),
            std::string::npos)
      << err;
  EXPECT_EQ(readBytes("ck"), old);
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
}

// Tests the other signals (issue 29, finding 8): SIGHUP and SIGQUIT stop
// the run with a checkpoint like SIGINT (exit 129 and 131); SIGUSR1 writes a
// checkpoint after the current step and training goes on; a closed pipe on
// stderr (`mpt-train ... 2>&1 | head`) does not end the training.
TEST_F(MptTrainTest, HangupQuitUsr1AndBrokenPipe) {
  writeToy();
  const std::string endless = toyArgs() + " --quiet --steps 1000000000";
  for (int sig : {SIGHUP, SIGQUIT}) {
    const std::string name = sig == SIGHUP ? "SIGHUP" : "SIGQUIT";
    SCOPED_TRACE(name);
    fs::remove(dir / "ck");
    fs::remove(dir / "m.jsonl");
    const pid_t pid = start(endless + " --save " + path("ck") + " --metrics " + path("m.jsonl"));
    ASSERT_TRUE(waitUntil([&] { return lines(readText("m.jsonl")).size() >= 2; }));
    ::kill(pid, sig);
    const int st = finish(pid);
    ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
    EXPECT_EQ(WEXITSTATUS(st), 128 + sig) << log;
    train::Checkpoint ck;
    std::string error;
    ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
    EXPECT_EQ(lines(readText("m.jsonl")).size(), ck.steps);
    EXPECT_NE(err.find("mpt-train: interrupted by " + name + " after step " +
                       std::to_string(ck.steps) + " of 1000000000: checkpoint written"),
              std::string::npos)
        << err;
  }

  fs::remove(dir / "ck");
  fs::remove(dir / "m.jsonl");
  const pid_t pid = start(endless + " --save " + path("ck") + " --metrics " + path("m.jsonl"));
  ASSERT_TRUE(waitUntil([&] { return lines(readText("m.jsonl")).size() >= 2; }));
  ::kill(pid, SIGUSR1);
  ASSERT_TRUE(waitUntil([&] { return fs::exists(dir / "ck"); }));
  train::Checkpoint saved;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("ck"), &saved, &error)) << error;
  const size_t at = lines(readText("m.jsonl")).size();
  ASSERT_TRUE(waitUntil([&] { return lines(readText("m.jsonl")).size() >= at + 3; }))
      << "training did not go on after SIGUSR1";
  ::kill(pid, SIGTERM);
  const int st = finish(pid);
  ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(st), 143) << log;
  EXPECT_NE(err.find("mpt-train: note: SIGUSR1: checkpoint written to '" + path("ck") +
                     "' after step " + std::to_string(saved.steps) + "; training goes on"),
            std::string::npos)
      << err;

  // Progress on a pipe whose reader has gone: 50 steps still run.
  writeFile("pipe.sh", {});
  {
    std::ofstream script(path("pipe.sh"));
    script << "'" << MPT_TRAIN_PATH << "' " << toyArgs() << " --steps 50 --log-every 1 --metrics "
           << path("p.jsonl") << " 2>&1 | head -c 1 >/dev/null\nexit ${PIPESTATUS[0]}\n";
  }
  const int rc = std::system(("bash " + path("pipe.sh")).c_str());
  ASSERT_TRUE(WIFEXITED(rc)) << rc;
  EXPECT_EQ(WEXITSTATUS(rc), 0); // 141 when SIGPIPE killed it
  EXPECT_EQ(lines(readText("p.jsonl")).size(), 50u);
}

/// The metrics lines of `name` without their time_ms.
std::vector<std::string> metricsOf(const std::string &text) {
  std::vector<std::string> m;
  for (const std::string &l : lines(text))
    m.push_back(withoutTime(l));
  return m;
}

// Tests SIGKILL during a checkpoint write, at every byte of the file and
// after the rename (MPT_TRAIN_TEST_SAVE_FAULT): the checkpoint of the step
// before (after the rename: the new one) is there intact, checksums and
// all, and resuming from it ends bit for bit where an uninterrupted run
// does (final checkpoint and metrics). A kill in the first write leaves no
// checkpoint.
TEST_F(MptTrainTest, KillDuringCheckpointWriteKeepsThePrevious) {
  writeToy();
  const std::string args =
      toyArgs() + " --quiet --save " + path("ck") + " --metrics " + path("m.jsonl");
  for (int steps : {2, 3, 6})
    ASSERT_EQ(run(toyArgs() + " --quiet --steps " + std::to_string(steps) + " --save " +
                  path("ref" + std::to_string(steps) + ".ck") + " --metrics " +
                  path("ref" + std::to_string(steps) + ".jsonl")),
              0)
        << log;
  const std::vector<uint8_t> ref2 = readBytes("ref2.ck"), ref3 = readBytes("ref3.ck"),
                             ref6 = readBytes("ref6.ck");
  const std::vector<std::string> refMetrics = metricsOf(readText("ref6.jsonl"));
  ASSERT_EQ(refMetrics.size(), 6u);

  std::vector<std::string> points;
  for (size_t n = 0; n <= ref2.size(); ++n)
    points.push_back(std::to_string(n));
  points.push_back("renamed");
  for (const std::string &where : points) {
    SCOPED_TRACE("killed in the write after step 3, at " + where);
    fs::remove(dir / "ck");
    fs::remove(dir / "m.jsonl");
    const int st = finish(start(args + " --steps 6 --save-every 1",
                                "MPT_TRAIN_TEST_SAVE_FAULT=3:" + where + ":kill"));
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st << "\n" << log;
    ASSERT_EQ(readBytes("ck"), where == "renamed" ? ref3 : ref2);
    // The temporary had no name yet (O_TMPFILE): nothing is left behind.
    EXPECT_EQ(tempFiles(), std::vector<std::string>{});
    train::Checkpoint ck;
    std::string error;
    ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
    ASSERT_EQ(run(args + " --steps 6 --resume " + path("ck")), 0) << log;
    EXPECT_EQ(readBytes("ck"), ref6);
    // Steps 1-3 of the killed run, then those after the checkpoint again.
    const std::vector<std::string> m = metricsOf(readText("m.jsonl"));
    ASSERT_EQ(m.size(), 3 + 6 - ck.steps);
    for (size_t i = 0; i < m.size(); ++i)
      EXPECT_EQ(m[i], refMetrics[i < 3 ? i : i - 3 + ck.steps]) << i;
  }
  for (const std::string where : {"0", "24", "100", "171", "renamed"}) {
    SCOPED_TRACE("killed in the first write, at " + where);
    fs::remove(dir / "ck");
    const int st = finish(start(args + " --steps 6 --save-every 1",
                                "MPT_TRAIN_TEST_SAVE_FAULT=1:" + where + ":kill"));
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st << "\n" << log;
    train::Checkpoint ck;
    std::string error;
    if (where == "renamed") {
      ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
      EXPECT_EQ(ck.steps, 1u);
    } else {
      EXPECT_FALSE(fs::exists(dir / "ck"));
    }
    EXPECT_EQ(tempFiles(), std::vector<std::string>{});
  }
}

// Tests SIGKILL at varied moments of a run that saves after every step
// (each some time after the first save): the checkpoint is always complete,
// no temporary file is left, and resuming from it ends where an
// uninterrupted run does.
TEST_F(MptTrainTest, KillAtVariedMomentsKeepsACheckpoint) {
  writeToy();
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE("kill " + std::to_string(i));
    fs::remove(dir / "ck");
    fs::remove(dir / "ref.ck"); // a checkpoint of more steps is never replaced
    const pid_t pid =
        start(toyArgs() + " --quiet --steps 1000000000 --save-every 1 --save " + path("ck"));
    ASSERT_TRUE(waitUntil([&] { return fs::exists(dir / "ck"); }));
    std::this_thread::sleep_for(std::chrono::microseconds(100 + (i * 3701) % 40000));
    ::kill(pid, SIGKILL);
    const int st = finish(pid);
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st << "\n" << log;
    train::Checkpoint ck;
    std::string error;
    ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
    const std::string steps = " --steps " + std::to_string(ck.steps + 2);
    ASSERT_EQ(
        run(toyArgs() + " --quiet" + steps + " --resume " + path("ck") + " --save " + path("ck")),
        0)
        << log;
    ASSERT_EQ(run(toyArgs() + " --quiet" + steps + " --save " + path("ref.ck")), 0) << log;
    EXPECT_EQ(readBytes("ck"), readBytes("ref.ck"));
    // A kill between naming the complete temporary and the rename leaves
    // it; the next save to the target removes it.
    EXPECT_EQ(tempFiles(), std::vector<std::string>{});
  }
}

// Tests SIGINT and SIGTERM during a run: the step in progress finishes, the
// checkpoint is written (no temporary file left), the exit status is 130 or
// 143, and resuming continues bit for bit. Without --save nothing is
// written, and stderr says so.
TEST_F(MptTrainTest, InterruptSavesAndExits) {
  writeToy();
  const std::string endless = toyArgs() + " --quiet --steps 1000000000";
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    SCOPED_TRACE(name);
    fs::remove(dir / "ck");
    fs::remove(dir / "ref.ck"); // a checkpoint of more steps is never replaced
    fs::remove(dir / "m.jsonl");
    const pid_t pid = start(endless + " --save " + path("ck") + " --metrics " + path("m.jsonl"));
    ASSERT_TRUE(waitUntil([&] { return lines(readText("m.jsonl")).size() >= 3; }));
    ::kill(pid, sig);
    const int st = finish(pid);
    ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
    EXPECT_EQ(WEXITSTATUS(st), 128 + sig) << log;
    train::Checkpoint ck;
    std::string error;
    ASSERT_TRUE(train::readCheckpoint(path("ck"), &ck, &error)) << error;
    const std::string steps = std::to_string(ck.steps);
    EXPECT_EQ(lines(readText("m.jsonl")).size(), ck.steps); // every step run is saved
    EXPECT_NE(err.find("mpt-train: interrupted: stopping after the current step (interrupt "
                       "again to abort now)"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("mpt-train: interrupted by " + name + " after step " + steps +
                       " of 1000000000: checkpoint written to '" + path("ck") +
                       "'; continue with --resume " + path("ck")),
              std::string::npos)
        << err;
    EXPECT_NE(out.find("mpt-train: ran " + steps + " steps (1-" + steps + " of 1000000000)"),
              std::string::npos)
        << out;
    EXPECT_EQ(tempFiles(), std::vector<std::string>{});

    const std::string more = " --steps " + std::to_string(ck.steps + 3);
    ASSERT_EQ(run(toyArgs() + " --quiet" + more + " --resume " + path("ck") + " --save " +
                  path("ck") + " --metrics " + path("m.jsonl")),
              0)
        << log;
    ASSERT_EQ(run(toyArgs() + " --quiet" + more + " --save " + path("ref.ck") + " --metrics " +
                  path("ref.jsonl")),
              0)
        << log;
    EXPECT_EQ(readBytes("ck"), readBytes("ref.ck"));
    EXPECT_EQ(metricsOf(readText("m.jsonl")), metricsOf(readText("ref.jsonl")));
  }

  const pid_t pid = start(endless + " --metrics " + path("n.jsonl"));
  ASSERT_TRUE(waitUntil([&] { return !lines(readText("n.jsonl")).empty(); }));
  ::kill(pid, SIGINT);
  const int st = finish(pid);
  ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(st), 130) << log;
  EXPECT_NE(err.find(" of 1000000000: no checkpoint written (no --save given)"), std::string::npos)
      << err;
  EXPECT_EQ(tempFiles(), std::vector<std::string>{});
}

// Tests a SIGINT that arrives while a --save-every checkpoint is being
// written: the write completes and is the run's last checkpoint (exit
// 130). A second SIGINT aborts at once, killed by the signal, and leaves
// the checkpoint before intact.
TEST_F(MptTrainTest, InterruptDuringCheckpointWrite) {
  writeToy();
  for (int steps : {1, 2, 5})
    ASSERT_EQ(run(toyArgs() + " --quiet --steps " + std::to_string(steps) + " --save " +
                  path("ref" + std::to_string(steps) + ".ck")),
              0)
        << log;
  const std::string args = toyArgs() + " --quiet --steps 100 --save-every 1 --save " + path("ck");
  auto saying = [&](const std::string &text) {
    return waitUntil([&] { return readText("err.txt").find(text) != std::string::npos; });
  };

  pid_t pid = start(args, "MPT_TRAIN_TEST_SAVE_FAULT=2:30:wait");
  ASSERT_TRUE(saying("test fault: pausing until a signal in checkpoint write 2 after 30 bytes"));
  ::kill(pid, SIGINT);
  int st = finish(pid);
  ASSERT_TRUE(WIFEXITED(st)) << st << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(st), 130) << log;
  EXPECT_NE(err.find("interrupted by SIGINT after step 2 of 100"), std::string::npos) << err;
  EXPECT_EQ(readBytes("ck"), readBytes("ref2.ck"));
  ASSERT_EQ(run(toyArgs() + " --quiet --steps 5 --resume " + path("ck") + " --save " + path("ck")),
            0)
      << log;
  EXPECT_EQ(readBytes("ck"), readBytes("ref5.ck"));

  fs::remove(dir / "ck");
  pid = start(args, "MPT_TRAIN_TEST_SAVE_FAULT=2:30:pause=30000");
  ASSERT_TRUE(saying("test fault: pausing 30000 ms in checkpoint write 2 after 30 bytes"));
  ::kill(pid, SIGINT);
  ASSERT_TRUE(saying("mpt-train: interrupted: stopping after the current step"));
  ::kill(pid, SIGINT);
  const auto sent = std::chrono::steady_clock::now();
  st = finish(pid);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(10));
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) << st << "\n" << log;
  EXPECT_NE(err.find("mpt-train: interrupted again: aborting now"), std::string::npos) << err;
  EXPECT_EQ(readBytes("ck"), readBytes("ref1.ck"));
}

// Tests checkpoint rejection through the tool: truncated, corrupt, not a
// checkpoint, and checkpoints of another plan (a missing, an extra and a
// reshaped tensor).
TEST_F(MptTrainTest, BadCheckpointsRejected) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 2 --quiet --save " + path("good.ck")), 0) << log;
  const std::vector<uint8_t> good = readBytes("good.ck");
  std::vector<uint8_t> truncated(good.begin(), good.end() - 5);
  writeFile("trunc.ck", truncated);
  std::vector<uint8_t> flipped = good;
  flipped[60] ^= 0x10; // inside w's data (bytes 53-68)
  writeFile("flip.ck", flipped);
  std::vector<uint8_t> steps = good;
  steps[16] ^= 1; // the step count: only the file checksum covers it
  writeFile("steps.ck", steps);
  writeFile("junk.ck", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});

  // Checkpoints of other plans.
  writeFile("w5.mptp", toyPlan("", 5));
  std::vector<float> x5(20, 1.0f);
  writeFile("x5.npy", tools::encodeNpy(MPTRT_F32, {4, 5}, x5.data(), 80));
  ASSERT_EQ(run(path("w5.mptp") + " --input x=" + path("x5.npy") + " --input y=" + path("y.npy") +
                " --steps 1 --quiet --save " + path("w5.ck")),
            0)
      << log;
  // Fewer parameters: a plan whose entry point binds only 'train.step'.
  writeFile("g.mptp", gatherPlan());
  const int64_t idx[1] = {0};
  writeFile("idx.npy", tools::encodeNpy(MPTRT_I64, {1}, idx, 8));
  ASSERT_EQ(run(path("g.mptp") + " --input idx=" + path("idx.npy") + " --steps 1 --quiet --save " +
                path("g.ck")),
            0)
      << log;

  const std::string plan = toyArgs() + " --steps 4 --resume ";
  struct {
    std::string file;
    std::string message;
  } cases[] = {
      {"trunc.ck", "checkpoint '" + path("trunc.ck") + "': truncated"},
      {"flip.ck",
       "checkpoint '" + path("flip.ck") + "': corrupt: tensor 0 ('w'): checksum mismatch"},
      {"steps.ck", "checkpoint '" + path("steps.ck") +
                       "': corrupt: file checksum mismatch (every tensor's own checksum "
                       "matches: the header, which holds the step count, or the file "
                       "checksum itself changed)"},
      {"junk.ck", "not an mpt-train checkpoint (bad magic)"},
      {"missing.ck", "checkpoint: cannot open '" + path("missing.ck") + "'"},
      {"w5.ck", "checkpoint '" + path("w5.ck") +
                    "': tensor 'w' is f32 [5], the plan's parameter is f32 [4]"},
      {"g.ck", "checkpoint '" + path("g.ck") +
                   "' has no tensor for parameter 'w' (f32 [4]) of entry point 'train_step'"},
  };
  for (auto &c : cases) {
    EXPECT_EQ(run(plan + path(c.file)), 1) << c.file << "\n" << log;
    EXPECT_NE(err.find(c.message), std::string::npos) << c.file << "\n" << log;
  }
  // A checkpoint with a tensor the plan does not have.
  EXPECT_EQ(run(path("g.mptp") + " --input idx=" + path("idx.npy") + " --steps 3 --resume " +
                path("good.ck")),
            1)
      << log;
  EXPECT_NE(err.find("checkpoint '" + path("good.ck") +
                     "' holds tensor 'loss_scale.scale', which is not a parameter of entry "
                     "point 'train_step'"),
            std::string::npos)
      << err;
}

// Tests the reader on every truncation and every single-bit flip of a
// checkpoint: all rejected, none crash.
TEST_F(MptTrainTest, ReaderRejectsEveryTruncationAndFlip) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 1 --quiet --save " + path("good.ck")), 0) << log;
  const std::vector<uint8_t> good = readBytes("good.ck");
  train::Checkpoint ck;
  std::string error;
  ASSERT_TRUE(train::readCheckpoint(path("good.ck"), &ck, &error)) << error;
  // Size: header 24; w: 4 + 1 + 8 + 8 + 8 + 16 + 4; train.step: 4 + 10 + 8 + 0 + 8 + 8 + 4;
  // loss_scale.scale: 4 + 16 + 8 + 8 + 4 + 4; trailer 12.
  EXPECT_EQ(good.size(), 24u + 49 + 42 + 44 + 12);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(train::parseCheckpoint(std::vector<uint8_t>(good.begin(), good.begin() + n),
                                        "t.ck", &ck, &error))
        << n;
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_FALSE(train::parseCheckpoint(longer, "t.ck", &ck, &error));
  EXPECT_NE(error.find("unexpected bytes after the end"), std::string::npos) << error;
  for (size_t i = 0; i < good.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= uint8_t(1 << bit);
      EXPECT_FALSE(train::parseCheckpoint(bad, "t.ck", &ck, &error)) << i << " " << bit;
    }
  EXPECT_EQ(train::crc32(0, "123456789", 9), 0xCBF43926u); // the standard check value
}

// Tests --synthetic: the same seed gives the same metrics, step by step,
// also when resumed; another seed gives other data.
TEST_F(MptTrainTest, SyntheticIsDeterministicPerStep) {
  writeToy();
  const std::string args = path("toy.mptp") + " --synthetic --quiet --synthetic-int-range 10";
  ASSERT_EQ(run(args + " --steps 4 --metrics " + path("a.jsonl")), 0) << log;
  ASSERT_EQ(run(args + " --steps 4 --metrics " + path("b.jsonl")), 0) << log;
  ASSERT_EQ(run(args + " --steps 2 --save " + path("ck") + " --metrics " + path("c.jsonl")), 0)
      << log;
  ASSERT_EQ(run(args + " --steps 4 --resume " + path("ck") + " --metrics " + path("c.jsonl")), 0)
      << log;
  ASSERT_EQ(run(args + " --steps 4 --seed 1 --metrics " + path("d.jsonl")), 0) << log;
  const auto a = lines(readText("a.jsonl")), b = lines(readText("b.jsonl")),
             c = lines(readText("c.jsonl")), d = lines(readText("d.jsonl"));
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  ASSERT_EQ(c.size(), 4u);
  ASSERT_EQ(d.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(withoutTime(a[i]), withoutTime(b[i]));
    EXPECT_EQ(withoutTime(a[i]), withoutTime(c[i]));
    EXPECT_NE(field(a[i], "loss"), field(d[i], "loss")) << a[i] << "\n" << d[i];
    if (i) {
      EXPECT_NE(field(a[i], "grad_norm"), field(a[i - 1], "grad_norm"));
    }
  }
  EXPECT_EQ(run(path("toy.mptp") + " --synthetic --steps 1 --input x=" + path("x.npy")), 2) << log;
}

// Tests the synthetic generator itself: value ranges and distribution,
// dependence on step / seed / name only.
TEST(MptTrainSynthetic, Values) {
  TensorInfo f{MPTRT_F32, {64, 1000}}, i{MPTRT_I64, {1000}}, i32{MPTRT_I32, {1000}},
      b{MPTRT_I1, {1000}}, h{MPTRT_BF16, {3}};
  std::vector<uint8_t> v, w;
  std::string error;
  ASSERT_TRUE(train::syntheticBatch("x", f, 0, 5, 2, &v, &error)) << error;
  ASSERT_EQ(v.size(), 64000u * 4);
  const float *p = reinterpret_cast<const float *>(v.data());
  double sum = 0, sq = 0;
  for (int k = 0; k < 64000; ++k) {
    sum += p[k];
    sq += double(p[k]) * p[k];
  }
  EXPECT_NEAR(sum / 64000, 0.0, 0.02);
  EXPECT_NEAR(sq / 64000, 1.0, 0.03);
  ASSERT_TRUE(train::syntheticBatch("x", f, 0, 5, 2, &w, &error));
  EXPECT_EQ(v, w);
  ASSERT_TRUE(train::syntheticBatch("x", f, 0, 6, 2, &w, &error));
  EXPECT_NE(v, w);
  ASSERT_TRUE(train::syntheticBatch("x", f, 1, 5, 2, &w, &error));
  EXPECT_NE(v, w);
  ASSERT_TRUE(train::syntheticBatch("x2", f, 0, 5, 2, &w, &error));
  EXPECT_NE(v, w);

  ASSERT_TRUE(train::syntheticBatch("y", i, 0, 0, 7, &v, &error));
  const int64_t *q = reinterpret_cast<const int64_t *>(v.data());
  std::vector<int> seen(7, 0);
  for (int k = 0; k < 1000; ++k) {
    ASSERT_GE(q[k], 0);
    ASSERT_LT(q[k], 7);
    ++seen[q[k]];
  }
  for (int c : seen)
    EXPECT_GT(c, 100);
  ASSERT_TRUE(train::syntheticBatch("y", i32, 0, 0, 2, &v, &error));
  const int32_t *r = reinterpret_cast<const int32_t *>(v.data());
  int ones = 0;
  for (int k = 0; k < 1000; ++k) {
    ASSERT_TRUE(r[k] == 0 || r[k] == 1);
    ones += r[k];
  }
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
  ASSERT_TRUE(train::syntheticBatch("m", b, 0, 0, 100, &v, &error));
  for (uint8_t x : v)
    ASSERT_LE(x, 1);
  ASSERT_TRUE(train::syntheticBatch("h", h, 0, 0, 2, &v, &error));
  EXPECT_EQ(v.size(), 6u);
  EXPECT_FALSE(train::syntheticBatch("y", i32, 0, 0, int64_t(1) << 32, &v, &error));
  EXPECT_NE(error.find("input 'y' is i32: --synthetic-int-range 4294967296 does not fit"),
            std::string::npos)
      << error;
}

// Tests --device cuda where it cannot run: the runtime's message comes
// through, exit status 1. A build without the CUDA backend says it has none;
// one with it, on a host without a usable GPU, says why the device is not
// usable. (On a GPU host, the CUDA tests cover --device cuda.)
TEST_F(MptTrainTest, CudaDeviceUnavailable) {
  int available = 0;
  const char *detail = nullptr;
  const bool built = mptrt_backend_probe("cuda", &available, &detail) == MPTRT_OK;
  if (built && available)
    GTEST_SKIP() << "a CUDA device is usable here (" << detail << ")";
  writeToy();
  EXPECT_EQ(run(toyArgs() + " --steps 1 --device cuda"), 1) << log;
  const std::string prefix = "mpt-train: error: " + path("toy.mptp") + ": ";
  if (built)
    EXPECT_NE(err.find(prefix + "backend 'cuda' cannot run on this host: " + detail),
              std::string::npos)
        << err;
  else
    EXPECT_NE(err.find(prefix + "unknown backend 'cuda' (this build has: cpu; or auto)"),
              std::string::npos)
        << err;
  EXPECT_EQ(run(toyArgs() + " --steps 1 --device cpu --quiet"), 0) << log;
}

// Tests usage errors (exit 2) and --help (exit 0, every flag documented).
TEST_F(MptTrainTest, UsageErrors) {
  writeToy();
  const std::string plan = toyArgs();
  struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"--steps 1", "no plan given"},
      {plan, "--steps N is required"},
      {plan + " --steps", "option '--steps' needs a value"},
      {plan + " --steps ten", "option '--steps' needs a whole number from 0 to 1000000000000, "
                              "not 'ten'"},
      {plan + " --steps -1", "option '--steps' needs a whole number"},
      {plan + " --steps 1 --log-every 0", "option '--log-every' needs a whole number from 1"},
      {plan + " --steps 1 --save-every 0", "option '--save-every' needs a whole number from 1"},
      {plan + " --steps 1 --synthetic-int-range 0",
       "option '--synthetic-int-range' needs a whole number from 1"},
      {plan + " --steps 1 --seed x", "option '--seed' needs a whole number"},
      {plan + " --steps 1 --frobnicate", "unknown option '--frobnicate'"},
      {plan + " --steps 1 " + path("toy.mptp"), "more than one plan given"},
      {plan + " --steps 1 --input x", "option '--input' needs NAME=FILE"},
      {plan + " --steps 1 --input =a", "option '--input' needs NAME=FILE"},
      {plan + " --steps 1 --synthetic", "--synthetic and --input exclude each other"},
      {plan + " --steps 1 --save-every 2", "--save-every needs --save FILE"},
      {plan + " --steps 1 --resume a --param w=b", "--param and --resume exclude each other"},
      {plan + " --steps 1 --metrics", "option '--metrics' needs a value"},
      {plan + " --steps 1 --metrics ''", "option '--metrics' needs a value"},
      {plan + " --steps 1 --save ''", "option '--save' needs a value"},
      {plan + " --steps 1 --resume ''", "option '--resume' needs a value"},
      {plan + " --steps 1 --input x=" + path("x.npy"), "--input x given twice"},
      {plan + " --steps 1 --collect-ranges=", "--collect-ranges needs a file name"},
      {plan + " --steps 1 --collect-ranges=" + path("r.json") + " --check-finite=every-kernel",
       "--collect-ranges and --check-finite=every-kernel exclude each other"},
      {plan + " --steps 1 --profile", "option '--profile' needs a value"},
      {plan + " --steps 1 --profile " + path("p.json") + " --collect-ranges=" + path("r.json"),
       "--profile and --collect-ranges exclude each other"},
      {plan + " --steps 1 --profile " + path("p.json") + " --check-finite=every-kernel",
       "--profile and --check-finite=every-kernel exclude each other"},
      {plan + " --steps 1 --profile " + path("toy.mptp"),
       "--profile '" + path("toy.mptp") + "' names the same file as the plan"},
  };
  for (auto &c : cases) {
    EXPECT_EQ(run(c.args), 2) << c.args << "\n" << log;
    EXPECT_NE(err.find("mpt-train: " + c.message), std::string::npos) << c.args << "\n" << log;
    EXPECT_NE(err.find("usage: mpt-train"), std::string::npos) << c.args;
  }
  ASSERT_EQ(run("--help"), 0) << log;
  for (const char *flag : {"--input NAME=FILE",
                           "--synthetic ",
                           "--synthetic-int-range R",
                           "(default 2)",
                           "--seed S",
                           "--param NAME=FILE",
                           "--steps N",
                           "--entry NAME",
                           "--device auto|NAME",
                           "MPTRT_NUM_THREADS",
                           "--metrics FILE",
                           "--log-every K",
                           "--profile FILE",
                           "MPTRT_PROFILE=FILE",
                           "--quiet",
                           "--save FILE",
                           "--save-every K",
                           "--resume FILE",
                           "Exit status: 0 success, 1",
                           "2 usage error",
                           "SIGINT (Ctrl-C), SIGTERM, SIGHUP or SIGQUIT",
                           "130 (SIGINT)",
                           "143 (SIGTERM)",
                           "SIGUSR1 writes the checkpoint",
                           "a second signal aborts at once",
                           "128 + signal"})
    EXPECT_NE(out.find(flag), std::string::npos) << flag;
  // An unwritable metrics file is a data error.
  EXPECT_EQ(run(plan + " --steps 1 --metrics " + path("no/such/dir/m.jsonl")), 1) << log;
  EXPECT_NE(err.find("cannot open metrics file '" + path("no/such/dir/m.jsonl") + "'"),
            std::string::npos)
      << err;
}

// Tests --profile: the steps run profiled compute what plain steps compute
// (same metrics), the JSON names every kernel kind of the toy plan and its
// two nodes, counts the steps after the warm-up, and its per-kernel times
// add up to its totals; stderr has both top-20 tables. --quiet keeps the
// file and drops the tables; MPTRT_PROFILE does what --profile does, and
// one step is profiled without a warm-up.
TEST_F(MptTrainTest, ProfileWritesKindsAndNodes) {
  writeToy();
  ASSERT_EQ(run(toyArgs() + " --steps 4 --metrics " + path("plain.jsonl")), 0) << log;
  ASSERT_EQ(
      run(toyArgs() + " --steps 4 --metrics " + path("m.jsonl") + " --profile " + path("p.json")),
      0)
      << log;
  const std::vector<std::string> plain = lines(readText("plain.jsonl")),
                                 profiled = lines(readText("m.jsonl"));
  ASSERT_EQ(profiled.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(withoutTime(profiled[i]), withoutTime(plain[i]));

  const std::string p = readText("p.json");
  EXPECT_NE(p.find("\"entry\": \"train_step\", \"device\": \"cpu\", \"steps\": 3, "
                   "\"warmup_steps\": 1"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("\"kernels_per_step\": 13"), std::string::npos) << p;
  const size_t byKind = p.find("\"by_kind\": ["), byNode = p.find("\"by_node\": ["),
               perKernel = p.find("\"kernels\": [");
  ASSERT_TRUE(byKind < byNode && byNode < perKernel) << p;
  const std::string kinds = p.substr(byKind, byNode - byKind);
  for (const char *kind : {"mul", "reduce_sum", "add", "reduce_l2", "greater", "copy", "sub"})
    EXPECT_NE(kinds.find(std::string("{\"kind\": \"") + kind + "\", \"kernels\": "),
              std::string::npos)
        << kind << "\n"
        << p;
  EXPECT_NE(kinds.find("{\"kind\": \"mul\", \"kernels\": 3, "), std::string::npos) << p;
  const std::string nodes = p.substr(byNode, perKernel - byNode);
  EXPECT_NE(nodes.find("{\"node\": \"sum_xw\", \"phase\": \"forward\", \"kernels\": 1, "),
            std::string::npos)
      << p;
  EXPECT_NE(nodes.find("{\"node\": \"grad_w\", \"phase\": \"backward\", \"kernels\": 1, "),
            std::string::npos)
      << p;
  EXPECT_NE(nodes.find("{\"node\": \"\", \"phase\": \"unknown\", \"kernels\": 11, "),
            std::string::npos)
      << p;
  // The per-kernel sums add up to kernel_ms_per_step (times 3 steps).
  double sum = 0;
  size_t count = 0;
  for (size_t at = p.find("\"position\": ", perKernel); at != std::string::npos;
       at = p.find("\"position\": ", at + 1)) {
    const double ms = field(p.substr(at), "ms");
    EXPECT_GE(ms, 0.0);
    sum += ms;
    ++count;
  }
  EXPECT_EQ(count, 13u);
  EXPECT_NEAR(sum / 3, field(p, "kernel_ms_per_step"), 1e-6 + 1e-6 * sum);
  EXPECT_LE(field(p, "kernel_ms_per_step"), field(p, "wall_ms_per_step"));

  EXPECT_NE(err.find("profile of 'train_step' on cpu: 3 steps profiled after 1 warm-up step "
                     "left out, 13 kernels"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("top 7 of 7 kinds:"), std::string::npos) << err;
  EXPECT_NE(err.find("top 3 of 3 nodes:"), std::string::npos) << err;
  EXPECT_NE(err.find("sum_xw (forward: reduce_sum)"), std::string::npos) << err;
  EXPECT_NE(err.find("(no node) (unknown: add copy greater mul reduce_l2 reduce_sum sub)"),
            std::string::npos)
      << err;

  ASSERT_EQ(run(toyArgs() + " --steps 2 --quiet --profile " + path("q.json")), 0) << log;
  EXPECT_EQ(err.find("kinds:"), std::string::npos) << err;
  EXPECT_NE(readText("q.json").find("\"steps\": 1, \"warmup_steps\": 1"), std::string::npos);

  const pid_t pid = start(toyArgs() + " --steps 1 --quiet", "MPTRT_PROFILE=" + path("e.json"));
  const int st = finish(pid);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << log;
  EXPECT_NE(readText("e.json").find("\"steps\": 1, \"warmup_steps\": 0"), std::string::npos)
      << readText("e.json");
  // The variable's name in its usage error.
  const pid_t bad = start(toyArgs() + " --steps 1 --collect-ranges=" + path("r.json"),
                          "MPTRT_PROFILE=" + path("e2.json"));
  const int badSt = finish(bad);
  EXPECT_TRUE(WIFEXITED(badSt) && WEXITSTATUS(badSt) == 2) << log;
  EXPECT_NE(err.find("MPTRT_PROFILE and --collect-ranges exclude each other"), std::string::npos)
      << err;
}

} // namespace
