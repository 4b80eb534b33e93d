//===- AttentionGradients.cpp - gradient rule of fused attention ----------===//
//
// attention's backward is one op, attention_grad, which recomputes the
// probabilities from the forward's log-sum-exp instead of keeping the
// [..., Tq, Tk] matrix: the memory a fused attention saves in the forward
// pass is not spent again on the backward. The mask is a constant of the
// step: the exporters' masks (causal, padding) are built from integer or
// boolean tensors, and --fuse-attention leaves a mask that depends on a
// parameter unfused.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;

bool AttentionOp::isDifferentiableOperand(unsigned index) {
  return index < 3; // query, key, value; not the mask
}

LogicalResult AttentionOp::buildGradient(GradientBuilder &gb) {
  if (gb.resultGrad(1))
    return emitOpError("has a gradient flowing into its logsumexp; only the "
                       "output is differentiated");
  if (!gb.needsGrad(0) && !gb.needsGrad(1) && !gb.needsGrad(2))
    return success();
  OpBuilder &b = gb.builder();
  SmallVector<Value> operands = {getQuery(),  getKey(),       getValue(),
                                 getOutput(), getLogsumexp(), gb.resultGrad(0)};
  if (getMask())
    operands.push_back(getMask());
  auto grads = AttentionGradOp::create(
      b, gb.loc(),
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      operands, {b.getNamedAttr("scale", getScaleAttr())});
  for (unsigned i = 0; i < 3; ++i)
    if (gb.needsGrad(i))
      gb.addOperandGrad(i, grads->getResult(i));
  return success();
}
