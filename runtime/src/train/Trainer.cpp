//===- Trainer.cpp - the training step, its finite check and checkpoints -===//
#include "mptrt/train.hpp"

#include "mptrt/Numerics.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace mptrt {
namespace train {
namespace {

/// Parameters up to this size are copied before each step for a rerun.
constexpr size_t kSmallStateBytes = 16384;

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

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

//===----------------------------------------------------------------------===//
// Opening a plan
//===----------------------------------------------------------------------===//

bool Trainer::open(const std::string &path, const std::string &device,
                   const TrainerOptions &options, std::string *error) {
  if (!model_.loadFile(path, device.c_str())) {
    *error = mptrt::lastError();
    return false;
  }
  rebindEveryStep_ = false;
  return setUp(path, options, error);
}

bool Trainer::attach(mptrt_model *model, const std::string &planLabel,
                     const TrainerOptions &options, std::string *error) {
  model_ = Model::borrow(model);
  rebindEveryStep_ = true;
  return setUp(planLabel, options, error);
}

bool Trainer::setUp(const std::string &planLabel, const TrainerOptions &options,
                    std::string *error) {
  options_ = options;
  planLabel_ = planLabel;
  const std::string &entry = options_.entry;
  const std::vector<std::string> entries = model_.entryPoints();
  if (std::find(entries.begin(), entries.end(), entry) == entries.end()) {
    *error = "plan '" + planLabel + "' has no entry point '" + entry +
             "' (its entry points: " + joinNames(entries) + ")";
    return false;
  }
  if (options_.collectRanges && options_.checkFinite == CheckFinite::EveryKernel) {
    *error = "collecting ranges and checking every kernel for inf and NaN exclude each other";
    return false;
  }
  if (options_.profile &&
      (options_.collectRanges || options_.checkFinite == CheckFinite::EveryKernel)) {
    *error =
        std::string("profiling excludes ") +
        (options_.collectRanges ? "collecting ranges" : "checking every kernel for inf and NaN") +
        " (each would time its reads of every result)";
    return false;
  }
  if (!model_.entryBindings(entry, MPTRT_INPUT, &inputNames_)) {
    *error = mptrt::lastError();
    return false;
  }
  if (!entryParameters(model_, entry, &params_, error))
    return false;

  // The FP8 scales (train_step state `<t>.fp8_scale`, f32 0-d), whose range
  // the metrics report.
  fp8Scales_.clear();
  for (const ParameterSpec &p : params_) {
    const std::string suffix = abi::kFP8ScaleSuffix;
    if (p.name.size() > suffix.size() &&
        p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        p.info.dtype == MPTRT_F32 && p.info.numel() == 1)
      fp8Scales_.push_back(p.name);
  }

  // The reported outputs, found by their roles in the plan: each must hold
  // one value.
  notes_.clear();
  for (abi::OutputRole role : abi::kOutputRoles) {
    std::string &name = metricName_[abi::outputRoleIndex(role)];
    metricInfo_[abi::outputRoleIndex(role)].reset();
    if (!model_.outputWithRole(entry, role, &name)) {
      *error = mptrt::lastError();
      return false;
    }
    if (name.empty()) {
      notes_.push_back("entry point '" + entry + "' has no output with the role " +
                       abi::roleName(role) + "; the metrics leave it out");
      continue;
    }
    TensorInfo info;
    if (!model_.info(MPTRT_OUTPUT, name, &info)) {
      *error = mptrt::lastError();
      return false;
    }
    if (info.numel() != 1) {
      *error = "output '" + std::string(name) + "' of entry point '" + entry +
               "' must hold one value, the plan gives " + describeType(info.dtype, info.shape);
      return false;
    }
    metricInfo_[abi::outputRoleIndex(role)] = info;
  }

  inputInfo_.assign(inputNames_.size(), TensorInfo());
  for (size_t i = 0; i < inputNames_.size(); ++i)
    if (!model_.info(MPTRT_INPUT, inputNames_[i], &inputInfo_[i])) {
      *error = mptrt::lastError();
      return false;
    }
  data_.assign(inputNames_.size(), BatchedInput());
  firstData_ = -1;
  boundBatch_.assign(inputNames_.size(), -1);

  // CheckFinite::OnSkip: a skipped step leaves the weights and the
  // optimizer state as they were, but not the loss scale, its growth
  // tracker or the step counter (and batch-norm running statistics); those
  // small parameters are copied before each step so that a skipped step can
  // be rerun exactly as it ran.
  smallState_.clear();
  smallBefore_.clear();
  checkOnSkip_ = options_.checkFinite == CheckFinite::OnSkip &&
                 metricInfo_[abi::outputRoleIndex(abi::OutputRole::Skipped)].has_value();
  if (checkOnSkip_)
    for (const ParameterSpec &p : params_)
      if (p.info.bytes() <= kSmallStateBytes) {
        smallState_.push_back(p);
        smallBefore_.emplace_back(p.info.bytes());
      }
  ranges_.reset();
  if (options_.collectRanges)
    ranges_ = std::make_unique<RangeCollector>();
  profile_.reset();
  if (options_.profile) {
    profile_ = std::make_unique<KernelProfile>();
    if (!profile_->setUp(model_, entry, error))
      return false;
  }
  evaluating_ = false;
  steps_ = 0;
  return true;
}

//===----------------------------------------------------------------------===//
// Data and parameters
//===----------------------------------------------------------------------===//

bool Trainer::setData(const std::string &name, Array array, std::string *error) {
  const auto it = std::find(inputNames_.begin(), inputNames_.end(), name);
  if (it == inputNames_.end()) {
    *error = "entry point '" + entry() + "' has no input named '" + name +
             "' (its inputs: " + joinNames(inputNames_) + ")";
    return false;
  }
  const size_t i = static_cast<size_t>(it - inputNames_.begin());
  BatchedInput in;
  if (!cutBatches(name, std::move(array), inputInfo_[i], &in, error, options_.slice))
    return false;
  if (firstData_ >= 0 && static_cast<size_t>(firstData_) != i &&
      in.batches != data_[firstData_].batches) {
    const BatchedInput &a = data_[firstData_];
    *error = "input '" + in.name + "': " + in.file + " gives " + std::to_string(in.batches) +
             " batches but input '" + a.name + "' (" + a.file + ") gives " +
             std::to_string(a.batches) + ": every input must give the same number of batches";
    return false;
  }
  data_[i] = std::move(in);
  boundBatch_[i] = -1;
  if (firstData_ < 0)
    firstData_ = static_cast<int>(i);
  synthetic_ = false;
  return true;
}

const BatchedInput *Trainer::data(size_t input) const {
  return input < data_.size() && data_[input].batches ? &data_[input] : nullptr;
}

void Trainer::setSynthetic(uint64_t seed, int64_t intRange) {
  synthetic_ = true;
  seed_ = seed;
  intRange_ = intRange;
}

const ParameterSpec *Trainer::parameter(const std::string &name, std::string *error) const {
  for (const ParameterSpec &p : params_)
    if (p.name == name)
      return &p;
  std::vector<std::string> names;
  for (const ParameterSpec &p : params_)
    names.push_back(p.name);
  std::sort(names.begin(), names.end());
  *error = "entry point '" + entry() + "' has no parameter named '" + name +
           "' (its parameters: " + joinNames(names) + ")";
  return nullptr;
}

bool Trainer::setParameter(const std::string &name, Array array, std::string *error) {
  const ParameterSpec *p = parameter(name, error);
  if (!p)
    return false;
  const TensorInfo &info = p->info;
  const bool dtypeOk =
      std::find(array.dtypes.begin(), array.dtypes.end(), info.dtype) != array.dtypes.end();
  if (!dtypeOk || array.shape != info.shape || array.bytes.size() != info.bytes()) {
    *error = "parameter '" + name + "': " + array.source + " holds " + array.typeName + " " +
             shapeText(array.shape) + ", the plan expects " + describeType(info.dtype, info.shape);
    return false;
  }
  if (info.dtype == MPTRT_I1)
    for (uint8_t &b : array.bytes)
      b = b != 0;
  if (!model_.bindParameter(name, info.dtype, info.shape, array.bytes.data(), array.bytes.size())) {
    *error = mptrt::lastError();
    return false;
  }
  return true;
}

bool Trainer::setSeed(uint64_t seed, std::string *error) {
  // Training-mode dropout draws from the train.seed state (docs/training.md).
  for (const ParameterSpec &p : params_) {
    if (p.name != abi::kTrainSeed)
      continue;
    if (p.info.dtype != MPTRT_I64 || p.info.numel() != 1) {
      *error = std::string("parameter '") + abi::kTrainSeed +
               "' must hold one i64, the plan gives " + describeType(p.info.dtype, p.info.shape);
      return false;
    }
    const int64_t value = static_cast<int64_t>(seed);
    if (!model_.bindParameter(abi::kTrainSeed, p.info.dtype, p.info.shape, &value, sizeof value)) {
      *error = mptrt::lastError();
      return false;
    }
  }
  return true;
}

bool Trainer::setUpEvaluation(const std::string &entry, std::string *error) {
  evaluating_ = evaluator_.setUp(model_, planLabel_, entry, error);
  return evaluating_;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

bool Trainer::save(const std::string &path, std::string *error) const {
  return saveCheckpoint(model_, params_, path, steps_, error);
}

bool Trainer::readCheckpoint(const std::string &path, Checkpoint *out, std::string *error) const {
  return readCheckpointFor(path, params_, entry(), out, error);
}

bool Trainer::restore(const Checkpoint &checkpoint, const std::string &path, std::string *error) {
  if (!restoreCheckpoint(model_, checkpoint, params_, path, error))
    return false;
  steps_ = checkpoint.steps;
  return true;
}

bool Trainer::resume(const std::string &path, std::string *error) {
  Checkpoint checkpoint;
  return readCheckpoint(path, &checkpoint, error) && restore(checkpoint, path, error);
}

//===----------------------------------------------------------------------===//
// The step
//===----------------------------------------------------------------------===//

bool Trainer::bindBatch(int64_t step, const std::string &where, std::string *error) {
  for (size_t i = 0; i < inputNames_.size(); ++i) {
    const TensorInfo &info = inputInfo_[i];
    bool ok;
    if (synthetic_) {
      // A data-parallel rank draws the global batch and binds its block.
      const DataSlice &slice = options_.slice;
      TensorInfo global = info;
      const bool sliced = slice.ranks > 1 && !info.shape.empty();
      if (sliced)
        global.shape[0] *= slice.ranks;
      if (!syntheticBatch(inputNames_[i], global, seed_, step, intRange_, &syntheticBytes_, error))
        return false;
      const size_t offset = sliced ? static_cast<size_t>(slice.rank) * info.bytes() : 0;
      ok = model_.bindInput(inputNames_[i], info.dtype, info.shape, syntheticBytes_.data() + offset,
                            info.bytes());
    } else {
      const BatchedInput &in = data_[i];
      if (!in.batches) {
        *error =
            where + ": input '" + inputNames_[i] + "' of entry point '" + entry() + "' has no data";
        return false;
      }
      // Inputs keep their value until rebound: bind only a new batch.
      const int64_t b = step % in.batches;
      if (b == boundBatch_[i] && !rebindEveryStep_)
        continue;
      ok = model_.bindInput(inputNames_[i], info.dtype, info.shape, in.batch(b), in.batchBytes());
      boundBatch_[i] = b;
    }
    if (!ok) {
      *error = where + ": " + mptrt::lastError();
      return false;
    }
  }
  return true;
}

bool Trainer::step(StepMetrics *m, std::string *error) {
  const int64_t step = static_cast<int64_t>(steps_);
  const std::string where = "step " + std::to_string(steps_ + 1);
  *m = StepMetrics();
  if (!bindBatch(step, where, error))
    return false;
  auto failed = [&](const std::string &what) {
    *error = where + ": " + what;
    return false;
  };
  for (size_t i = 0; i < smallState_.size(); ++i)
    if (mptrt_read_parameter(model_.handle(), smallState_[i].name.c_str(), smallBefore_[i].data(),
                             smallBefore_[i].size()) != MPTRT_OK)
      return failed(mptrt::lastError());
  const auto start = std::chrono::steady_clock::now();
  const std::string &entry = options_.entry;
  if (ranges_) {
    if (!model_.runObserved(entry, RangeCollector::observe, ranges_.get()))
      return failed(mptrt::lastError());
    ranges_->countStep();
  } else if (profile_) {
    std::string why;
    if (!profile_->run(model_, &why))
      return failed(why);
  } else if (options_.checkFinite == CheckFinite::EveryKernel) {
    mptrt_nonfinite first;
    if (!model_.runChecked(entry, &first))
      return failed(mptrt::lastError());
    if (first.found)
      m->firstNonFinite = toOrigin(first);
  } else if (!model_.run(entry)) {
    return failed(mptrt::lastError());
  }
  m->step = step + 1;
  m->timeMs = msSince(start);
  std::optional<double> values[abi::kOutputRoleCount];
  uint8_t value[8];
  for (abi::OutputRole role : abi::kOutputRoles) {
    const std::optional<TensorInfo> &info = metricInfo_[abi::outputRoleIndex(role)];
    if (!info)
      continue;
    const std::string &name = metricName_[abi::outputRoleIndex(role)];
    if (mptrt_read_output(model_.handle(), name.c_str(), value, info->bytes()) != MPTRT_OK)
      return failed(mptrt::lastError());
    values[abi::outputRoleIndex(role)] = toDouble(info->dtype, value);
  }
  m->loss = values[abi::outputRoleIndex(abi::OutputRole::Loss)];
  m->lossScale = values[abi::outputRoleIndex(abi::OutputRole::LossScale)];
  m->gradNorm = values[abi::outputRoleIndex(abi::OutputRole::GradNorm)];
  m->lr = values[abi::outputRoleIndex(abi::OutputRole::Lr)];
  for (const std::string &name : fp8Scales_) {
    float scale;
    if (mptrt_read_parameter(model_.handle(), name.c_str(), &scale, sizeof(scale)) != MPTRT_OK)
      return failed(mptrt::lastError());
    m->fp8ScaleMin = std::min<double>(m->fp8ScaleMin.value_or(scale), scale);
    m->fp8ScaleMax = std::max<double>(m->fp8ScaleMax.value_or(scale), scale);
  }
  if (const std::optional<double> &s = values[abi::outputRoleIndex(abi::OutputRole::Skipped)])
    m->skipped = *s != 0;
  steps_ = static_cast<uint64_t>(step) + 1;
  if (checkOnSkip_ && m->skipped.value_or(false)) {
    const auto checkStart = std::chrono::steady_clock::now();
    if (!rerunChecked(m, error))
      return false;
    m->checkMs = msSince(checkStart);
  }
  return true;
}

/// Reruns a skipped step from the state it started in (smallBefore_, the
/// small parameters it changed; the rest it left alone), with a finite
/// check after every kernel, and records where the first inf or NaN came
/// from. The rerun ends in the state the step ended in; that state is
/// restored anyway.
bool Trainer::rerunChecked(StepMetrics *m, std::string *error) {
  const std::string where = "step " + std::to_string(m->step);
  std::vector<std::vector<uint8_t>> after(smallState_.size());
  for (size_t i = 0; i < smallState_.size(); ++i)
    if (!model_.readParameter(smallState_[i].name, &after[i])) {
      *error = where + ": " + mptrt::lastError();
      return false;
    }
  auto restore = [&](const std::vector<std::vector<uint8_t>> &bytes) {
    for (size_t i = 0; i < smallState_.size(); ++i)
      if (!model_.bindParameter(smallState_[i].name, smallState_[i].info.dtype,
                                smallState_[i].info.shape, bytes[i].data(), bytes[i].size()))
        return false;
    return true;
  };
  mptrt_nonfinite first;
  if (!restore(smallBefore_) || !model_.runChecked(options_.entry, &first) || !restore(after)) {
    *error = where + ": rerunning with --check-finite: " + mptrt::lastError();
    return false;
  }
  m->firstNonFinite = toOrigin(first);
  return true;
}

bool Trainer::evaluate(StepMetrics *m, std::string *error) {
  if (!evaluating_) {
    *error = "no evaluation entry is set up";
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  double loss;
  if (!evaluator_.run(model_, &loss, error))
    return false;
  m->valLoss = loss;
  m->evalMs = msSince(start);
  boundBatch_.assign(boundBatch_.size(), -1); // eval_step rebound the shared inputs
  return true;
}

} // namespace train
} // namespace mptrt
