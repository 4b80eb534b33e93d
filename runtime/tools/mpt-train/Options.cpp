//===- Options.cpp - mpt-train's command line ----------------------------===//
#include "Options.h"

#include "ToolArgs.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mptrt {
namespace tools {
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
    "  --params FILE            initial values of the model's parameters, by name, from a\n"
    "                           .safetensors or an .npz (numpy.savez) file: every tensor\n"
    "                           must name a parameter, every parameter that is not\n"
    "                           training state (optimizer moments, loss scale, step\n"
    "                           counters, FP8 scales) needs one unless --param gives it,\n"
    "                           shapes equal; f64/f32/f16/bf16 tensors are converted to a\n"
    "                           float parameter's type (round to nearest even), other\n"
    "                           types must be the parameter's\n"
    "  --param NAME=FILE        initial value of a parameter (instead of the plan's, or\n"
    "                           --params'); a .npy or .pb of exactly its dtype and shape\n"
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
    "  --quiet                  no progress line (nor the --collect-ranges and --profile\n"
    "                           reports)\n"
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
    "  --profile FILE           time every kernel of every step (the host's clock on the\n"
    "                           CPU, CUDA events on a GPU; steps run without CUDA graphs)\n"
    "                           and write the times per kernel kind and per ONNX node and\n"
    "                           phase to FILE (JSON; docs/mpt-train.md, \"Profiling\"), and\n"
    "                           print the top 20 of each unless --quiet. With more than\n"
    "                           one step to run, the first is a warm-up left out of the\n"
    "                           sums. MPTRT_PROFILE=FILE in the environment does the same\n"
    "                           when --profile is not given. Not with --collect-ranges or\n"
    "                           --check-finite=every-kernel\n"
    "\n"
    "Checkpoints (every parameter of the entry point and the step count):\n"
    "  --save FILE              write a checkpoint at the end, or when interrupted\n"
    "                           (atomically: a temporary file in FILE's directory, fsync,\n"
    "                           rename; through a symbolic link, to its target). FILE must\n"
    "                           be new or a checkpoint of at most --steps steps: never a\n"
    "                           device, a plan, a data file or later training\n"
    "  --save-every K           also write it after every K-th step (needs --save)\n"
    "  --resume FILE            start from a checkpoint and run up to --steps steps in all;\n"
    "                           the result is bit-identical to an uninterrupted run;\n"
    "                           not with --param or --params\n"
    "\n"
    "No output (--save, --metrics, --collect-ranges, --profile) may name a file the run reads, or\n"
    "another output; --save may name the --resume checkpoint.\n"
    "\n"
    "Interrupting: SIGINT (Ctrl-C), SIGTERM, SIGHUP or SIGQUIT lets the current step\n"
    "finish, writes the checkpoint to --save's FILE (none without --save) and exits\n"
    "with status 128 + the signal: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP), 131\n"
    "(SIGQUIT); a second signal aborts at once. SIGUSR1 writes the checkpoint after\n"
    "the current step and training goes on. A closed pipe stops the output, not the\n"
    "training.\n"
    "\n"
    "Exit status: 0 success, 1 data or runtime error, 2 usage error, 128 + signal\n"
    "interrupted. See docs/mpt-train.md.\n";

} // namespace

int trainUsage(const std::string &message) {
  std::fprintf(stderr, "mpt-train: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int parseTrainArgs(int argc, char **argv, TrainOptions *o) {
  constexpr uint64_t kMaxCount = 1000000000000ull; // 1e12
  mptrt::tools::ArgWalker args(argc, argv);
  while (args.next()) {
    const std::string &arg = args.arg();
    auto number = [&](uint64_t min, uint64_t max, uint64_t *out) -> int {
      std::string error;
      return args.number(min, max, out, &error) ? -1 : trainUsage(error);
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
    else if (arg == "--profile")
      ok = args.value(&o->profilePath) && !o->profilePath.empty();
    else if (arg == "--params")
      ok = args.value(&o->paramsPath) && !o->paramsPath.empty();
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
        o->checkFinite = train::CheckFinite::Off;
      else if (mode == "on-skip")
        o->checkFinite = train::CheckFinite::OnSkip;
      else if (mode == "every-kernel")
        o->checkFinite = train::CheckFinite::EveryKernel;
      else
        return trainUsage("--check-finite takes off, on-skip or every-kernel, not '" + mode + "'");
    } else if (arg.rfind("--collect-ranges=", 0) == 0) {
      o->rangesPath = arg.substr(std::strlen("--collect-ranges="));
      if (o->rangesPath.empty())
        return trainUsage("--collect-ranges needs a file name");
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1)
      return trainUsage("unknown option '" + arg + "'");
    else if (o->planPath.empty())
      o->planPath = arg;
    else
      return trainUsage("more than one plan given ('" + o->planPath + "', '" + arg + "')");
    if (rc >= 0)
      return rc;
    if (!ok)
      return trainUsage("option '" + arg + "' needs " +
                        (arg == "--input" || arg == "--param" || arg == "--eval-input"
                             ? "NAME=FILE"
                             : "a value"));
  }
  if (o->planPath.empty())
    return trainUsage("no plan given");
  if (!o->haveSteps)
    return trainUsage("--steps N is required");
  if (o->synthetic && !o->inputs.empty())
    return trainUsage("--synthetic and --input exclude each other");
  if (o->saveEvery && o->savePath.empty())
    return trainUsage("--save-every needs --save FILE");
  if (o->evalEvery && o->evalInputs.empty())
    return trainUsage("--eval-every needs --eval-input NAME=FILE");
  if (!o->rangesPath.empty() && o->checkFinite == train::CheckFinite::EveryKernel)
    return trainUsage("--collect-ranges and --check-finite=every-kernel exclude each other (a "
                      "result that is not finite is counted in the ranges file's nonfinite)");
  if (const char *env = std::getenv("MPTRT_PROFILE"); env && *env && o->profilePath.empty()) {
    o->profilePath = env;
    o->profileFromEnv = true;
  }
  const std::string profile = o->profileFromEnv ? "MPTRT_PROFILE" : "--profile";
  if (!o->profilePath.empty() && !o->rangesPath.empty())
    return trainUsage(profile + " and --collect-ranges exclude each other (the profile would "
                                "time the ranges' reads of every result)");
  if (!o->profilePath.empty() && o->checkFinite == train::CheckFinite::EveryKernel)
    return trainUsage(profile + " and --check-finite=every-kernel exclude each other (the "
                                "profile would time the check's reads of every result)");
  if (!o->resumePath.empty() && !o->params.empty())
    return trainUsage("--param and --resume exclude each other (the checkpoint sets every "
                      "parameter)");
  if (!o->resumePath.empty() && !o->paramsPath.empty())
    return trainUsage("--params and --resume exclude each other (the checkpoint sets every "
                      "parameter)");
  if (o->device.empty())
    return trainUsage("option '--device' needs a backend name (auto, or one that "
                      "`mpt-run --list-devices` lists)");
  return -1;
}

} // namespace tools
} // namespace mptrt
