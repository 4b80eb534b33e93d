//===- ZooParityTest.cpp - one training step of real models vs float64 ---===//
//
// test/fixtures/parity/<model> (scripts/gen_parity_fixtures.py) holds small
// real models exported from PyTorch in training mode (training-mode batch
// norm, dropout p = 0), one batch, and float64 PyTorch references: the loss
// and every gradient at the initial weights, every parameter after one SGD
// step, and the losses of 10 SGD+momentum and 10 AdamW steps on that batch.
// For each model we compile the same steps with mpt-compile --train (the
// cross-entropy loss added by --loss-kind) and check, in FP32:
//
//   loss                |l - l64| / |l64|
//   gradient of p       ||g - g64|| / ||g64||                  (per parameter)
//   p after SGD         ||p1 - p1_64|| / ||p1_64 - p0||        (the update's
//   error) 10-step trajectories max_i |l_i - l64_i| / |l64_i| BN running
//   stats max over buffers ||b - b64|| / ||b64||, after steps
//                       1 and 10 of the momentum trajectory
//
// each against the tolerance the generator wrote into the fixture's
// tolerances.txt (and meta.json): max(10 x spread, 1e-5), where the spread
// is PyTorch FP32's value of the same metric against float64 and, for models
// with kinks (ReLU, ReLU6, max-pool), also the largest value over six
// float64 runs with fp32-rounding-level perturbations of weights and inputs
// (a kink crossing moves a gradient by far more than rounding does, and a
// fixed FP32 run may land either way). Nothing here is tuned to MPT's
// results; the numbers it prints are the table in docs/parity.md. Measured:
// every FP32 check within 0.33 of its tolerance (the worst: resnet18's
// stages.2.branch2.1.weight update); the checks can fail: an SGD lr
// off by 0.1% (1.001 for gpt2's 1.0) puts every update 100x over its
// tolerance, and an AdamW lr off by 0.1% the 5-step trajectory 9x over
// (tried by editing tolerances.txt, when the trajectories had 5 steps).
//
// The fixture root is $MPT_PARITY_FIXTURES when set (the larger sizes of
// scripts/parity-large.sh, same checks, same tolerance rule), else the
// committed test/fixtures/parity.
//
// BF16 and FP16 (dynamic loss scaling) runs of the same AdamW steps are
// held to a relative loss-trajectory bound against the float64 trajectory,
// set from PyTorch autocast's error on the same steps; see kAutocastFactor.
//
// Numerics mode: ZooParity checks the CPU's `reference` mode, the numerics
// oracle, against PyTorch: it pins it when MPTRT_CPU_NUMERICS is unset or
// empty (the backend's default is then `fast` in a build with oneDNN), and
// otherwise runs in the mode the variable names, so MPTRT_CPU_NUMERICS=fast
// runs the same checks on the fast mode by hand (docs/parity.md gives the
// result). ZooFastNumerics, at the end, holds the fast mode, the default,
// to the reference on every model (its error within twice the
// reference's, issue 27), and ZooFastNumericsRuns its run-to-run bits and
// threads.
//
//===----------------------------------------------------------------------===//
#include "TrainingHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>

using namespace mpt::training_test;

namespace {

// The BF16 / FP16 bound: max(kAutocastFactor x PyTorch autocast's error on
// the same 10 AdamW steps, kLowPrecisionFloor), both errors measured against
// the float64 trajectory (the generator ran CPU autocast, with a GradScaler
// for fp16, and wrote its error into tolerances.txt). Why relative to
// autocast: how far a low-precision run drifts depends on the model far
// more than on the format (the BN CNNs, with batch norm over 8 samples and
// AdamW's sign-like first step, amplify rounding to 3-8%; the transformers
// stay under 1%), and PyTorch's own mixed precision on the same steps
// measures that sensitivity. Why a factor 3: MPT's policy is not
// autocast's (other ops stay in FP32, BN and the norms' backward differ), so
// on a chaotic model the two land at similar but not equal distances;
// measured MPT / autocast ratios where the bound is above the floor are
// 0.55-2.47 (resnet18 bf16 3.5% vs 6.0%, fp16 3.4% vs 6.1%; mobilenetv2
// bf16 7.6% vs 4.4%, fp16 3.3% vs 3.0%; efficientnet bf16 8.2% vs 5.6%,
// fp16 1.0% vs 0.69%; llama bf16 0.97% vs 0.68%; vit_hf bf16 0.91% vs
// 0.37%, the closest to its bound). Why a 1% floor: bf16's unit roundoff
// is 0.39%, and a loss within 1% of float64 tracks it; on the smooth
// models autocast reaches 0.01-0.4% and MPT 0.003-0.5% (ratios up to 3.3,
// gpt2 fp16: 1.1e-3 vs 3.3e-4), where 3x autocast would bound the luck of
// the rounding, not the precision policy. Measured numbers: docs/parity.md.
const double kAutocastFactor = 3.0;
const double kLowPrecisionFloor = 0.01;

// The FP32 trajectories are also held to the model-zoo claim: MPT's error
// against float64 at most kSpreadFactor x PyTorch FP32's own, over all the
// steps. "PyTorch FP32's own" is the larger of one FP32 run's error and the
// largest of six float64 runs whose weights and inputs were perturbed at
// FP32's rounding level (the generator's spread_perturbed): one FP32 run is
// one draw from what rounding can do to a trajectory, and on some it is a
// lucky one (mobilenetv2's 10 momentum steps: PyTorch FP32 7.6e-3 from
// float64, the perturbed float64 runs up to 1.9e-2, MPT 2.0e-2). Below
// kTrajectoryFloor, four FP32 roundings of the loss (2^-24 each), two runs
// differ by how the loss itself rounds. Measured: at most 1.43x (bert's
// momentum run), docs/parity.md.
const double kSpreadFactor = 2.0;
const double kTrajectoryFloor = 4 * 0x1p-24;

/// One fixture's tolerances.txt: "kind name tolerance spread_fp32
/// spread_perturbed" lines, "hyper name value" lines, and "denominator
/// grad|sgd name value" lines for gradients that are zero in exact
/// arithmetic (measured against the global gradient norm instead of their
/// own; see the generator).
struct Tolerances {
  std::map<std::string, std::map<std::string, double>> tol;
  /// The larger of the line's two spreads: PyTorch FP32's error and the
  /// largest of the perturbed float64 runs' (the generator measures both
  /// for every model).
  std::map<std::string, std::map<std::string, double>> spread;
  std::map<std::string, double> hyper;
  std::map<std::string, std::map<std::string, double>> denominator;
  /// "constant name rank": initializers that are constants of the exporter
  /// (0-d: the importer keeps them constant by itself) or buffers it stored
  /// like weights (rank > 0: the test freezes them, --freeze-initializer);
  /// none of them may become a parameter of the plan.
  std::vector<std::string> constants;
  std::vector<std::string> frozen;
  /// "flag name 0": import flags the graph needs to train as the module
  /// does (--batch-norm-training for the dynamo exports of BN networks).
  std::vector<std::string> flags;
};

bool readTolerances(const std::string &model, Tolerances *out,
                    std::string *message) {
  const std::string path = parityFixturePath(model + "/tolerances.txt");
  std::ifstream in(path);
  if (!in) {
    // A model missing from the root is a failure, never a skip: a run on
    // another root (MPT_PARITY_FIXTURES) selects its models with
    // --gtest_filter (scripts/parity-large.sh).
    *message =
        "cannot read " + path + ": no fixture for model '" + model + "' in " +
        parityFixtureRoot() +
        " (MPT_PARITY_FIXTURES selects the root; --gtest_filter the models)";
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    std::string kind, name;
    double value = NAN;
    ss >> kind >> name;
    if (kind == "denominator") {
      std::string param;
      ss >> param >> value;
      out->denominator[name][param] = value;
    } else {
      ss >> value;
      if (kind == "hyper")
        out->hyper[name] = value;
      else if (kind == "flag")
        out->flags.push_back(name);
      else if (kind == "constant") {
        out->constants.push_back(name);
        if (value > 0)
          out->frozen.push_back(name);
      } else if (kind != "autocast_adamw_trajectory") {
        out->tol[kind][name] = value;
        double fp32 = NAN, perturbed = NAN;
        ss >> fp32 >> perturbed;
        if (ss.fail() || !std::isfinite(fp32) || !std::isfinite(perturbed)) {
          *message = path + ": no spreads on line '" + line + "'";
          return false;
        }
        out->spread[kind][name] = std::max(fp32, perturbed);
      } else {
        out->tol[kind][name] = value;
      }
    }
    if (ss.fail() || !std::isfinite(value)) {
      *message = path + ": malformed line '" + line + "'";
      return false;
    }
  }
  return true;
}

std::string num(double v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
}

double absoluteL2(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

std::vector<double> widen(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// A test parameter is a fixture model, or a model and a variant of the
/// compile: "gpt2+fuse-attention" runs every check of gpt2 on plans
/// compiled with --fuse-attention (mpt.attention in place of the exported
/// matmul-softmax-matmul), against the same float64 references and
/// tolerances.
const char *const kFusedAttention = "+fuse-attention";

std::string modelOf(const std::string &param) {
  return param.substr(0, param.find('+'));
}

bool fusesAttention(const std::string &param) {
  return param.find(kFusedAttention) != std::string::npos;
}

/// Compiles the model of `param` with the cross-entropy loss, `flags` and
/// the variant's flags, loads the plan and binds the fixture's batch and
/// labels.
/// Binds the fixture's batch (input_<name>.npy, labels.npy) to every
/// input of the loaded plan.
void bindBatch(const std::string &model, Trainer *t) {
  std::string msg;
  for (const std::string &in : t->inputs()) {
    Tensor v;
    const std::string file =
        in == "labels" ? "labels.npy" : "input_" + in + ".npy";
    ASSERT_TRUE(loadNpy(parityFixturePath(model + "/" + file), &v, &msg))
        << msg;
    ASSERT_TRUE(t->bind(in, v, &msg)) << msg;
  }
}

void setUp(const TempDir &dir, const std::string &param,
           const std::vector<std::string> &flags, Trainer *t) {
  const std::string model = modelOf(param);
  std::vector<std::string> all = {"--loss-kind=cross_entropy",
                                  "--loss-output=logits",
                                  "--label-input=labels"};
  if (fusesAttention(param))
    all.push_back("--fuse-attention");
  Tolerances tol;
  std::string error;
  ASSERT_TRUE(readTolerances(model, &tol, &error)) << error;
  all.insert(all.end(), flags.begin(), flags.end());
  for (const std::string &name : tol.frozen)
    all.push_back("--freeze-initializer=" + name);
  all.insert(all.end(), tol.flags.begin(), tol.flags.end());
  std::string msg;
  const std::string plan = dir.file(model + ".mptp");
  ASSERT_TRUE(compileTrainingPlan(parityFixturePath(model + "/model.onnx"), all,
                                  plan, &msg))
      << msg;
  ASSERT_TRUE(t->load(plan, &msg)) << msg;
  if (fusesAttention(param)) {
    // The variant is only a test of the fused op if the pass fused.
    std::vector<mptrt_kernel_info> kernels;
    ASSERT_TRUE(t->model().entryKernels("train_step", &kernels));
    int forward = 0, backward = 0;
    for (const mptrt_kernel_info &k : kernels) {
      forward += std::string(k.kind) == "attention";
      backward += std::string(k.kind) == "attention_grad";
    }
    ASSERT_GT(forward, 0) << model << ": --fuse-attention fused nothing";
    ASSERT_EQ(forward, backward) << model;
  }
  // The dynamo exporter's scalar constants (GELU's 0.5 and sqrt(2), the
  // attention scale) must be constants, not trained parameters.
  for (const std::string &c : tol.constants)
    for (const std::string &p : t->parameters())
      ASSERT_NE(p, c) << "constant initializer '" << c
                      << "' became a parameter";
  ASSERT_NO_FATAL_FAILURE(bindBatch(model, t));
}

std::vector<double> loadRef(const std::string &model, const std::string &file) {
  std::vector<int64_t> shape;
  std::vector<double> v;
  std::string msg;
  EXPECT_TRUE(
      loadNpyF64(parityFixturePath(model + "/" + file), &shape, &v, &msg))
      << msg;
  return v;
}

/// The batch-norm running statistics (parameters named *.running_mean or
/// *.running_var) against bn_step<step>_<name>.npy: the worst relative L2
/// error, and its name. 0 when the model has none.
double runningStatsError(const Trainer &t, const std::string &model, int step,
                         std::string *worstName) {
  double worst = 0;
  std::string msg;
  for (const std::string &p : t.parameters()) {
    auto endsWith = [&](const std::string &suffix) {
      return p.size() > suffix.size() &&
             p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (!endsWith(".running_mean") && !endsWith(".running_var"))
      continue;
    std::vector<float> got;
    EXPECT_TRUE(t.parameterF32(p, &got, &msg)) << msg;
    const std::vector<double> ref =
        loadRef(model, "bn_step" + std::to_string(step) + "_" + p + ".npy");
    EXPECT_EQ(got.size(), ref.size()) << p;
    const double err =
        got.size() == ref.size() ? relativeL2(widen(got), ref) : INFINITY;
    if (!(err <= worst)) {
      worst = err;
      *worstName = p;
    }
  }
  return worst;
}

/// Runs `steps` train_steps and returns the losses; counts skipped steps.
/// `after`, when given, is called after each step with its 1-based number.
std::vector<double>
trajectory(Trainer &t, int steps, int *skipped,
           const std::function<void(int)> &after = nullptr) {
  std::vector<double> losses;
  std::string msg;
  for (int s = 0; s < steps; ++s) {
    StepOutputs o;
    EXPECT_TRUE(t.step(&o, &msg)) << msg;
    losses.push_back(o.loss);
    *skipped += o.skipped;
    if (after)
      after(s + 1);
  }
  return losses;
}

double trajectoryError(const std::vector<double> &got,
                       const std::vector<double> &ref) {
  if (got.size() != ref.size())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - ref[i]) / std::fabs(ref[i]));
  return std::isnan(worst) ? INFINITY : worst;
}

std::string flag(const std::string &name, double v) {
  return "--" + name + "=" + num(v);
}

/// Pins the CPU's reference numerics for its scope unless
/// MPTRT_CPU_NUMERICS names a mode (see the file comment).
class ReferenceUnlessNamed {
public:
  ReferenceUnlessNamed() {
    const char *mode = std::getenv("MPTRT_CPU_NUMERICS");
    if (!mode || !*mode)
      pin_ = std::make_unique<ScopedEnv>("MPTRT_CPU_NUMERICS", "reference");
  }

private:
  std::unique_ptr<ScopedEnv> pin_;
};

class ZooParity : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    std::string msg;
    ASSERT_TRUE(readTolerances(modelOf(GetParam()), &tol_, &msg)) << msg;
  }
  ReferenceUnlessNamed numerics_;
  double hyper(const std::string &name) {
    auto it = tol_.hyper.find(name);
    EXPECT_NE(it, tol_.hyper.end())
        << "no 'hyper " << name << "' in tolerances.txt";
    return it == tol_.hyper.end() ? NAN : it->second;
  }
  /// Checks one fp32 trajectory (kind = momentum or adamw).
  void checkTrajectory(const std::string &kind,
                       const std::vector<std::string> &flags);
  Tolerances tol_;
};

// One SGD step with emitted gradients: the loss, every gradient and every
// updated parameter against float64.
TEST_P(ZooParity, SgdOneStepFp32) {
  const std::string model = modelOf(GetParam());
  TempDir dir;
  Trainer t;
  ASSERT_NO_FATAL_FAILURE(setUp(
      dir, GetParam(),
      {"--optimizer=sgd", flag("lr", hyper("sgd.lr")), "--emit-gradients=true"},
      &t));
  std::string msg;
  std::vector<std::string> params = gradientParameters(t);
  std::sort(params.begin(), params.end());
  std::vector<std::string> expected;
  for (const auto &[name, _] : tol_.tol["grad"])
    expected.push_back(name);
  ASSERT_EQ(params, expected)
      << "the plan should train exactly the model's parameters";
  std::map<std::string, std::vector<float>> p0;
  for (const std::string &p : params)
    ASSERT_TRUE(t.parameterF32(p, &p0[p], &msg)) << msg;

  StepOutputs o;
  ASSERT_TRUE(t.step(&o, &msg)) << msg;
  EXPECT_FALSE(o.skipped);
  const double loss64 = loadRef(model, "loss.npy").at(0);
  const double lossErr = std::fabs(o.loss - loss64) / std::fabs(loss64);
  EXPECT_LE(lossErr, tol_.tol["loss"]["-"])
      << "loss " << o.loss << ", float64 " << loss64;

  double worstGrad = 0, worstSgd = 0;
  std::string worstGradName, worstSgdName;
  for (const std::string &p : params) {
    std::vector<float> g, p1;
    ASSERT_TRUE(t.outputF32("grad." + p, &g, &msg)) << msg;
    ASSERT_TRUE(t.parameterF32(p, &p1, &msg)) << msg;
    const std::vector<double> g64 = loadRef(model, "grad_" + p + ".npy");
    const std::vector<double> p1_64 = loadRef(model, "sgd_" + p + ".npy");
    ASSERT_EQ(g.size(), g64.size()) << p;
    ASSERT_EQ(p1.size(), p1_64.size()) << p;
    double gErr = relativeL2(widen(g), g64);
    // ||p1 - p1_64|| / ||p1_64 - p0||: relativeL2 of the updates p1 - p0.
    std::vector<double> d, d64;
    for (size_t i = 0; i < p1.size(); ++i) {
      d.push_back(double(p1[i]) - double(p0[p][i]));
      d64.push_back(p1_64[i] - double(p0[p][i]));
    }
    double uErr = relativeL2(d, d64);
    if (tol_.denominator["grad"].count(p)) {
      // Zero in exact arithmetic: the error relative to the global norm.
      gErr = absoluteL2(widen(g), g64) / tol_.denominator["grad"][p];
      uErr = absoluteL2(d, d64) / tol_.denominator["sgd"][p];
    }
    const double gTol = tol_.tol["grad"][p], uTol = tol_.tol["sgd"][p];
    EXPECT_LE(gErr, gTol) << "grad." << p << ": relative L2 error " << gErr;
    EXPECT_LE(uErr, uTol)
        << p << " after one SGD step: relative L2 error of the update " << uErr;
    if (gErr / gTol > worstGrad) {
      worstGrad = gErr / gTol;
      worstGradName = p;
    }
    if (uErr / uTol > worstSgd) {
      worstSgd = uErr / uTol;
      worstSgdName = p;
    }
  }
  RecordProperty("loss_error", num(lossErr));
  RecordProperty("worst_grad_ratio", num(worstGrad));
  RecordProperty("worst_sgd_ratio", num(worstSgd));
  std::cout << model << " fp32 SGD step: loss error " << lossErr
            << " (tolerance " << tol_.tol["loss"]["-"]
            << "); worst gradient error / tolerance " << worstGrad << " ("
            << worstGradName << "); worst update error / tolerance " << worstSgd
            << " (" << worstSgdName << ")\n";
}

void ZooParity::checkTrajectory(const std::string &kind,
                                const std::vector<std::string> &flags) {
  const std::string model = modelOf(GetParam());
  TempDir dir;
  Trainer t;
  ASSERT_NO_FATAL_FAILURE(setUp(dir, GetParam(), flags, &t));
  const std::vector<double> ref = loadRef(model, kind + "_loss.npy");
  int skipped = 0;
  // The momentum run of the float64 reference also recorded the BN running
  // statistics after the first step and the last.
  std::string bnReport;
  const int steps = int(ref.size());
  auto checkStats = [&](int step) {
    if (kind != "momentum" || (step != 1 && step != steps))
      return;
    std::string name;
    const double err = runningStatsError(t, model, step, &name);
    if (name.empty())
      return;
    const std::string key = "bn_stats_step" + std::to_string(step);
    auto found = tol_.tol.find(key);
    if (found == tol_.tol.end() || !found->second.count("-")) {
      ADD_FAILURE() << "no '" << key << " -' line in " << model
                    << "/tolerances.txt (regenerate the fixture)";
      return;
    }
    const double tol = found->second.at("-");
    EXPECT_LE(err, tol) << name << " after step " << step
                        << ": relative L2 error " << err;
    bnReport += "; BN running statistics after step " + std::to_string(step) +
                ": worst " + num(err) + " (" + name + ", tolerance " +
                num(tol) + ")";
  };
  const std::vector<double> got = trajectory(t, steps, &skipped, checkStats);
  EXPECT_EQ(skipped, 0);
  const double err = trajectoryError(got, ref);
  const double tol = tol_.tol[kind + "_trajectory"]["-"];
  EXPECT_LE(err, tol) << kind << " trajectory";
  const double spread = tol_.spread[kind + "_trajectory"]["-"];
  const double bound = std::max(kSpreadFactor * spread, kTrajectoryFloor);
  EXPECT_LE(err, bound) << kind << " trajectory: more than " << kSpreadFactor
                        << "x PyTorch FP32's own error (" << spread << ")";
  RecordProperty("trajectory_error", num(err));
  std::cout << model << " fp32 " << kind << " trajectory: error " << err
            << " (tolerance " << tol << "; " << err / spread
            << "x PyTorch FP32's error " << spread << ", bound " << bound
            << "); losses";
  for (double l : got)
    std::cout << " " << l;
  std::cout << bnReport << "\n";
}

TEST_P(ZooParity, MomentumTrajectoryFp32) {
  checkTrajectory("momentum",
                  {"--optimizer=momentum", flag("lr", hyper("momentum.lr")),
                   flag("momentum", hyper("momentum.momentum"))});
}

TEST_P(ZooParity, AdamWTrajectoryFp32) {
  checkTrajectory("adamw", {"--optimizer=adamw", flag("lr", hyper("adamw.lr")),
                            flag("weight-decay", hyper("adamw.weight_decay"))});
}

// The same AdamW steps trained in BF16 and in FP16 (mpt-compile
// --precision; FP16 gets dynamic loss scaling by default): the loss
// trajectory against float64's, relative, worst step.
void lowPrecisionTrajectory(const std::string &param,
                            const std::string &precision, double lr, double wd,
                            double autocastError) {
  const std::string model = modelOf(param);
  const double bound =
      std::max(kAutocastFactor * autocastError, kLowPrecisionFloor);
  TempDir dir;
  Trainer t;
  ASSERT_NO_FATAL_FAILURE(
      setUp(dir, param,
            {"--precision=" + precision, "--optimizer=adamw", flag("lr", lr),
             flag("weight-decay", wd)},
            &t));
  const std::vector<double> ref = loadRef(model, "adamw_loss.npy");
  // A step skipped by the loss scaler (a non-finite FP16 gradient: the scale
  // backs off, as PyTorch's GradScaler does) changes neither the weights nor
  // the optimizer state, so the losses of the steps that were applied are
  // the losses of the reference's first steps. Up to 16 skips (2^16 -> 1).
  std::vector<double> got;
  int skipped = 0;
  std::string msg;
  for (int s = 0; s < int(ref.size()) + 16 && got.size() < ref.size(); ++s) {
    StepOutputs o;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    if (o.skipped)
      ++skipped;
    else
      got.push_back(o.loss);
  }
  ASSERT_EQ(got.size(), ref.size()) << skipped << " steps skipped";
  const double err = trajectoryError(got, ref);
  EXPECT_LE(err, bound) << precision << " adamw trajectory";
  ::testing::Test::RecordProperty("trajectory_error", num(err));
  ::testing::Test::RecordProperty("skipped_steps", std::to_string(skipped));
  std::cout << model << " " << precision << " adamw trajectory: error " << err
            << " (bound " << bound << "; PyTorch autocast " << autocastError
            << ", ratio " << err / autocastError << "), " << skipped
            << " steps skipped; losses";
  for (double l : got)
    std::cout << " " << l;
  std::cout << "\n";
}

TEST_P(ZooParity, AdamWTrajectoryBf16) {
  lowPrecisionTrajectory(GetParam(), "bf16", hyper("adamw.lr"),
                         hyper("adamw.weight_decay"),
                         tol_.tol["autocast_adamw_trajectory"].at("bf16"));
}

TEST_P(ZooParity, AdamWTrajectoryFp16) {
  lowPrecisionTrajectory(GetParam(), "fp16", hyper("adamw.lr"),
                         hyper("adamw.weight_decay"),
                         tol_.tol["autocast_adamw_trajectory"].at("fp16"));
}

std::string modelName(const ::testing::TestParamInfo<std::string> &info) {
  std::string name = info.param;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Models, ZooParity,
    ::testing::Values("smooth_cnn", "resnet18", "gpt2", "mobilenetv2", "vit",
                      "vit_dynamo", "mlp_dynamo", "llama", "qwen2", "vit_hf",
                      "mobilenetv3", "t5", "bert", "distilbert", "mistral",
                      "efficientnet", "convnext", "squeezenet"),
    modelName);

// The families again, from the dynamo exporter at opset 18 without its
// graph optimizer (scripts/gen_parity_fixtures.py, dynamo_variant): the
// same modules, weights and batches; the batch-norm networks compiled with
// --batch-norm-training (the exporter writes their batch norm in inference
// mode).
INSTANTIATE_TEST_SUITE_P(
    Dynamo, ZooParity,
    ::testing::Values("gpt2_dynamo", "llama_dynamo", "qwen2_dynamo",
                      "vit_hf_dynamo", "t5_dynamo", "bert_dynamo",
                      "distilbert_dynamo", "mistral_dynamo", "convnext_dynamo",
                      "squeezenet_dynamo", "resnet18_dynamo",
                      "mobilenetv3_dynamo", "efficientnet_dynamo"),
    modelName);

// The transformers again, compiled with --fuse-attention: the fused op and
// its gradient are held to the tolerances of the exported graph.
INSTANTIATE_TEST_SUITE_P(
    FusedAttention, ZooParity,
    ::testing::Values("gpt2+fuse-attention", "vit+fuse-attention",
                      "llama+fuse-attention", "qwen2+fuse-attention",
                      "vit_hf+fuse-attention", "bert+fuse-attention",
                      "distilbert+fuse-attention", "mistral+fuse-attention",
                      "t5+fuse-attention"),
    modelName);

//===----------------------------------------------------------------------===//
// The CPU's fast numerics mode against its reference mode (issue 27).
//===----------------------------------------------------------------------===//
//
// MPTRT_CPU_NUMERICS=fast runs conv, its two gradients, matmul and gemm
// through oneDNN (docs/runtime.md, "CPU numerics modes"); every zoo model
// has some of them. The rule: on every zoo model, the fast mode's error
// against float64 is within twice the reference mode's on the same plan,
// each mode pinned explicitly (ScopedEnv around the load), in
//
//   fp32  one SGD step: every gradient (the metric of SgdOneStepFp32), and
//         the SGD-momentum and AdamW loss trajectories (the fixture's steps)
//   bf16  the AdamW loss trajectory (--precision=bf16)
//   fp16  the AdamW loss trajectory (--precision=fp16; oneDNN on widened
//         copies of the f16 operands)
// Errors below kFastFloor count as kFastFloor: there both modes are exact
// to a few units of f32 rounding, and which one a given rounding favours
// is luck. On a plan with convolutions the fast run must also differ from
// the reference in some bit of its trained parameters (or gradients):
// identical bits would mean oneDNN never ran (a silent fallback), and the
// ratio test would pass trivially. oneDNN's direct convolutions never sum
// in im2col + GEMM's order; the transformers' small matmuls (K <= 64) can
// give the reference's bits exactly (both add the products in k order),
// so there the test only prints whether they differed.
//
// Known exceedances (kKnownExceedances) are the cases where the fast mode
// breaks the rule, measured on the 2-core development machine (AVX-512
// with AMX, 2 threads) on 2026-11-28, on the 10-step fixtures: they are
// reported, with their numbers, instead of failing, and every other check
// still holds them. They are part of why `fast` is not the default
// (docs/runtime.md, "CPU numerics modes").

/// 16 units of f32 rounding (2^-20, 9.5e-7).
const double kFastFloor = std::ldexp(1.0, -20);

/// Loads `plan` with the CPU numerics `mode` and binds the fixture's batch;
/// false (with a message) when the load fails.
void loadInMode(const std::string &plan, const std::string &model,
                const std::string &mode, Trainer *t) {
  std::string msg;
  {
    ScopedEnv numerics("MPTRT_CPU_NUMERICS", mode);
    ASSERT_TRUE(t->load(plan, &msg)) << mode << ": " << msg;
  }
  ASSERT_NO_FATAL_FAILURE(bindBatch(model, t));
}

/// Whether this build has the fast mode (the load of a fast model fails
/// otherwise, saying there is no oneDNN).
bool haveFastMode(const std::string &plan, std::string *why) {
  ScopedEnv numerics("MPTRT_CPU_NUMERICS", "fast");
  Trainer t;
  if (t.load(plan, why))
    return true;
  return why->find("no oneDNN") == std::string::npos;
}

/// The compile flags of the zoo's losses, then `flags`, into dir/name.
std::string compileZooPlan(const TempDir &dir, const std::string &model,
                           const std::vector<std::string> &flags,
                           const std::string &name) {
  std::vector<std::string> all = {"--loss-kind=cross_entropy",
                                  "--loss-output=logits",
                                  "--label-input=labels"};
  all.insert(all.end(), flags.begin(), flags.end());
  const std::string plan = dir.file(name);
  std::string msg;
  EXPECT_TRUE(compileTrainingPlan(parityFixturePath(model + "/model.onnx"), all,
                                  plan, &msg))
      << msg;
  return plan;
}

/// max(err, floor) ratio of fast to reference.
double fastRatio(double fast, double reference) {
  return std::max(fast, kFastFloor) / std::max(reference, kFastFloor);
}

/// A case where the fast mode's error is over twice the reference's.
struct KnownExceedance {
  const char *model, *check, *name, *why;
};
const KnownExceedance kKnownExceedances[] = {
    // 10 steps: fast 2.7e-2, reference 9.2e-7, PyTorch fp32 1.8e-2 (5
    // steps: 1.38e-2, 6.5e-7, 1.0e-3). AdamW's first step is lr * sign(g):
    // one element of features.5.body.0.0.weight's gradient (float64
    // 5.5e-6) comes out -2.8e-6 in fast mode (forward convolutions'
    // rounding, through the batch norms) and +5.3e-6 in the reference;
    // that one flipped update (2 lr) alone moves the step-2 loss by 7e-5
    // and the 5-step trajectory to 1.4e-2 (checked by swapping it between
    // the two modes' checkpoints).
    {"mobilenetv2", "adamw fp32", "-",
     "one near-zero gradient element's sign, amplified by AdamW"},
    // 10 steps: fast 3.07e-5, reference 1.33e-5 (ratio 2.30); PyTorch fp32
    // 2.0e-5, float64 with fp32-sized perturbations 1.4e-5.
    {"efficientnet", "momentum fp32", "-",
     "the 10-step trajectory, 1.5x PyTorch fp32's error"},
    // The same trajectory from the channels-last plan: fast 2.65e-5,
    // reference 1.33e-5 (ratio 1.99 on the development machine; oneDNN's
    // summation order, which another processor changes, decides which side
    // of 2 it falls).
    {"efficientnet", "momentum fp32 channels-last", "-",
     "the 10-step trajectory, 1.5x PyTorch fp32's error"},
    // fast 2.07e-6, reference 8.9e-7 (ratio 2.17; PyTorch fp32 1.2e-6, the
    // float64 runs with fp32-sized perturbations 9.0e-7).
    {"efficientnet", "sgd gradient", "features.1.0.block.0.1.weight",
     "a batch-norm weight's gradient, 2.2x the reference's error"},
};

/// Why (model, check, name) is a known exceedance; nullptr if it is not.
const char *knownExceedance(const std::string &model, const std::string &check,
                            const std::string &name) {
  for (const KnownExceedance &k : kKnownExceedances)
    if (model == k.model && check == k.check && name == k.name)
      return k.why;
  return nullptr;
}

/// Expects ratio <= 2, unless the case is a known exceedance (then prints
/// it). `what` describes the case for the message.
void expectWithinTwice(double ratio, const std::string &model,
                       const std::string &check, const std::string &name,
                       const std::string &what) {
  if (ratio <= 2.0)
    return;
  if (const char *why = knownExceedance(model, check, name)) {
    std::cout << "KNOWN EXCEEDANCE (" << why << "): " << model << " " << check
              << " " << name << ": " << what << ", fast / reference " << ratio
              << "\n";
    ::testing::Test::RecordProperty("known_exceedance", what);
    return;
  }
  ADD_FAILURE() << model << " " << check << " " << name << ": " << what
                << ", fast / reference " << ratio << " (over 2)";
}

/// Whether the plan's train_step has convolutions (the kernels whose fast
/// bits always differ from the reference's).
bool hasConvolutions(Trainer &t) {
  std::vector<mptrt_kernel_info> kernels;
  EXPECT_TRUE(t.model().entryKernels("train_step", &kernels));
  for (const mptrt_kernel_info &k : kernels)
    if (std::string(k.kind).rfind("conv", 0) == 0)
      return true;
  return false;
}

// Tests channels-last plans (mpt-channels-last, mpt-compile --conv-layout=nhwc;
// docs/lowering.md): three SGD-momentum steps of the zoo's CNNs give the
// channels-first plan's losses and trained parameters bit for bit, in fp32
// and bf16, on the CPU, where the plan holds nhwc kernels.
// Mode: reference, pinned: the fast mode's oneDNN convolutions sum in
// another order on NHWC memory than on their blocked layout (its NHWC plans
// are held to float64 by ZooFastNumerics' ChannelsLast cases instead).
TEST(ZooChannelsLast, SameBitsAsChannelsFirst) {
  ScopedEnv reference("MPTRT_CPU_NUMERICS", "reference");
  for (const char *model : {"smooth_cnn", "resnet18", "mobilenetv2"})
    for (const std::string precision : {"fp32", "bf16"}) {
      TempDir dir;
      std::vector<std::string> flags = {"--optimizer=momentum", "--lr=0.01",
                                        "--momentum=0.9"};
      if (precision != "fp32")
        flags.push_back("--precision=" + precision);
      std::map<std::string, std::vector<uint8_t>> states[2];
      std::vector<double> losses[2];
      for (int last = 0; last < 2; ++last) {
        std::vector<std::string> f = flags;
        f.push_back(last ? "--conv-layout=nhwc" : "--conv-layout=nchw");
        const std::string p =
            compileZooPlan(dir, model, f, last ? "nhwc.mptp" : "nchw.mptp");
        std::ifstream in(p, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        EXPECT_EQ(bytes.find("nhwc") != std::string::npos, last == 1)
            << model << " " << precision << ": nhwc kernels in the plan";
        Trainer t;
        std::string msg;
        ASSERT_TRUE(t.load(p, &msg)) << msg;
        ASSERT_NO_FATAL_FAILURE(bindBatch(model, &t));
        for (int s = 0; s < 3; ++s) {
          StepOutputs o;
          ASSERT_TRUE(t.step(&o, &msg)) << msg;
          losses[last].push_back(o.loss);
        }
        ASSERT_TRUE(t.snapshot(&states[last], &msg)) << msg;
      }
      EXPECT_EQ(losses[0], losses[1]) << model << " " << precision;
      EXPECT_TRUE(states[0] == states[1])
          << model << " " << precision << ": the trained parameters differ";
    }
}

class ZooFastNumerics : public ZooParity {
protected:
  /// Compiles `flags` into a plan; skips the test without oneDNN.
  std::string plan(const TempDir &dir, const std::vector<std::string> &flags) {
    const std::string p =
        compileZooPlan(dir, modelOf(GetParam()), flags, "plan.mptp");
    std::string why;
    if (!haveFastMode(p, &why))
      skip_ = "this build has no fast mode: " + why;
    return p;
  }
  /// The losses of the applied steps of up to `steps` + 16 (a step the
  /// loss scaler skips is not one of the reference's), with `plan` loaded
  /// in `mode`; the trained parameters after them in *state, and whether
  /// the plan has convolutions in *conv.
  std::vector<double> losses(const std::string &plan, const std::string &mode,
                             size_t steps,
                             std::map<std::string, std::vector<uint8_t>> *state,
                             bool *conv) {
    Trainer t;
    loadInMode(plan, modelOf(GetParam()), mode, &t);
    std::vector<double> got;
    std::string msg;
    for (size_t s = 0; s < steps + 16 && got.size() < steps; ++s) {
      StepOutputs o;
      EXPECT_TRUE(t.step(&o, &msg)) << msg;
      if (!o.skipped)
        got.push_back(o.loss);
    }
    EXPECT_TRUE(t.snapshot(state, &msg)) << msg;
    *conv = hasConvolutions(t);
    return got;
  }
  /// The trajectory check of `kind` (its float64 losses in
  /// <kind>_loss.npy) with `flags`.
  /// With `channelsLastOnly`, skips a model whose plan has no channels-last
  /// kernels (no convolution chains).
  void checkTrajectory(const std::string &kind, const std::string &precision,
                       const std::vector<std::string> &flags,
                       bool channelsLastOnly = false);
  std::string skip_;
};

void ZooFastNumerics::checkTrajectory(const std::string &kind,
                                      const std::string &precision,
                                      const std::vector<std::string> &flags,
                                      bool channelsLastOnly) {
  const std::string model = modelOf(GetParam());
  TempDir dir;
  const std::string p = plan(dir, flags);
  if (!skip_.empty())
    GTEST_SKIP() << skip_;
  if (channelsLastOnly) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    if (bytes.find("nhwc") == std::string::npos)
      GTEST_SKIP() << model
                   << " has no convolution chains to store channels last";
  }
  const std::vector<double> ref = loadRef(model, kind + "_loss.npy");
  std::map<std::string, std::vector<uint8_t>> refState, fastState;
  bool conv = false;
  const std::vector<double> reference =
      losses(p, "reference", ref.size(), &refState, &conv);
  const std::vector<double> fast =
      losses(p, "fast", ref.size(), &fastState, &conv);
  ASSERT_EQ(reference.size(), ref.size());
  ASSERT_EQ(fast.size(), ref.size());
  const double refErr = trajectoryError(reference, ref);
  const double fastErr = trajectoryError(fast, ref);
  const double ratio = fastRatio(fastErr, refErr);
  expectWithinTwice(ratio, model, kind + " " + precision, "-",
                    "trajectory: fast error " + num(fastErr) +
                        ", reference error " + num(refErr));
  const bool bitsDiffer = fastState != refState;
  if (conv) {
    EXPECT_TRUE(bitsDiffer)
        << "the fast mode's trained parameters equal the reference's in "
           "every bit: did oneDNN run?";
  }
  RecordProperty("reference_error", num(refErr));
  RecordProperty("fast_error", num(fastErr));
  std::cout << model << " " << precision << " " << kind
            << " trajectory: reference error " << refErr << ", fast error "
            << fastErr << ", fast / reference " << ratio << "; parameters "
            << (bitsDiffer ? "differ" : "bit-identical") << "\n";
}

// Mode: both, each pinned. Channels first (--conv-layout=nchw; the default
// stores convolution chains NHWC, which the ChannelsLast cases below
// check). fp32, the SGD-momentum trajectory.
TEST_P(ZooFastNumerics, MomentumTrajectoryFp32) {
  checkTrajectory("momentum", "fp32",
                  {"--optimizer=momentum", flag("lr", hyper("momentum.lr")),
                   flag("momentum", hyper("momentum.momentum")),
                   "--conv-layout=nchw"});
}

// Mode: both, each pinned. fp32, the AdamW trajectory.
TEST_P(ZooFastNumerics, AdamWTrajectoryFp32) {
  checkTrajectory("adamw", "fp32",
                  {"--optimizer=adamw", flag("lr", hyper("adamw.lr")),
                   flag("weight-decay", hyper("adamw.weight_decay")),
                   "--conv-layout=nchw"});
}

// Mode: both, each pinned. bf16, the AdamW trajectory.
TEST_P(ZooFastNumerics, AdamWTrajectoryBf16) {
  checkTrajectory("adamw", "bf16",
                  {"--precision=bf16", "--optimizer=adamw",
                   flag("lr", hyper("adamw.lr")),
                   flag("weight-decay", hyper("adamw.weight_decay")),
                   "--conv-layout=nchw"});
}

// Mode: both, each pinned. fp16 (dynamic loss scaling), the AdamW
// trajectory: the fast mode widens f16 operands to f32 for oneDNN.
TEST_P(ZooFastNumerics, AdamWTrajectoryFp16) {
  checkTrajectory("adamw", "fp16",
                  {"--precision=fp16", "--optimizer=adamw",
                   flag("lr", hyper("adamw.lr")),
                   flag("weight-decay", hyper("adamw.weight_decay")),
                   "--conv-layout=nchw"});
}

// Mode: both, each pinned. The zoo's CNNs compiled channels last
// (--conv-layout=nhwc): the reference mode gives the channels-first plan's
// bits (ZooChannelsLast), the fast mode runs oneDNN's convolutions on the
// channels-last activations as stored and the CPU's channels-last batch
// norms; fp32 SGD momentum and bf16 AdamW trajectories within twice the
// reference's error. Other models skip.
TEST_P(ZooFastNumerics, MomentumTrajectoryFp32ChannelsLast) {
  checkTrajectory("momentum", "fp32 channels-last",
                  {"--optimizer=momentum", flag("lr", hyper("momentum.lr")),
                   flag("momentum", hyper("momentum.momentum")),
                   "--conv-layout=nhwc"},
                  /*channelsLastOnly=*/true);
}
TEST_P(ZooFastNumerics, AdamWTrajectoryBf16ChannelsLast) {
  checkTrajectory(
      "adamw", "bf16 channels-last",
      {"--precision=bf16", "--optimizer=adamw", flag("lr", hyper("adamw.lr")),
       flag("weight-decay", hyper("adamw.weight_decay")), "--conv-layout=nhwc"},
      /*channelsLastOnly=*/true);
}

// Mode: both, each pinned. Channels first. fp32, one SGD step: each
// gradient's error (the metric of SgdOneStepFp32, against the same float64
// gradients).
TEST_P(ZooFastNumerics, SgdGradientsFp32) {
  const std::string model = modelOf(GetParam());
  TempDir dir;
  const std::string p =
      plan(dir, {"--optimizer=sgd", flag("lr", hyper("sgd.lr")),
                 "--emit-gradients=true", "--conv-layout=nchw"});
  if (!skip_.empty())
    GTEST_SKIP() << skip_;
  std::map<std::string, std::map<std::string, std::vector<float>>> grads;
  bool conv = false;
  for (const char *mode : {"reference", "fast"}) {
    Trainer t;
    ASSERT_NO_FATAL_FAILURE(loadInMode(p, model, mode, &t));
    conv = hasConvolutions(t);
    StepOutputs o;
    std::string msg;
    ASSERT_TRUE(t.step(&o, &msg)) << msg;
    for (const std::string &param : gradientParameters(t))
      ASSERT_TRUE(t.outputF32("grad." + param, &grads[mode][param], &msg))
          << msg;
  }
  ASSERT_EQ(grads["reference"].size(), grads["fast"].size());
  double worst = 0;
  std::string worstName;
  bool anyBitDiffers = false;
  for (const auto &[param, refGrad] : grads["reference"]) {
    const std::vector<float> &fastGrad = grads["fast"][param];
    const std::vector<double> g64 = loadRef(model, "grad_" + param + ".npy");
    ASSERT_EQ(refGrad.size(), g64.size()) << param;
    ASSERT_EQ(fastGrad.size(), g64.size()) << param;
    anyBitDiffers = anyBitDiffers || fastGrad != refGrad;
    auto error = [&](const std::vector<float> &g) {
      if (tol_.denominator["grad"].count(param)) // zero in exact arithmetic
        return absoluteL2(widen(g), g64) / tol_.denominator["grad"][param];
      return relativeL2(widen(g), g64);
    };
    const double refErr = error(refGrad), fastErr = error(fastGrad);
    const double ratio = fastRatio(fastErr, refErr);
    expectWithinTwice(ratio, model, "sgd gradient", param,
                      "fast error " + num(fastErr) + ", reference error " +
                          num(refErr));
    if (ratio > worst) {
      worst = ratio;
      worstName =
          param + " (fast " + num(fastErr) + ", reference " + num(refErr) + ")";
    }
  }
  if (conv) {
    EXPECT_TRUE(anyBitDiffers)
        << "every fast gradient equals the reference's in every bit: did "
           "oneDNN run?";
  }
  RecordProperty("worst_ratio", num(worst));
  std::cout << model << " fp32 SGD gradients: worst fast / reference error "
            << worst << ": " << worstName << "; gradients "
            << (anyBitDiffers ? "differ" : "bit-identical") << "\n";
}

// Mode: fast, pinned. Two separately loaded models of the same plan give
// the same bits, step after step (losses and every trained parameter), at
// the process's thread count: fp32 and bf16 (bf16 primitives where the
// processor has AVX512-BF16 or AMX), on ResNet-18 and MobileNetV2.
TEST(ZooFastNumericsRuns, RunToRunBitIdentical) {
  for (const std::string model : {"resnet18", "mobilenetv2"}) {
    for (const std::string precision : {"fp32", "bf16"}) {
      SCOPED_TRACE(model + " " + precision);
      TempDir dir;
      const std::string plan =
          compileZooPlan(dir, model,
                         {"--precision=" + precision, "--optimizer=momentum",
                          "--lr=0.01", "--momentum=0.9"},
                         "plan.mptp");
      std::string why;
      if (!haveFastMode(plan, &why))
        GTEST_SKIP() << "this build has no fast mode: " << why;
      std::vector<float> losses[2];
      std::map<std::string, std::vector<uint8_t>> state[2];
      for (int run = 0; run < 2; ++run) {
        Trainer t;
        ASSERT_NO_FATAL_FAILURE(loadInMode(plan, model, "fast", &t));
        std::string msg;
        for (int s = 0; s < 3; ++s) {
          StepOutputs o;
          ASSERT_TRUE(t.step(&o, &msg)) << msg;
          losses[run].push_back(o.loss);
        }
        ASSERT_TRUE(t.snapshot(&state[run], &msg)) << msg;
      }
      EXPECT_EQ(losses[0], losses[1]);
      EXPECT_TRUE(state[0] == state[1])
          << "the trained parameters differ between two fast runs";
    }
  }
}

// Mode: fast, pinned. MPTRT_NUM_THREADS sets oneDNN's thread count as it
// does the runtime's pool, whatever OMP_NUM_THREADS says: mpt-train runs
// with MPTRT_NUM_THREADS = n and OMP_NUM_THREADS = 1 and 3 save the same
// checkpoint bytes, for n = 1 and 2. (oneDNN's bits depend on its thread
// count: when OMP_NUM_THREADS governed it, the n = 1 pair differed.)
TEST(ZooFastNumericsRuns, MptrtNumThreadsGovernsOneDnn) {
  const std::string model = "mobilenetv2";
  TempDir dir;
  const std::string plan = compileZooPlan(
      dir, model, {"--optimizer=momentum", "--lr=0.01", "--momentum=0.9"},
      "plan.mptp");
  std::string why;
  if (!haveFastMode(plan, &why))
    GTEST_SKIP() << "this build has no fast mode: " << why;
  ScopedEnv fast("MPTRT_CPU_NUMERICS", "fast");
  for (const std::string threads : {"1", "2"}) {
    std::vector<uint8_t> checkpoint[2];
    int run = 0;
    for (const std::string omp : {"1", "3"}) {
      ScopedEnv pool("MPTRT_NUM_THREADS", threads);
      ScopedEnv openmp("OMP_NUM_THREADS", omp);
      const std::string save = dir.file("t" + threads + "-omp" + omp + ".ckpt");
      const std::string log = "t" + threads + "-omp" + omp + ".log";
      ASSERT_EQ(
          runProcess(
              {MPT_TRAIN_PATH, plan, "--input",
               "x=" + parityFixturePath(model + "/input_x.npy"), "--input",
               "labels=" + parityFixturePath(model + "/labels.npy"), "--steps",
               "3", "--quiet", "--device", "cpu", "--save", save},
              dir.file(log)),
          0)
          << readTextFile(dir.file(log));
      checkpoint[run++] = readBinaryFile(save);
    }
    ASSERT_FALSE(checkpoint[0].empty());
    EXPECT_TRUE(checkpoint[0] == checkpoint[1])
        << "MPTRT_NUM_THREADS=" << threads
        << ": the checkpoints of OMP_NUM_THREADS=1 and =3 differ";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, ZooFastNumerics,
    ::testing::Values("smooth_cnn", "resnet18", "mobilenetv2", "mobilenetv3",
                      "efficientnet", "convnext", "squeezenet", "gpt2", "vit",
                      "vit_dynamo", "mlp_dynamo", "llama", "qwen2", "vit_hf",
                      "t5", "bert", "distilbert", "mistral"),
    modelName);

} // namespace
