//===- RefOpsTraining.cpp - loss scaling and optimizer ops ----------------===//
//
// The kernels of docs/training.md's "Loss scaling and optimizer kernels"
// table, in double (the reference does not round the scalars to f32).
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

bool isTrue(const RefTensor &flag) { return flag.data.at(0) != 0.0; }

/// loss, scale -> loss * scale.
LogicalResult scaleLoss(Operation *, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  RefTensor out = operands[0];
  for (double &v : out.data)
    v *= operands[1].data.at(0);
  results.push_back(std::move(out));
  return success();
}

/// grad, scale -> grad * (1 / scale).
LogicalResult unscale(Operation *, ArrayRef<RefTensor> operands,
                      std::vector<RefTensor> &results) {
  RefTensor out = operands[0];
  double inverse = 1.0 / operands[1].data.at(0);
  for (double &v : out.data)
    v *= inverse;
  results.push_back(std::move(out));
  return success();
}

LogicalResult allFinite(Operation *, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  bool finite = true;
  for (const RefTensor &t : operands)
    for (double v : t.data)
      finite &= std::isfinite(v);
  results.push_back(RefTensor::scalar(finite ? 1.0 : 0.0));
  return success();
}

/// The interpreter is one process: the mean over a world of one rank is
/// each operand itself.
LogicalResult allReduce(Operation *, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  for (const RefTensor &t : operands)
    results.push_back(t);
  return success();
}

/// reduce_scatter, all_gather and shard over a world of one rank (the
/// interpreter's): a tensor's one shard is its elements, flattened; the
/// whole tensor gets its shape back from the result's type.
LogicalResult sharding(Operation *op, ArrayRef<RefTensor> operands,
                       std::vector<RefTensor> &results) {
  if (op->getAttrOfType<IntegerAttr>("world_size").getInt() != 1)
    return op->emitOpError("the reference interpreter is one process: it "
                           "takes a world_size of 1 only");
  for (auto [t, type] : llvm::zip(operands, op->getResultTypes())) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    results.push_back(RefTensor({shape.begin(), shape.end()}, t.data));
  }
  return success();
}

LogicalResult globalNorm(Operation *, ArrayRef<RefTensor> operands,
                         std::vector<RefTensor> &results) {
  double sum = 0.0;
  for (const RefTensor &t : operands)
    for (double v : t.data)
      sum += v * v;
  results.push_back(RefTensor::scalar(std::sqrt(sum)));
  return success();
}

/// grad, norm -> grad * min(1, max_norm / (norm + 1e-6)).
LogicalResult clipByNorm(Operation *op, ArrayRef<RefTensor> operands,
                         std::vector<RefTensor> &results) {
  std::optional<double> maxNorm = optionalFloatAttr(op, "max_norm");
  if (!maxNorm)
    return fail(op, "max_norm is required");
  double c = std::min(1.0, *maxNorm / (operands[1].data.at(0) + 1e-6));
  RefTensor out = operands[0];
  for (double &v : out.data)
    v *= c;
  results.push_back(std::move(out));
  return success();
}

/// max |x|, NaN if any element is NaN.
LogicalResult amax(Operation *, ArrayRef<RefTensor> operands,
                   std::vector<RefTensor> &results) {
  double best = 0.0;
  for (double v : operands[0].data)
    best = std::isnan(v) || std::isnan(best)
               ? std::numeric_limits<double>::quiet_NaN()
               : std::max(best, std::fabs(v));
  results.push_back(RefTensor::scalar(best));
  return success();
}

/// count, finite? -> count + 1, or count when finite is present and 0.
LogicalResult advanceStep(Operation *, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  double count = operands[0].data.at(0);
  bool advance = operands.size() < 2 || isTrue(operands[1]);
  results.push_back(RefTensor::scalar(advance ? count + 1 : count));
  return success();
}

/// param, grad, buf?, step, lr, finite -> param', buf? (torch.optim.SGD).
LogicalResult sgdUpdate(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  double momentum = floatAttr(op, "momentum", 0.0);
  bool hasBuffer = momentum != 0.0;
  if (operands.size() != (hasBuffer ? 6u : 5u))
    return fail(op, "expects a momentum buffer exactly when momentum != 0");
  RefTensor param = operands[0];
  const RefTensor &grad = operands[1];
  RefTensor buffer = hasBuffer ? operands[2] : RefTensor();
  ArrayRef<RefTensor> tail = operands.take_back(3);
  double step = tail[0].data.at(0), lr = tail[1].data.at(0);
  if (isTrue(tail[2])) {
    double dampening = floatAttr(op, "dampening", 0.0);
    double decay = floatAttr(op, "weight_decay", 0.0);
    bool nesterov = boolAttr(op, "nesterov", false);
    for (int64_t i = 0; i < param.numElements(); ++i) {
      double g = grad.data[i] + decay * param.data[i];
      if (hasBuffer) {
        double &b = buffer.data[i];
        b = step == 0 ? g : momentum * b + (1 - dampening) * g;
        g = nesterov ? g + momentum * b : b;
      }
      param.data[i] -= lr * g;
    }
  }
  results.push_back(std::move(param));
  if (hasBuffer)
    results.push_back(std::move(buffer));
  return success();
}

/// param, grad, exp_avg, exp_avg_sq, step, lr, finite -> param', exp_avg',
/// exp_avg_sq' (torch.optim.AdamW, t = step + 1).
LogicalResult adamwUpdate(Operation *op, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  RefTensor param = operands[0], m = operands[2], v = operands[3];
  const RefTensor &grad = operands[1];
  double t = operands[4].data.at(0) + 1, lr = operands[5].data.at(0);
  if (isTrue(operands[6])) {
    double beta1 = floatAttr(op, "beta1", 0.9),
           beta2 = floatAttr(op, "beta2", 0.999);
    double eps = floatAttr(op, "eps", 1e-8);
    double decay = floatAttr(op, "weight_decay", 0.01);
    double stepSize = lr / (1 - std::pow(beta1, t));
    double correction2 = std::sqrt(1 - std::pow(beta2, t));
    for (int64_t i = 0; i < param.numElements(); ++i) {
      double g = grad.data[i];
      param.data[i] *= 1 - lr * decay;
      m.data[i] += (1 - beta1) * (g - m.data[i]);
      v.data[i] = v.data[i] * beta2 + (1 - beta2) * g * g;
      param.data[i] -=
          stepSize * m.data[i] / (std::sqrt(v.data[i]) / correction2 + eps);
    }
  }
  results.push_back(std::move(param));
  results.push_back(std::move(m));
  results.push_back(std::move(v));
  return success();
}

/// scale, growth_tracker, finite -> scale', growth_tracker'
/// (GradScaler.update).
LogicalResult updateLossScale(Operation *op, ArrayRef<RefTensor> operands,
                              std::vector<RefTensor> &results) {
  double scale = operands[0].data.at(0), tracker = operands[1].data.at(0);
  if (!isTrue(operands[2])) {
    scale *= floatAttr(op, "backoff_factor", 0.5);
    tracker = 0;
  } else if (++tracker >= intAttr(op, "growth_interval", 2000)) {
    scale *= floatAttr(op, "growth_factor", 2.0);
    tracker = 0;
  }
  results.push_back(RefTensor::scalar(scale));
  results.push_back(RefTensor::scalar(tracker));
  return success();
}

/// step -> lr: constant, or linear warmup then cosine decay.
LogicalResult lrSchedule(Operation *op, ArrayRef<RefTensor> operands,
                         std::vector<RefTensor> &results) {
  std::optional<double> lr = optionalFloatAttr(op, "lr");
  if (!lr)
    return fail(op, "lr is required");
  std::string schedule = stringAttr(op, "schedule", "constant");
  double s = operands[0].data.at(0), value = *lr;
  if (schedule == "warmup_cosine") {
    double warmup = floatAttr(op, "warmup_steps", 0);
    double total = floatAttr(op, "total_steps", 0);
    double minLr = floatAttr(op, "min_lr", 0);
    if (s < warmup) {
      value = *lr * (s + 1) / warmup;
    } else {
      double p = std::min(1.0, (s - warmup) / std::max(1.0, total - warmup));
      value = minLr + 0.5 * (1 + std::cos(M_PI * p)) * (*lr - minLr);
    }
  } else if (schedule != "constant") {
    return fail(op, "unknown schedule '" + schedule + "'");
  }
  results.push_back(RefTensor::scalar(value));
  return success();
}

/// amax_history, scale, amax -> amax_history', scale' (delayed scaling).
LogicalResult updateFP8Scale(Operation *op, ArrayRef<RefTensor> operands,
                             std::vector<RefTensor> &results) {
  const RefTensor &history = operands[0];
  RefTensor shifted(history.shape);
  if (shifted.numElements() == 0)
    return fail(op, "empty amax history");
  shifted.data[0] = operands[2].data.at(0);
  std::copy_n(history.data.begin(), history.numElements() - 1,
              shifted.data.begin() + 1);
  double a = shifted.data[0];
  for (double h : shifted.data)
    a = std::isnan(h) || std::isnan(a) ? h + a : std::max(a, h);
  double scale = operands[1].data.at(0);
  if (a != 0.0 && std::isfinite(a))
    scale = floatAttr(op, "fp8_max", 448.0) / a /
            std::pow(2.0, static_cast<double>(intAttr(op, "margin", 0)));
  results.push_back(std::move(shifted));
  results.push_back(RefTensor::scalar(scale));
  return success();
}

} // namespace

void addTrainingOps(RefOpTable &table) {
  table["mpt.scale_loss"] = scaleLoss;
  table["mpt.unscale"] = unscale;
  table["mpt.all_finite"] = allFinite;
  table["mpt.global_norm"] = globalNorm;
  table["mpt.all_reduce"] = allReduce;
  table["mpt.reduce_scatter"] = sharding;
  table["mpt.all_gather"] = sharding;
  table["mpt.shard"] = sharding;
  table["mpt.clip_by_norm"] = clipByNorm;
  table["mpt.amax"] = amax;
  table["mpt.advance_step"] = advanceStep;
  table["mpt.sgd_update"] = sgdUpdate;
  table["mpt.adamw_update"] = adamwUpdate;
  table["mpt.update_loss_scale"] = updateLossScale;
  table["mpt.lr_schedule"] = lrSchedule;
  table["mpt.update_fp8_scale"] = updateFP8Scale;
}

} // namespace mpt::ref
