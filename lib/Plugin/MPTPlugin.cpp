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
#include "mpt/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MPT", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mpt::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  // mlir-opt has registered the upstream passes already.
  return {MLIR_PLUGIN_API_VERSION, "MPT", LLVM_VERSION_STRING,
          []() { mpt::registerAllMPTPasses(); }};
}
