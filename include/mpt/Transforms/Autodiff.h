//===- Autodiff.h - reverse-mode gradients of mpt functions -----*- C++ -*-===//
//
// The autodiff engine: it walks a function body backwards from a scalar
// loss and calls the gradient rule (GradientOpInterface) of every op on a
// path from a value of `wrt` to the loss. Gradients of a value used more
// than once are summed in FP32. `--build-training-step` uses
// `buildGradients`; `appendGradients` is the small form that tests use.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TRANSFORMS_AUTODIFF_H
#define MPT_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mpt {

/// The scales of FP8 gradients: a backward FP8 contraction quantizes the
/// gradient of its forward result into f8E5M2 (GradientBuilder::
/// quantizedResultGrad), and the engine asks this for the scale. The
/// training step implements it with per-tensor state (delayed or current
/// scaling).
class FP8GradientScales {
public:
  virtual ~FP8GradientScales() = default;
  /// The scale to quantize `grad` (the FP32 gradient of the forward value
  /// `forward`) into `fp8Type` with, built at `b`'s insertion point. Called
  /// once per (forward value, type).
  virtual mlir::FailureOr<mlir::Value> scaleFor(mlir::OpBuilder &b,
                                                mlir::Value forward,
                                                mlir::Value grad,
                                                mlir::Type fp8Type) = 0;
};

/// Builds, at `b`'s insertion point (after every op of the loss's block),
/// the gradient of the 0-d float `loss` with respect to each value of `wrt`,
/// seeded with `seed` (a 0-d value of the loss's type; 1 when null). Returns
/// one value per `wrt` entry in FP32 with its shape, or null where no path
/// reaches the loss. Fails, with a diagnostic at the op (whose location is
/// its ONNX node), when an op on such a path has no gradient rule or its
/// rule fails. `fp8` gives the scales of FP8 gradients; without it, a rule
/// that needs one (an FP8-scaled contraction's) fails. Every op it builds
/// is marked backward (mpt::markBackward) and has the location of the
/// forward op whose rule built it.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildGradients(mlir::OpBuilder &b, mlir::Value loss, mlir::ValueRange wrt,
               mlir::Value seed = {}, FP8GradientScales *fp8 = nullptr);

/// Appends to `func` one result per entry of `wrt`: the gradient of its
/// result 0 (a 0-d float tensor) with respect to that argument, in the
/// argument's type (zeros where no path reaches the loss).
mlir::LogicalResult appendGradients(mlir::func::FuncOp func,
                                    llvm::ArrayRef<unsigned> wrt);

} // namespace mpt

#endif // MPT_TRANSFORMS_AUTODIFF_H
