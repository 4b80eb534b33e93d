//===- Normalization.cpp - decoders for batch/layer norm and softmax -----===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

namespace mptrt {
namespace rt {

Status expectChannelsFirst(const KernelView &v) {
  std::string layout;
  MPTRT_TRY(v.getString("layout", "nchw", &layout));
  if (layout == "nchw")
    return Status::ok();
  return v.error(v.kind() + ": layout '" + layout +
                 "' reaches a backend's channels-first kernel only as channels first (the "
                 "model gives a channels-last kernel to the backend's own channels-last "
                 "kernel or runs it between transposes: ChannelsLast.h)");
}

Status decodeNormActivation(const KernelView &v, bool *relu) {
  std::string activation;
  MPTRT_TRY(v.getString("activation", "none", &activation));
  if (activation != "none" && activation != "relu")
    return v.error(v.kind() + ": activation '" + activation +
                   "' is not supported here (none or relu)");
  *relu = activation == "relu";
  return Status::ok();
}

Status decodeBatchNorm(const KernelView &v, BatchNormParams *p) {
  p->training = v.kind() == "batch_norm_train";
  MPTRT_TRY(v.expectCounts(5, 6, 1, p->training ? 3 : 1));
  MPTRT_TRY(v.allowOnly({"epsilon", "momentum", "activation", "layout"}));
  MPTRT_TRY(expectChannelsFirst(v));
  MPTRT_TRY(expectAllFloat(v));
  MPTRT_TRY(decodeNormActivation(v, &p->relu));
  double epsilon, momentum;
  MPTRT_TRY(v.getFloat("epsilon", 1e-5, &epsilon));
  MPTRT_TRY(v.getFloat("momentum", 0.9, &momentum));
  p->epsilon = static_cast<float>(epsilon);
  p->momentum = static_cast<float>(momentum);
  const TensorDesc &x = v.operand(0);
  if (x.rank() < 2)
    return v.error(operandLabel(v, 0) + " must be [N, C, ...]");
  p->N = x.shape[0];
  p->C = x.shape[1];
  p->inner = product(x.shape, 2, x.shape.size());
  for (size_t i = 1; i < 5; ++i)
    if (v.operand(i).shape != std::vector<int64_t>{p->C})
      return v.error(operandLabel(v, i) + " must have shape [" + std::to_string(p->C) + "]");
  p->residual = v.numOperands() == 6;
  if (p->residual && v.operand(5).shape != x.shape)
    return v.error(operandLabel(v, 5) + " (residual) must have the input's shape");
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  if (p->training && v.numResults() == 2)
    return v.error("batch_norm_train has 1 result, or 3 with the running statistics");
  p->updateRunningStats = v.numResults() == 3;
  for (size_t i = 1; i < v.numResults(); ++i)
    MPTRT_TRY(expectResultShape(v, i, {p->C}));
  return Status::ok();
}

Status decodeLayerNorm(const KernelView &v, LayerNormParams *p) {
  MPTRT_TRY(v.expectCounts(2, 3, 1, 3));
  MPTRT_TRY(v.allowOnly({"axis", "epsilon"}));
  MPTRT_TRY(expectAllFloat(v));
  if (v.numResults() == 2)
    return v.error("layer_norm has 1 result, or 3 with mean and inv_std_dev");
  const TensorDesc &x = v.operand(0);
  int64_t axis = 0;
  MPTRT_TRY(v.getInt("axis", -1, &axis));
  MPTRT_TRY(normalizeAxis(v, axis, x.rank(), &axis));
  double epsilon;
  MPTRT_TRY(v.getFloat("epsilon", 1e-5, &epsilon));
  p->epsilon = static_cast<float>(epsilon);
  p->outer = product(x.shape, 0, axis);
  p->inner = product(x.shape, axis, x.shape.size());
  // Scale and bias: one value per normalised element, or a single value.
  for (size_t i = 1; i < v.numOperands(); ++i) {
    const int64_t n = v.operand(i).numel;
    if (n != p->inner && n != 1)
      return v.error(operandLabel(v, i) + " must have " + std::to_string(p->inner) +
                     " elements (the normalised shape) or 1");
  }
  p->scaleIsScalar = v.operand(1).numel == 1 && p->inner != 1;
  p->hasBias = v.numOperands() == 3;
  p->biasIsScalar = p->hasBias && v.operand(2).numel == 1 && p->inner != 1;
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  p->hasStats = v.numResults() == 3;
  for (size_t i = 1; i < v.numResults(); ++i)
    if (v.result(i).numel != p->outer)
      return v.error(resultLabel(v, i) + " must have " + std::to_string(p->outer) +
                     " elements (one per normalised row)");
  return Status::ok();
}

Status decodeSoftmax(const KernelView &v, SoftmaxParams *p) {
  p->log = v.kind() == "log_softmax";
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"axis"}));
  MPTRT_TRY(expectAllFloat(v));
  const TensorDesc &x = v.operand(0);
  if (x.rank() < 1)
    return v.error("operand must have rank >= 1");
  int64_t axis = 0;
  MPTRT_TRY(v.getInt("axis", -1, &axis));
  MPTRT_TRY(normalizeAxis(v, axis, x.rank(), &axis));
  p->outer = product(x.shape, 0, axis);
  p->dim = x.shape[axis];
  p->inner = product(x.shape, axis + 1, x.shape.size());
  return expectResultShape(v, 0, x.shape);
}

} // namespace rt
} // namespace mptrt
