//===- ReductionGradients.cpp - gradient rules of reductions and pooling --===//
//
// A reduction's gradient broadcasts the (kept-dims) result gradient back
// over the reduced axes; max-like reductions route it to the maxima.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

/// `v`, a reduction's result (or its gradient), reshaped to the kept-dims
/// shape and broadcast back to the input's shape.
Value spread(OpBuilder &b, Location loc, Value v, RankedTensorType input,
             ArrayRef<int64_t> axes) {
  Value kept = reshape(b, loc, v, keptShape(input.getShape(), axes));
  return broadcastTo(b, loc, kept, input.getShape());
}

int64_t reducedCount(RankedTensorType input, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (axes.empty() || llvm::is_contained(axes, i))
      count *= input.getDimSize(i);
  return count;
}

} // namespace

LogicalResult ReduceSumOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, spread(gb.builder(), gb.loc(), gb.resultGrad(0),
                                tensorType(getInput()), getAxes()));
  return success();
}

LogicalResult ReduceMeanOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  RankedTensorType input = tensorType(getInput());
  Value dy = gb.resultGrad(0, b.getF32Type());
  Value scaled =
      MulOp::create(b, gb.loc(), dy,
                    scalar(b, gb.loc(), 1.0 / reducedCount(input, getAxes()),
                           b.getF32Type()))
          .getResult();
  gb.addOperandGrad(0, spread(b, gb.loc(), scaled, input, getAxes()));
  return success();
}

LogicalResult ReduceMaxOp::buildGradient(GradientBuilder &gb) {
  // The gradient is shared evenly by the elements equal to the maximum.
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Type f32 = b.getF32Type();
  RankedTensorType input = tensorType(getInput());
  Value isMax = EqualOp::create(b, loc, getInput(),
                                spread(b, loc, getOutput(), input, getAxes()))
                    .getResult();
  Value ones = WhereOp::create(b, loc, isMax, scalar(b, loc, 1.0, f32),
                               scalar(b, loc, 0.0, f32))
                   .getResult();
  Value count = ReduceSumOp::create(b, loc, ones, getAxes(), /*keepdims=*/true)
                    .getResult();
  Value dy = reshape(b, loc, gb.resultGrad(0, f32),
                     keptShape(input.getShape(), getAxes()));
  Value share = DivOp::create(b, loc, dy, count).getResult();
  gb.addOperandGrad(
      0,
      MulOp::create(b, loc, ones, broadcastTo(b, loc, share, input.getShape()))
          .getResult());
  return success();
}

LogicalResult ReduceL2Op::buildGradient(GradientBuilder &gb) {
  // y = sqrt(sum x^2): dx = dy * x / y.
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Type f32 = b.getF32Type();
  RankedTensorType input = tensorType(getInput());
  Value ratio = DivOp::create(b, loc, gb.resultGrad(0, f32),
                              castTo(b, loc, getOutput(), f32))
                    .getResult();
  gb.addOperandGrad(0, MulOp::create(b, loc, castTo(b, loc, getInput(), f32),
                                     spread(b, loc, ratio, input, getAxes()))
                           .getResult());
  return success();
}

// The pooling gradients take their forward op's window attributes as is.
LogicalResult MaxPoolOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(
        0, MaxPoolGradOp::create(
               gb.builder(), gb.loc(), TypeRange{getInput().getType()},
               ValueRange{getInput(), gb.resultGrad(0)}, (*this)->getAttrs())
               .getResult());
  return success();
}

LogicalResult AveragePoolOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, AveragePoolGradOp::create(
                             gb.builder(), gb.loc(),
                             TypeRange{getInput().getType()},
                             ValueRange{gb.resultGrad(0)}, (*this)->getAttrs())
                             .getResult());
  return success();
}

LogicalResult GlobalAveragePoolOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  RankedTensorType input = tensorType(getInput());
  int64_t count = 1;
  for (int64_t i = 2; i < input.getRank(); ++i)
    count *= input.getDimSize(i);
  Value dy = gb.resultGrad(0, b.getF32Type());
  Value share = MulOp::create(b, gb.loc(), dy,
                              scalar(b, gb.loc(), 1.0 / count, b.getF32Type()))
                    .getResult();
  gb.addOperandGrad(0, broadcastTo(b, gb.loc(), share, input.getShape()));
  return success();
}
