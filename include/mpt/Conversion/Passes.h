//===- Passes.h - the lowering of mpt IR to a runtime plan ------*- C++ -*-===//
#ifndef MPT_CONVERSION_PASSES_H
#define MPT_CONVERSION_PASSES_H

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mpt {

#define GEN_PASS_DECL
#include "mpt/Conversion/Passes.h.inc"

/// Options of the `--lower-to-runtime` pipeline.
struct LowerToRuntimeOptions
    : public mlir::PassPipelineOptions<LowerToRuntimeOptions> {
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Fold bias adds and activations into gemm kernels"),
      llvm::cl::init(true)};
  Option<bool> channelsLast{
      *this, "channels-last",
      llvm::cl::desc("Store convolution chains' activations channels last "
                     "(NHWC; for GPU targets)"),
      llvm::cl::init(false)};
  Option<std::string> layoutReport{
      *this, "layout-report",
      llvm::cl::desc("With channels-last: add the layout decisions to this "
                     "JSON report (mpt-channels-last's `report`)"),
      llvm::cl::init("")};
  Option<bool> reportPeak{
      *this, "report-peak",
      llvm::cl::desc("Emit a remark with each function's arena peak"),
      llvm::cl::init(false)};
};

/// Canonicalize, select kernels, convert to mptrt, assign bindings and plan
/// memory: the IR that `emitPlan` accepts.
void buildLowerToRuntimePipeline(mlir::OpPassManager &pm,
                                 const LowerToRuntimeOptions &options);

/// Registers the passes and the `lower-to-runtime` pipeline with mlir-opt.
void registerConversionPasses();

#define GEN_PASS_REGISTRATION
#include "mpt/Conversion/Passes.h.inc"

} // namespace mpt

#endif // MPT_CONVERSION_PASSES_H
