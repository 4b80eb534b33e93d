//===- mpt-opt.cpp - the MPT optimizer driver -----------------------------===//
//
// mlir-opt with MPT's dialects, passes and pipelines
// (--mpt-training-pipeline, --mpt-inference-pipeline), and the upstream
// passes that they use: everything include/mpt/InitAll.h registers.
//
//===----------------------------------------------------------------------===//
#include "mpt/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mpt::registerAllPasses();
  mlir::DialectRegistry registry;
  mpt::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "MPT optimizer driver\n", registry));
}
