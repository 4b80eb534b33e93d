//===- BackwardPatterns.cpp - the backward ops to mptrt kernels -----------===//
//
// The loss gradients are with the losses (ReductionPatterns.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

struct UnaryGradPattern : public OpConversionPattern<UnaryGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnaryGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto attrs = kernelAttrsOf<rt::UnaryGradOp>(op);
    if (failed(convertEnumAttr<rt::UnaryGradKindAttr>(op, attrs, "kind")))
      return rewriter.notifyMatchFailure(op, "unknown unary_grad kind");
    replaceByKernel(rewriter, op,
                    rt::UnaryGradOp::create(rewriter, op.getLoc(),
                                            op->getResultTypes(),
                                            adaptor.getOperands(), attrs));
    return success();
  }
};

} // namespace

void mpt::populateBackwardKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<std::pair<SoftmaxGradOp, rt::SoftmaxGradOp>,
                    std::pair<LayerNormGradOp, rt::LayerNormGradOp>,
                    std::pair<GatherGradOp, rt::GatherGradOp>,
                    std::pair<SliceGradOp, rt::SliceGradOp>,
                    std::pair<MaxPoolGradOp, rt::MaxPoolGradOp>,
                    std::pair<AveragePoolGradOp, rt::AveragePoolGradOp>,
                    std::pair<ConvGradInputOp, rt::ConvGradInputOp>,
                    std::pair<ConvGradWeightOp, rt::ConvGradWeightOp>,
                    std::pair<BatchNormGradOp, rt::BatchNormGradOp>>(patterns);
  patterns.add<UnaryGradPattern>(patterns.getContext());
}
