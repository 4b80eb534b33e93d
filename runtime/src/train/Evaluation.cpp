//===- Evaluation.cpp - the validation loss ------------------------------===//
#include "mptrt/train/Evaluation.h"

#include "mptrt/Communicator.h"
#include "mptrt/TrainStepAbi.h"

namespace mptrt {
namespace train {
bool Evaluator::setUp(const Model &model, const std::string &planLabel, const std::string &entry,
                      std::string *error) {
  entry_ = entry;
  const std::vector<std::string> entries = model.entryPoints();
  bool found = false;
  for (const std::string &e : entries)
    found = found || e == entry;
  if (!found) {
    *error = "plan '" + planLabel + "' has no entry point '" + entry + "' to evaluate with (its " +
             "entry points: " + joinNames(entries) + "); `mpt-compile --train` adds eval_step " +
             "unless --eval-entry= is given";
    return false;
  }
  std::vector<std::string> outputs;
  if (!model.entryBindings(entry, MPTRT_INPUT, &names_) ||
      !model.entryBindings(entry, MPTRT_OUTPUT, &outputs)) {
    *error = mptrt::lastError();
    return false;
  }
  if (!model.outputWithRole(entry, abi::OutputRole::Loss, &loss_)) {
    *error = mptrt::lastError();
    return false;
  }
  TensorInfo lossInfo;
  if (loss_.empty() || !model.info(MPTRT_OUTPUT, loss_, &lossInfo) || lossInfo.dtype != MPTRT_F32 ||
      lossInfo.numel() != 1) {
    *error = "entry point '" + entry + "' of '" + planLabel + "' has no f32 output of one " +
             "value with the role " + abi::roleName(abi::OutputRole::Loss) +
             " (its outputs: " + joinNames(outputs) + ")";
    return false;
  }
  info_.assign(names_.size(), TensorInfo());
  for (size_t i = 0; i < names_.size(); ++i)
    if (!model.info(MPTRT_INPUT, names_[i], &info_[i])) {
      *error = mptrt::lastError();
      return false;
    }
  inputs_.assign(names_.size(), BatchedInput());
  first_ = -1;
  return true;
}

bool Evaluator::setData(const std::string &name, Array array, std::string *error) {
  size_t i = 0;
  while (i < names_.size() && names_[i] != name)
    ++i;
  if (i == names_.size()) {
    *error = "entry point '" + entry_ + "' has no input named '" + name +
             "' (its inputs: " + joinNames(names_) + ")";
    return false;
  }
  BatchedInput in;
  if (!cutBatches(name, std::move(array), info_[i], &in, error))
    return false;
  if (first_ >= 0 && static_cast<size_t>(first_) != i && in.batches != inputs_[first_].batches) {
    const BatchedInput &a = inputs_[first_];
    *error = "eval input '" + in.name + "': " + in.file + " gives " + std::to_string(in.batches) +
             " batches but eval input '" + a.name + "' (" + a.file + ") gives " +
             std::to_string(a.batches) + ": every eval input must give the same number";
    return false;
  }
  inputs_[i] = std::move(in);
  if (first_ < 0)
    first_ = static_cast<int>(i);
  return true;
}

const BatchedInput *Evaluator::data(const std::string &name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name)
      return inputs_[i].batches ? &inputs_[i] : nullptr;
  return nullptr;
}

int64_t Evaluator::batches() const { return first_ < 0 ? 1 : inputs_[first_].batches; }

bool Evaluator::run(Model &model, double *loss, std::string *error) const {
  for (const BatchedInput &in : inputs_)
    if (in.batches == 0) {
      *error = "evaluating: no validation data for input '" +
               names_[static_cast<size_t>(&in - inputs_.data())] + "' of '" + entry_ + "'";
      return false;
    }
  const int64_t batches = this->batches();
  // In a data-parallel run rank r evaluates batches r, r + N, ...; the sums
  // and counts are added over the ranks (docs/distributed.md).
  std::string why;
  Communicator *world = processCommunicator(&why);
  if (!world) {
    *error = "evaluating: no communicator for the data-parallel world: " + why;
    return false;
  }
  const int64_t ranks = world->size(), rank = world->rank();
  double sum = 0;
  for (int64_t b = rank; b < batches; b += ranks) {
    for (const BatchedInput &in : inputs_)
      if (!model.bindInput(in.name, in.info.dtype, in.info.shape, in.batch(b), in.batchBytes())) {
        *error = "evaluating: " + mptrt::lastError();
        return false;
      }
    float value = 0;
    if (!model.run(entry_) ||
        mptrt_read_output(model.handle(), loss_.c_str(), &value, sizeof value) != MPTRT_OK) {
      *error = "evaluating (" + entry_ + ", batch " + std::to_string(b + 1) + " of " +
               std::to_string(batches) + "): " + mptrt::lastError();
      return false;
    }
    sum += value;
  }
  if (ranks > 1 && !world->allReduceSum(&sum, 1, &why)) {
    *error = "evaluating: adding the ranks' validation losses: " + why;
    return false;
  }
  *loss = sum / static_cast<double>(batches);
  return true;
}

} // namespace train
} // namespace mptrt
