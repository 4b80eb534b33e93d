//===- ReductionPatterns.cpp - reductions, losses and their gradients ----===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

void mpt::populateReductionKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<
      std::pair<ReduceSumOp, rt::ReduceSumOp>,
      std::pair<ReduceMeanOp, rt::ReduceMeanOp>,
      std::pair<ReduceMaxOp, rt::ReduceMaxOp>,
      std::pair<ReduceL2Op, rt::ReduceL2Op>,
      std::pair<SoftmaxCrossEntropyLossOp, rt::SoftmaxCrossEntropyLossOp>,
      std::pair<NegativeLogLikelihoodLossOp, rt::NegativeLogLikelihoodLossOp>,
      std::pair<SoftmaxCrossEntropyLossGradOp,
                rt::SoftmaxCrossEntropyLossGradOp>,
      std::pair<NegativeLogLikelihoodLossGradOp,
                rt::NegativeLogLikelihoodLossGradOp>>(patterns);
}
