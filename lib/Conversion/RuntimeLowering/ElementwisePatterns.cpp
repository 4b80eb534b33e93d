//===- ElementwisePatterns.cpp - elementwise mpt ops to mptrt kernels -----===//
//
// Unary and binary arithmetic, comparisons, select, casts, quantization and
// dropout.
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
  // The unary kernels without attributes (MPTUnaryFunctions.td).
#define MPTRT_UNARY_PLAIN_KERNEL(Name, kind)                                   \
  patterns.add<KernelPattern<Name##Op, rt::Name##Op>>(patterns.getContext());
#include "mptrt/generated/UnaryKinds.def"
  addKernelPatterns<
      std::pair<LeakyReluOp, rt::LeakyReluOp>, std::pair<ClipOp, rt::ClipOp>,
      std::pair<AddOp, rt::AddOp>, std::pair<SubOp, rt::SubOp>,
      std::pair<MulOp, rt::MulOp>, std::pair<DivOp, rt::DivOp>,
      std::pair<PowOp, rt::PowOp>, std::pair<MaxOp, rt::MaxOp>,
      std::pair<MinOp, rt::MinOp>, std::pair<EqualOp, rt::EqualOp>,
      std::pair<LessOp, rt::LessOp>, std::pair<GreaterOp, rt::GreaterOp>,
      std::pair<WhereOp, rt::WhereOp>, std::pair<QuantizeOp, rt::QuantizeOp>,
      std::pair<GeluOp, rt::GeluOp>>(patterns);
  patterns.add<CastPattern, DropoutPattern>(patterns.getContext());
}
