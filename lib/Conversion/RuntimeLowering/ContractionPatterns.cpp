//===- ContractionPatterns.cpp - matmul, gemm and conv to mptrt kernels ---===//
//
// A matmul or gemm with FP8 scales becomes scaled_matmul / scaled_gemm
// (the scales after the operands). A conv with FP8 scales has no kernel
// yet, so it has no pattern: the conversion reports it.
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

bool hasScales(Operation *op) {
  auto policy = dyn_cast<PrecisionPolicyOpInterface>(op);
  return policy && !policy.getFP8Scales().empty();
}

struct MatMulPattern : public OpConversionPattern<MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (hasScales(op)) {
      replaceByKernel(rewriter, op,
                      rt::ScaledMatMulOp::create(
                          rewriter, op.getLoc(), op.getType(), adaptor.getLhs(),
                          adaptor.getRhs(), adaptor.getLhsScale(),
                          adaptor.getRhsScale(),
                          /*offsets=*/nullptr));
      return success();
    }
    replaceByKernel(rewriter, op,
                    rt::MatMulOp::create(rewriter, op.getLoc(), op.getType(),
                                         adaptor.getLhs(), adaptor.getRhs(),
                                         /*offsets=*/nullptr));
    return success();
  }
};

struct GemmPattern : public OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (hasScales(op)) {
      if (op.getActivation() != Activation::none)
        return rewriter.notifyMatchFailure(op, "FP8 scales with an epilogue");
      SmallVector<Value> operands{adaptor.getA(), adaptor.getB()};
      if (adaptor.getC())
        operands.push_back(adaptor.getC());
      operands.append({adaptor.getAScale(), adaptor.getBScale()});
      replaceByKernel(rewriter, op,
                      rt::ScaledGemmOp::create(
                          rewriter, op.getLoc(), op->getResultTypes(), operands,
                          kernelAttrsOf<rt::ScaledGemmOp>(op)));
      return success();
    }
    SmallVector<Value> operands{adaptor.getA(), adaptor.getB()};
    if (adaptor.getC())
      operands.push_back(adaptor.getC());
    replaceByKernel(rewriter, op,
                    rt::GemmOp::create(rewriter, op.getLoc(),
                                       op->getResultTypes(), operands,
                                       kernelAttrsOf<rt::GemmOp>(op)));
    return success();
  }
};

struct ConvPattern : public OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (hasScales(op))
      return rewriter.notifyMatchFailure(op, "FP8 scales");
    SmallVector<Value> operands{adaptor.getInput(), adaptor.getWeight()};
    if (adaptor.getBias())
      operands.push_back(adaptor.getBias());
    replaceByKernel(rewriter, op,
                    rt::ConvOp::create(rewriter, op.getLoc(),
                                       op->getResultTypes(), operands,
                                       kernelAttrsOf<rt::ConvOp>(op)));
    return success();
  }
};

} // namespace

void mpt::populateContractionKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulPattern, GemmPattern, ConvPattern>(patterns.getContext());
}
