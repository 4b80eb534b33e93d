//===- Pipeline.cpp - the --lower-to-runtime pipeline ---------------------===//
#include "mpt/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mpt::buildLowerToRuntimePipeline(OpPassManager &pm,
                                      const LowerToRuntimeOptions &options) {
  // Fold what the importer left (shape chains, constant subgraphs) so that
  // no op without a runtime kernel survives, and merge duplicates.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  if (options.fuseEpilogues) {
    funcPm.addPass(createMPTFuseEpilogues());
    funcPm.addPass(createCanonicalizerPass());
  }
  // The conversion runs on the module, one function after another
  // (ConvertToMPTRT.cpp says why).
  pm.addPass(createMPTConvertToMPTRT());
  if (options.fuseEpilogues) {
    OpPassManager &fusePm = pm.nest<func::FuncOp>();
    fusePm.addPass(createMPTFuseBatchNorm());
    fusePm.addPass(createMPTFuseConvRelu());
  }
  if (options.channelsLast) {
    MPTChannelsLastOptions layout;
    layout.report = options.layoutReport;
    pm.addPass(createMPTChannelsLast(layout));
  }
  OpPassManager &kernelPm = pm.nest<func::FuncOp>();
  kernelPm.addPass(createMPTAssignBindings());
  MPTPlanMemoryOptions memory;
  memory.reportPeak = options.reportPeak;
  kernelPm.addPass(createMPTPlanMemory(memory));
}

void mpt::registerConversionPasses() {
  registerMPTConversionPasses();
  PassPipelineRegistration<LowerToRuntimeOptions>(
      "lower-to-runtime",
      "Lower mpt IR to the mptrt execution dialect the plan emitter accepts: "
      "canonicalize, select kernels (gemm epilogues), convert to mptrt, fuse "
      "batch norm and conv epilogues, "
      "assign bindings, plan the arena",
      buildLowerToRuntimePipeline);
}
