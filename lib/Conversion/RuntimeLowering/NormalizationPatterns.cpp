//===- NormalizationPatterns.cpp - pooling, normalisation, softmax --------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

/// batch_norm_train and layer_norm: every result is written (the statistics
/// feed autodiff or the running-stat state), so each segment has one value.
template <typename Src, typename Dst>
struct StatisticsKernelPattern : public OpConversionPattern<Src> {
  using OpConversionPattern<Src>::OpConversionPattern;
  using OpAdaptor = typename Src::Adaptor;
  LogicalResult
  matchAndRewrite(Src op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto kernel = Dst::create(rewriter, op.getLoc(), op->getResultTypes(),
                              adaptor.getOperands(), kernelAttrsOf<Dst>(op));
    kernel.getProperties().resultSegmentSizes = {1, 1, 1};
    replaceByKernel(rewriter, op, kernel);
    return success();
  }
};

} // namespace

void mpt::populateNormalizationKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<StatisticsKernelPattern<BatchNormTrainOp, rt::BatchNormTrainOp>,
               StatisticsKernelPattern<LayerNormOp, rt::LayerNormOp>>(
      patterns.getContext());
}
