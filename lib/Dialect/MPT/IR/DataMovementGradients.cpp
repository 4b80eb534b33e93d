//===- DataMovementGradients.cpp - gradient rules of data movement --------===//
//
// Data movement is exact, so its gradients are the inverse movement of the
// result gradient in the same type: reshape back, transpose back, slice the
// pieces of a concat, concatenate the pieces of a split, scatter into zeros
// for slice and gather.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

/// The gradient of a reshape-like op: the result gradient reshaped back.
LogicalResult reshapeRule(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0,
                      reshape(gb.builder(), gb.loc(), gb.resultGrad(0),
                              tensorType(gb.op()->getOperand(0)).getShape()));
  return success();
}

} // namespace

LogicalResult ReshapeOp::buildGradient(GradientBuilder &gb) {
  return reshapeRule(gb);
}
LogicalResult FlattenOp::buildGradient(GradientBuilder &gb) {
  return reshapeRule(gb);
}
LogicalResult SqueezeOp::buildGradient(GradientBuilder &gb) {
  return reshapeRule(gb);
}
LogicalResult UnsqueezeOp::buildGradient(GradientBuilder &gb) {
  return reshapeRule(gb);
}

LogicalResult ExpandOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, sumToShape(gb.builder(), gb.loc(), gb.resultGrad(0),
                                    tensorType(getInput())));
  return success();
}

LogicalResult TransposeOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  gb.addOperandGrad(
      0, TransposeOp::create(gb.builder(), gb.loc(), gb.resultGrad(0), inverse)
             .getResult());
  return success();
}

LogicalResult ConcatOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Value dy = gb.resultGrad(0);
  ArrayRef<int64_t> shape = tensorType(dy).getShape();
  int64_t axis = getAxisAttr().getInt(), offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = tensorType(input).getDimSize(axis);
    if (gb.needsGrad(i)) {
      SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
          steps(shape.size(), 1);
      starts[axis] = offset;
      ends[axis] = offset + size;
      gb.addOperandGrad(
          i, SliceOp::create(b, gb.loc(), dy, starts, ends, steps).getResult());
    }
    offset += size;
  }
  return success();
}

LogicalResult SplitOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  SmallVector<Value> pieces;
  for (unsigned i = 0; i < getNumResults(); ++i)
    pieces.push_back(gb.resultGradOrZero(i));
  gb.addOperandGrad(0, ConcatOp::create(gb.builder(), gb.loc(), pieces,
                                        getAxisAttr().getInt())
                           .getResult());
  return success();
}

LogicalResult SliceOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  gb.addOperandGrad(
      0, SliceGradOp::create(b, gb.loc(), TypeRange{getInput().getType()},
                             ValueRange{gb.resultGrad(0)},
                             {b.getNamedAttr("starts", getStartsAttr()),
                              b.getNamedAttr("ends", getEndsAttr()),
                              b.getNamedAttr("steps", getStepsAttr())})
             .getResult());
  return success();
}

LogicalResult GatherOp::buildGradient(GradientBuilder &gb) {
  // Scatter-add in FP32; the result stays FP32 so that an embedding table
  // cast from FP32 master weights gets its gradient without a narrow detour.
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  auto type = tensorType(getData()).clone(b.getF32Type());
  gb.addOperandGrad(
      0, GatherGradOp::create(b, gb.loc(), TypeRange{type},
                              ValueRange{getIndices(), gb.resultGrad(0)},
                              {b.getNamedAttr("axis", getAxisAttr())})
             .getResult());
  return success();
}
