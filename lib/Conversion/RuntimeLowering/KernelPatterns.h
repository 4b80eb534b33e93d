//===- KernelPatterns.h - mpt -> mptrt conversion patterns ------*- C++ -*-===//
//
// The patterns of `mpt-convert-to-mptrt`, one populate function per op
// family (one .cpp each), and the pattern most kernels use: an mpt op whose
// kernel has the same operands, results and attribute types.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_CONVERSION_RUNTIMELOWERING_KERNELPATTERNS_H
#define MPT_LIB_CONVERSION_RUNTIMELOWERING_KERNELPATTERNS_H

#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mpt {

/// The ops whose record names their kernel (MPT_RuntimeKernel) and the
/// unary functions without attributes: generated rows.
void populateRenamedKernelPatterns(mlir::RewritePatternSet &patterns);
/// The ops whose conversion is more than a rename, by family.
void populateElementwiseKernelPatterns(mlir::RewritePatternSet &patterns);
void populateContractionKernelPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationKernelPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementKernelPatterns(mlir::RewritePatternSet &patterns);

/// The attributes of `src` that the kernel op `Dst` declares in ODS, by the
/// destination's names (without `offsets`, which the memory planner sets).
/// An attribute the source leaves unset stays unset: the kernel's default
/// applies. An `mpt` enum attribute becomes the `mptrt` one over the same
/// enum (Dst::kernelAttrFrom). The destination's verifier checks each
/// attribute's type.
template <typename Dst>
llvm::SmallVector<mlir::NamedAttribute> kernelAttrsOf(mlir::Operation *src) {
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  for (llvm::StringRef name : Dst::getAttributeNames()) {
    if (name == "offsets" || name.ends_with("SegmentSizes"))
      continue;
    if (std::optional<mlir::Attribute> value = src->getInherentAttr(name))
      if (*value) {
        mlir::Attribute kernelValue = Dst::kernelAttrFrom(name, *value);
        attrs.emplace_back(mlir::StringAttr::get(src->getContext(), name),
                           kernelValue ? kernelValue : *value);
      }
  }
  return attrs;
}

/// Replaces `op` by the results of `kernel`, the kernel op built for it,
/// which takes on its phase (mpt.backward).
inline void replaceByKernel(mlir::ConversionPatternRewriter &rewriter,
                            mlir::Operation *op, mlir::Operation *kernel) {
  rewriter.replaceOp(op, inheritPhase(op, kernel)->getResults());
}

/// Src becomes Dst with the same operands, result types and attributes.
template <typename Src, typename Dst>
struct KernelPattern : public mlir::OpConversionPattern<Src> {
  using mlir::OpConversionPattern<Src>::OpConversionPattern;
  using OpAdaptor = typename Src::Adaptor;

  mlir::LogicalResult
  matchAndRewrite(Src op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    auto kernel = Dst::create(rewriter, op.getLoc(), op->getResultTypes(),
                              adaptor.getOperands(), kernelAttrsOf<Dst>(op));
    replaceByKernel(rewriter, op, kernel);
    return mlir::success();
  }
};

} // namespace mpt

#endif // MPT_LIB_CONVERSION_RUNTIMELOWERING_KERNELPATTERNS_H
