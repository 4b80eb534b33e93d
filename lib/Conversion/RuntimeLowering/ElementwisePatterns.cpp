//===- ElementwisePatterns.cpp - elementwise mpt ops to mptrt kernels -----===//
//
// The elementwise ops whose conversion is more than a rename: casts (FP8
// saturation) and dropout (its rng operands). The others declare their
// kernel in their records (RenamedKernelPatterns.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

/// Conversions into FP8 saturate (mpt.cast's semantics); the kernel is told.
struct CastPattern : public OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto kernel = rt::CastOp::create(rewriter, op.getLoc(), op.getType(),
                                     adaptor.getInput(), /*saturate=*/nullptr,
                                     /*offsets=*/nullptr);
    if (isa<Float8E4M3FNType, Float8E5M2Type>(op.getType().getElementType()))
      kernel.setSaturateAttr(rewriter.getBoolAttr(true));
    replaceByKernel(rewriter, op, kernel);
    return success();
  }
};

/// Training-mode dropout needs its (seed, step) operands, which
/// --build-training-step adds; without them there is no kernel.
struct DropoutPattern : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getTraining() && op.getRng().empty())
      return rewriter.notifyMatchFailure(op, "training dropout without rng");
    replaceByKernel(rewriter, op,
                    rt::DropoutOp::create(rewriter, op.getLoc(),
                                          op->getResultTypes(),
                                          adaptor.getOperands(),
                                          kernelAttrsOf<rt::DropoutOp>(op)));
    return success();
  }
};

} // namespace

void mpt::populateElementwiseKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<CastPattern, DropoutPattern>(patterns.getContext());
}
