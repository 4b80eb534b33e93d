//===- MixedPrecisionClaimsTest.cpp - bf16 / fp16 training claims --------===//
//
// The mixed-precision training claims, each on a real training run compiled
// by mpt-compile and driven step by step through the runtime:
//
//  Claim 1: BF16 (no loss scaling) tracks FP32 on charlm, a small
//           character-level GPT, and the FP32 run matches PyTorch.
//  Claim 2: FP16 without loss scaling loses the small gradients of
//           smallgrad (most fc1..fc3 gradient elements are exactly zero)
//           and ends clearly worse than FP32.
//  Claim 3: FP16 with the dynamic loss scale recovers FP32's curve on
//           smallgrad, with essentially no zero gradients.
//  Claim 4: FP8 with delayed or current scaling tracks BF16 on charlm;
//           FP8 with every scale at 1 does visibly worse.
//  Claim 5: bf16 master weights with stochastic rounding track FP32
//           masters on charlm; rounded to nearest, small updates stall.
//
// Every measured number is printed (and recorded as a test property), so a
// CI log shows how far each run is from its bound. The bounds and the
// measurements they come from are explained at each test.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <regex>

using namespace mpt::training_test;

namespace {

/// One training run's per-step record.
struct Curve {
  std::vector<double> loss;
  std::vector<double> lossScale;
  int skipped = 0;
  /// Per step, the fraction of exactly-zero elements of each `grad.<p>`
  /// output named in `zeroGradParams`.
  std::vector<std::vector<double>> zeroFraction;
  double seconds = 0;
};

/// Loads `plan` and runs `steps` train_steps; step s (0-based) binds rows
/// [B s, B s + B) mod N of each input's data (B = `batch`, N = rows of the
/// data, a multiple of B): the fixtures' batches in order, wrapping.
/// `atStart` and `atEnd`, when given, see the trainer before the first
/// step and after the last.
void train(const std::string &plan,
           const std::vector<std::pair<std::string, Tensor>> &data,
           int64_t batch, int steps,
           const std::vector<std::string> &zeroGradParams, Curve *curve,
           const std::function<void(const Trainer &)> &atStart = {},
           const std::function<void(const Trainer &)> &atEnd = {}) {
  Trainer t;
  std::string msg;
  ASSERT_TRUE(t.load(plan, &msg)) << msg;
  if (atStart)
    atStart(t);
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    for (const auto &[name, tensor] : data) {
      const int64_t batches = tensor.shape[0] / batch;
      ASSERT_TRUE(t.bind(name, tensor.rows((s % batches) * batch, batch), &msg))
          << msg;
    }
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << "step " << s + 1 << ": " << msg;
    curve->loss.push_back(o.loss);
    curve->lossScale.push_back(o.lossScale);
    curve->skipped += o.skipped;
    std::vector<double> zeros;
    for (const std::string &p : zeroGradParams) {
      std::vector<float> g;
      ASSERT_TRUE(t.outputF32("grad." + p, &g, &msg)) << msg;
      zeros.push_back(zeroFraction(g));
    }
    curve->zeroFraction.push_back(zeros);
  }
  curve->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (atEnd)
    atEnd(t);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

void report(const std::string &key, double value) {
  ::testing::Test::RecordProperty(key, fmt(value));
  std::cout << "  " << key << " = " << fmt(value) << "\n";
}

Tensor load(const std::string &rel) {
  Tensor t;
  std::string msg;
  EXPECT_TRUE(loadNpy(fixturePath(rel), &t, &msg)) << msg;
  return t;
}

//===----------------------------------------------------------------------===//
// Claim 1: charlm, FP32 vs BF16.
//===----------------------------------------------------------------------===//

// Both runs: AdamW lr 3e-3, wd 0, constant LR, batch 16 of the 1024
// training windows in order -- the fixture's PyTorch recipe -- for all 300
// steps of its reference curve (about 30 ms per step for either plan on
// two cores, so ~20 s in all).
const int kCharSteps = 300;
const int kCharTail = 32; // "the last 32 steps"

// Bounds (measured on this machine in brackets):
//  * FP32 vs PyTorch (reference_loss_fp32.npy), every step:
//    |loss - ref| <= 1e-4 [max 1.4e-6]. The same FP32 maths in a different
//    summation order drifts apart slowly; 1e-4 leaves room for other BLAS
//    kernels (CPU types) while a wrong gradient or optimizer detail moves
//    the curve by 1e-2 or more within a few steps.
//  * BF16 vs FP32, mean loss of the last 32 steps: within 1% [0.017%; over
//    the windows ending at steps 150, 200, 236, 268 and 300 the gap is at
//    most 0.11%]. 1% is about what FP32 itself gains over its last 32 steps
//    (2.066 -> 2.047), so a BF16 run that learned noticeably slower fails.
//  * Learning happened, for both: the last-32 mean is below 0.6x the
//    step-1 loss [0.50x: 2.047 vs 4.131] and below the unigram entropy of
//    the training targets (3.00 nats; a model that ignores the context
//    cannot beat it) [2.047].
TEST(MixedPrecisionClaims, Claim1Bf16TracksFp32OnCharLM) {
  TempDir dir;
  std::string msg;
  const std::vector<std::string> common = {"--optimizer=adamw", "--lr=3e-3",
                                           "--weight-decay=0",
                                           "--loss-scale=none"};
  auto flags = [&](const char *precision) {
    std::vector<std::string> f = common;
    f.push_back(std::string("--precision=") + precision);
    return f;
  };
  const std::string onnx = fixturePath("charlm/model.onnx");
  ASSERT_TRUE(
      compileTrainingPlan(onnx, flags("fp32"), dir.file("fp32.mptp"), &msg))
      << msg;
  ASSERT_TRUE(
      compileTrainingPlan(onnx, flags("bf16"), dir.file("bf16.mptp"), &msg))
      << msg;

  const Tensor x = load("charlm/train_x.npy"), y = load("charlm/train_y.npy");
  ASSERT_EQ(x.dtype, MPTRT_I32);
  ASSERT_EQ(x.shape, (std::vector<int64_t>{1024, 32}));
  const std::vector<std::pair<std::string, Tensor>> data = {{"idx", x},
                                                            {"targets", y}};
  Curve fp32, bf16;
  ASSERT_NO_FATAL_FAILURE(
      train(dir.file("fp32.mptp"), data, 16, kCharSteps, {}, &fp32));
  ASSERT_NO_FATAL_FAILURE(
      train(dir.file("bf16.mptp"), data, 16, kCharSteps, {}, &bf16));

  // FP32 against PyTorch, step by step.
  const std::vector<float> ref = load("charlm/reference_loss_fp32.npy").f32();
  ASSERT_GE(ref.size(), size_t(kCharSteps));
  double maxDiff = 0;
  int worstStep = 0;
  for (int s = 0; s < kCharSteps; ++s) {
    const double d = std::fabs(fp32.loss[s] - ref[s]);
    if (!(d <= maxDiff)) { // NaN counts as worst
      maxDiff = d;
      worstStep = s + 1;
      if (std::isnan(d))
        break;
    }
  }
  EXPECT_LE(maxDiff, 1e-4) << "FP32 loss differs from PyTorch's at step "
                           << worstStep << ": " << fp32.loss[worstStep - 1]
                           << " vs " << ref[worstStep - 1];

  // Unigram entropy of the training targets (nats).
  std::vector<double> counts(60, 0);
  const int32_t *targets = reinterpret_cast<const int32_t *>(y.bytes.data());
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_TRUE(targets[i] >= 0 && targets[i] < 60);
    counts[targets[i]] += 1;
  }
  double unigram = 0;
  for (double c : counts)
    if (c > 0)
      unigram -= c / double(y.numel()) * std::log(c / double(y.numel()));

  const double tail32 = mean(fp32.loss, kCharSteps - kCharTail, kCharSteps);
  const double tailBf16 = mean(bf16.loss, kCharSteps - kCharTail, kCharSteps);
  const double relGap = std::fabs(tailBf16 - tail32) / tail32;
  double maxStepGap = 0;
  for (int s = 0; s < kCharSteps; ++s)
    maxStepGap = std::max(maxStepGap, std::fabs(bf16.loss[s] - fp32.loss[s]));

  std::cout << "charlm, " << kCharSteps << " steps:\n";
  report("fp32_loss_step1", fp32.loss[0]);
  report("bf16_loss_step1", bf16.loss[0]);
  report("fp32_loss_last32_mean", tail32);
  report("bf16_loss_last32_mean", tailBf16);
  report("bf16_vs_fp32_last32_rel_gap", relGap);
  report("bf16_vs_fp32_max_step_abs_gap", maxStepGap);
  report("fp32_vs_pytorch_max_abs_diff", maxDiff);
  report("unigram_entropy_nats", unigram);
  report("fp32_ms_per_step", 1e3 * fp32.seconds / kCharSteps);
  report("bf16_ms_per_step", 1e3 * bf16.seconds / kCharSteps);

  EXPECT_LE(relGap, 0.01) << "BF16 last-32 mean " << tailBf16 << " vs FP32 "
                          << tail32;
  for (const auto &[name, c] :
       {std::pair<const char *, const Curve *>{"fp32", &fp32},
        std::pair<const char *, const Curve *>{"bf16", &bf16}}) {
    const double tail = mean(c->loss, kCharSteps - kCharTail, kCharSteps);
    EXPECT_TRUE(std::isfinite(tail)) << name;
    EXPECT_LT(tail, 0.6 * c->loss[0])
        << name << ": the loss did not come down enough";
    EXPECT_LT(tail, unigram) << name << ": not below the unigram entropy";
    EXPECT_EQ(c->skipped, 0) << name;
    for (double s : c->lossScale)
      ASSERT_EQ(s, 1.0) << name << ": --loss-scale=none must use scale 1";
  }
}

//===----------------------------------------------------------------------===//
// Claim 4: charlm, BF16 vs FP8 (E4M3 forward, E5M2 gradients) with delayed
// scaling, current scaling, and every scale forced to 1.
//===----------------------------------------------------------------------===//

// Claim 1's recipe and steps; FP8 runs the contractions through the CPU
// reference scaled kernels (about 60 ms per step on two cores).
//
// Bounds (measured on this machine in brackets), on the mean loss of the
// last 32 steps:
//  * delayed and current scaling vs BF16: within 2% [delayed +0.46%]. E4M3
//    keeps 3 mantissa bits where bf16 keeps 7, so the bound is twice claim
//    1's 1%; BF16's own last-32 mean falls 6% over the last 100 steps
//    (2.177 at step 200 -> 2.042), so an FP8 run some 30 steps behind
//    fails.
//  * all scales 1 (fp8-scaling=none: E4M3 activations and E5M2 gradients
//    at their raw magnitude, small gradients flushed): worse than BF16 by
//    more than twice the delayed run's gap and by more than 1% [+2.6%].
//  * every run learns: the last-32 mean is below 0.6x its step-1 loss.
TEST(MixedPrecisionClaims, Claim4Fp8TracksBf16OnCharLM) {
  TempDir dir;
  std::string msg;
  const std::vector<std::string> common = {"--optimizer=adamw", "--lr=3e-3",
                                           "--weight-decay=0",
                                           "--loss-scale=none"};
  const std::string onnx = fixturePath("charlm/model.onnx");
  struct Run {
    const char *name;
    std::vector<std::string> flags;
    Curve curve;
  } runs[] = {{"bf16", {"--precision=bf16"}, {}},
              {"fp8_delayed", {"--precision=fp8", "--fp8-scaling=delayed"}, {}},
              {"fp8_current", {"--precision=fp8", "--fp8-scaling=current"}, {}},
              {"fp8_unscaled", {"--precision=fp8", "--fp8-scaling=none"}, {}}};
  const std::vector<std::pair<std::string, Tensor>> data = {
      {"idx", load("charlm/train_x.npy")},
      {"targets", load("charlm/train_y.npy")}};
  std::cout << "charlm, " << kCharSteps << " steps:\n";
  for (Run &r : runs) {
    std::vector<std::string> flags = common;
    flags.insert(flags.end(), r.flags.begin(), r.flags.end());
    const std::string plan = dir.file(std::string(r.name) + ".mptp");
    ASSERT_TRUE(compileTrainingPlan(onnx, flags, plan, &msg))
        << r.name << ": " << msg;
    ASSERT_NO_FATAL_FAILURE(train(plan, data, 16, kCharSteps, {}, &r.curve));
    const double tail = mean(r.curve.loss, kCharSteps - kCharTail, kCharSteps);
    report(std::string(r.name) + "_loss_step1", r.curve.loss[0]);
    report(std::string(r.name) + "_loss_last32_mean", tail);
    report(std::string(r.name) + "_ms_per_step",
           1e3 * r.curve.seconds / kCharSteps);
    EXPECT_TRUE(std::isfinite(tail)) << r.name;
    EXPECT_LT(tail, 0.6 * r.curve.loss[0])
        << r.name << ": the loss did not come down enough";
    EXPECT_EQ(r.curve.skipped, 0) << r.name;
  }
  const double bf16 =
      mean(runs[0].curve.loss, kCharSteps - kCharTail, kCharSteps);
  auto gap = [&](const Run &r) {
    return (mean(r.curve.loss, kCharSteps - kCharTail, kCharSteps) - bf16) /
           bf16;
  };
  const double delayed = gap(runs[1]), current = gap(runs[2]),
               unscaled = gap(runs[3]);
  report("fp8_delayed_vs_bf16_last32_rel_gap", delayed);
  report("fp8_current_vs_bf16_last32_rel_gap", current);
  report("fp8_unscaled_vs_bf16_last32_rel_gap", unscaled);
  EXPECT_LE(std::fabs(delayed), 0.02)
      << "FP8 with delayed scaling does not track BF16";
  EXPECT_LE(std::fabs(current), 0.02)
      << "FP8 with current scaling does not track BF16";
  EXPECT_GT(unscaled, 2 * std::fabs(delayed))
      << "scales of 1 should do visibly worse";
  EXPECT_GT(unscaled, 0.01) << "scales of 1 should do visibly worse";
}

//===----------------------------------------------------------------------===//
// Claim 5: charlm, FP32 vs bf16 vs bf16-sr master weights.
//===----------------------------------------------------------------------===//

/// The fraction of the LayerNorm gains' elements (parameters `*.ln*.weight`,
/// initialised to 1.0) whose bits differ between two snapshots.
double lnGainsChanged(const Trainer &t,
                      const std::map<std::string, std::vector<uint8_t>> &a,
                      const std::map<std::string, std::vector<uint8_t>> &b) {
  static const std::regex gain(R"((^|\.)ln[^.]*\.weight$)");
  size_t changed = 0, total = 0;
  for (const auto &[name, before] : a) {
    if (!std::regex_search(name, gain))
      continue;
    mptrt::TensorInfo info;
    EXPECT_TRUE(t.model().info(MPTRT_PARAMETER, name, &info)) << name;
    const std::vector<uint8_t> &after = b.at(name);
    const size_t n = static_cast<size_t>(info.numel()),
                 width = before.size() / n;
    for (size_t i = 0; i < n; ++i)
      changed += std::memcmp(&before[i * width], &after[i * width], width) != 0;
    total += n;
  }
  EXPECT_GT(total, 0u) << "no LayerNorm gains found";
  return total ? double(changed) / double(total) : 0.0;
}

// Three runs of charlm with bf16 compute, AdamW lr 1e-3 (a third of the
// fixture's rate, so that most updates of a weight near 1.0 are below half
// of bf16's spacing there, 2^-8), wd 0, 150 steps, the masters kept in
// fp32, bf16 (rounded to nearest) and bf16-sr. Bounds (measured in
// brackets):
//  * bf16-sr vs fp32 masters, mean loss of the last 32 steps: within 1%
//    [-0.025%; bench/master_weights_charlm.py at 600 steps: -0.02%].
//  * bf16 masters leave every LayerNorm gain at 1.0: an AdamW step moves a
//    weight by about lr = 1e-3 < 2^-9, which rounds away [0% changed];
//    bf16-sr moves most of them [93%; fp32 masters 100%].
//  * bf16 masters end behind bf16-sr, by more than bf16-sr is from fp32
//    [+0.73% against -0.025%].
TEST(MixedPrecisionClaims, Claim5Bf16SrMastersTrackFp32OnCharLM) {
  TempDir dir;
  std::string msg;
  const int steps = 150, tail = 32;
  const std::vector<std::string> common = {
      "--precision=bf16", "--optimizer=adamw", "--lr=1e-3", "--weight-decay=0"};
  const std::string onnx = fixturePath("charlm/model.onnx");
  const std::vector<std::pair<std::string, Tensor>> data = {
      {"idx", load("charlm/train_x.npy")},
      {"targets", load("charlm/train_y.npy")}};
  struct Run {
    const char *masters;
    Curve curve;
    double lnChanged = 0;
  } runs[] = {{"fp32", {}}, {"bf16", {}}, {"bf16-sr", {}}};
  for (Run &r : runs) {
    std::vector<std::string> flags = common;
    flags.push_back(std::string("--master-weights=") + r.masters);
    const std::string plan = dir.file(std::string(r.masters) + ".mptp");
    ASSERT_TRUE(compileTrainingPlan(onnx, flags, plan, &msg))
        << r.masters << ": " << msg;
    std::map<std::string, std::vector<uint8_t>> first, last;
    ASSERT_NO_FATAL_FAILURE(train(
        plan, data, 16, steps, {}, &r.curve,
        [&](const Trainer &t) { ASSERT_TRUE(t.snapshot(&first, &msg)) << msg; },
        [&](const Trainer &t) {
          ASSERT_TRUE(t.snapshot(&last, &msg)) << msg;
          r.lnChanged = lnGainsChanged(t, first, last);
        }));
    const std::string key = std::string("masters_") + r.masters;
    report(key + "_loss_last32_mean", mean(r.curve.loss, steps - tail, steps));
    report(key + "_ln_gains_changed", r.lnChanged);
    EXPECT_EQ(r.curve.skipped, 0) << r.masters;
  }
  const double fp32 = mean(runs[0].curve.loss, steps - tail, steps);
  const double nearest =
      mean(runs[1].curve.loss, steps - tail, steps) / fp32 - 1;
  const double sr = mean(runs[2].curve.loss, steps - tail, steps) / fp32 - 1;
  report("bf16_masters_vs_fp32_last32_rel_gap", nearest);
  report("bf16sr_masters_vs_fp32_last32_rel_gap", sr);
  EXPECT_LE(std::fabs(sr), 0.01) << "bf16-sr masters do not track FP32 masters";
  EXPECT_EQ(runs[1].lnChanged, 0.0)
      << "round-to-nearest bf16 masters moved a LayerNorm gain";
  EXPECT_GT(runs[2].lnChanged, 0.5)
      << "stochastic rounding left most LayerNorm gains at 1.0";
  EXPECT_GT(nearest, std::fabs(sr)) << "bf16 masters should lag bf16-sr ones";
}

//===----------------------------------------------------------------------===//
// Claims 2 and 3: smallgrad, FP32 vs FP16 without and with loss scaling.
//===----------------------------------------------------------------------===//

// The fixture's recipe: AdamW lr 3e-3, wd 0, batch 64 of 512 rows in order,
// 200 steps; the MSE loss added by the compiler. Each run takes well under
// a second.
const int kSmallSteps = 200;
const std::vector<std::string> kEarlyWeights = {"fc1.weight", "fc2.weight",
                                                "fc3.weight"};

void smallgradRun(const TempDir &dir, const std::string &name,
                  const std::vector<std::string> &precisionFlags,
                  Curve *curve) {
  std::vector<std::string> flags = {"--optimizer=adamw",    "--lr=3e-3",
                                    "--weight-decay=0",     "--loss-kind=mse",
                                    "--loss-output=y",      "--label-input=t",
                                    "--emit-gradients=true"};
  flags.insert(flags.end(), precisionFlags.begin(), precisionFlags.end());
  std::string msg;
  const std::string plan = dir.file(name + ".mptp");
  ASSERT_TRUE(compileTrainingPlan(fixturePath("smallgrad/model.onnx"), flags,
                                  plan, &msg))
      << msg;
  const std::vector<std::pair<std::string, Tensor>> data = {
      {"x", load("smallgrad/x.npy")}, {"t", load("smallgrad/t.npy")}};
  ASSERT_NO_FATAL_FAILURE(
      train(plan, data, 64, kSmallSteps, kEarlyWeights, curve));
}

double last8(const Curve &c) {
  return mean(c.loss, kSmallSteps - 8, kSmallSteps);
}
double first8(const Curve &c) { return mean(c.loss, 0, 8); }

/// The mean over all steps of the zero fraction of early weight `i`.
double meanZero(const Curve &c, size_t i) {
  double s = 0;
  for (const auto &z : c.zeroFraction)
    s += z[i];
  return s / double(c.zeroFraction.size());
}

double maxZero(const Curve &c) {
  double m = 0;
  for (const auto &z : c.zeroFraction)
    for (double v : z)
      m = std::max(m, v);
  return m;
}

/// max_s |loss_s - ref_s| / max_s |ref_s| against a fixture curve.
double curveDiff(const Curve &c, const std::string &refFile) {
  const std::vector<float> ref = load("smallgrad/" + refFile).f32();
  EXPECT_GE(ref.size(), size_t(kSmallSteps));
  double maxRef = 0, maxDiff = 0;
  for (int s = 0; s < kSmallSteps && s < int(ref.size()); ++s) {
    maxRef = std::max(maxRef, double(std::fabs(ref[s])));
    maxDiff = std::max(maxDiff, std::fabs(c.loss[s] - ref[s]));
  }
  return maxDiff / maxRef;
}

void reportRun(const std::string &name, const Curve &c) {
  std::cout << name << ":\n";
  report(name + "_loss_first8_mean", first8(c));
  report(name + "_loss_last8_mean", last8(c));
  for (size_t i = 0; i < kEarlyWeights.size(); ++i) {
    report(name + "_zero_fraction_step1_" + kEarlyWeights[i],
           c.zeroFraction[0][i]);
    report(name + "_zero_fraction_mean_" + kEarlyWeights[i], meanZero(c, i));
  }
  report(name + "_skipped_steps", c.skipped);
  report(name + "_final_loss_scale", c.lossScale.back());
  report(name + "_ms_per_step", 1e3 * c.seconds / kSmallSteps);
}

/// The FP32 baseline both claims compare with, checked on its own: it
/// matches PyTorch's FP32 curve and learns. Bounds: each step's loss within
/// 1e-4 of the largest reference loss [measured 1.0e-7 relative]; AdamW's
/// eps (1e-8) is comparable to these gradients (|g| ~ 1e-7), so a wrong eps
/// or bias correction moves the curve by far more. Learning: the last-8
/// mean below 0.2x the first-8 mean [PyTorch and we: 0.14x].
void fp32Baseline(const TempDir &dir, Curve *fp32) {
  ASSERT_NO_FATAL_FAILURE(smallgradRun(
      dir, "fp32", {"--precision=fp32", "--loss-scale=none"}, fp32));
  reportRun("fp32", *fp32);
  const double diff = curveDiff(*fp32, "reference_loss_fp32.npy");
  report("fp32_vs_pytorch_max_rel_diff", diff);
  EXPECT_LE(diff, 1e-4);
  EXPECT_LT(last8(*fp32), 0.2 * first8(*fp32));
  // In FP32 no early-layer gradient element is exactly zero at step 1
  // (PyTorch: none), and over the run at most a stray one in 10^3.
  for (size_t i = 0; i < kEarlyWeights.size(); ++i) {
    EXPECT_EQ(fp32->zeroFraction[0][i], 0.0) << kEarlyWeights[i];
    EXPECT_LT(meanZero(*fp32, i), 1e-3) << kEarlyWeights[i];
  }
}

} // namespace

// Claim 2. Bounds (PyTorch autocast / ours in brackets):
//  * zero fraction of each of fc1..fc3's weight gradients at step 1 > 0.5
//    and its mean over the 200 steps > 0.9 [1.0 / 1.0 for all three: the
//    gradients underflow FP16 entirely]; FP32: 0.
//  * last-8 mean loss > 2x FP32's [PyTorch 4.78x]: only fc4 learns.
//  * the run is PyTorch's FP16 run: last-8 mean within 5% of
//    reference_loss_fp16_noscale.npy's [0.13%]. Our FP16 emulation is not
//    op-for-op autocast's, hence 5%, which still separates it from FP32 and
//    from the scaled run by 4x.
TEST(MixedPrecisionClaims, Claim2Fp16WithoutLossScalingUnderflows) {
  TempDir dir;
  Curve fp32, fp16;
  ASSERT_NO_FATAL_FAILURE(fp32Baseline(dir, &fp32));
  ASSERT_NO_FATAL_FAILURE(smallgradRun(
      dir, "fp16_noscale", {"--precision=fp16", "--loss-scale=none"}, &fp16));
  reportRun("fp16_noscale", fp16);
  const double ratio = last8(fp16) / last8(fp32);
  report("fp16_noscale_over_fp32_last8", ratio);
  const std::vector<float> ref =
      load("smallgrad/reference_loss_fp16_noscale.npy").f32();
  std::vector<double> refD(ref.begin(), ref.end());
  const double refLast8 = mean(refD, kSmallSteps - 8, kSmallSteps);
  const double vsPyTorch = std::fabs(last8(fp16) - refLast8) / refLast8;
  report("fp16_noscale_vs_pytorch_last8_rel_diff", vsPyTorch);

  for (size_t i = 0; i < kEarlyWeights.size(); ++i) {
    EXPECT_GT(fp16.zeroFraction[0][i], 0.5) << kEarlyWeights[i];
    EXPECT_GT(meanZero(fp16, i), 0.9) << kEarlyWeights[i];
  }
  EXPECT_GT(ratio, 2.0);
  EXPECT_LE(vsPyTorch, 0.05);
  EXPECT_EQ(fp16.skipped, 0) << "--loss-scale=none never skips";
}

// Claim 3. Bounds:
//  * last-8 mean loss within 1% of FP32's [ours 0.002%, PyTorch 0.006%]:
//    with the scale at 65536 the FP16 gradients are representable and the
//    only difference left is FP16 rounding of activations (2^-11 relative),
//    which averages out; without scaling the gap is 380%.
//  * zero fraction of fc1..fc3's weight gradients below 0.01 at every step
//    [PyTorch at most 0.0005].
//  * the run is PyTorch's scaled FP16 run: every step's loss within 1e-3 of
//    the largest reference loss [6.5e-5].
TEST(MixedPrecisionClaims, Claim3Fp16DynamicScalingRecoversFp32) {
  TempDir dir;
  Curve fp32, fp16;
  ASSERT_NO_FATAL_FAILURE(fp32Baseline(dir, &fp32));
  ASSERT_NO_FATAL_FAILURE(
      smallgradRun(dir, "fp16_dynamic",
                   {"--precision=fp16", "--loss-scale=dynamic"}, &fp16));
  reportRun("fp16_dynamic", fp16);
  const double gap = std::fabs(last8(fp16) - last8(fp32)) / last8(fp32);
  report("fp16_dynamic_vs_fp32_last8_rel_gap", gap);
  const double vsPyTorch =
      curveDiff(fp16, "reference_loss_fp16_dynamic_scale.npy");
  report("fp16_dynamic_vs_pytorch_max_rel_diff", vsPyTorch);
  report("fp16_dynamic_max_zero_fraction", maxZero(fp16));

  EXPECT_LE(gap, 0.01);
  EXPECT_LT(maxZero(fp16), 0.01);
  EXPECT_LE(vsPyTorch, 1e-3);
  EXPECT_EQ(fp16.lossScale[0], 65536.0f) << "the default initial scale (2^16)";
}
