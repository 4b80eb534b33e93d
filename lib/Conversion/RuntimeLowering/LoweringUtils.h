//===- LoweringUtils.h - shared by the runtime lowering passes --*- C++ -*-===//
#ifndef MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
#define MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"

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

/// The ONNX node name the importer put in `loc` (`loc("node"(...))`), also
/// through the fused locations rewrites leave; empty when there is none.
inline llvm::StringRef onnxNodeName(mlir::Location loc) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (llvm::StringRef name = onnxNodeName(inner); !name.empty())
        return name;
  if (auto callSite = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    return onnxNodeName(callSite.getCallee());
  return {};
}

} // namespace mpt

#endif // MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
