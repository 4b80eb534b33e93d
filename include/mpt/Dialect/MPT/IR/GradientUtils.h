//===- GradientUtils.h - building blocks of gradient rules ------*- C++ -*-===//
//
// Small builders the gradient rules of every op family share: casts,
// scalar constants, summing a broadcast gradient back to an operand's shape
// (in FP32), and broadcasting a reduced gradient back out.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DIALECT_MPT_IR_GRADIENTUTILS_H
#define MPT_DIALECT_MPT_IR_GRADIENTUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mpt/IR/MPTEnums.h"

namespace mpt {
class GradientBuilder;

namespace grad {

mlir::RankedTensorType tensorType(mlir::Value v);

/// `v` converted to `elementType` with an inserted cast (or `v` itself).
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   mlir::Type elementType);

/// A constant of `type` with every element `value` (for i1, value != 0).
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, double value);

/// A 0-d constant of `elementType` holding `value`.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, double value,
                   mlir::Type elementType);

/// Zeros of `type`.
mlir::Value zeros(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type);

/// `v` reshaped (no data movement) to `shape`, keeping its element type.
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    llvm::ArrayRef<int64_t> shape);

/// The gradient of a value that was broadcast from `target`'s shape to
/// `grad`'s: `grad` summed in FP32 over the broadcast axes (an FP32 result),
/// or `grad` itself (reshaped) when nothing was broadcast.
mlir::Value sumToShape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value grad,
                       mlir::RankedTensorType target);

/// Sum in FP32 over `axes` (keepdims = false).
mlir::Value sumF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   llvm::ArrayRef<int64_t> axes);

/// `v` broadcast to `shape` (numpy rules), keeping its element type.
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> shape);

/// The shape a reduction over `axes` keeps when keepdims is set (all axes
/// when empty).
llvm::SmallVector<int64_t> keptShape(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int64_t> axes);

/// `v` with its last two axes swapped.
mlir::Value transposeLastTwo(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value v);

/// The rule of an elementwise unary function `kind` (MPTUnaryFunctions.td):
/// dx = unary_grad(x, dy) {kind, extra attributes}, the derivative at the
/// forward input in FP32. The ops generated from the records use it as
/// their whole rule.
llvm::LogicalResult
unaryGradRule(GradientBuilder &gb, UnaryGradKind kind,
              llvm::ArrayRef<mlir::NamedAttribute> extra = {});

} // namespace grad
} // namespace mpt

#endif // MPT_DIALECT_MPT_IR_GRADIENTUTILS_H
