//===- TrainingPatterns.cpp - loss scaling and optimizer ops to kernels ---===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

struct LRSchedulePattern : public OpConversionPattern<LRScheduleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LRScheduleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto attrs = kernelAttrsOf<rt::LRScheduleOp>(op);
    if (failed(convertEnumAttr<rt::LrScheduleAttr>(op, attrs, "schedule")))
      return rewriter.notifyMatchFailure(op, "unknown schedule");
    replaceByKernel(rewriter, op,
                    rt::LRScheduleOp::create(rewriter, op.getLoc(),
                                             op->getResultTypes(),
                                             adaptor.getOperands(), attrs));
    return success();
  }
};

struct UpdateFP8ScalePattern : public OpConversionPattern<UpdateFP8ScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UpdateFP8ScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto attrs = kernelAttrsOf<rt::UpdateFP8ScaleOp>(op);
    if (failed(convertEnumAttr<rt::AmaxComputeAlgoAttr>(op, attrs,
                                                        "amax_compute_algo")))
      return rewriter.notifyMatchFailure(op, "unknown amax_compute_algo");
    replaceByKernel(rewriter, op,
                    rt::UpdateFP8ScaleOp::create(rewriter, op.getLoc(),
                                                 op->getResultTypes(),
                                                 adaptor.getOperands(), attrs));
    return success();
  }
};

} // namespace

void mpt::populateTrainingKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<std::pair<ScaleLossOp, rt::ScaleLossOp>,
                    std::pair<UnscaleOp, rt::UnscaleOp>,
                    std::pair<AllFiniteOp, rt::AllFiniteOp>,
                    std::pair<GlobalNormOp, rt::GlobalNormOp>,
                    std::pair<ClipByNormOp, rt::ClipByNormOp>,
                    std::pair<SGDUpdateOp, rt::SGDUpdateOp>,
                    std::pair<AdamWUpdateOp, rt::AdamWUpdateOp>,
                    std::pair<UpdateLossScaleOp, rt::UpdateLossScaleOp>,
                    std::pair<AdvanceStepOp, rt::AdvanceStepOp>,
                    std::pair<AmaxOp, rt::AmaxOp>>(patterns);
  patterns.add<LRSchedulePattern, UpdateFP8ScalePattern>(patterns.getContext());
}
