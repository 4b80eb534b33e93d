//===- TrainingPatterns.cpp - loss scaling and optimizer ops to kernels ---===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

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
                    std::pair<AmaxOp, rt::AmaxOp>,
                    std::pair<LRScheduleOp, rt::LRScheduleOp>,
                    std::pair<UpdateFP8ScaleOp, rt::UpdateFP8ScaleOp>>(
      patterns);
}
