//===- ConvertToMPTRT.cpp - mpt ops to the mptrt execution dialect --------===//
//
// A dialect conversion: every mpt op becomes its runtime kernel (or an
// mptrt.constant). An mpt op without a kernel is an error at that op, naming
// the ONNX node it came from. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"

namespace mpt {
#define GEN_PASS_DEF_MPTCONVERTTOMPTRT
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;

namespace {

/// Why an mpt op has no kernel, for the cases we know.
std::string noKernelReason(Operation *op) {
  if (isa<RangeOp, ShapeOp>(op))
    return "it must fold to a constant before lowering, which needs constant "
           "operands and static shapes";
  if (auto policy = dyn_cast<PrecisionPolicyOpInterface>(op);
      policy && !policy.getFP8Scales().empty())
    return "it has FP8 scale operands, and the runtime has no scaled "
           "convolution kernel yet (scaled_matmul and scaled_gemm exist)";
  if (auto dropout = dyn_cast<DropoutOp>(op);
      dropout && dropout.getTraining() && dropout.getRng().empty())
    return "a training-mode dropout needs the (seed, step) operands that "
           "--build-training-step adds";
  return "no conversion pattern produces an mptrt kernel for it";
}

struct ConvertToMPTRTPass
    : public mpt::impl::MPTConvertToMPTRTBase<ConvertToMPTRTPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateRenamedKernelPatterns(set);
    populateElementwiseKernelPatterns(set);
    populateContractionKernelPatterns(set);
    populateNormalizationKernelPatterns(set);
    populateDataMovementKernelPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  // A module pass that converts its functions one after another: the
  // analysis conversion clones the function's parent (the module), which
  // must not race with another function's conversion (as it did when this
  // ran per function on the pass manager's threads: a rare crash in
  // Operation::clone once plans had two entry points).
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(convert(func)))
        return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp func) {
    ConversionTarget target(getContext());
    target.addIllegalDialect<MPTDialect>();
    target.addLegalDialect<rt::MPTRTDialect, func::FuncDialect>();

    // Find every op no pattern can convert first, so that each gets its own
    // diagnostic, at the op, naming its ONNX node.
    // Folding is canonicalization's job, before kernel selection: the
    // conversion maps op for op, so the kernels are the ops that were there.
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    DenseSet<Operation *> legalizable;
    ConversionConfig analysis = config;
    analysis.legalizableOps = &legalizable;
    if (failed(applyAnalysisConversion(func, target, patterns, analysis)))
      return failure();
    bool missing = false;
    func.walk([&](Operation *op) {
      if (!isa<MPTDialect>(op->getDialect()) || legalizable.contains(op))
        return;
      missing = true;
      InFlightDiagnostic diag = op->emitOpError("has no runtime kernel");
      if (StringRef node = onnxNodeName(op->getLoc()); !node.empty())
        diag << " (ONNX node '" << node << "')";
      diag << ": " << noKernelReason(op);
    });
    if (missing)
      return failure();
    return applyFullConversion(func, target, patterns, config);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
