//===- MPTDialect.h - mpt dialect -------------------------------*- C++ -*-===//
#ifndef MPT_DIALECT_MPT_IR_MPTDIALECT_H
#define MPT_DIALECT_MPT_IR_MPTDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <type_traits>

#include "mpt/Dialect/MPT/IR/MPTOpsDialect.h.inc"

namespace mpt {
/// Argument attribute naming an ONNX graph input.
inline constexpr llvm::StringLiteral kInputAttrName = "mpt.input";
/// Argument attribute naming a trainable parameter (an FP32 master value).
inline constexpr llvm::StringLiteral kParamAttrName = "mpt.param";
/// Result attribute naming an ONNX graph output.
inline constexpr llvm::StringLiteral kOutputAttrName = "mpt.output";
/// Result attribute of an output (beside kOutputAttrName): its role in the
/// train-step ABI, an OutputRoleAttr (`#mpt.output_role<Loss>`;
/// MPTOutputRole.td). --build-training-step sets it; the plan records it.
/// An output without one has none.
inline constexpr llvm::StringLiteral kOutputRoleAttrName = "mpt.output_role";
/// Argument attribute holding a parameter's initial value: an FP32 elements
/// attribute (the importer writes a `dense_resource` blob) of the argument's
/// type. The runtime lowering stores it in the plan.
inline constexpr llvm::StringLiteral kInitialValueAttrName =
    "mpt.initial_value";
/// Result attribute of a training step: the result is the new value of the
/// parameter it names, which the runtime lowering writes in place.
inline constexpr llvm::StringLiteral kUpdatesAttrName = "mpt.updates";
/// Argument attribute naming the graph input that carries an FP8 scale.
inline constexpr llvm::StringLiteral kFP8ScaleAttrName = "mpt.fp8_scale";
/// Op attribute overriding one op's precision: "f32" or "low".
inline constexpr llvm::StringLiteral kPrecisionAttrName = "mpt.precision";

/// Op attribute (a unit attribute) marking an op of the backward pass. The
/// autodiff engine sets it on every op it builds; a rewrite that replaces a
/// marked op passes it on to what it builds (inheritPhase); the plan
/// emitter records it as the kernel's phase. It is IR, not a location, so
/// printing without debug information or stripping it keeps the phase.
/// mpt and mptrt ops carry it alike.
inline constexpr llvm::StringLiteral kBackwardAttrName = "mpt.backward";

/// Whether `op` belongs to the backward pass.
inline bool isBackward(mlir::Operation *op) {
  return op->hasAttr(kBackwardAttrName);
}

/// Marks `op` as belonging to the backward pass.
inline void markBackward(mlir::Operation *op) {
  op->setAttr(kBackwardAttrName, mlir::UnitAttr::get(op->getContext()));
}

/// Returns `to`, an op a rewrite built in place of `from`, marked backward
/// when `from` is.
template <typename OpT> OpT inheritPhase(mlir::Operation *from, OpT to) {
  mlir::Operation *built;
  if constexpr (std::is_pointer_v<OpT>)
    built = to;
  else
    built = to.getOperation();
  if (isBackward(from))
    markBackward(built);
  return to;
}
/// The name of the first NameLoc in `loc`: the ONNX node the importer named
/// (`loc("node"(...))`), or a name the compiler gave (like "train_step"),
/// through the fused and call-site locations rewrites leave; empty when
/// there is none. Diagnostics, the memory report and the plan's kernel
/// origins name ops by it.
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

#endif // MPT_DIALECT_MPT_IR_MPTDIALECT_H
