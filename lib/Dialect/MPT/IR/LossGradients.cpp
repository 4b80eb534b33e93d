//===- LossGradients.cpp - gradient rules of the losses -------------------===//
//
// Losses run in FP32. Cross-entropy's backward works from the
// log-probabilities its forward op already returns; labels and class
// weights carry no gradient.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

SmallVector<NamedAttribute>
reductionAttrs(OpBuilder &b, ReductionAttr reduction, IntegerAttr ignoreIndex) {
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr("reduction", reduction)};
  if (ignoreIndex)
    attrs.push_back(b.getNamedAttr("ignore_index", ignoreIndex));
  return attrs;
}

} // namespace

// Only the scores carry a gradient: labels are integers and class weights
// and the loss scale are constants of the step.
bool SoftmaxCrossEntropyLossOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}
bool NegativeLogLikelihoodLossOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}
bool ScaleLossOp::isDifferentiableOperand(unsigned index) { return index == 0; }

LogicalResult SoftmaxCrossEntropyLossOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Type scoresType = getScores().getType();
  if (Value dloss = gb.resultGrad(0)) {
    SmallVector<Value> operands = {getLogProb(), getLabels()};
    if (getWeights())
      operands.push_back(getWeights());
    operands.push_back(dloss);
    gb.addOperandGrad(
        0, SoftmaxCrossEntropyLossGradOp::create(
               b, loc, TypeRange{scoresType}, operands,
               reductionAttrs(b, getReductionAttr(), getIgnoreIndexAttr()))
               .getResult());
  }
  // The log-probabilities are log_softmax(scores) along axis 1.
  if (Value dlogProb = gb.resultGrad(1))
    gb.addOperandGrad(0, SoftmaxGradOp::create(
                             b, loc, TypeRange{scoresType},
                             ValueRange{getLogProb(), dlogProb},
                             {b.getNamedAttr("axis", b.getI64IntegerAttr(1)),
                              b.getNamedAttr("log", b.getBoolAttr(true))})
                             .getResult());
  return success();
}

LogicalResult NegativeLogLikelihoodLossOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  SmallVector<Value> operands = {getTarget()};
  if (getWeight())
    operands.push_back(getWeight());
  operands.push_back(gb.resultGrad(0));
  gb.addOperandGrad(
      0, NegativeLogLikelihoodLossGradOp::create(
             b, gb.loc(), TypeRange{getInput().getType()}, operands,
             reductionAttrs(b, getReductionAttr(), getIgnoreIndexAttr()))
             .getResult());
  return success();
}

LogicalResult ScaleLossOp::buildGradient(GradientBuilder &gb) {
  // scaled = loss * scale, with the scale a constant of the step.
  if (gb.needsGrad(0))
    gb.addOperandGrad(
        0, MulOp::create(gb.builder(), gb.loc(), gb.resultGrad(0), getScale())
               .getResult());
  return success();
}
