//===- ElementwiseImport.cpp - elementwise ONNX ops -----------------------===//
#include "GenericImporters.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// Mean: the sum of the inputs, divided by their count (as ONNX's
/// reference computes it).
LogicalResult importMean(NodeContext &c) {
  auto sum = foldInputs<AddOp>(c);
  if (failed(sum))
    return failure();
  auto type = cast<RankedTensorType>(sum->getType());
  Value count = grad::scalar(c.b, c.loc, static_cast<double>(c.numInputs()),
                             type.getElementType());
  return c.produce<DivOp>({*sum, count});
}

/// The logical ops on booleans as selects, which broadcast and fold:
/// and(a, b) = a ? b : a, or(a, b) = a ? a : b, xor(a, b) = a ? !b : b.
LogicalResult importAnd(NodeContext &c) {
  return c.produce<WhereOp>({c.input(0), c.input(1), c.input(0)});
}
LogicalResult importOr(NodeContext &c) {
  return c.produce<WhereOp>({c.input(0), c.input(0), c.input(1)});
}
LogicalResult importXor(NodeContext &c) {
  auto notB = c.create1<NotOp>({c.input(1)});
  if (failed(notB))
    return failure();
  return c.produce<WhereOp>({c.input(0), *notB, c.input(1)});
}

/// Reciprocal: 1 / x (div's gradient).
LogicalResult importReciprocal(NodeContext &c) {
  Value one = grad::scalar(c.b, c.loc, 1.0, c.inputType(0).getElementType());
  return c.produce<DivOp>({one, c.input(0)});
}

/// IsNaN: x != x.
LogicalResult importIsNaN(NodeContext &c) {
  auto same = c.create1<EqualOp>({c.input(0), c.input(0)});
  if (failed(same))
    return failure();
  return c.produce<NotOp>({*same});
}

/// IsInf: x == +inf and/or x == -inf, as detect_positive and
/// detect_negative ask.
LogicalResult importIsInf(NodeContext &c) {
  Type element = c.inputType(0).getElementType();
  bool positive = c.getInt("detect_positive", 1) != 0;
  bool negative = c.getInt("detect_negative", 1) != 0;
  auto compare = [&](double v) {
    return c.create1<EqualOp>(
        {c.input(0), grad::scalar(c.b, c.loc, v, element)});
  };
  auto pos = compare(INFINITY), neg = compare(-INFINITY);
  if (failed(pos) || failed(neg))
    return failure();
  if (positive && negative)
    return c.produce<WhereOp>({*pos, *pos, *neg});
  if (positive)
    c.setResults(*pos);
  else if (negative)
    c.setResults(*neg);
  else // neither: all false
    return c.produce<WhereOp>({*pos, *neg, *pos});
  return success();
}

/// Mod(a, b) = a - q * b, q the quotient rounded toward zero (fmod = 1, C's
/// fmod) or down (fmod = 0, Python's %). Floats: q = floor(a / b), or
/// where(a / b < 0, ceil(a / b), floor(a / b)) toward zero, so the result
/// is exact up to the rounding of a / b. Integers: a / b truncates (an
/// exact remainder), and with fmod = 0 a nonzero remainder whose sign
/// differs from b's gets b added. The gradient is sub's and mul's: 1 for
/// a and -q for b (floor and ceil have none), as PyTorch's fmod and
/// remainder.
LogicalResult importMod(NodeContext &c) {
  Value a = c.input(0), b = c.input(1);
  Type element = c.inputType(0).getElementType();
  bool truncating = c.getInt("fmod", 0) != 0;
  auto quotient = c.create1<DivOp>({a, b});
  if (failed(quotient))
    return failure();
  Value q = *quotient;
  if (isa<FloatType>(element)) {
    auto down = c.create1<FloorOp>({q});
    if (failed(down))
      return failure();
    q = *down;
    if (truncating) {
      auto up = c.create1<CeilOp>({*quotient});
      auto negative = c.create1<LessOp>(
          {*quotient, grad::scalar(c.b, c.loc, 0.0, element)});
      if (failed(up) || failed(negative))
        return failure();
      auto toward = c.create1<WhereOp>({*negative, *up, *down});
      if (failed(toward))
        return failure();
      q = *toward;
    }
  }
  auto multiple = c.create1<MulOp>({q, b});
  if (failed(multiple))
    return failure();
  auto remainder = c.create1<SubOp>({a, *multiple});
  if (failed(remainder))
    return failure();
  if (truncating || isa<FloatType>(element)) {
    c.setResults(*remainder);
    return success();
  }
  // Integers, fmod = 0: r + b where r != 0 and (r < 0) != (b < 0).
  Value zero = grad::scalar(c.b, c.loc, 0.0, element);
  auto isZero = c.create1<EqualOp>({*remainder, zero});
  auto rNegative = c.create1<LessOp>({*remainder, zero});
  auto bNegative = c.create1<LessOp>({b, zero});
  if (failed(isZero) || failed(rNegative) || failed(bNegative))
    return failure();
  auto bPositive = c.create1<NotOp>({*bNegative});
  if (failed(bPositive))
    return failure();
  auto signsDiffer = c.create1<WhereOp>({*rNegative, *bPositive, *bNegative});
  if (failed(signsDiffer))
    return failure();
  auto nonZero = c.create1<NotOp>({*isZero});
  if (failed(nonZero))
    return failure();
  auto adjust = c.create1<WhereOp>({*nonZero, *signsDiffer, *nonZero});
  auto shifted = c.create1<AddOp>({*remainder, b});
  if (failed(adjust) || failed(shifted))
    return failure();
  return c.produce<WhereOp>({*adjust, *shifted, *remainder});
}

/// PRelu(x, slope) = where(x < 0, x * slope, x), slope broadcasting
/// against x: the gradient reaches slope through the mul.
LogicalResult importPRelu(NodeContext &c) {
  RankedTensorType xType = c.inputType(0), slopeType = c.inputType(1);
  Type element = xType.getElementType();
  Value slope = c.input(1);
  // PRelu-6 broadcasts a slope of one value per channel (C) along the
  // channel axis, where PRelu-7 aligns it with the last axis.
  if (c.opset < 7 && xType.getRank() > 2 && slopeType.getRank() == 1 &&
      slopeType.getDimSize(0) == xType.getDimSize(1) &&
      slopeType.getDimSize(0) != 1) {
    SmallVector<int64_t> shape(xType.getRank() - 1, 1);
    shape[0] = slopeType.getDimSize(0);
    slope = c.createTyped<ReshapeOp>(slopeType.clone(shape), {slope})[0];
  }
  auto negative =
      c.create1<LessOp>({c.input(0), grad::scalar(c.b, c.loc, 0.0, element)});
  auto scaled = c.create1<MulOp>({c.input(0), slope});
  if (failed(negative) || failed(scaled))
    return failure();
  auto result = c.create1<WhereOp>({*negative, *scaled, c.input(0)});
  if (failed(result))
    return failure();
  if (cast<RankedTensorType>(result->getType()).getShape() !=
      c.inputType(0).getShape())
    return c.emitError() << "slope " << c.inputType(1)
                         << " does not broadcast to x " << c.inputType(0);
  c.setResults(*result);
  return success();
}

/// CastLike: a Cast to the element type of input 1.
LogicalResult importCastLike(NodeContext &c) {
  Type element = c.inputType(1).getElementType();
  if (c.opset >= 19 && c.getInt("saturate", 1) == 0 &&
      isa<Float8E4M3FNType, Float8E5M2Type>(element))
    return c.unsupported("non-saturating casts to FP8");
  c.setResults(
      c.createTyped<CastOp>(c.inputType(0).clone(element), {c.input(0)}));
  return success();
}

/// a <= b as where(a < b, a < b, a == b), and a >= b with >: MPT's own
/// comparisons, false where either side is NaN, as ONNX defines them. On
/// constants (causal masks, shape arithmetic) all three fold.
template <typename StrictOp> LogicalResult importOrEqual(NodeContext &c) {
  auto strict = c.create1<StrictOp>({c.input(0), c.input(1)});
  if (failed(strict))
    return failure();
  auto equal = c.create1<EqualOp>({c.input(0), c.input(1)});
  if (failed(equal))
    return failure();
  return c.produce<WhereOp>({*strict, *strict, *equal});
}

LogicalResult importLeakyRelu(NodeContext &c) {
  return c.produce<LeakyReluOp>(
      {c.input(0)},
      {c.named("alpha", c.b.getF32FloatAttr(c.getFloat("alpha", 0.01f)))});
}

LogicalResult importGelu(NodeContext &c) {
  std::string approximate = c.getString("approximate", "none");
  std::optional<GeluApproximate> a = symbolizeGeluApproximate(approximate);
  if (!a)
    return c.emitError() << "approximate must be 'none' or 'tanh', got '"
                         << approximate << "'";
  return c.produce<GeluOp>(
      {c.input(0)},
      {c.named("approximate", GeluApproximateAttr::get(c.b.getContext(), *a))});
}

LogicalResult buildClip(NodeContext &c, std::optional<double> lo,
                        std::optional<double> hi) {
  SmallVector<NamedAttribute> attrs;
  if (lo)
    attrs.push_back(c.named("min", c.b.getF64FloatAttr(*lo)));
  if (hi)
    attrs.push_back(c.named("max", c.b.getF64FloatAttr(*hi)));
  return c.produce<ClipOp>({c.input(0)}, attrs);
}

/// Clip-6: bounds are attributes.
LogicalResult importClip6(NodeContext &c) {
  std::optional<double> lo, hi;
  if (c.hasAttr("min"))
    lo = c.getFloat("min", 0);
  if (c.hasAttr("max"))
    hi = c.getFloat("max", 0);
  return buildClip(c, lo, hi);
}

/// Clip-11+: bounds are optional constant inputs.
LogicalResult importClip11(NodeContext &c) {
  std::optional<double> lo, hi;
  if (c.hasInput(1)) {
    auto v = c.constantScalar(1, "min");
    if (failed(v))
      return failure();
    lo = *v;
  }
  if (c.hasInput(2)) {
    auto v = c.constantScalar(2, "max");
    if (failed(v))
      return failure();
    hi = *v;
  }
  return buildClip(c, lo, hi);
}

} // namespace

void registerElementwiseImporters(OpImporterTable &t) {
  t.add("LeakyRelu", {6, importLeakyRelu});
  t.add("PRelu", {6, importPRelu});
  t.add("Gelu", {20, importGelu});
  t.add("Clip", {6, importClip6});
  t.add("Clip", {11, importClip11, /*constantInputs=*/0b110});

  t.add("Mean", {6, importMean}); // 6: one shape, which broadcasting covers
  t.add("And", {7, importAnd});
  t.add("Or", {7, importOr});
  t.add("Xor", {7, importXor});
  t.add("CastLike", {15, importCastLike});
  t.add("Reciprocal", {6, importReciprocal});
  t.add("Mod", {10, importMod});
  t.add("IsNaN", {9, importIsNaN});
  t.add("IsInf", {10, importIsInf});
  t.add("LessOrEqual", {12, importOrEqual<LessOp>});
  t.add("GreaterOrEqual", {12, importOrEqual<GreaterOp>});
  t.add("Where",
        {9, [](NodeContext &c) -> LogicalResult {
           return c.produce<WhereOp>({c.input(0), c.input(1), c.input(2)});
         }});
}

} // namespace mpt::onnx_import
