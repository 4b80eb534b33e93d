//===- Evaluation.cpp - mpt-train's validation loss -----------------------===//
#include "Evaluation.h"

#include "mptrt/TrainStepAbi.h"

#include <cstring>
#include <map>

namespace mptrt {
namespace tools {
namespace {

const char *const kLoss = abi::outputName(abi::OutputRole::Loss);

std::string quoted(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

} // namespace

bool Evaluator::setUp(Model &model, const std::string &planPath, const std::string &entry,
                      const std::vector<std::pair<std::string, std::string>> &files,
                      std::string *error) {
  entry_ = entry;
  const std::vector<std::string> entries = model.entryPoints();
  bool found = false;
  for (const std::string &e : entries)
    found = found || e == entry;
  if (!found) {
    *error = "plan '" + planPath + "' has no entry point '" + entry + "' to evaluate with (its " +
             "entry points: " + quoted(entries) + "); `mpt-compile --train` adds eval_step " +
             "unless --eval-entry= is given";
    return false;
  }
  std::vector<std::string> inputs, outputs;
  if (!model.entryBindings(entry, MPTRT_INPUT, &inputs) ||
      !model.entryBindings(entry, MPTRT_OUTPUT, &outputs)) {
    *error = mptrt::lastError();
    return false;
  }
  bool hasLoss = false;
  for (const std::string &o : outputs)
    hasLoss = hasLoss || o == kLoss;
  TensorInfo lossInfo;
  if (!hasLoss || !model.info(MPTRT_OUTPUT, kLoss, &lossInfo) || lossInfo.dtype != MPTRT_F32 ||
      lossInfo.numel() != 1) {
    *error = "entry point '" + entry + "' of '" + planPath + "' has no f32 output '" + kLoss +
             "' of one value (its outputs: " + quoted(outputs) + ")";
    return false;
  }

  std::map<std::string, std::string> byName;
  for (const auto &[name, file] : files) {
    bool listed = false;
    for (const std::string &n : inputs)
      listed = listed || n == name;
    if (!listed) {
      *error = "entry point '" + entry + "' has no input named '" + name +
               "' (its inputs: " + quoted(inputs) + ")";
      return false;
    }
    if (!byName.emplace(name, file).second) {
      *error = "--eval-input " + name + " given twice";
      return false;
    }
  }
  inputs_.assign(inputs.size(), BatchedInput());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &name = inputs[i];
    TensorInfo info;
    if (!model.info(MPTRT_INPUT, name, &info)) {
      *error = mptrt::lastError();
      return false;
    }
    auto it = byName.find(name);
    if (it == byName.end()) {
      *error = "entry point '" + entry + "' needs --eval-input " + name + "=FILE (a batch is " +
               describeType(info.dtype, info.shape) + ")";
      return false;
    }
    if (!loadBatchedInput(name, it->second, info, &inputs_[i], error))
      return false;
    const BatchedInput &a = inputs_[0], &b = inputs_[i];
    if (b.batches != a.batches) {
      *error = "eval input '" + b.name + "': " + b.file + " gives " + std::to_string(b.batches) +
               " batches but eval input '" + a.name + "' (" + a.file + ") gives " +
               std::to_string(a.batches) + ": every eval input must give the same number";
      return false;
    }
  }
  batches_ = inputs_.empty() ? 1 : inputs_[0].batches;
  return true;
}

bool Evaluator::run(Model &model, double *loss, std::string *error) const {
  double sum = 0;
  for (int64_t b = 0; b < batches_; ++b) {
    for (const BatchedInput &in : inputs_)
      if (!model.bindInput(in.name, in.info.dtype, in.info.shape, in.batch(b), in.batchBytes())) {
        *error = "evaluating: " + mptrt::lastError();
        return false;
      }
    float value = 0;
    if (!model.run(entry_) ||
        mptrt_read_output(model.handle(), kLoss, &value, sizeof value) != MPTRT_OK) {
      *error = "evaluating (" + entry_ + ", batch " + std::to_string(b + 1) + " of " +
               std::to_string(batches_) + "): " + mptrt::lastError();
      return false;
    }
    sum += value;
  }
  *loss = sum / static_cast<double>(batches_);
  return true;
}

} // namespace tools
} // namespace mptrt
