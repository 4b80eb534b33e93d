//===- Evaluation.h - mpt-train's validation loss -----------------*- C++ -*-===//
//
// A training plan compiled by `mpt-compile --train` has an eval_step entry
// beside train_step (docs/training.md): the forward pass and the loss in
// inference mode, sharing train_step's parameters, inputs and `loss` output
// by name and writing no parameter. `--eval-input NAME=FILE` gives it a
// validation set, cut into batches as --input is (Batches.h); the
// validation loss is the mean of eval_step's `loss` over every batch of it.
//
// eval_step binds the inputs train_step shares, so the caller rebinds its
// training batch after an evaluation.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_EVALUATION_H
#define MPTRT_TOOLS_MPTTRAIN_EVALUATION_H

#include "Batches.h"
#include "mptrt.hpp"

#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace tools {

class Evaluator {
public:
  /// Checks that `entry` exists, has an f32 `loss` output of one value and
  /// gets exactly one of `files` (NAME, FILE) per input, and loads them.
  /// False with a message naming the plan, the entry, the input or the file.
  bool setUp(Model &model, const std::string &planPath, const std::string &entry,
             const std::vector<std::pair<std::string, std::string>> &files, std::string *error);

  /// Runs the entry on every validation batch; `*loss` is the mean loss.
  bool run(Model &model, double *loss, std::string *error) const;

  int64_t batches() const { return batches_; }

private:
  std::string entry_;
  std::vector<BatchedInput> inputs_;
  int64_t batches_ = 0;
};

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_EVALUATION_H
