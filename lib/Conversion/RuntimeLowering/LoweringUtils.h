//===- LoweringUtils.h - shared by the runtime lowering passes --*- C++ -*-===//
#ifndef MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
#define MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"

namespace mpt {

/// The function body a runtime lowering pass works on: null for a
/// declaration; an error (and `failed` set) for more than one block.
inline mlir::Block *loweringBody(mlir::func::FuncOp func, bool &failed) {
  failed = false;
  if (func.isExternal())
    return nullptr;
  if (!func.getBody().hasOneBlock()) {
    func.emitError("the runtime lowering expects a single-block function");
    failed = true;
    return nullptr;
  }
  return &func.getBody().front();
}

} // namespace mpt

#endif // MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
