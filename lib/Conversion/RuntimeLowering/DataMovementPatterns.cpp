//===- DataMovementPatterns.cpp - constants, shapes and copies ------------===//
//
// mpt.constant becomes mptrt.constant; the other data-movement ops declare
// their kernel in their records (RenamedKernelPatterns.cpp). mpt.range and
// mpt.shape have no kernel: canonicalization folds them when
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
  patterns.add<ConstantPattern>(patterns.getContext());
}
