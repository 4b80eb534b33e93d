//===- ContractionGradients.cpp - gradient rules of contractions ----------===//
//
// The gradients of a contraction are contractions in the forward op's
// operand type with FP32 accumulation: a bf16 matmul's dA = dY B^T and
// dB = A^T dY are bf16 matmuls. Batch-broadcast operands get their
// gradients summed back in FP32. A gradient through FP8 scales is not
// derived (the rule fails at the op).
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::grad;

namespace {

LogicalResult rejectFP8(GradientBuilder &gb) {
  auto policy = cast<PrecisionPolicyOpInterface>(gb.op());
  if (!policy.getFP8Scales().empty())
    return gb.op()->emitOpError(
        "has FP8 scales; gradients through FP8-scaled contractions are not supported");
  return success();
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
  if (failed(rejectFP8(gb)))
    return failure();
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType aType = tensorType(getLhs()), bType = tensorType(getRhs());
  Value dy = gb.resultGrad(0, aType.getElementType());
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
    Value da = MatMulOp::create(b, loc, dy, transposeLastTwo(b, loc, bv)).getResult();
    Value sum = sumToShape(b, loc, da, tensorType(a));
    gb.addOperandGrad(0, reshape(b, loc, sum, aType.getShape()));
  }
  if (gb.needsGrad(1)) {
    Value db = MatMulOp::create(b, loc, transposeLastTwo(b, loc, a), dy).getResult();
    Value sum = sumToShape(b, loc, db, tensorType(bv));
    gb.addOperandGrad(1, reshape(b, loc, sum, bType.getShape()));
  }
  return success();
}

LogicalResult GemmOp::buildGradient(GradientBuilder &gb) {
  if (failed(rejectFP8(gb)))
    return failure();
  if (getActivation() != "none")
    return emitOpError("has a fused '")
           << getActivation()
           << "' epilogue; build the training step before the runtime lowering fuses epilogues";
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType aType = tensorType(getA()), bType = tensorType(getB());
  Value dy = gb.resultGrad(0, aType.getElementType());
  APFloat alpha = getAlpha(), one(1.0f);
  bool ta = getTransA(), tb = getTransB();
  auto gemm = [&](RankedTensorType type, Value x, Value y, bool tx, bool ty) {
    return GemmOp::create(b, loc, type, x, y, Value(), alpha, one, tx, ty, "none").getResult();
  };
  // Y = alpha op(A) op(B) + beta C.
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, ta ? gemm(aType, getB(), dy, tb, true)      // A^T = op(B) dY^T
                            : gemm(aType, dy, getB(), false, !tb));  // A = dY op(B)^T
  if (gb.needsGrad(1))
    gb.addOperandGrad(1, tb ? gemm(bType, dy, getA(), true, ta)      // B^T = dY^T op(A)
                            : gemm(bType, getA(), dy, !ta, false));  // B = op(A)^T dY
  if (getC() && gb.needsGrad(2)) {
    Value dyWide = gb.resultGrad(0, b.getF32Type());
    Value scaled = MulOp::create(b, loc, dyWide,
                                 scalar(b, loc, getBeta().convertToDouble(), b.getF32Type()))
                       .getResult();
    gb.addOperandGrad(2, sumToShape(b, loc, scaled, tensorType(getC())));
  }
  return success();
}

LogicalResult ConvOp::buildGradient(GradientBuilder &gb) {
  if (failed(rejectFP8(gb)))
    return failure();
  OpBuilder &b = gb.builder();
  Location loc = gb.loc();
  RankedTensorType xType = tensorType(getInput()), wType = tensorType(getWeight());
  Value dy = gb.resultGrad(0, xType.getElementType());
  SmallVector<NamedAttribute> attrs = convAttrs(*this);
  if (gb.needsGrad(0))
    gb.addOperandGrad(0, ConvGradInputOp::create(b, loc, TypeRange{xType},
                                                 ValueRange{dy, getWeight()}, attrs)
                             .getResult());
  if (gb.needsGrad(1))
    gb.addOperandGrad(1, ConvGradWeightOp::create(b, loc, TypeRange{wType},
                                                  ValueRange{getInput(), dy}, attrs)
                             .getResult());
  if (getBias() && gb.needsGrad(2)) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < xType.getRank(); ++i)
      axes.push_back(i);
    gb.addOperandGrad(2, sumF32(b, loc, gb.resultGrad(0, b.getF32Type()), axes));
  }
  return success();
}
