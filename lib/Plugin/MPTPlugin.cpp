//===- MPTPlugin.cpp - the mpt dialect and passes as an mlir-opt plugin ---===//
//
// Upstream `mlir-opt` (Debian's mlir-opt-22 links the shared libMLIR, as
// this plugin does) loads the `mpt` dialect and every MPT pass from here:
//
//   mlir-opt --load-dialect-plugin=MPTPlugin.so --load-pass-plugin=MPTPlugin.so
//   \
//            --assign-precision=bf16 model.mlir
//
//===----------------------------------------------------------------------===//
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"
#include "mpt/Pipelines/Pipelines.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MPT", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<mpt::MPTDialect, mpt::rt::MPTRTDialect,
                             mlir::func::FuncDialect>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MPT", LLVM_VERSION_STRING, []() {
            mpt::registerMPTPasses();
            mpt::registerConversionPasses();
            mpt::registerMPTPipelines();
          }};
}
