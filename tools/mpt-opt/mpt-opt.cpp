//===- mpt-opt.cpp - the MPT optimizer driver -----------------------------===//
//
// mlir-opt with the mpt dialect, the MPT passes and pipelines
// (--mpt-training-pipeline, --mpt-inference-pipeline), and the upstream
// dialects and passes that they use.
//
//===----------------------------------------------------------------------===//
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"
#include "mpt/Pipelines/Pipelines.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mpt::registerConversionPasses();
  mpt::registerMPTPasses();
  mpt::registerMPTPipelines();
  mlir::DialectRegistry registry;
  registry.insert<mpt::MPTDialect, mpt::rt::MPTRTDialect,
                  mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "MPT optimizer driver\n", registry));
}
