//===- BackwardPatterns.cpp - the backward ops to mptrt kernels -----------===//
//
// The loss gradients are with the losses (ReductionPatterns.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

void mpt::populateBackwardKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<std::pair<SoftmaxGradOp, rt::SoftmaxGradOp>,
                    std::pair<LayerNormGradOp, rt::LayerNormGradOp>,
                    std::pair<GatherGradOp, rt::GatherGradOp>,
                    std::pair<SliceGradOp, rt::SliceGradOp>,
                    std::pair<MaxPoolGradOp, rt::MaxPoolGradOp>,
                    std::pair<AveragePoolGradOp, rt::AveragePoolGradOp>,
                    std::pair<ConvGradInputOp, rt::ConvGradInputOp>,
                    std::pair<ConvGradWeightOp, rt::ConvGradWeightOp>,
                    std::pair<BatchNormGradOp, rt::BatchNormGradOp>,
                    std::pair<UnaryGradOp, rt::UnaryGradOp>>(patterns);
}
