//===- MPTDialect.h - mpt dialect -------------------------------*- C++ -*-===//
#ifndef MPT_DIALECT_MPT_IR_MPTDIALECT_H
#define MPT_DIALECT_MPT_IR_MPTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "mpt/Dialect/MPT/IR/MPTOpsDialect.h.inc"

namespace mpt {
/// Argument attribute naming an ONNX graph input.
inline constexpr llvm::StringLiteral kInputAttrName = "mpt.input";
/// Argument attribute naming a trainable parameter (an FP32 master value).
inline constexpr llvm::StringLiteral kParamAttrName = "mpt.param";
/// Result attribute naming an ONNX graph output.
inline constexpr llvm::StringLiteral kOutputAttrName = "mpt.output";
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
} // namespace mpt

#endif // MPT_DIALECT_MPT_IR_MPTDIALECT_H
