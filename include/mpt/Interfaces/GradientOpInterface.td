//===- GradientOpInterface.td - per-op gradient rules ------*- tablegen -*-===//
//
// How an op propagates gradients in reverse mode. Each differentiable op
// declares `Differentiable` in MPTOps.td and implements `buildGradient` next
// to its family (lib/Dialect/MPT/IR/*Gradients.cpp); the autodiff engine
// (lib/Transforms/Autodiff.cpp) walks the forward graph backwards and calls
// the rule of every op on a path from a trainable value to the loss. It
// never switches on op names. docs/training.md describes the rules.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_INTERFACES_GRADIENTOPINTERFACE_TD
#define MPT_INTERFACES_GRADIENTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mpt";
  let description = [{
    The reverse-mode gradient rule of an op. The rule reads the gradients of
    the op's results from a `GradientBuilder` (summed in FP32 over every use
    and rounded once into the type it asks for), builds the ops that compute
    the gradients of its operands after the forward graph, and hands them
    back with `addOperandGrad`. It only needs to produce gradients for the
    operands for which `needsGrad` holds.

    Precision follows the forward op: a rule computes in its op's types (a
    bf16 matmul's gradient matmuls are bf16 with FP32 accumulation; an FP32
    softmax's gradient is FP32). A gradient handed back in another float
    type than its operand's is converted by the engine, so reductions can
    return FP32 sums without an extra rounding.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands from those of the results.
        Fails, with a diagnostic at the op, for a configuration the rule
        does not cover (for example a gradient through an FP8-scaled
        convolution).
      }],
      "::llvm::LogicalResult", "buildGradient",
      (ins "::mpt::GradientBuilder &":$gb)>,
    InterfaceMethod<[{
        Whether operand `index` can carry a gradient. By default float
        operands can and integer or boolean ones (indices, labels, masks)
        cannot.
      }],
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), [{}],
      [{ return ::mpt::isFloatLike($_op->getOperand(index).getType()); }]>,
  ];
}

// Declares that an op has a gradient rule (`buildGradient`, implemented in
// C++ beside the op's family).
def Differentiable : DeclareOpInterfaceMethods<GradientOpInterface>;

// The same for an op whose rule treats some float operands as constants of
// the step (running statistics, class weights, scales): it also states
// which operands carry a gradient (`isDifferentiableOperand`).
def DifferentiableWithConstants
    : DeclareOpInterfaceMethods<GradientOpInterface, ["isDifferentiableOperand"]>;

#endif // MPT_INTERFACES_GRADIENTOPINTERFACE_TD
