//===- ContractionGradients.cpp - gradient rules of contractions ----------===//
//
// The gradients of a contraction are contractions in the forward op's
// operand type with FP32 accumulation: a bf16 matmul's dA = dY B^T and
// dB = A^T dY are bf16 matmuls. Batch-broadcast operands get their
// gradients summed back in FP32.
//
// An FP8-scaled matmul or gemm (E4M3 operands qa = quantize(a, sa), qb =
// quantize(b, sb)) computes y = qa qb / (sa sb). Its gradients are FP8
// contractions too: dY is quantized into f8E5M2 with its own scale sg (the
// training step keeps it, GradientBuilder::quantizedResultGrad), and
// dA = qg qb^T / (sg sb) reuses the forward's E4M3 copy of b, as
// Transformer Engine's HYBRID recipe does. The operand is qa, so its
// gradient is dA / sa; the quantize's straight-through rule multiplies sa
// back. FP8-scaled convolutions have no rule yet.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

/// An FP8-scaled contraction's result, restated as FP32: the op rounds its
/// dequantised FP32 accumulator once into it.
Value asF32(Value scaledResult) {
  scaledResult.setType(tensorType(scaledResult)
                           .clone(Float32Type::get(scaledResult.getContext())));
  return scaledResult;
}

/// The gradient of the quantized operand `x * scale` from the gradient
/// `grad` of the value it stands for: `grad / scale`, in FP32.
Value perScale(OpBuilder &b, Location loc, Value grad, Value scale) {
  return DivOp::create(b, loc, grad, scale).getResult();
}

/// The gradient of result 0 for the backward contractions: in `elementType`,
/// or quantized into f8E5M2 with its scale (`dyScale`) when `fp8`.
FailureOr<Value> contractionResultGrad(GradientBuilder &gb, bool fp8,
                                       Type elementType, Value &dyScale) {
  if (!fp8)
    return gb.resultGrad(0, elementType);
  auto q =
      gb.quantizedResultGrad(0, Float8E5M2Type::get(gb.op()->getContext()));
  if (failed(q))
    return failure();
  dyScale = q->second;
  return q->first;
}

/// The convolution attributes a conv's gradient kernels share.
SmallVector<NamedAttribute> convAttrs(ConvOp op) {
  Builder b(op.getContext());
  return {b.getNamedAttr("strides", op.getStridesAttr()),
          b.getNamedAttr("pads", op.getPadsAttr()),
          b.getNamedAttr("dilations", op.getDilationsAttr()),
          b.getNamedAttr("group", op.getGroupAttr())};
}

} // namespace

LogicalResult MatMulOp::buildGradient(GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType aType = tensorType(getLhs()), bType = tensorType(getRhs());
  const bool fp8 = static_cast<bool>(getLhsScale());
  Value dyScale;
  FailureOr<Value> dyOr =
      contractionResultGrad(gb, fp8, aType.getElementType(), dyScale);
  if (failed(dyOr))
    return failure();
  Value dy = *dyOr;
  if (!dy)
    return success();
  // x y, or x y / (sx sy) in FP32 when FP8-scaled.
  auto contract = [&](Value x, Value y, Value sx, Value sy) -> Value {
    if (!fp8)
      return MatMulOp::create(b, loc, x, y).getResult();
    return asF32(MatMulOp::create(b, loc, x, y, sx, sy).getResult());
  };
  // Work on the 2-D-or-more forms: a 1-D lhs is [1, K], a 1-D rhs [K, 1].
  Value a = getLhs(), bv = getRhs();
  SmallVector<int64_t> dyShape(tensorType(dy).getShape());
  if (aType.getRank() == 1) {
    a = reshape(b, loc, a, {1, aType.getDimSize(0)});
    dyShape.insert(dyShape.end() - (bType.getRank() == 1 ? 0 : 1), 1);
  }
  if (bType.getRank() == 1) {
    bv = reshape(b, loc, bv, {bType.getDimSize(0), 1});
    dyShape.push_back(1);
  }
  dy = reshape(b, loc, dy, dyShape);
  if (gb.needsGrad(0)) {
    Value da =
        contract(dy, transposeLastTwo(b, loc, bv), dyScale, getRhsScale());
    Value sum = reshape(b, loc, sumToShape(b, loc, da, tensorType(a)),
                        aType.getShape());
    gb.addOperandGrad(0, fp8 ? perScale(b, loc, sum, getLhsScale()) : sum);
  }
  if (gb.needsGrad(1)) {
    Value db =
        contract(transposeLastTwo(b, loc, a), dy, getLhsScale(), dyScale);
    Value sum = reshape(b, loc, sumToShape(b, loc, db, tensorType(bv)),
                        bType.getShape());
    gb.addOperandGrad(1, fp8 ? perScale(b, loc, sum, getRhsScale()) : sum);
  }
  return success();
}

LogicalResult GemmOp::buildGradient(GradientBuilder &gb) {
  if (getActivation() != Activation::none)
    return emitOpError("has a fused '")
           << stringifyActivation(getActivation())
           << "' epilogue; build the training step before the runtime lowering "
              "fuses epilogues";
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType aType = tensorType(getA()), bType = tensorType(getB());
  const bool fp8 = static_cast<bool>(getAScale());
  Value dyScale;
  FailureOr<Value> dyOr =
      contractionResultGrad(gb, fp8, aType.getElementType(), dyScale);
  if (failed(dyOr))
    return failure();
  Value dy = *dyOr;
  APFloat alpha = getAlpha(), one(1.0f);
  bool ta = getTransA(), tb = getTransB();
  Value sa = getAScale(), sb = getBScale();
  // alpha op(x) op(y), or alpha op(x) op(y) / (sx sy) in FP32 when FP8-scaled.
  auto gemm = [&](RankedTensorType type, Value x, Value y, bool tx, bool ty,
                  Value sx, Value sy) -> Value {
    if (!fp8)
      return GemmOp::create(b, loc, type, x, y, Value(), alpha, one, tx, ty,
                            Activation::none)
          .getResult();
    return GemmOp::create(b, loc, type.clone(b.getF32Type()), x, y, Value(),
                          alpha, one, tx, ty, Activation::none, sx, sy)
        .getResult();
  };
  // Y = alpha op(A) op(B) + beta C.
  if (dy && gb.needsGrad(0)) {
    Value da =
        ta ? gemm(aType, getB(), dy, tb, true, sb, dyScale) // A^T = op(B) dY^T
           : gemm(aType, dy, getB(), false, !tb, dyScale, sb); // A = dY op(B)^T
    gb.addOperandGrad(0, fp8 ? perScale(b, loc, da, sa) : da);
  }
  if (dy && gb.needsGrad(1)) {
    Value db =
        tb ? gemm(bType, dy, getA(), true, ta, dyScale, sa) // B^T = dY^T op(A)
           : gemm(bType, getA(), dy, !ta, false, sa, dyScale); // B = op(A)^T dY
    gb.addOperandGrad(1, fp8 ? perScale(b, loc, db, sb) : db);
  }
  if (getC() && gb.needsGrad(2)) {
    Value dyWide = gb.resultGrad(0, b.getF32Type());
    Value scaled = MulOp::create(b, loc, dyWide,
                                 scalar(b, loc, getBeta().convertToDouble(),
                                        b.getF32Type()))
                       .getResult();
    gb.addOperandGrad(2, sumToShape(b, loc, scaled, tensorType(getC())));
  }
  return success();
}

LogicalResult ConvOp::buildGradient(GradientBuilder &gb) {
  if (!getFP8Scales().empty())
    return emitOpError(
        "has FP8 scales; gradients through FP8-scaled convolutions are not "
        "supported yet");
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType xType = tensorType(getInput()),
                   wType = tensorType(getWeight());
  Value dy = gb.resultGrad(0, xType.getElementType());
  SmallVector<NamedAttribute> attrs = convAttrs(*this);
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, ConvGradInputOp::create(b, loc, TypeRange{xType},
                                                 ValueRange{dy, getWeight()},
                                                 attrs)
                             .getResult());
  if (gb.needsGrad(1))
    gb.addOperandGrad(1, ConvGradWeightOp::create(b, loc, TypeRange{wType},
                                                  ValueRange{getInput(), dy},
                                                  attrs)
                             .getResult());
  if (getBias() && gb.needsGrad(2)) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < xType.getRank(); ++i)
      axes.push_back(i);
    gb.addOperandGrad(2,
                      sumF32(b, loc, gb.resultGrad(0, b.getF32Type()), axes));
  }
  return success();
}
