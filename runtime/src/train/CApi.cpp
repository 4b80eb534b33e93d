//===- CApi.cpp - the C API of the training library ----------------------===//
#include "mptrt.h"
#include "mptrt/train.hpp"
#include "mptrt/train/Params.h"

#include "LastError.h"

#include <string>

using mptrt::rt::setLastError;
namespace train = mptrt::train;

struct mptrt_trainer {
  train::Trainer trainer;
  train::StepMetrics last;
  std::string lastJson;
};

namespace {

int check(bool ok, const std::string &error) { return ok ? MPTRT_OK : setLastError(error); }

bool badArgument(const void *p, const char *what, int *rc) {
  if (p)
    return false;
  *rc = setLastError(std::string(what) + " is null");
  return true;
}

train::Array toArray(const char *input, mptrt_dtype dtype, const int64_t *shape, size_t rank,
                     const void *data, size_t bytes) {
  return train::Array::of(dtype, std::vector<int64_t>(shape, shape + rank), data, bytes,
                          std::string("the array for '") + input + "'");
}

/// The C view of a step's metrics; strings point into `m`.
void toC(const train::StepMetrics &m, mptrt_step_metrics *out) {
  *out = mptrt_step_metrics();
  out->step = static_cast<uint64_t>(m.step);
  auto put = [&](const std::optional<double> &v, uint32_t bit, double *field) {
    if (v) {
      out->present |= bit;
      *field = *v;
    }
  };
  put(m.loss, MPTRT_METRIC_LOSS, &out->loss);
  put(m.gradNorm, MPTRT_METRIC_GRAD_NORM, &out->grad_norm);
  put(m.lossScale, MPTRT_METRIC_LOSS_SCALE, &out->loss_scale);
  put(m.lr, MPTRT_METRIC_LR, &out->lr);
  put(m.fp8ScaleMin, MPTRT_METRIC_FP8_SCALE, &out->fp8_scale_min);
  put(m.fp8ScaleMax, MPTRT_METRIC_FP8_SCALE, &out->fp8_scale_max);
  put(m.valLoss, MPTRT_METRIC_VAL_LOSS, &out->val_loss);
  if (m.skipped) {
    out->present |= MPTRT_METRIC_SKIPPED;
    out->skipped = *m.skipped;
  }
  out->time_ms = m.timeMs;
  out->eval_ms = m.evalMs;
  out->first_nonfinite.kind = out->first_nonfinite.origin = out->first_nonfinite.phase = "";
  if (const std::optional<train::NonFiniteOrigin> &o = m.firstNonFinite) {
    out->present |= MPTRT_METRIC_NONFINITE_CHECK;
    out->check_ms = m.checkMs.value_or(0);
    mptrt_nonfinite &f = out->first_nonfinite;
    f.found = o->found;
    f.kernel = o->kernel;
    f.result = o->output;
    f.kind = o->op.c_str();
    f.origin = o->node.c_str();
    f.phase = o->phase.c_str();
  }
}

} // namespace

extern "C" {

int mptrt_checkpoint_save(const mptrt_model *model, const char *entry, const char *path,
                          uint64_t steps) {
  int rc;
  if (badArgument(model, "model", &rc) || badArgument(entry, "entry", &rc) ||
      badArgument(path, "path", &rc))
    return rc;
  const mptrt::Model m = mptrt::Model::borrow(const_cast<mptrt_model *>(model));
  std::vector<train::ParameterSpec> params;
  std::string error;
  return check(train::entryParameters(m, entry, &params, &error) &&
                   train::saveCheckpoint(m, params, path, steps, &error),
               error);
}

int mptrt_checkpoint_load(mptrt_model *model, const char *entry, const char *path,
                          uint64_t *steps) {
  int rc;
  if (badArgument(model, "model", &rc) || badArgument(entry, "entry", &rc) ||
      badArgument(path, "path", &rc))
    return rc;
  mptrt::Model m = mptrt::Model::borrow(model);
  std::vector<train::ParameterSpec> params;
  train::Checkpoint checkpoint;
  std::string error;
  if (!train::entryParameters(m, entry, &params, &error) ||
      !train::readCheckpointFor(path, params, entry, &checkpoint, &error) ||
      !train::restoreCheckpoint(m, checkpoint, params, path, &error))
    return setLastError(error);
  if (steps)
    *steps = checkpoint.steps;
  return MPTRT_OK;
}

int mptrt_trainer_create(mptrt_model *model, const char *entry, mptrt_check_finite check,
                         mptrt_trainer **out) {
  int rc;
  if (badArgument(model, "model", &rc) || badArgument(out, "out", &rc))
    return rc;
  *out = nullptr;
  train::TrainerOptions options;
  if (entry)
    options.entry = entry;
  switch (check) {
  case MPTRT_CHECK_FINITE_OFF:
    options.checkFinite = train::CheckFinite::Off;
    break;
  case MPTRT_CHECK_FINITE_ON_SKIP:
    options.checkFinite = train::CheckFinite::OnSkip;
    break;
  case MPTRT_CHECK_FINITE_EVERY_KERNEL:
    options.checkFinite = train::CheckFinite::EveryKernel;
    break;
  default:
    return setLastError("unknown finite-check mode " + std::to_string(static_cast<int>(check)));
  }
  auto trainer = std::make_unique<mptrt_trainer>();
  std::string error;
  if (!trainer->trainer.attach(model, "<in memory>", options, &error))
    return setLastError(error);
  *out = trainer.release();
  return MPTRT_OK;
}

void mptrt_trainer_free(mptrt_trainer *trainer) { delete trainer; }

int mptrt_trainer_set_data(mptrt_trainer *trainer, const char *input, mptrt_dtype dtype,
                           const int64_t *shape, size_t rank, const void *data, size_t bytes) {
  int rc;
  if (badArgument(trainer, "trainer", &rc) || badArgument(input, "input", &rc) ||
      (rank && badArgument(shape, "shape", &rc)) || (bytes && badArgument(data, "data", &rc)))
    return rc;
  std::string error;
  return check(
      trainer->trainer.setData(input, toArray(input, dtype, shape, rank, data, bytes), &error),
      error);
}

int mptrt_trainer_set_synthetic(mptrt_trainer *trainer, uint64_t seed, int64_t int_range) {
  int rc;
  if (badArgument(trainer, "trainer", &rc))
    return rc;
  if (int_range < 1)
    return setLastError("the synthetic integer range must be at least 1, not " +
                        std::to_string(int_range));
  trainer->trainer.setSynthetic(seed, int_range);
  return MPTRT_OK;
}

int mptrt_trainer_set_seed(mptrt_trainer *trainer, uint64_t seed) {
  int rc;
  if (badArgument(trainer, "trainer", &rc))
    return rc;
  std::string error;
  return check(trainer->trainer.setSeed(seed, &error), error);
}

uint64_t mptrt_trainer_steps(const mptrt_trainer *trainer) {
  return trainer ? trainer->trainer.steps() : 0;
}

void mptrt_trainer_set_steps(mptrt_trainer *trainer, uint64_t steps) {
  if (trainer)
    trainer->trainer.setSteps(steps);
}

int mptrt_trainer_step(mptrt_trainer *trainer, mptrt_step_metrics *out) {
  int rc;
  if (badArgument(trainer, "trainer", &rc))
    return rc;
  std::string error;
  trainer->lastJson.clear();
  if (!trainer->trainer.step(&trainer->last, &error))
    return setLastError(error);
  trainer->lastJson = train::metricsJson(trainer->last);
  if (out)
    toC(trainer->last, out);
  return MPTRT_OK;
}

const char *mptrt_trainer_metrics_json(const mptrt_trainer *trainer) {
  return trainer ? trainer->lastJson.c_str() : "";
}

int mptrt_trainer_set_eval_entry(mptrt_trainer *trainer, const char *entry) {
  int rc;
  if (badArgument(trainer, "trainer", &rc))
    return rc;
  std::string error;
  return check(trainer->trainer.setUpEvaluation(entry ? entry : mptrt::abi::kEvalEntry, &error),
               error);
}

int mptrt_trainer_set_eval_data(mptrt_trainer *trainer, const char *input, mptrt_dtype dtype,
                                const int64_t *shape, size_t rank, const void *data, size_t bytes) {
  int rc;
  if (badArgument(trainer, "trainer", &rc) || badArgument(input, "input", &rc) ||
      (rank && badArgument(shape, "shape", &rc)) || (bytes && badArgument(data, "data", &rc)))
    return rc;
  if (!trainer->trainer.evaluating())
    return setLastError("no evaluation entry: call mptrt_trainer_set_eval_entry first");
  std::string error;
  return check(trainer->trainer.evaluator().setData(
                   input, toArray(input, dtype, shape, rank, data, bytes), &error),
               error);
}

int mptrt_trainer_evaluate(mptrt_trainer *trainer, double *loss) {
  int rc;
  if (badArgument(trainer, "trainer", &rc))
    return rc;
  std::string error;
  train::StepMetrics m = trainer->last;
  if (!trainer->trainer.evaluate(&m, &error))
    return setLastError(error);
  if (loss)
    *loss = *m.valLoss;
  if (trainer->last.step > 0 &&
      trainer->last.step == static_cast<int64_t>(trainer->trainer.steps())) {
    trainer->last = m;
    trainer->lastJson = train::metricsJson(m);
  }
  return MPTRT_OK;
}

int mptrt_trainer_save(const mptrt_trainer *trainer, const char *path) {
  int rc;
  if (badArgument(trainer, "trainer", &rc) || badArgument(path, "path", &rc))
    return rc;
  std::string error;
  return check(trainer->trainer.save(path, &error), error);
}

int mptrt_trainer_resume(mptrt_trainer *trainer, const char *path) {
  int rc;
  if (badArgument(trainer, "trainer", &rc) || badArgument(path, "path", &rc))
    return rc;
  std::string error;
  return check(trainer->trainer.resume(path, &error), error);
}

int mptrt_trainer_load_params(mptrt_trainer *trainer, const char *path) {
  int rc;
  if (badArgument(trainer, "trainer", &rc) || badArgument(path, "path", &rc))
    return rc;
  std::string error;
  mptrt::train::ParamsFile file;
  return check(mptrt::train::readParamsFile(path, &file, &error) &&
                   mptrt::train::loadParams(trainer->trainer, file, {}, &error),
               error);
}

} // extern "C"
