//===- ShapeRules.h - shape rules shared by op families ---------*- C++ -*-===//
//
// Result-type rules that several ops share (broadcasting, reductions) and the
// constant folder for elementwise binaries. Each op family's inference calls
// these from its ODS class, so the rule is written once.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DIALECT_MPT_IR_SHAPERULES_H
#define MPT_DIALECT_MPT_IR_SHAPERULES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/ValueRange.h"
#include <optional>

namespace mpt {

/// numpy broadcast of two static shapes; std::nullopt if incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Infers the broadcast of all `operands`' shapes. The element type is
/// `elementType` if given, else the first operand's (the second operand's for
/// three operands, as in Where).
llvm::LogicalResult
inferBroadcastResult(std::optional<mlir::Location> loc,
                     mlir::ValueRange operands, mlir::Type elementType,
                     llvm::SmallVectorImpl<mlir::Type> &types);

/// Infers a reduction's result over `axes` (all axes when empty).
llvm::LogicalResult inferReduceResult(std::optional<mlir::Location> loc,
                                      mlir::Type input,
                                      llvm::ArrayRef<int64_t> axes,
                                      bool keepdims,
                                      llvm::SmallVectorImpl<mlir::Type> &types);

/// Folds an elementwise binary op on integer/bool constants (the shape
/// arithmetic exporters emit). Float values are left for the runtime.
mlir::OpFoldResult foldBinaryOp(mlir::Operation *op, mlir::Attribute lhs,
                                mlir::Attribute rhs);

/// Folds Where over a constant condition and constant branches, with
/// broadcasting, element by element (exporters write expand(n, -1, -1)'s
/// shape as Where([false, true, true], 1, shape)). Null when an operand is
/// not a small constant.
mlir::OpFoldResult foldWhereOp(mlir::Operation *op, mlir::Attribute condition,
                               mlir::Attribute x, mlir::Attribute y);

/// Normalises `axis` into [0, rank); std::nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace mpt

#endif // MPT_DIALECT_MPT_IR_SHAPERULES_H
