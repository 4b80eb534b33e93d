//===- mpt-train.cpp - run the train_step of an MPT plan repeatedly ------===//
//
//   mpt-train model.mptp --input x=train_x.npy --input y=train_y.npy
//             --steps N [--device auto|cpu|cuda] [--metrics metrics.jsonl]
//             [--save ckpt] [--save-every K] [--resume ckpt]
//             [--eval-input x=val_x.npy ... --eval-every K] ...
//
// Each step binds one batch of every input (Batches.h), runs the entry
// point, reads its 0-d outputs (loss, skipped, grad_norm, loss_scale, lr),
// appends a metrics line and updates the progress line (Metrics.h); with
// validation data it also runs the eval_step entry (Evaluation.h).
// Checkpoints (Checkpoint.h) hold every parameter of the entry point and the
// step count, so --resume continues exactly where a run stopped. See
// docs/mpt-train.md. Exit status: 0 on success, 1 if something fails, 2 for
// a usage error, 128 + the signal's number after SIGINT or SIGTERM (which
// stop the run at the next step boundary, with a checkpoint if --save).
//
//===----------------------------------------------------------------------===//
#include "Batches.h"
#include "Checkpoint.h"
#include "Evaluation.h"
#include "Metrics.h"
#include "Ranges.h"
#include "TensorFile.h"
#include "ToolArgs.h"
#include "mptrt.hpp"
#include "mptrt/Numerics.h"
#include "mptrt/TrainStepAbi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

using mptrt::Model;
using mptrt::TensorInfo;
using namespace mptrt::tools;
namespace abi = mptrt::abi;

namespace {

const char kUsage[] =
    "usage: mpt-train PLAN.mptp (--input NAME=FILE... | --synthetic) --steps N [options]\n"
    "Runs the plan's train_step entry point N times, one batch per step.\n"
    "\n"
    "Data:\n"
    "  --input NAME=FILE        data for input NAME: a .npy or ONNX TensorProto .pb whose\n"
    "                           dtype is the input's and whose shape is [N, ...] for an\n"
    "                           input of shape [B, ...] (same trailing dims, N >= B): it is\n"
    "                           cut into floor(N/B) batches along the first axis, and step s\n"
    "                           (0-based) uses batch s mod floor(N/B). Every input must give\n"
    "                           the same number of batches. Every input needs one.\n"
    "  --synthetic              random data instead of files (for benchmarks): float inputs\n"
    "                           N(0,1), integer inputs uniform in [0, R), i1 inputs 0 or 1,\n"
    "                           determined by --seed, the step and the input's name\n"
    "  --synthetic-int-range R  R for integer inputs (default 2)\n"
    "  --seed S                 seed of --synthetic data (default 0) and of training\n"
    "                           dropout: a plan with a train.seed parameter gets S there\n"
    "                           before the first step (not on --resume, where the\n"
    "                           checkpoint's train.seed is kept)\n"
    "  --param NAME=FILE        initial value of a parameter (instead of the plan's)\n"
    "\n"
    "Evaluation (the plan's eval_step entry: forward and loss in inference mode, sharing\n"
    "train_step's parameters and writing none):\n"
    "  --eval-input NAME=FILE   validation data for input NAME, cut into batches as --input\n"
    "                           is; the validation loss is eval_step's mean loss over all\n"
    "                           of them. Every eval_step input needs one. The loss is\n"
    "                           computed after the last step, and every --eval-every steps\n"
    "  --eval-every N           also after every N-th step (needs --eval-input)\n"
    "  --eval-entry NAME        the evaluation entry point (default eval_step)\n"
    "\n"
    "Run:\n"
    "  --steps N                total number of steps, counting those a --resume'd\n"
    "                           checkpoint has run (required)\n"
    "  --entry NAME             the entry point to run (default train_step)\n"
    "  --device auto|NAME       the runtime backend (default auto: the best one this host\n"
    "                           can run; `mpt-run --list-devices` lists them); CPU\n"
    "                           threads: set MPTRT_NUM_THREADS\n"
    "\n"
    "Output:\n"
    "  --metrics FILE           one JSON object per step: step (1-based), loss, loss_scale,\n"
    "                           skipped, grad_norm, lr, time_ms, and val_loss and eval_ms\n"
    "                           after a step that evaluated, fp8_scale_min and _max with\n"
    "                           FP8 scale state; non-finite values are the\n"
    "                           strings \"inf\", \"-inf\", \"nan\"; a key whose output the plan\n"
    "                           lacks is left out. Truncated, or appended to with --resume\n"
    "  --log-every K            print the progress line every K steps (default: about\n"
    "                           every second; on a terminal it is rewritten in place)\n"
    "  --quiet                  no progress line (nor --collect-ranges's report)\n"
    "  --check-finite=MODE      where the first inf or NaN of a step came from, in the\n"
    "                           metrics (first_nonfinite) and the progress line: on-skip\n"
    "                           (default) reruns a skipped step with a check after every\n"
    "                           kernel; every-kernel checks every step; off\n"
    "  --collect-ranges=FILE    record, per floating-point kernel result over the steps\n"
    "                           run, max |x|, the smallest nonzero |x| and the fractions\n"
    "                           that would overflow or flush to zero in fp16, E4M3 and\n"
    "                           E5M2 (JSON; docs/numerics-observability.md), and print the\n"
    "                           results with the least fp16 headroom. Slower: every\n"
    "                           result is read back. Not with --check-finite=every-kernel\n"
    "\n"
    "Checkpoints (every parameter of the entry point and the step count):\n"
    "  --save FILE              write a checkpoint at the end, or when interrupted\n"
    "                           (atomically: a temporary file in FILE's directory, fsync,\n"
    "                           rename)\n"
    "  --save-every K           also write it after every K-th step (needs --save)\n"
    "  --resume FILE            start from a checkpoint and run up to --steps steps in all;\n"
    "                           the result is bit-identical to an uninterrupted run\n"
    "\n"
    "Interrupting: SIGINT (Ctrl-C) or SIGTERM lets the current step finish, writes the\n"
    "checkpoint to --save's FILE (none without --save) and exits with status 130\n"
    "(SIGINT) or 143 (SIGTERM); a second signal aborts at once.\n"
    "\n"
    "Exit status: 0 success, 1 data or runtime error, 2 usage error, 130 / 143\n"
    "interrupted. See docs/mpt-train.md.\n";

/// The signal (SIGINT or SIGTERM) that asked the run to stop, or 0. The
/// handler sets it; the step loop reads it between steps. A lock-free atomic
/// is async-signal-safe, like a volatile sig_atomic_t, and also well defined
/// when the signal lands on one of the runtime's worker threads.
std::atomic<int> stopSignal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onStopSignal(int sig) {
  // Only async-signal-safe calls here: write, sigaction, raise.
  if (stopSignal.exchange(sig) != 0) {
    const char text[] = "\nmpt-train: interrupted again: aborting now\n";
    (void)!::write(STDERR_FILENO, text, sizeof(text) - 1);
    struct sigaction fallback = {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(sig, &fallback, nullptr);
    ::raise(sig); // delivered, by the default action, when the handler returns
    return;
  }
  const char text[] = "\nmpt-train: interrupted: stopping after the current step "
                      "(interrupt again to abort now)\n";
  (void)!::write(STDERR_FILENO, text, sizeof(text) - 1);
}

/// Routes SIGINT and SIGTERM to onStopSignal, except a SIGINT the parent
/// ignores (a background job of a non-interactive shell), which stays
/// ignored.
void installStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old = {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    ::sigaction(sig, &action, nullptr);
  }
}

int usage(const std::string &message) {
  std::fprintf(stderr, "mpt-train: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mpt-train: error: %s\n", message.c_str());
  return 1;
}

void note(const std::string &message) {
  std::fprintf(stderr, "mpt-train: note: %s\n", message.c_str());
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

/// The value of a one-element tensor of any dtype, as a double.
double toDouble(mptrt_dtype dtype, const uint8_t *p) {
  namespace num = mptrt::numerics;
  float f;
  uint16_t h;
  int64_t l;
  int32_t w;
  switch (dtype) {
  case MPTRT_F32:
    std::memcpy(&f, p, 4);
    return f;
  case MPTRT_F16:
    std::memcpy(&h, p, 2);
    return num::f16ToF32(h);
  case MPTRT_BF16:
    std::memcpy(&h, p, 2);
    return num::bf16ToF32(h);
  case MPTRT_F8E4M3FN:
    return num::f8E4M3FNToF32(*p);
  case MPTRT_F8E5M2:
    return num::f8E5M2ToF32(*p);
  case MPTRT_I64:
    std::memcpy(&l, p, 8);
    return static_cast<double>(l);
  case MPTRT_I32:
    std::memcpy(&w, p, 4);
    return w;
  case MPTRT_I1:
    return *p != 0;
  }
  return 0;
}

/// The index of a train_step output (mptrt/TrainStepAbi.h) in the arrays
/// below that hold one entry per role.
constexpr size_t roleIndex(abi::OutputRole role) { return static_cast<size_t>(role); }

/// Binds a --param file (dtype and shape exactly the plan's).
int bindParamFile(Model &model, const std::string &entry,
                  const std::map<std::string, TensorInfo> &params, const std::string &name,
                  const std::string &file) {
  auto it = params.find(name);
  if (it == params.end()) {
    std::vector<std::string> names;
    for (const auto &p : params)
      names.push_back(p.first);
    return fail("entry point '" + entry + "' has no parameter named '" + name +
                "' (its parameters: " + joinNames(names) + ")");
  }
  const TensorInfo &info = it->second;
  FileTensor tensor;
  std::string error;
  if (!readTensorFile(file, &tensor, &error))
    return fail("parameter '" + name + "': " + error);
  bool dtypeOk = false;
  for (mptrt_dtype d : tensor.compatible)
    dtypeOk = dtypeOk || d == info.dtype;
  if (!dtypeOk || tensor.shape != info.shape)
    return fail("parameter '" + name + "': " + file + " holds " + tensor.typeName + " " +
                shapeText(tensor.shape) + ", the plan expects " +
                describeType(info.dtype, info.shape));
  if (info.dtype == MPTRT_I1)
    for (uint8_t &b : tensor.bytes)
      b = b != 0;
  if (!model.bindParameter(name, info.dtype, info.shape, tensor.bytes.data(), tensor.bytes.size()))
    return fail(mptrt::lastError());
  return 0;
}

/// Writes every parameter of the entry point and `steps` to `path`.
int saveCheckpoint(const Model &model, const std::vector<ParameterSpec> &params,
                   const std::string &path, uint64_t steps) {
  CheckpointWriter writer;
  std::string error;
  if (!writer.open(path, steps, static_cast<uint32_t>(params.size()), &error))
    return fail(error);
  std::vector<uint8_t> bytes;
  for (const ParameterSpec &p : params) {
    if (!model.readParameter(p.name, &bytes))
      return fail("saving checkpoint '" + path + "': " + mptrt::lastError());
    if (!writer.add(p.name, p.info, bytes.data(), bytes.size(), &error))
      return fail(error);
  }
  return writer.commit(&error) ? 0 : fail(error);
}

/// --check-finite: when to run a step with a finite check after each kernel.
enum class CheckFinite { Off, OnSkip, EveryKernel };

/// Parameters up to this size are copied before each step for a rerun.
constexpr size_t kSmallStateBytes = 16384;

NonFiniteOrigin toOrigin(const mptrt_nonfinite &first) {
  NonFiniteOrigin o;
  o.found = first.found != 0;
  o.node = first.origin;
  o.op = first.kind;
  o.phase = first.phase;
  o.output = first.result;
  o.kernel = first.kernel;
  return o;
}

/// Reruns a skipped step from the state it started in (`before`, the small
/// parameters it changed; the rest it left alone), with a finite check after
/// every kernel, and records where the first inf or NaN came from. The rerun
/// ends in the state the step ended in; that state is restored anyway.
int rerunChecked(Model &model, const std::string &entry, const std::vector<ParameterSpec> &state,
                 const std::vector<std::vector<uint8_t>> &before, StepMetrics *m) {
  std::vector<std::vector<uint8_t>> after(state.size());
  for (size_t i = 0; i < state.size(); ++i)
    if (!model.readParameter(state[i].name, &after[i]))
      return fail("step " + std::to_string(m->step) + ": " + mptrt::lastError());
  auto restore = [&](const std::vector<std::vector<uint8_t>> &bytes) {
    for (size_t i = 0; i < state.size(); ++i)
      if (!model.bindParameter(state[i].name, state[i].info.dtype, state[i].info.shape,
                               bytes[i].data(), bytes[i].size()))
        return false;
    return true;
  };
  mptrt_nonfinite first;
  if (!restore(before) || !model.runChecked(entry, &first) || !restore(after))
    return fail("step " + std::to_string(m->step) +
                ": rerunning with --check-finite: " + mptrt::lastError());
  m->firstNonFinite = toOrigin(first);
  return 0;
}

struct Options {
  CheckFinite checkFinite = CheckFinite::OnSkip;
  std::string planPath, entry = abi::kTrainEntry, device = "auto", evalEntry = abi::kEvalEntry;
  std::vector<std::pair<std::string, std::string>> inputs, params, evalInputs;
  bool synthetic = false, quiet = false;
  uint64_t seed = 0, intRange = 2, steps = 0, logEvery = 0, saveEvery = 0, evalEvery = 0;
  bool haveSteps = false, haveSeed = false;
  std::string metricsPath, savePath, resumePath, rangesPath;
};

/// Parses the command line; returns -1 to go on, else the exit status.
int parseArgs(int argc, char **argv, Options *o) {
  constexpr uint64_t kMaxCount = 1000000000000ull; // 1e12
  mptrt::tools::ArgWalker args(argc, argv);
  while (args.next()) {
    const std::string &arg = args.arg();
    auto number = [&](uint64_t min, uint64_t max, uint64_t *out) -> int {
      std::string error;
      return args.number(min, max, out, &error) ? -1 : usage(error);
    };
    bool ok = true;
    int rc = -1;
    if (arg == "--input")
      ok = args.binding(&o->inputs);
    else if (arg == "--param")
      ok = args.binding(&o->params);
    else if (arg == "--eval-input")
      ok = args.binding(&o->evalInputs);
    else if (arg == "--eval-entry")
      ok = args.value(&o->evalEntry);
    else if (arg == "--eval-every")
      rc = number(1, kMaxCount, &o->evalEvery);
    else if (arg == "--entry")
      ok = args.value(&o->entry);
    else if (arg == "--device")
      ok = args.value(&o->device);
    else if (arg == "--metrics") // a file name: not empty
      ok = args.value(&o->metricsPath) && !o->metricsPath.empty();
    else if (arg == "--save") // "" (an unset "$VAR") must not mean "no checkpoint"
      ok = args.value(&o->savePath) && !o->savePath.empty();
    else if (arg == "--resume")
      ok = args.value(&o->resumePath) && !o->resumePath.empty();
    else if (arg == "--steps") {
      rc = number(0, kMaxCount, &o->steps);
      o->haveSteps = true;
    } else if (arg == "--save-every")
      rc = number(1, kMaxCount, &o->saveEvery);
    else if (arg == "--log-every")
      rc = number(1, kMaxCount, &o->logEvery);
    else if (arg == "--seed") {
      rc = number(0, UINT64_MAX / 10, &o->seed);
      o->haveSeed = true;
    } else if (arg == "--synthetic-int-range")
      rc = number(1, uint64_t(1) << 62, &o->intRange);
    else if (arg == "--synthetic")
      o->synthetic = true;
    else if (arg == "--quiet" || arg == "-q")
      o->quiet = true;
    else if (arg.rfind("--check-finite=", 0) == 0) {
      const std::string mode = arg.substr(std::strlen("--check-finite="));
      if (mode == "off")
        o->checkFinite = CheckFinite::Off;
      else if (mode == "on-skip")
        o->checkFinite = CheckFinite::OnSkip;
      else if (mode == "every-kernel")
        o->checkFinite = CheckFinite::EveryKernel;
      else
        return usage("--check-finite takes off, on-skip or every-kernel, not '" + mode + "'");
    } else if (arg.rfind("--collect-ranges=", 0) == 0) {
      o->rangesPath = arg.substr(std::strlen("--collect-ranges="));
      if (o->rangesPath.empty())
        return usage("--collect-ranges needs a file name");
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1)
      return usage("unknown option '" + arg + "'");
    else if (o->planPath.empty())
      o->planPath = arg;
    else
      return usage("more than one plan given ('" + o->planPath + "', '" + arg + "')");
    if (rc >= 0)
      return rc;
    if (!ok)
      return usage("option '" + arg + "' needs " +
                   (arg == "--input" || arg == "--param" || arg == "--eval-input" ? "NAME=FILE"
                                                                                  : "a value"));
  }
  if (o->planPath.empty())
    return usage("no plan given");
  if (!o->haveSteps)
    return usage("--steps N is required");
  if (o->synthetic && !o->inputs.empty())
    return usage("--synthetic and --input exclude each other");
  if (o->saveEvery && o->savePath.empty())
    return usage("--save-every needs --save FILE");
  if (o->evalEvery && o->evalInputs.empty())
    return usage("--eval-every needs --eval-input NAME=FILE");
  if (!o->rangesPath.empty() && o->checkFinite == CheckFinite::EveryKernel)
    return usage("--collect-ranges and --check-finite=every-kernel exclude each other (a "
                 "result that is not finite is counted in the ranges file's nonfinite)");
  if (!o->resumePath.empty() && !o->params.empty())
    return usage("--param and --resume exclude each other (the checkpoint sets every "
                 "parameter)");
  if (o->device.empty())
    return usage("option '--device' needs a backend name (auto, or one that "
                 "`mpt-run --list-devices` lists)");
  return -1;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (int rc = parseArgs(argc, argv, &opt); rc >= 0)
    return rc;
  installStopHandlers();
  setSaveFaultWakeup(&stopSignal);
  const std::string &entry = opt.entry;

  Model model;
  if (!model.loadFile(opt.planPath, opt.device.c_str()))
    return fail(mptrt::lastError());
  const std::vector<std::string> entries = model.entryPoints();
  bool hasEntry = false;
  for (const std::string &e : entries)
    hasEntry = hasEntry || e == entry;
  if (!hasEntry)
    return fail("plan '" + opt.planPath + "' has no entry point '" + entry +
                "' (its entry points: " + joinNames(entries) + ")");

  std::vector<std::string> inputNames, paramNames, outputNames;
  if (!model.entryBindings(entry, MPTRT_INPUT, &inputNames) ||
      !model.entryBindings(entry, MPTRT_PARAMETER, &paramNames) ||
      !model.entryBindings(entry, MPTRT_OUTPUT, &outputNames))
    return fail(mptrt::lastError());
  std::vector<ParameterSpec> params;
  std::map<std::string, TensorInfo> paramInfo;
  for (const std::string &name : paramNames) {
    ParameterSpec p{name, {}};
    if (!model.info(MPTRT_PARAMETER, name, &p.info))
      return fail(mptrt::lastError());
    params.push_back(p);
    paramInfo[name] = p.info;
  }

  // The FP8 scales (train_step state `<t>.fp8_scale`, f32 0-d), whose range
  // the metrics report.
  std::vector<std::string> fp8Scales;
  for (const ParameterSpec &p : params) {
    const std::string suffix = abi::kFP8ScaleSuffix;
    if (p.name.size() > suffix.size() &&
        p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        p.info.dtype == MPTRT_F32 && p.info.numel() == 1)
      fp8Scales.push_back(p.name);
  }

  // The reported outputs: each must hold one value.
  std::optional<TensorInfo> metricInfo[abi::kOutputRoleCount];
  for (abi::OutputRole role : abi::kOutputRoles) {
    const char *name = abi::outputName(role);
    bool present = false;
    for (const std::string &n : outputNames)
      present = present || n == name;
    if (!present) {
      note("entry point '" + entry + "' has no output '" + name + "'; the metrics leave it out");
      continue;
    }
    TensorInfo info;
    if (!model.info(MPTRT_OUTPUT, name, &info))
      return fail(mptrt::lastError());
    if (info.numel() != 1)
      return fail("output '" + std::string(name) + "' of entry point '" + entry +
                  "' must hold one value, the plan gives " + describeType(info.dtype, info.shape));
    metricInfo[roleIndex(role)] = info;
  }

  // Inputs: a batched file each, or synthetic data.
  std::vector<TensorInfo> inputInfo(inputNames.size());
  for (size_t i = 0; i < inputNames.size(); ++i)
    if (!model.info(MPTRT_INPUT, inputNames[i], &inputInfo[i]))
      return fail(mptrt::lastError());
  std::vector<BatchedInput> data(inputNames.size());
  int64_t batches = 0;
  if (!opt.synthetic) {
    std::map<std::string, std::string> files;
    for (const auto &[name, file] : opt.inputs) {
      bool listed = false;
      for (const std::string &n : inputNames)
        listed = listed || n == name;
      if (!listed)
        return fail("entry point '" + entry + "' has no input named '" + name +
                    "' (its inputs: " + joinNames(inputNames) + ")");
      if (!files.emplace(name, file).second)
        return usage("--input " + name + " given twice");
    }
    for (size_t i = 0; i < inputNames.size(); ++i) {
      const std::string &name = inputNames[i];
      auto it = files.find(name);
      if (it == files.end())
        return fail("entry point '" + entry + "' needs --input " + name + "=FILE (a batch is " +
                    describeType(inputInfo[i].dtype, inputInfo[i].shape) + "), or --synthetic");
      std::string error;
      if (!loadBatchedInput(name, it->second, inputInfo[i], &data[i], &error))
        return fail(error);
      if (i == 0) {
        batches = data[i].batches;
      } else if (data[i].batches != batches) {
        const BatchedInput &a = data[0], &b = data[i];
        return fail("input '" + b.name + "': " + b.file + " gives " + std::to_string(b.batches) +
                    " batches but input '" + a.name + "' (" + a.file + ") gives " +
                    std::to_string(a.batches) +
                    ": every input must give the same number of batches");
      }
      if (data[i].unusedRows)
        note("input '" + name + "': the last " + std::to_string(data[i].unusedRows) + " rows of " +
             data[i].file + " are in no batch (the batch size is " +
             std::to_string(inputInfo[i].shape[0]) + ")");
    }
  }

  // Validation data for the eval entry.
  Evaluator evaluator;
  const bool evaluate = !opt.evalInputs.empty();
  if (evaluate) {
    std::string error;
    if (!evaluator.setUp(model, opt.planPath, opt.evalEntry, opt.evalInputs, &error))
      return fail(error);
  }

  // Starting parameters: --param files or a checkpoint.
  for (const auto &[name, file] : opt.params)
    if (int rc = bindParamFile(model, entry, paramInfo, name, file))
      return rc;
  // --seed also seeds training-mode dropout through the train.seed state
  // (docs/training.md); a checkpoint's train.seed wins on --resume.
  if (opt.haveSeed && opt.resumePath.empty()) {
    auto seedParam = paramInfo.find(abi::kTrainSeed);
    if (seedParam != paramInfo.end()) {
      const TensorInfo &info = seedParam->second;
      if (info.dtype != MPTRT_I64 || info.numel() != 1)
        return fail(std::string("parameter '") + abi::kTrainSeed +
                    "' must hold one i64, the plan gives " + describeType(info.dtype, info.shape));
      const int64_t seed = static_cast<int64_t>(opt.seed);
      if (!model.bindParameter(abi::kTrainSeed, info.dtype, info.shape, &seed, sizeof seed))
        return fail(mptrt::lastError());
    }
  }
  uint64_t done = 0;
  if (!opt.resumePath.empty()) {
    Checkpoint checkpoint;
    std::string error;
    if (!readCheckpoint(opt.resumePath, &checkpoint, &error) ||
        !matchCheckpoint(opt.resumePath, checkpoint, params, entry, &error))
      return fail(error);
    if (checkpoint.steps > opt.steps)
      return fail("checkpoint '" + opt.resumePath + "' has already run " +
                  std::to_string(checkpoint.steps) + " steps, more than --steps " +
                  std::to_string(opt.steps));
    for (const CheckpointTensor &t : checkpoint.tensors)
      if (!model.bindParameter(t.name, t.info.dtype, t.info.shape, t.bytes.data(), t.bytes.size()))
        return fail("resuming from '" + opt.resumePath + "': " + mptrt::lastError());
    done = checkpoint.steps;
  }

  MetricsFile metrics;
  if (!opt.metricsPath.empty()) {
    std::string error;
    if (!metrics.open(opt.metricsPath, !opt.resumePath.empty(), &error))
      return fail(error);
  }

  Progress::Options po;
  po.terminal = ::isatty(::fileno(stderr)) == 1;
  po.quiet = opt.quiet;
  po.logEvery = static_cast<int64_t>(opt.logEvery);
  po.firstStep = static_cast<int64_t>(done);
  po.totalSteps = static_cast<int64_t>(opt.steps);
  if (!inputInfo.empty()) {
    const TensorInfo &first = inputInfo[0];
    po.samplesPerStep = first.shape.empty() ? 1 : static_cast<double>(first.shape[0]);
    if ((first.dtype == MPTRT_I64 || first.dtype == MPTRT_I32) && first.shape.size() >= 2)
      po.tokensPerStep = static_cast<double>(first.numel());
  }
  Progress progress(po);

  // --check-finite=on-skip: a skipped step leaves the weights and the
  // optimizer state as they were, but not the loss scale, its growth
  // tracker or the step counter (and batch-norm running statistics); those
  // small parameters are copied before each step so that a skipped step can
  // be rerun exactly as it ran.
  const bool checkOnSkip =
      opt.checkFinite == CheckFinite::OnSkip && metricInfo[roleIndex(abi::OutputRole::Skipped)];
  std::vector<ParameterSpec> smallState;
  std::vector<std::vector<uint8_t>> smallBefore;
  if (checkOnSkip)
    for (const ParameterSpec &p : params)
      if (p.info.bytes() <= kSmallStateBytes) {
        smallState.push_back(p);
        smallBefore.emplace_back(p.info.bytes());
      }

  std::unique_ptr<RangeCollector> ranges;
  if (!opt.rangesPath.empty())
    ranges = std::make_unique<RangeCollector>();

  const uint64_t firstStep = done;
  int64_t skipped = 0;
  double totalMs = 0;
  std::optional<double> firstLoss, lastLoss, lastValLoss;
  std::vector<int64_t> boundBatch(inputNames.size(), -1);
  std::vector<uint8_t> synthetic;
  uint8_t value[8];
  uint64_t s = firstStep, savedAt = UINT64_MAX;
  for (; s < opt.steps; ++s) {
    if (stopSignal.load() != 0)
      break; // interrupted: `s` steps have run
    const int64_t step = static_cast<int64_t>(s);
    const std::string where = "step " + std::to_string(s + 1);
    for (size_t i = 0; i < inputNames.size(); ++i) {
      const TensorInfo &info = inputInfo[i];
      bool ok;
      if (opt.synthetic) {
        std::string error;
        if (!syntheticBatch(inputNames[i], info, opt.seed, step, static_cast<int64_t>(opt.intRange),
                            &synthetic, &error))
          return fail(error);
        ok = model.bindInput(inputNames[i], info.dtype, info.shape, synthetic.data(),
                             synthetic.size());
      } else {
        // Inputs keep their value until rebound: bind only a new batch.
        const int64_t b = step % batches;
        if (b == boundBatch[i])
          continue;
        ok = model.bindInput(inputNames[i], info.dtype, info.shape, data[i].batch(b),
                             data[i].batchBytes());
        boundBatch[i] = b;
      }
      if (!ok)
        return fail(where + ": " + mptrt::lastError());
    }
    if (checkOnSkip) {
      for (size_t i = 0; i < smallState.size(); ++i)
        if (mptrt_read_parameter(model.handle(), smallState[i].name.c_str(), smallBefore[i].data(),
                                 smallBefore[i].size()) != MPTRT_OK)
          return fail(where + ": " + mptrt::lastError());
    }
    StepMetrics m;
    const auto start = std::chrono::steady_clock::now();
    if (ranges) {
      if (!model.runObserved(entry, RangeCollector::observe, ranges.get())) {
        progress.finish();
        return fail(where + ": " + mptrt::lastError());
      }
      ranges->countStep();
    } else if (opt.checkFinite == CheckFinite::EveryKernel) {
      mptrt_nonfinite first;
      if (!model.runChecked(entry, &first)) {
        progress.finish();
        return fail(where + ": " + mptrt::lastError());
      }
      if (first.found)
        m.firstNonFinite = toOrigin(first);
    } else if (!model.run(entry)) {
      progress.finish();
      return fail(where + ": " + mptrt::lastError());
    }
    m.step = step + 1;
    m.timeMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::optional<double> values[abi::kOutputRoleCount];
    for (abi::OutputRole role : abi::kOutputRoles) {
      const std::optional<TensorInfo> &info = metricInfo[roleIndex(role)];
      if (!info)
        continue;
      if (mptrt_read_output(model.handle(), abi::outputName(role), value, info->bytes()) !=
          MPTRT_OK)
        return fail(where + ": " + mptrt::lastError());
      values[roleIndex(role)] = toDouble(info->dtype, value);
    }
    m.loss = values[roleIndex(abi::OutputRole::Loss)];
    m.lossScale = values[roleIndex(abi::OutputRole::LossScale)];
    m.gradNorm = values[roleIndex(abi::OutputRole::GradNorm)];
    m.lr = values[roleIndex(abi::OutputRole::Lr)];
    for (const std::string &name : fp8Scales) {
      float scale;
      if (mptrt_read_parameter(model.handle(), name.c_str(), &scale, sizeof(scale)) != MPTRT_OK)
        return fail(where + ": " + mptrt::lastError());
      m.fp8ScaleMin = std::min<double>(m.fp8ScaleMin.value_or(scale), scale);
      m.fp8ScaleMax = std::max<double>(m.fp8ScaleMax.value_or(scale), scale);
    }
    if (const std::optional<double> &s = values[roleIndex(abi::OutputRole::Skipped)])
      m.skipped = *s != 0;
    skipped += m.skipped.value_or(false);
    if (checkOnSkip && m.skipped.value_or(false)) {
      const auto checkStart = std::chrono::steady_clock::now();
      if (int rc = rerunChecked(model, entry, smallState, smallBefore, &m)) {
        progress.finish();
        return rc;
      }
      m.checkMs =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - checkStart)
              .count();
    }
    totalMs += m.timeMs;
    if (evaluate && ((opt.evalEvery && (s + 1) % opt.evalEvery == 0) || s + 1 == opt.steps)) {
      const auto evalStart = std::chrono::steady_clock::now();
      double valLoss;
      std::string error;
      if (!evaluator.run(model, &valLoss, &error)) {
        progress.finish();
        return fail(where + ": " + error);
      }
      m.valLoss = lastValLoss = valLoss;
      m.evalMs =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - evalStart)
              .count();
      boundBatch.assign(boundBatch.size(), -1); // eval_step rebound the shared inputs
    }
    if (!firstLoss)
      firstLoss = m.loss;
    lastLoss = m.loss;
    std::string error;
    if (metrics.isOpen() && !metrics.write(m, &error)) {
      progress.finish();
      return fail(error);
    }
    progress.update(m, skipped);
    if (opt.saveEvery && (s + 1) % opt.saveEvery == 0 && s + 1 < opt.steps) {
      if (int rc = saveCheckpoint(model, params, opt.savePath, s + 1)) {
        progress.finish();
        return rc;
      }
      savedAt = s + 1;
    }
  }
  progress.finish();
  // Stopped by a signal: `s` < --steps steps have run (docs/mpt-train.md,
  // "Interrupting a run"). The checkpoint is written as at the end.
  const int stoppedBy = s < opt.steps ? stopSignal.load() : 0;
  if (!opt.savePath.empty() && s != savedAt)
    if (int rc = saveCheckpoint(model, params, opt.savePath, s))
      return rc;
  if (ranges) {
    std::string error;
    if (!ranges->write(opt.rangesPath, opt.planPath, entry, &error))
      return fail(error);
    if (!opt.quiet)
      ranges->report(stderr, 10);
  }
  if (evaluate && !lastValLoss) { // no step ran: evaluate the parameters as they are
    double valLoss;
    std::string error;
    if (!evaluator.run(model, &valLoss, &error))
      return fail(error);
    lastValLoss = valLoss;
  }

  const uint64_t ran = s - firstStep;
  std::string summary = "mpt-train: ran " + std::to_string(ran) + " steps";
  if (ran)
    summary += " (" + std::to_string(firstStep + 1) + "-" + std::to_string(s) + " of " +
               std::to_string(opt.steps) + "), " + std::to_string(skipped) + " skipped";
  else
    summary += " (" + std::to_string(s) + " of " + std::to_string(opt.steps) +
               (stoppedBy ? " run)" : " already run)");
  char text[64];
  if (firstLoss && lastLoss)
    summary += ", first loss " + formatNumber("%.9g", *firstLoss) + ", last loss " +
               formatNumber("%.9g", *lastLoss);
  if (lastValLoss)
    summary += ", val loss " + formatNumber("%.9g", *lastValLoss) + " (" +
               std::to_string(evaluator.batches()) +
               (evaluator.batches() == 1 ? " batch)" : " batches)");
  if (ran) {
    std::snprintf(text, sizeof(text), ", mean step time %.4f ms", totalMs / double(ran));
    summary += text;
  }
  summary += ", device " + model.backend();
  std::printf("%s\n", summary.c_str());
  if (stoppedBy) {
    std::fflush(stdout);
    const std::string outcome = opt.savePath.empty()
                                    ? "no checkpoint written (no --save given)"
                                    : "checkpoint written to '" + opt.savePath +
                                          "'; continue with --resume " + opt.savePath;
    std::fprintf(stderr, "mpt-train: interrupted by %s after step %s of %s: %s\n",
                 stoppedBy == SIGINT ? "SIGINT" : "SIGTERM", std::to_string(s).c_str(),
                 std::to_string(opt.steps).c_str(), outcome.c_str());
    return 128 + stoppedBy;
  }
  return 0;
}
