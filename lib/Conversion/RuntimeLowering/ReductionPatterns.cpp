//===- ReductionPatterns.cpp - reductions, losses and their gradients ----===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {
/// Losses and their gradients: `reduction` becomes the enum.
template <typename Src, typename Dst>
struct LossKernelPattern : public OpConversionPattern<Src> {
  using OpConversionPattern<Src>::OpConversionPattern;
  using OpAdaptor = typename Src::Adaptor;
  LogicalResult
  matchAndRewrite(Src op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto attrs = kernelAttrsOf<Dst>(op);
    if (failed(convertEnumAttr<rt::ReductionAttr>(op, attrs, "reduction")))
      return rewriter.notifyMatchFailure(op, "unknown reduction");
    replaceByKernel(rewriter, op,
                    Dst::create(rewriter, op.getLoc(), op->getResultTypes(),
                                adaptor.getOperands(), attrs));
    return success();
  }
};
} // namespace

void mpt::populateReductionKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<std::pair<ReduceSumOp, rt::ReduceSumOp>,
                    std::pair<ReduceMeanOp, rt::ReduceMeanOp>,
                    std::pair<ReduceMaxOp, rt::ReduceMaxOp>,
                    std::pair<ReduceL2Op, rt::ReduceL2Op>>(patterns);
  patterns.add<LossKernelPattern<SoftmaxCrossEntropyLossOp,
                                 rt::SoftmaxCrossEntropyLossOp>,
               LossKernelPattern<NegativeLogLikelihoodLossOp,
                                 rt::NegativeLogLikelihoodLossOp>,
               LossKernelPattern<SoftmaxCrossEntropyLossGradOp,
                                 rt::SoftmaxCrossEntropyLossGradOp>,
               LossKernelPattern<NegativeLogLikelihoodLossGradOp,
                                 rt::NegativeLogLikelihoodLossGradOp>>(
      patterns.getContext());
}
