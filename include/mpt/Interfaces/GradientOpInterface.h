//===- GradientOpInterface.h - per-op gradient rules ------------*- C++ -*-===//
//
// The interface every differentiable mpt op implements (see
// GradientOpInterface.td), and `GradientBuilder`, the view of the autodiff
// engine that a rule works through.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_INTERFACES_GRADIENTOPINTERFACE_H
#define MPT_INTERFACES_GRADIENTOPINTERFACE_H

#include "mpt/Interfaces/PrecisionPolicyOpInterface.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mpt {

/// What a gradient rule sees of the autodiff engine while it runs: the
/// gradients of its op's results, where to build, and where to put the
/// operands' gradients.
class GradientBuilder {
public:
  virtual ~GradientBuilder() = default;

  /// The builder, positioned after the forward graph and the gradients
  /// built so far.
  virtual mlir::OpBuilder &builder() = 0;
  /// The op whose rule runs.
  virtual mlir::Operation *op() = 0;
  mlir::Location loc() { return op()->getLoc(); }

  /// The gradient of result `index`, summed in FP32 over its uses and
  /// rounded once into `elementType` (by default the result's own element
  /// type); null when no gradient reaches that result.
  virtual mlir::Value resultGrad(unsigned index,
                                 mlir::Type elementType = {}) = 0;

  /// The gradient of result `index`, or zeros of its type when none
  /// reaches it (for multi-result ops whose results are used unevenly).
  virtual mlir::Value resultGradOrZero(unsigned index,
                                       mlir::Type elementType = {}) = 0;

  /// The gradient of result `index` for a backward FP8 contraction: summed
  /// in FP32 over its uses, then quantized into `fp8Type` (f8E5M2) with a
  /// per-tensor scale that the engine's caller keeps (the training step's
  /// delayed or current scaling). Returns (quantized gradient, scale); both
  /// null when no gradient reaches that result. Fails, with a diagnostic at
  /// the op, when the caller keeps no FP8 gradient scales.
  virtual mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
  quantizedResultGrad(unsigned index, mlir::Type fp8Type) = 0;

  /// Whether operand `index` needs a gradient: it is a float value that
  /// depends on a trainable value.
  virtual bool needsGrad(unsigned index) = 0;

  /// Adds `grad` to the gradient of operand `index`. `grad` has the
  /// operand's shape and any float element type.
  virtual void addOperandGrad(unsigned index, mlir::Value grad) = 0;
};

} // namespace mpt

#include "mpt/Interfaces/GradientOpInterface.h.inc"

#endif // MPT_INTERFACES_GRADIENTOPINTERFACE_H
