//===- NormalizationGradients.cpp - gradient rules of norms and softmax ---===//
//
// These ops run in FP32 after precision assignment, and so do their
// backward ops. LayerNorm reuses the statistics its forward op returns;
// training-mode batch norm recomputes them in its backward kernel.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

/// Fails if a result other than the first (statistics, running averages)
/// carries a gradient: the rules treat those as constants.
LogicalResult onlyFirstResult(GradientBuilder &gb, StringRef what) {
  for (unsigned i = 1; i < gb.op()->getNumResults(); ++i)
    if (gb.resultGrad(i))
      return gb.op()->emitOpError("has a gradient flowing into its ")
             << what << "; only the first result is differentiated";
  return success();
}

LogicalResult softmaxRule(GradientBuilder &gb, Value output, int64_t axis,
                          bool log) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Value input = gb.op()->getOperand(0);
  gb.addOperandGrad(0, SoftmaxGradOp::create(
                           b, gb.loc(), TypeRange{input.getType()},
                           ValueRange{output, gb.resultGrad(0)},
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
                            b.getNamedAttr("log", b.getBoolAttr(log))})
                           .getResult());
  return success();
}

/// `v` ([C]) reshaped to broadcast along axis 1 of a rank-`rank` tensor.
Value perChannel(OpBuilder &b, Location loc, Value v, int64_t rank) {
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = tensorType(v).getDimSize(0);
  return reshape(b, loc, v, shape);
}

} // namespace

LogicalResult LayerNormOp::buildGradient(GradientBuilder &gb) {
  if (failed(onlyFirstResult(gb, "mean or inverse standard deviation")))
    return failure();
  OpBuilder &b = gb.builder();
  Type scaleType = getScale().getType();
  auto grads = LayerNormGradOp::create(
      b, gb.loc(), TypeRange{getInput().getType(), scaleType, scaleType},
      ValueRange{getInput(), getScale(), getMean(), getInvStdDev(),
                 gb.resultGrad(0)},
      {b.getNamedAttr("axis", getAxisAttr())});
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, grads.getInputGrad());
  if (gb.needsGrad(1))
    gb.addOperandGrad(1, grads.getScaleGrad());
  if (getBias() && gb.needsGrad(2))
    gb.addOperandGrad(2, grads.getBiasGrad());
  return success();
}

LogicalResult BatchNormTrainOp::buildGradient(GradientBuilder &gb) {
  if (failed(onlyFirstResult(gb, "running statistics")))
    return failure();
  OpBuilder &b = gb.builder();
  Type scaleType = getScale().getType();
  auto grads = BatchNormGradOp::create(
      b, gb.loc(), TypeRange{getInput().getType(), scaleType, scaleType},
      ValueRange{getInput(), getScale(), gb.resultGrad(0)},
      {b.getNamedAttr("epsilon", getEpsilonAttr())});
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, grads.getInputGrad());
  if (gb.needsGrad(1))
    gb.addOperandGrad(1, grads.getScaleGrad());
  if (gb.needsGrad(2))
    gb.addOperandGrad(2, grads.getBiasGrad());
  return success();
}

bool BatchNormOp::isDifferentiableOperand(unsigned index) {
  return index <= 2; // input, scale, bias; the running statistics are state
}

LogicalResult BatchNormOp::buildGradient(GradientBuilder &gb) {
  // Inference mode: y = (x - mean) * scale * r + bias with r = 1/sqrt(var +
  // eps), a per-channel affine map; the running statistics are constants.
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Type f32 = b.getF32Type();
  int64_t rank = tensorType(getInput()).getRank();
  Value var = castTo(b, loc, getVar(), f32);
  Value eps = scalar(b, loc, getEpsilon().convertToDouble(), f32);
  Value r =
      DivOp::create(
          b, loc, scalar(b, loc, 1.0, f32),
          SqrtOp::create(b, loc, AddOp::create(b, loc, var, eps).getResult())
              .getResult())
          .getResult();
  Value dy = gb.resultGrad(0, f32);
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  if (gb.needsGrad(0)) {
    Value factor =
        MulOp::create(b, loc, castTo(b, loc, getScale(), f32), r).getResult();
    gb.addOperandGrad(
        0, MulOp::create(b, loc, dy, perChannel(b, loc, factor, rank))
               .getResult());
  }
  if (gb.needsGrad(1)) {
    Value centered =
        SubOp::create(b, loc, castTo(b, loc, getInput(), f32),
                      perChannel(b, loc, castTo(b, loc, getMean(), f32), rank))
            .getResult();
    Value xhat = MulOp::create(b, loc, centered, perChannel(b, loc, r, rank))
                     .getResult();
    gb.addOperandGrad(
        1, sumF32(b, loc, MulOp::create(b, loc, dy, xhat).getResult(), axes));
  }
  if (gb.needsGrad(2))
    gb.addOperandGrad(2, sumF32(b, loc, dy, axes));
  return success();
}

LogicalResult SoftmaxOp::buildGradient(GradientBuilder &gb) {
  return softmaxRule(gb, getOutput(), getAxisAttr().getInt(), /*log=*/false);
}

LogicalResult LogSoftmaxOp::buildGradient(GradientBuilder &gb) {
  return softmaxRule(gb, getOutput(), getAxisAttr().getInt(), /*log=*/true);
}
