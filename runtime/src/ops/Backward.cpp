//===- Backward.cpp - decoders for the backward kernel kinds -------------===//
#include "ops/Backward.h"
#include "ops/DecodeUtil.h"

#include <cmath>
#include <string>

namespace mptrt {
namespace rt {

namespace {

/// Fails unless operand i (called `name` in the message) has `shape`.
Status expectOperandShape(const KernelView &v, size_t i, const char *name,
                          const std::vector<int64_t> &shape) {
  if (v.operand(i).shape != shape)
    return v.error(operandLabel(v, i) + " (" + name + ") must have shape " + shapeString(shape));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// unary_grad
//===----------------------------------------------------------------------===//

Status decodeUnaryGrad(const KernelView &v, UnaryGradParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"kind", "alpha", "beta", "gamma", "min", "max"}));
  MPTRT_TRY(expectAllFloat(v));
  if (!v.has("kind"))
    return v.error("missing required attribute 'kind'");
  std::string kind;
  MPTRT_TRY(v.getString("kind", "", &kind));
  static const struct {
    const char *name;
    UnaryOp op;
  } kinds[] = {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  {grad ? #kind : nullptr, UnaryOp::Name},
#include "mptrt/generated/UnaryKinds.def"
  };
  bool found = false;
  for (const auto &k : kinds)
    if (k.name && kind == k.name) {
      p->op = k.op;
      found = true;
    }
  if (!found) {
    std::string known;
    for (char c : std::string(MPTRT_UNARY_GRAD_KINDS))
      known += c == '|' ? std::string(", ") : std::string(1, c);
    return v.error("attribute 'kind' must be one of " + known + "; not \"" + kind + "\"");
  }
  double alpha;
  MPTRT_TRY(v.getFloat("alpha", 0.01, &alpha));
  p->alpha = static_cast<float>(alpha);
  MPTRT_TRY(readUnaryParams(v, p->op, &p->alpha, &p->beta, &p->gamma));
  p->hasMin = v.has("min");
  p->hasMax = v.has("max");
  MPTRT_TRY(v.getFloat("min", 0, &p->clipMin));
  MPTRT_TRY(v.getFloat("max", 0, &p->clipMax));
  if (std::isnan(p->clipMin) || std::isnan(p->clipMax))
    return v.error("clip bounds must not be NaN");
  const TensorDesc &x = v.operand(0);
  MPTRT_TRY(expectOperandShape(v, 1, "dy", x.shape));
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  if (v.result(0).dtype != x.dtype)
    return v.error(resultLabel(v, 0) + " (dx) must have the element type of " + operandLabel(v, 0) +
                   " (x)");
  p->numel = x.numel;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax_grad
//===----------------------------------------------------------------------===//

Status decodeSoftmaxGrad(const KernelView &v, SoftmaxParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"axis", "log"}));
  MPTRT_TRY(expectAllFloat(v));
  const TensorDesc &y = v.operand(0);
  if (y.rank() < 1)
    return v.error(operandLabel(v, 0) + " (y) must have rank >= 1");
  int64_t axis = 0;
  MPTRT_TRY(v.getRequiredInt("axis", &axis));
  MPTRT_TRY(normalizeAxis(v, axis, y.rank(), &axis));
  MPTRT_TRY(v.getBool("log", false, &p->log));
  MPTRT_TRY(expectOperandShape(v, 1, "dy", y.shape));
  MPTRT_TRY(expectResultShape(v, 0, y.shape));
  p->outer = product(y.shape, 0, axis);
  p->dim = y.shape[axis];
  p->inner = product(y.shape, axis + 1, y.shape.size());
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

Status decodeLayerNormGrad(const KernelView &v, LayerNormGradParams *p) {
  MPTRT_TRY(v.expectCounts(5, 5, 3, 3));
  MPTRT_TRY(v.allowOnly({"axis"}));
  MPTRT_TRY(expectAllFloat(v));
  const TensorDesc &x = v.operand(0), &scale = v.operand(1);
  int64_t axis = 0;
  MPTRT_TRY(v.getRequiredInt("axis", &axis));
  MPTRT_TRY(normalizeAxis(v, axis, x.rank(), &axis));
  p->outer = product(x.shape, 0, axis);
  p->inner = product(x.shape, axis, x.shape.size());
  if (scale.numel != p->inner && scale.numel != 1)
    return v.error(operandLabel(v, 1) + " (scale) must have " + std::to_string(p->inner) +
                   " elements (the normalised shape) or 1");
  p->scaleIsScalar = scale.numel == 1 && p->inner != 1;
  static const char *const statNames[] = {"mean", "inv_std_dev"};
  for (size_t i = 2; i < 4; ++i)
    if (v.operand(i).numel != p->outer)
      return v.error(operandLabel(v, i) + " (" + statNames[i - 2] + ") must have " +
                     std::to_string(p->outer) + " elements (one per normalised row)");
  MPTRT_TRY(expectOperandShape(v, 4, "dy", x.shape));
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  for (size_t i = 1; i < 3; ++i) {
    MPTRT_TRY(expectResultShape(v, i, scale.shape));
    if (v.result(i).dtype != DType::F32)
      return v.error(resultLabel(v, i) + (i == 1 ? " (dscale)" : " (dbias)") + " must be f32");
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss_grad, nll_loss_grad
//===----------------------------------------------------------------------===//

Status decodeLossGrad(const KernelView &v, LossGradParams *p) {
  p->fromLogits = v.kind() == "softmax_cross_entropy_loss_grad";
  // softmax_cross_entropy_loss_grad: log_prob, labels, [weights], dloss;
  // nll_loss_grad: target, [weight], dloss. The scores' shape comes from
  // log_prob, or from nll_loss_grad's result.
  const size_t first = p->fromLogits ? 1 : 0; // the labels operand
  MPTRT_TRY(v.expectCounts(first + 2, first + 3, 1, 1));
  MPTRT_TRY(decodeLossAttributes(v, p));
  p->hasWeights = v.numOperands() == first + 3;
  const size_t dlossIndex = v.numOperands() - 1;
  const TensorDesc &scores = v.result(0);
  MPTRT_TRY(expectFloatResult(v, 0));
  if (p->fromLogits) {
    MPTRT_TRY(expectFloatOperand(v, 0));
    MPTRT_TRY(expectResultShape(v, 0, v.operand(0).shape));
  }
  if (scores.rank() < 2)
    return v.error(resultLabel(v, 0) + " must be [N, C, d...]");
  p->N = scores.shape[0];
  p->C = scores.shape[1];
  p->D = product(scores.shape, 2, scores.shape.size());
  std::vector<int64_t> labelShape = {p->N};
  labelShape.insert(labelShape.end(), scores.shape.begin() + 2, scores.shape.end());
  MPTRT_TRY(expectIndexOperand(v, first));
  MPTRT_TRY(expectOperandShape(v, first, "labels", labelShape));
  if (p->hasWeights) {
    MPTRT_TRY(expectFloatOperand(v, first + 1));
    MPTRT_TRY(expectOperandShape(v, first + 1, "weights", {p->C}));
  }
  MPTRT_TRY(expectFloatOperand(v, dlossIndex));
  if (p->reduction == Reduction::None)
    MPTRT_TRY(expectOperandShape(v, dlossIndex, "dloss", labelShape));
  else if (v.operand(dlossIndex).numel != 1)
    return v.error(operandLabel(v, dlossIndex) + " (dloss) must be a scalar for reduction \"" +
                   (p->reduction == Reduction::Sum ? "sum" : "mean") + "\"");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

Status decodeGatherGrad(const KernelView &v, GatherGradParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"axis"}));
  MPTRT_TRY(expectIndexOperand(v, 0));
  MPTRT_TRY(expectFloatOperand(v, 1));
  MPTRT_TRY(expectFloatResult(v, 0));
  const TensorDesc &indices = v.operand(0), &data = v.result(0);
  if (data.rank() < 1)
    return v.error(resultLabel(v, 0) + " (ddata) must have rank >= 1");
  int64_t axis = 0;
  MPTRT_TRY(v.getRequiredInt("axis", &axis));
  MPTRT_TRY(normalizeAxis(v, axis, data.rank(), &axis));
  std::vector<int64_t> dyShape(data.shape.begin(), data.shape.begin() + axis);
  dyShape.insert(dyShape.end(), indices.shape.begin(), indices.shape.end());
  dyShape.insert(dyShape.end(), data.shape.begin() + axis + 1, data.shape.end());
  MPTRT_TRY(expectOperandShape(v, 1, "dy", dyShape));
  p->outer = product(data.shape, 0, axis);
  p->axisDim = data.shape[axis];
  p->inner = product(data.shape, axis + 1, data.shape.size());
  p->numIndices = indices.numel;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// slice_grad
//===----------------------------------------------------------------------===//

Status decodeSliceGrad(const KernelView &v, SliceParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"starts", "ends", "steps"}));
  MPTRT_TRY(expectAllFloat(v));
  // The window is the forward slice's, over its input (this kernel's result).
  std::vector<int64_t> dyShape;
  MPTRT_TRY(decodeSliceWindow(v, v.result(0), p, &dyShape));
  MPTRT_TRY(expectOperandShape(v, 0, "dy", dyShape));
  p->numel = v.operand(0).numel;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// max_pool_grad, average_pool_grad
//===----------------------------------------------------------------------===//

Status decodePoolGrad(const KernelView &v, PoolParams *p) {
  const bool isMax = v.kind() == "max_pool_grad";
  // max_pool_grad: x, dy -> dx; average_pool_grad: dy -> dx.
  MPTRT_TRY(v.expectCounts(isMax ? 2 : 1, isMax ? 2 : 1, 1, 1));
  MPTRT_TRY(expectChannelsFirst(v));
  if (isMax)
    MPTRT_TRY(v.allowOnly({"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "layout"}));
  else
    MPTRT_TRY(v.allowOnly({"kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                           "count_include_pad", "layout"}));
  MPTRT_TRY(expectAllFloat(v));
  const TensorDesc &dx = v.result(0);
  std::vector<int64_t> dyShape;
  MPTRT_TRY(decodePoolWindow(v, isMax ? PoolKind::Max : PoolKind::Average, dx,
                             resultLabel(v, 0) + " (dx)", p, &dyShape));
  p->integer = false;
  if (isMax)
    MPTRT_TRY(expectOperandShape(v, 0, "x", dx.shape));
  return expectOperandShape(v, isMax ? 1 : 0, "dy", dyShape);
}

//===----------------------------------------------------------------------===//
// conv_grad_input, conv_grad_weight
//===----------------------------------------------------------------------===//

Status decodeConvGrad(const KernelView &v, ConvParams *p) {
  const bool gradInput = v.kind() == "conv_grad_input";
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"strides", "pads", "dilations", "group", "kernel_shape", "layout"}));
  MPTRT_TRY(expectChannelsFirst(v));
  MPTRT_TRY(expectAllFloat(v));
  std::vector<int64_t> dyShape;
  if (gradInput) // dy, weight -> dx
    MPTRT_TRY(decodeConvWindow(v, v.result(0), resultLabel(v, 0) + " (dx)", v.operand(1),
                               operandLabel(v, 1), p, &dyShape));
  else // x, dy -> dweight
    MPTRT_TRY(decodeConvWindow(v, v.operand(0), operandLabel(v, 0) + " (x)", v.result(0),
                               resultLabel(v, 0), p, &dyShape));
  p->hasBias = false;
  return expectOperandShape(v, gradInput ? 0 : 1, "dy", dyShape);
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

Status decodeBatchNormGrad(const KernelView &v, BatchNormGradParams *p) {
  MPTRT_TRY(v.expectCounts(3, 4, 3, 3));
  MPTRT_TRY(v.allowOnly({"epsilon", "activation", "layout"}));
  MPTRT_TRY(expectChannelsFirst(v));
  MPTRT_TRY(expectAllFloat(v));
  MPTRT_TRY(decodeNormActivation(v, &p->relu));
  if (p->relu != (v.numOperands() == 4))
    return v.error(p->relu ? "batch_norm_grad with activation relu needs the forward output "
                             "(operand 3)"
                           : "batch_norm_grad takes operand 3 (the forward output) only with "
                             "activation relu");
  double epsilon;
  MPTRT_TRY(v.getFloat("epsilon", 1e-5, &epsilon));
  p->epsilon = static_cast<float>(epsilon);
  const TensorDesc &x = v.operand(0);
  if (x.rank() < 2)
    return v.error(operandLabel(v, 0) + " (x) must be [N, C, ...]");
  p->N = x.shape[0];
  p->C = x.shape[1];
  p->inner = product(x.shape, 2, x.shape.size());
  MPTRT_TRY(expectOperandShape(v, 1, "scale", {p->C}));
  MPTRT_TRY(expectOperandShape(v, 2, "dy", x.shape));
  if (p->relu)
    MPTRT_TRY(expectOperandShape(v, 3, "y", x.shape));
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  MPTRT_TRY(expectResultShape(v, 1, {p->C}));
  MPTRT_TRY(expectResultShape(v, 2, {p->C}));
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
