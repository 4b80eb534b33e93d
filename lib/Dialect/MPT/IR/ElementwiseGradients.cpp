//===- ElementwiseGradients.cpp - gradient rules of elementwise ops -------===//
//
// Unary functions go through `mpt.unary_grad` (the derivative at the
// forward input, in FP32); arithmetic with broadcasting sums each operand's
// gradient back to its shape in FP32 (grad::sumToShape). Casts send the
// gradient back in the source type.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

/// The gradient `g` (of the result's shape) of a broadcasting operand.
void addBroadcastGrad(GradientBuilder &gb, unsigned index, Value g) {
  Value operand = gb.op()->getOperand(index);
  gb.addOperandGrad(index,
                    sumToShape(gb.builder(), gb.loc(), g, tensorType(operand)));
}

/// For max/min: the gradient goes to the operand that wins, half to each
/// on a tie (as PyTorch's maximum / minimum).
LogicalResult extremumRule(GradientBuilder &gb, bool isMax) {
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Value lhs = gb.op()->getOperand(0), rhs = gb.op()->getOperand(1);
  Value dy = gb.resultGrad(0, b.getF32Type());
  Value zero = scalar(b, loc, 0.0, b.getF32Type());
  Value half = MulOp::create(b, loc, dy, scalar(b, loc, 0.5, b.getF32Type()))
                   .getResult();
  Value tie = EqualOp::create(b, loc, lhs, rhs).getResult();
  Value tieGrad = WhereOp::create(b, loc, tie, half, zero).getResult();
  for (unsigned i = 0; i < 2; ++i) {
    if (!gb.needsGrad(i))
      continue;
    Value self = gb.op()->getOperand(i), other = gb.op()->getOperand(1 - i);
    Value wins = isMax ? GreaterOp::create(b, loc, self, other).getResult()
                       : LessOp::create(b, loc, self, other).getResult();
    addBroadcastGrad(gb, i,
                     WhereOp::create(b, loc, wins, dy, tieGrad).getResult());
  }
  return success();
}

NamedAttribute floatAttr(OpBuilder &b, StringRef name, double value) {
  return b.getNamedAttr(name, b.getF64FloatAttr(value));
}

} // namespace

//===----------------------------------------------------------------------===//
// Identity-like and conversions.
//===----------------------------------------------------------------------===//

LogicalResult IdentityOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, gb.resultGrad(0));
  return success();
}

LogicalResult CastOp::buildGradient(GradientBuilder &gb) {
  // The gradient of a cast is a cast back: asked for in the source type, the
  // engine rounds the FP32 sum once into it (no detour through a narrow type).
  if (gb.needsGrad(0))
    gb.addOperandGrad(
        0, gb.resultGrad(0, tensorType(getInput()).getElementType()));
  return success();
}

bool QuantizeOp::isDifferentiableOperand(unsigned index) {
  return index == 0; // the scale is a constant of the step
}

LogicalResult QuantizeOp::buildGradient(GradientBuilder &gb) {
  // y = x * scale (then rounded): the straight-through derivative.
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Value dy = gb.resultGrad(0, b.getF32Type());
  gb.addOperandGrad(0, MulOp::create(b, gb.loc(), dy, getScale()).getResult());
  return success();
}

LogicalResult DropoutOp::buildGradient(GradientBuilder &gb) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Value dy = gb.resultGrad(0);
  float ratio = getRatio().convertToFloat();
  if (!getTraining() || ratio == 0.0f) {
    gb.addOperandGrad(0, dy);
    return success();
  }
  if (!getRng().empty()) {
    // The mask is a pure function of (seed, step, stream, index): the same
    // dropout applied to dy redraws it, so no mask is kept from the forward
    // pass to the backward pass, and dy * (keep / (1 - ratio)) is rounded
    // once, as the forward output is.
    auto redraw = DropoutOp::create(
        b, gb.loc(), TypeRange{dy.getType(), getMask().getType()},
        ValueRange{dy, getSeed(), getStep()},
        (*this)->getAttrDictionary().getValue());
    gb.addOperandGrad(0, redraw.getOutput());
    return success();
  }
  // Not seeded (outside --build-training-step): the forward op's mask.
  Type element = tensorType(dy).getElementType();
  Value scaled =
      MulOp::create(b, gb.loc(), dy,
                    scalar(b, gb.loc(), 1.0 / (1.0 - ratio), element))
          .getResult();
  gb.addOperandGrad(0, WhereOp::create(b, gb.loc(), getMask(), scaled,
                                       scalar(b, gb.loc(), 0.0, element))
                           .getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// Unary functions: the ops generated from MPTUnaryFunctions.td call
// unaryGradRule with their kind; those with attributes pass them on.
//===----------------------------------------------------------------------===//

LogicalResult mpt::grad::unaryGradRule(GradientBuilder &gb, UnaryGradKind kind,
                                       ArrayRef<NamedAttribute> extra) {
  if (!gb.needsGrad(0))
    return success();
  OpBuilder &b = gb.builder();
  Value x = gb.op()->getOperand(0);
  Value dy = gb.resultGrad(0);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kind", UnaryGradKindAttr::get(b.getContext(), kind))};
  attrs.append(extra.begin(), extra.end());
  gb.addOperandGrad(0, UnaryGradOp::create(b, gb.loc(), TypeRange{x.getType()},
                                           ValueRange{x, dy}, attrs)
                           .getResult());
  return success();
}

LogicalResult LeakyReluOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  return unaryGradRule(gb, UnaryGradKind::leaky_relu,
                       {b.getNamedAttr("alpha", getAlphaAttr())});
}

LogicalResult GeluOp::buildGradient(GradientBuilder &gb) {
  return unaryGradRule(gb, getApproximate() == GeluApproximate::tanh
                               ? UnaryGradKind::gelu_tanh
                               : UnaryGradKind::gelu);
}

LogicalResult ClipOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  SmallVector<NamedAttribute> bounds;
  if (auto min = getMinAttr())
    bounds.push_back(floatAttr(b, "min", min.getValueAsDouble()));
  if (auto max = getMaxAttr())
    bounds.push_back(floatAttr(b, "max", max.getValueAsDouble()));
  return unaryGradRule(gb, UnaryGradKind::clip, bounds);
}

LogicalResult NegOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(
        0, NegOp::create(gb.builder(), gb.loc(), gb.resultGrad(0)).getResult());
  return success();
}

LogicalResult TriluOp::buildGradient(GradientBuilder &gb) {
  if (gb.needsGrad(0))
    gb.addOperandGrad(0,
                      TriluOp::create(gb.builder(), gb.loc(), gb.resultGrad(0),
                                      getUpperAttr(), getKAttr())
                          .getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting arithmetic.
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradient(GradientBuilder &gb) {
  Value dy = gb.resultGrad(0);
  for (unsigned i = 0; i < 2; ++i)
    if (gb.needsGrad(i))
      addBroadcastGrad(gb, i, dy);
  return success();
}

LogicalResult SubOp::buildGradient(GradientBuilder &gb) {
  Value dy = gb.resultGrad(0);
  if (gb.needsGrad(0))
    addBroadcastGrad(gb, 0, dy);
  if (gb.needsGrad(1))
    addBroadcastGrad(gb, 1,
                     NegOp::create(gb.builder(), gb.loc(), dy).getResult());
  return success();
}

LogicalResult MulOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Value dy = gb.resultGrad(0);
  if (gb.needsGrad(0))
    addBroadcastGrad(gb, 0,
                     MulOp::create(b, gb.loc(), dy, getRhs()).getResult());
  if (gb.needsGrad(1))
    addBroadcastGrad(gb, 1,
                     MulOp::create(b, gb.loc(), dy, getLhs()).getResult());
  return success();
}

LogicalResult DivOp::buildGradient(GradientBuilder &gb) {
  // y = a / b: da = dy / b, db = -(dy / b) * y.
  OpBuilder &b = gb.builder();
  Value quotient =
      DivOp::create(b, gb.loc(), gb.resultGrad(0), getRhs()).getResult();
  if (gb.needsGrad(0))
    addBroadcastGrad(gb, 0, quotient);
  if (gb.needsGrad(1)) {
    Value t = MulOp::create(b, gb.loc(), quotient, getOutput()).getResult();
    addBroadcastGrad(gb, 1, NegOp::create(b, gb.loc(), t).getResult());
  }
  return success();
}

LogicalResult PowOp::buildGradient(GradientBuilder &gb) {
  // y = a^e: da = dy * e * a^(e - 1), de = dy * y * log(a).
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  Value a = getLhs(), e = getRhs();
  Value dy = gb.resultGrad(0);
  Type element = tensorType(a).getElementType();
  if (gb.needsGrad(0)) {
    Value ef = castTo(b, loc, e, element);
    Value em1 =
        SubOp::create(b, loc, ef, scalar(b, loc, 1.0, element)).getResult();
    Value pow = PowOp::create(b, loc, a, em1).getResult();
    Value t =
        MulOp::create(b, loc, MulOp::create(b, loc, dy, ef).getResult(), pow)
            .getResult();
    addBroadcastGrad(gb, 0, t);
  }
  if (gb.needsGrad(1)) {
    Value log = LogOp::create(b, loc, a).getResult();
    Value t =
        MulOp::create(b, loc,
                      MulOp::create(b, loc, dy, getOutput()).getResult(), log)
            .getResult();
    addBroadcastGrad(gb, 1, t);
  }
  return success();
}

LogicalResult MaxOp::buildGradient(GradientBuilder &gb) {
  return extremumRule(gb, true);
}
LogicalResult MinOp::buildGradient(GradientBuilder &gb) {
  return extremumRule(gb, false);
}

LogicalResult WhereOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Value dy = gb.resultGrad(0);
  Value zero = scalar(b, gb.loc(), 0.0, tensorType(dy).getElementType());
  if (gb.needsGrad(1))
    addBroadcastGrad(
        gb, 1,
        WhereOp::create(b, gb.loc(), getCondition(), dy, zero).getResult());
  if (gb.needsGrad(2))
    addBroadcastGrad(
        gb, 2,
        WhereOp::create(b, gb.loc(), getCondition(), zero, dy).getResult());
  return success();
}
