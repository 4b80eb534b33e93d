//===- InitAll.h - everything MPT registers, in one place -------*- C++ -*-===//
//
// Every MPT tool, the C API and the mlir-opt plugin register MPT's dialects,
// passes and pipelines through these functions and no other list, as MLIR's
// InitAllDialects.h and InitAllPasses.h do upstream; the translations are
// mpt/Driver/Translations.h's. Header only: an embedder links the libraries
// of what it calls.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_INITALL_H
#define MPT_INITALL_H

#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"
#include "mpt/Pipelines/Pipelines.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mpt {

/// The dialects of MPT's IR: mpt (the model), mptrt (the lowered kernels)
/// and func.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<MPTDialect, rt::MPTRTDialect, mlir::func::FuncDialect>();
}

/// MPT's own passes and pipelines, under their command-line names (what
/// the mlir-opt plugin adds to upstream mlir-opt's).
inline void registerAllMPTPasses() {
  registerMPTPasses();
  registerConversionPasses();
  registerMPTPipelines();
}

/// MPT's passes and pipelines, and the upstream passes that they run
/// (canonicalize, cse, ...).
inline void registerAllPasses() {
  mlir::registerTransformsPasses();
  registerAllMPTPasses();
}

} // namespace mpt

#endif // MPT_INITALL_H
