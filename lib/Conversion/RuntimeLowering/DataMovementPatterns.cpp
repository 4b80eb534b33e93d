//===- DataMovementPatterns.cpp - constants, shapes and copies ------------===//
//
// mpt.range and mpt.shape have no kernel: canonicalization folds them when
// their operands are known, and the conversion reports any that remain.
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

namespace {

struct ConstantPattern : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    replaceByKernel(rewriter, op,
                    rt::ConstantOp::create(rewriter, op.getLoc(), op.getType(),
                                           op.getValue()));
    return success();
  }
};

} // namespace

void mpt::populateDataMovementKernelPatterns(RewritePatternSet &patterns) {
  addKernelPatterns<
      std::pair<IdentityOp, rt::IdentityOp>,
      std::pair<ReshapeOp, rt::ReshapeOp>, std::pair<ExpandOp, rt::ExpandOp>,
      std::pair<TransposeOp, rt::TransposeOp>,
      std::pair<FlattenOp, rt::FlattenOp>, std::pair<SqueezeOp, rt::SqueezeOp>,
      std::pair<UnsqueezeOp, rt::UnsqueezeOp>,
      std::pair<ConcatOp, rt::ConcatOp>, std::pair<SplitOp, rt::SplitOp>,
      std::pair<SliceOp, rt::SliceOp>, std::pair<GatherOp, rt::GatherOp>,
      std::pair<TriluOp, rt::TriluOp>,
      std::pair<ConstantOfShapeOp, rt::ConstantOfShapeOp>>(patterns);
  patterns.add<ConstantPattern>(patterns.getContext());
}
