//===- mpt-train.cpp - run the train_step of an MPT plan repeatedly ------===//
//
//   mpt-train model.mptp --input x=train_x.npy --input y=train_y.npy
//             --steps N [--device auto|cpu|cuda] [--metrics metrics.jsonl]
//             [--save ckpt] [--save-every K] [--resume ckpt]
//             [--eval-input x=val_x.npy ... --eval-every K] ...
//
// A command line over the runtime's training library (mptrt/train.hpp):
// the library binds each step's batch, runs the entry point, reads its 0-d
// outputs (loss, skipped, grad_norm, loss_scale, lr), reruns a skipped step
// with a finite check, evaluates and writes checkpoints. This file reads
// the data files (InputFiles.h), appends the metrics lines, updates the
// progress line (Progress.h), prints the summary and handles signals. See
// docs/mpt-train.md. Exit status: 0 on success, 1 if something fails, 2 for
// a usage error (Options.h), 128 + the signal's number after SIGINT,
// SIGTERM, SIGHUP or SIGQUIT (which stop the run at the next step boundary,
// with a checkpoint if --save; Signals.h).
//
// Under a launcher (`mpirun -np N mpt-train ...`) each process is one rank
// of a data-parallel run (DataParallel.h, docs/distributed.md): it trains
// on its block of each global batch, and rank 0 alone prints progress and
// writes the metrics, checkpoints, ranges and profile.
//
//===----------------------------------------------------------------------===//
#include "DataParallel.h"
#include "InputFiles.h"
#include "Options.h"
#include "OutputPaths.h"
#include "Progress.h"
#include "Signals.h"
#include "mptrt/train.hpp"
#include "mptrt/train/Params.h"

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

using namespace mptrt::tools;
namespace train = mptrt::train;

namespace {

/// "rank 1: " in a data-parallel run of several ranks, else "".
std::string rankLabel;

int fail(const std::string &message) {
  std::fprintf(stderr, "mpt-train: error: %s%s\n", rankLabel.c_str(), message.c_str());
  return 1;
}

void note(const std::string &message) {
  std::fprintf(stderr, "mpt-train: note: %s%s\n", rankLabel.c_str(), message.c_str());
}

/// Gives every input its file (--input) or synthetic data.
int loadTrainingData(const TrainOptions &opt, train::Trainer &trainer) {
  if (opt.synthetic) {
    trainer.setSynthetic(opt.seed, static_cast<int64_t>(opt.intRange));
    return 0;
  }
  const InputFileSet set{
      opt.entry, "--input", ", or --synthetic", true, trainer.inputNames(), trainer.inputInfo()};
  auto give = [&](const std::string &name, train::Array array, std::string *error) {
    if (!trainer.setData(name, std::move(array), error))
      return false;
    for (size_t i = 0; i < set.names.size(); ++i)
      if (set.names[i] == name && trainer.data(i)->unusedRows && !opt.quiet)
        note("input '" + name + "': the last " + std::to_string(trainer.data(i)->unusedRows) +
             " rows of " + trainer.data(i)->file + " are in no batch (the batch size is " +
             std::to_string(set.info[i].shape[0]) + ")");
    return true;
  };
  std::string message;
  const LoadOutcome outcome = loadInputFiles(set, opt.inputs, give, &message);
  return outcome == LoadOutcome::Ok      ? 0
         : outcome == LoadOutcome::Usage ? trainUsage(message)
                                         : fail(message);
}

/// Sets up the evaluation entry and gives it its --eval-input files.
int loadValidationData(const TrainOptions &opt, train::Trainer &trainer) {
  std::string message;
  if (!trainer.setUpEvaluation(opt.evalEntry, &message))
    return fail(message);
  train::Evaluator &evaluator = trainer.evaluator();
  const InputFileSet set{opt.evalEntry, "--eval-input",         "",
                         false,         evaluator.inputNames(), evaluator.inputInfo()};
  auto give = [&](const std::string &name, train::Array array, std::string *error) {
    return evaluator.setData(name, std::move(array), error);
  };
  return loadInputFiles(set, opt.evalInputs, give, &message) == LoadOutcome::Ok ? 0 : fail(message);
}

/// The starting parameters: a --params file, --param files (which win over
/// it), --seed, or a --resume checkpoint.
int setStartingState(const TrainOptions &opt, train::Trainer &trainer) {
  std::string error;
  if (!opt.paramsPath.empty()) {
    std::vector<std::string> givenByParam;
    for (const auto &binding : opt.params)
      givenByParam.push_back(binding.first);
    train::ParamsFile file;
    if (!train::readParamsFile(opt.paramsPath, &file, &error) ||
        !train::loadParams(trainer, file, givenByParam, &error))
      return fail(error);
  }
  for (const auto &[name, file] : opt.params) {
    train::Array array;
    if (!trainer.parameter(name, &error))
      return fail(error);
    if (!readArrayFile(file, &array, &error))
      return fail("parameter '" + name + "': " + error);
    if (!trainer.setParameter(name, std::move(array), &error))
      return fail(error);
  }
  // --seed also seeds training-mode dropout through the train.seed state
  // (docs/training.md); a checkpoint's train.seed wins on --resume.
  if (opt.haveSeed && opt.resumePath.empty() && !trainer.setSeed(opt.seed, &error))
    return fail(error);
  if (opt.resumePath.empty())
    return 0;
  train::Checkpoint checkpoint;
  if (!trainer.readCheckpoint(opt.resumePath, &checkpoint, &error))
    return fail(error);
  if (checkpoint.steps > opt.steps)
    return fail("checkpoint '" + opt.resumePath + "' has already run " +
                std::to_string(checkpoint.steps) + " steps, more than --steps " +
                std::to_string(opt.steps));
  return trainer.restore(checkpoint, opt.resumePath, &error) ? 0 : fail(error);
}

} // namespace

int main(int argc, char **argv) {
  TrainOptions opt;
  if (int rc = parseTrainArgs(argc, argv, &opt); rc >= 0)
    return rc;
  if (const std::string bad = checkOutputPaths(opt); !bad.empty())
    return trainUsage(bad);
  installSignalHandlers();
  train::setSaveFaultWakeup(&stopSignal());

  World world;
  std::string error;
  if (!joinWorld(opt.planPath, &world, &error))
    return fail(error);
  if (world.ranks > 1)
    rankLabel = "rank " + std::to_string(world.rank) + ": ";
  if (!world.lead()) { // rank 0 alone reports and writes
    opt.quiet = true;
    opt.metricsPath.clear();
    opt.rangesPath.clear();
    opt.profilePath.clear();
    // Every rank saves, at the same steps, since sharded optimizer state is
    // gathered from all of them; train::saveCheckpoint writes on rank 0.
  }

  train::TrainerOptions options;
  options.entry = opt.entry;
  options.checkFinite = opt.checkFinite;
  options.collectRanges = !opt.rangesPath.empty();
  options.profile = !opt.profilePath.empty();
  options.slice = {world.rank, world.ranks};
  train::Trainer trainer;
  const bool opened = trainer.open(opt.planPath, opt.device, options, &error);
  if (world.lead())
    for (const std::string &message : trainer.notes())
      note(message);
  if (!opened)
    return fail(error);
  if (!checkDataParallelPlan(trainer, opt.entry, world, &error))
    return fail(error);
  if (int rc = loadTrainingData(opt, trainer))
    return rc;
  const bool evaluate = !opt.evalInputs.empty();
  if (evaluate)
    if (int rc = loadValidationData(opt, trainer))
      return rc;
  if (int rc = setStartingState(opt, trainer))
    return rc;
  if (train::KernelProfile *profile = trainer.profile()) // a warm-up first, if steps follow it
    profile->setWarmupSteps(opt.steps > trainer.steps() + 1 ? 1 : 0);

  train::MetricsFile metrics;
  if (!opt.metricsPath.empty() && !metrics.open(opt.metricsPath, !opt.resumePath.empty(), &error))
    return fail(error);
  const uint64_t firstStep = trainer.steps();
  Progress::Options po;
  po.terminal = ::isatty(::fileno(stderr)) == 1;
  po.quiet = opt.quiet;
  po.logEvery = static_cast<int64_t>(opt.logEvery);
  po.firstStep = static_cast<int64_t>(firstStep);
  po.totalSteps = static_cast<int64_t>(opt.steps);
  if (!trainer.inputInfo().empty()) {
    const mptrt::TensorInfo &first = trainer.inputInfo()[0];
    // The global batch: every rank's block.
    po.samplesPerStep = first.shape.empty() ? 1 : static_cast<double>(first.shape[0]) * world.ranks;
    if ((first.dtype == MPTRT_I64 || first.dtype == MPTRT_I32) && first.shape.size() >= 2)
      po.tokensPerStep = static_cast<double>(first.numel()) * world.ranks;
  }
  Progress progress(po);
  auto stop = [&](const std::string &message) {
    progress.finish();
    return fail(message);
  };

  int64_t skipped = 0;
  double totalMs = 0;
  std::optional<double> firstLoss, lastLoss, lastValLoss;
  uint64_t s = firstStep, savedAt = UINT64_MAX;
  // With several ranks, a signal reaches some of them: after each step
  // they agree on whether any was asked to save or to stop, so that all
  // save (sharded state is gathered) and stop at the same step.
  bool agreedStop = false;
  auto agree = [&](bool *asked, bool *stopping) {
    if (world.ranks == 1)
      return true;
    double flags[2] = {*asked ? 1.0 : 0.0, *stopping ? 1.0 : 0.0};
    if (!world.comm->allReduceSum(flags, 2, &error)) {
      error = "step " + std::to_string(s + 1) + ": agreeing on signals over the ranks: " + error;
      return false;
    }
    *asked = flags[0] > 0;
    *stopping = flags[1] > 0;
    return true;
  };
  for (; s < opt.steps; ++s) {
    if (world.ranks == 1 ? stopSignal().load() != 0 : agreedStop)
      break; // interrupted: `s` steps have run
    train::StepMetrics m;
    if (!trainer.step(&m, &error))
      return stop(error);
    skipped += m.skipped.value_or(false);
    totalMs += m.timeMs;
    if (evaluate && ((opt.evalEvery && (s + 1) % opt.evalEvery == 0) || s + 1 == opt.steps)) {
      if (!trainer.evaluate(&m, &error))
        return stop("step " + std::to_string(s + 1) + ": " + error);
      lastValLoss = m.valLoss;
    }
    if (!firstLoss)
      firstLoss = m.loss;
    lastLoss = m.loss;
    if (metrics.isOpen() && !metrics.write(m, &error))
      return stop(error);
    progress.update(m, skipped);
    bool asked = takeSaveRequest(), stopping = stopSignal().load() != 0;
    if (!agree(&asked, &stopping))
      return stop(error);
    agreedStop = stopping;
    if (asked && opt.savePath.empty() && world.lead())
      note("SIGUSR1 after step " + std::to_string(s + 1) +
           ": no checkpoint written (no --save given)");
    if (((asked && !opt.savePath.empty()) || (opt.saveEvery && (s + 1) % opt.saveEvery == 0)) &&
        s + 1 < opt.steps) {
      if (!trainer.save(opt.savePath, &error))
        return stop(error);
      savedAt = s + 1;
      if (asked)
        note("SIGUSR1: checkpoint written to '" + opt.savePath + "' after step " +
             std::to_string(s + 1) + "; training goes on");
    }
  }
  progress.finish();
  // Stopped by a signal: `s` < --steps steps have run (docs/mpt-train.md,
  // "Interrupting a run"). The checkpoint is written as at the end.
  // A rank that stopped because another was signalled ends as that one.
  const int stoppedBy = s < opt.steps ? (stopSignal().load() ? stopSignal().load()
                                         : agreedStop        ? SIGTERM
                                                             : 0)
                                      : 0;
  if (!opt.savePath.empty() && s != savedAt && !trainer.save(opt.savePath, &error))
    return fail(error);
  if (const train::RangeCollector *ranges = trainer.ranges()) {
    if (!ranges->write(opt.rangesPath, opt.planPath, opt.entry, &error))
      return fail(error);
    if (!opt.quiet)
      ranges->report(stderr, 10);
  }
  if (const train::KernelProfile *profile = trainer.profile()) {
    if (!profile->write(opt.profilePath, opt.planPath, trainer.model().backend(), &error))
      return fail(error);
    if (!opt.quiet)
      profile->report(stderr, trainer.model().backend(), 20);
  }
  if (evaluate && !lastValLoss) { // no step ran: evaluate the parameters as they are
    train::StepMetrics m;
    if (!trainer.evaluate(&m, &error))
      return fail(error);
    lastValLoss = m.valLoss;
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
    summary += ", first loss " + train::formatNumber("%.9g", *firstLoss) + ", last loss " +
               train::formatNumber("%.9g", *lastLoss);
  if (lastValLoss)
    summary += ", val loss " + train::formatNumber("%.9g", *lastValLoss) + " (" +
               std::to_string(trainer.evaluator().batches()) +
               (trainer.evaluator().batches() == 1 ? " batch)" : " batches)");
  if (ran) {
    std::snprintf(text, sizeof(text), ", mean step time %.4f ms", totalMs / double(ran));
    summary += text;
  }
  summary += ", device " + trainer.model().backend();
  if (world.ranks > 1)
    summary += ", " + std::to_string(world.ranks) + " ranks";
  if (world.lead())
    std::printf("%s\n", summary.c_str());
  if (stoppedBy) {
    std::fflush(stdout);
    const std::string outcome = opt.savePath.empty()
                                    ? "no checkpoint written (no --save given)"
                                    : "checkpoint written to '" + opt.savePath +
                                          "'; continue with --resume " + opt.savePath;
    std::fprintf(
        stderr, "mpt-train: %sinterrupted by %s after step %s of %s: %s\n", rankLabel.c_str(),
        stopSignal().load() || !agreedStop ? signalName(stoppedBy) : "another rank's signal",
        std::to_string(s).c_str(), std::to_string(opt.steps).c_str(), outcome.c_str());
    return 128 + stoppedBy;
  }
  return 0;
}
