//===- train.hpp - the training library: mptrt::train::Trainer ----*- C++ -*-===//
//
// The training loop of a plan compiled with `mpt-compile --train`
// (docs/training.md), as a library: mpt-train is a command line over it and
// the Python package calls it through the C API (mptrt.h, mptrt_trainer_*).
//
//   mptrt::train::Trainer trainer;
//   std::string error;
//   if (!trainer.open("mlp.train.mptp", "auto", {}, &error) ||
//       !trainer.setData("x", Array::of(MPTRT_F32, {64, 784}, x, sizeof x, "x"), &error) ||
//       !trainer.setData("labels", Array::of(MPTRT_I64, {64}, y, sizeof y, "labels"), &error))
//     ...
//   for (int s = 0; s < 100; ++s) {
//     mptrt::train::StepMetrics m;
//     if (!trainer.step(&m, &error)) ...
//     std::puts(metricsJson(m).c_str());
//   }
//   trainer.save("mlp.ckpt", &error);
//
// A step binds the inputs' batch for it (Batches.h: step s uses batch
// s mod batches, or synthetic data), runs the train_step entry, reads its
// 0-d outputs by role (mptrt/TrainStepAbi.h: loss, skipped, grad_norm,
// loss_scale, lr) and the FP8 scale range into a StepMetrics (Metrics.h).
// With CheckFinite::OnSkip a skipped step is rerun from the state it started
// in with a finite check after every kernel, which says where the first inf
// or NaN came from; EveryKernel checks every step. Checkpoints (Checkpoint.h)
// hold every parameter of the entry point and the step count, so a run
// resumed from one is bit-identical to one never interrupted. With
// TrainerOptions::profile every step runs profiled (Profile.h). With an
// evaluation entry (Evaluation.h), evaluate() computes the validation loss.
//
// Like the rest of the runtime it reports failure by return value and a
// message, never by exception.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_HPP
#define MPTRT_TRAIN_HPP

#include "mptrt.hpp"
#include "mptrt/TrainStepAbi.h"
#include "mptrt/train/Batches.h"
#include "mptrt/train/Checkpoint.h"
#include "mptrt/train/Evaluation.h"
#include "mptrt/train/Metrics.h"
#include "mptrt/train/Profile.h"
#include "mptrt/train/Ranges.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mptrt {
namespace train {

/// When a step runs with a finite check after each kernel.
enum class CheckFinite {
  Off,
  OnSkip,     // rerun a skipped step with the check (the default)
  EveryKernel // check every step
};

struct TrainerOptions {
  std::string entry = abi::kTrainEntry;
  CheckFinite checkFinite = CheckFinite::OnSkip;
  /// Record every floating-point kernel result's range (Ranges.h); not
  /// with CheckFinite::EveryKernel.
  bool collectRanges = false;
  /// Run every step profiled (Profile.h: per-kernel times, never a
  /// replayed CUDA graph; profile()->setWarmupSteps leaves the first ones
  /// out). Not with collectRanges or CheckFinite::EveryKernel.
  bool profile = false;
  /// The block of each global batch this process trains on, in a
  /// data-parallel run (Batches.h, docs/distributed.md); the default is
  /// one process. Synthetic data is sliced the same way.
  DataSlice slice;
};

class Trainer {
public:
  Trainer() = default;
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  /// Loads the plan at `path` on `device` ("auto" or a backend name) and
  /// checks its entry point and outputs.
  bool open(const std::string &path, const std::string &device, const TrainerOptions &options,
            std::string *error);
  /// Trains a model the caller owns and keeps alive; `planLabel` names the
  /// plan in messages. The caller may bind and run the model between steps:
  /// each step binds every input again.
  bool attach(mptrt_model *model, const std::string &planLabel, const TrainerOptions &options,
              std::string *error);

  Model &model() { return model_; }
  const Model &model() const { return model_; }
  const std::string &entry() const { return options_.entry; }
  const std::vector<std::string> &inputNames() const { return inputNames_; }
  const std::vector<TensorInfo> &inputInfo() const { return inputInfo_; }
  /// The entry's parameters: what a checkpoint holds.
  const std::vector<ParameterSpec> &parameters() const { return params_; }
  /// What open() noticed, one line each (an output the metrics leave out).
  const std::vector<std::string> &notes() const { return notes_; }

  /// The training data of input `name`, cut into batches; every input must
  /// give as many batches as the first one given.
  bool setData(const std::string &name, Array array, std::string *error);
  /// The data of input `input` (inputNames()' index), or null.
  const BatchedInput *data(size_t input) const;
  /// Synthetic data for every input instead (Batches.h).
  void setSynthetic(uint64_t seed, int64_t intRange);

  /// The parameter `name` of the entry, or null with a message.
  const ParameterSpec *parameter(const std::string &name, std::string *error) const;
  /// Sets a parameter from an array of exactly its dtype and shape.
  bool setParameter(const std::string &name, Array array, std::string *error);
  /// Seeds training-mode dropout: the plan's train.seed parameter, if any.
  bool setSeed(uint64_t seed, std::string *error);

  /// The validation entry (Evaluation.h); give it data through evaluator().
  bool setUpEvaluation(const std::string &entry, std::string *error);
  bool evaluating() const { return evaluating_; }
  Evaluator &evaluator() { return evaluator_; }
  const Evaluator &evaluator() const { return evaluator_; }

  /// Steps run so far, across checkpoints. The next step is steps() + 1.
  uint64_t steps() const { return steps_; }
  void setSteps(uint64_t steps) { steps_ = steps; }

  /// Writes every parameter and steps() to `path` (atomically).
  bool save(const std::string &path, std::string *error) const;
  /// Reads a checkpoint and checks that it holds exactly parameters().
  bool readCheckpoint(const std::string &path, Checkpoint *out, std::string *error) const;
  /// Binds its tensors and sets steps() to its step count.
  bool restore(const Checkpoint &checkpoint, const std::string &path, std::string *error);
  /// readCheckpoint, then restore.
  bool resume(const std::string &path, std::string *error);

  /// Runs step steps() + 1 and reports it in *m; steps() counts it.
  bool step(StepMetrics *m, std::string *error);
  /// The validation loss of the current parameters, into m->valLoss and
  /// m->evalMs; the next step binds its batch again.
  bool evaluate(StepMetrics *m, std::string *error);

  /// The ranges collected (with TrainerOptions::collectRanges), or null.
  const RangeCollector *ranges() const { return ranges_.get(); }
  /// The kernel profile (with TrainerOptions::profile), or null.
  const KernelProfile *profile() const { return profile_.get(); }
  KernelProfile *profile() { return profile_.get(); }

private:
  bool setUp(const std::string &planLabel, const TrainerOptions &options, std::string *error);
  bool bindBatch(int64_t step, const std::string &where, std::string *error);
  bool rerunChecked(StepMetrics *m, std::string *error);

  Model model_;
  TrainerOptions options_;
  std::string planLabel_;
  bool rebindEveryStep_ = false; // attach(): the caller may bind between steps
  std::vector<std::string> inputNames_, notes_;
  std::vector<TensorInfo> inputInfo_;
  std::vector<ParameterSpec> params_;
  std::vector<std::string> fp8Scales_;
  // Per abi::kOutputRoles: the output with that role, and its type.
  std::string metricName_[abi::kOutputRoleCount];
  std::optional<TensorInfo> metricInfo_[abi::kOutputRoleCount];
  std::vector<BatchedInput> data_; // per input; batches == 0: none yet
  int firstData_ = -1;
  bool synthetic_ = false;
  uint64_t seed_ = 0;
  int64_t intRange_ = 2;
  std::vector<int64_t> boundBatch_;
  std::vector<uint8_t> syntheticBytes_;
  // CheckFinite::OnSkip: the small parameters a skipped step changes, and
  // their values before the step.
  bool checkOnSkip_ = false;
  std::vector<ParameterSpec> smallState_;
  std::vector<std::vector<uint8_t>> smallBefore_;
  Evaluator evaluator_;
  bool evaluating_ = false;
  std::unique_ptr<RangeCollector> ranges_;
  std::unique_ptr<KernelProfile> profile_;
  uint64_t steps_ = 0;
};

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_HPP
