//===- Evaluation.h - the validation loss -------------------------*- C++ -*-===//
//
// A training plan compiled by `mpt-compile --train` has an eval_step entry
// beside train_step (docs/training.md): the forward pass and the loss in
// inference mode, sharing train_step's parameters, inputs and `loss` output
// by name and writing no parameter. A validation set (one array per input
// of the entry, mpt-train's --eval-input) is cut into batches as the
// training data is (Batches.h); the validation loss is the mean of
// eval_step's `loss` over every batch of it.
//
// eval_step binds the inputs train_step shares, so the caller rebinds its
// training batch after an evaluation (Trainer does).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_EVALUATION_H
#define MPTRT_TRAIN_EVALUATION_H

#include "mptrt.hpp"
#include "mptrt/train/Batches.h"

#include <string>
#include <vector>

namespace mptrt {
namespace train {

class Evaluator {
public:
  /// Checks that `entry` exists and has an f32 `loss` output of one value,
  /// and lists its inputs. False with a message naming the plan (as
  /// `planLabel`) and the entry.
  bool setUp(const Model &model, const std::string &planLabel, const std::string &entry,
             std::string *error);

  const std::string &entry() const { return entry_; }
  /// The entry's inputs and their (batch) types, in the plan's order.
  const std::vector<std::string> &inputNames() const { return names_; }
  const std::vector<TensorInfo> &inputInfo() const { return info_; }

  /// The validation data of input `name`, cut into batches; every input
  /// must give as many batches as the first one given.
  bool setData(const std::string &name, Array array, std::string *error);
  /// The data of input `name`, or null before setData.
  const BatchedInput *data(const std::string &name) const;

  /// Runs the entry on every validation batch; `*loss` is the mean loss. In
  /// a data-parallel world of N ranks every rank calls it, rank r runs
  /// batches r, r + N, ..., and the loss sums are added over the ranks.
  bool run(Model &model, double *loss, std::string *error) const;

  /// The number of validation batches (1 for an entry without inputs).
  int64_t batches() const;

private:
  std::string entry_;
  std::string loss_; // the entry point's output with the role loss
  std::vector<std::string> names_;
  std::vector<TensorInfo> info_;
  std::vector<BatchedInput> inputs_; // one per name; batches == 0: not set
  int first_ = -1;                   // the first input given data
};

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_EVALUATION_H
