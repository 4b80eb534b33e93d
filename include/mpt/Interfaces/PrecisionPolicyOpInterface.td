//===- PrecisionPolicyOpInterface.td - per-op precision policy -*- tablegen -*-===//
//
// How an op takes part in precision assignment: its category, the type it
// accumulates in, and which of its operands and results keep FP32 whatever
// precision the op computes in. Each op declares its policy next to its
// definition with `PrecisionPolicy<...>`; `--assign-precision` and
// `--verify-precision` read it through this interface and never switch on op
// names. docs/precision.md explains how the categories are used.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_TD
#define MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Enums.
//===----------------------------------------------------------------------===//

def PrecisionCategory : I32EnumAttr<"PrecisionCategory",
    "how an op takes part in precision assignment", [
  I32EnumAttrCase<"AlwaysLow", 0, "always-low">,
  I32EnumAttrCase<"RequireF32", 1, "require-f32">,
  I32EnumAttrCase<"Follow", 2, "follow">,
  I32EnumAttrCase<"Clear", 3, "clear">,
  I32EnumAttrCase<"Fixed", 4, "fixed">]> {
  let cppNamespace = "::mpt";
  let genSpecializedAttr = 0;
  let description = [{
    - `always-low`: contractions. They compute in the low-precision type,
      accumulate in FP32 and may state a wider result type.
    - `require-f32`: numerically sensitive ops (exponentials, normalisation,
      sums, losses). They always compute in FP32.
    - `follow`: arithmetic that rounds. It computes in the low-precision type
      only between low-precision ops.
    - `clear`: ops that are exact in any float type (data movement,
      comparisons, max/min). They take whichever type needs fewer casts.
    - `fixed`: conversions (`mpt.cast`, `mpt.quantize`). Their operand and
      result types are their meaning, so the pass never changes them.
  }];
}

def AccumulationRule : I32EnumAttr<"AccumulationRule",
    "which type an op accumulates in", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"F32", 1, "f32">,
  I32EnumAttrCase<"Result", 2, "result">]> {
  let cppNamespace = "::mpt";
  let genSpecializedAttr = 0;
  let description = [{
    - `none`: the op does not accumulate.
    - `f32`: the op accumulates in FP32 whatever its operand and result types
      (a contract on every kernel that implements it).
    - `result`: the op accumulates in its result's element type (ONNX
      reductions), so its result type decides the accumulation precision.
  }];
}

def PrecisionRole : I32EnumAttr<"PrecisionRole",
    "the type an operand or a result takes", [
  I32EnumAttrCase<"Compute", 0, "compute">,
  I32EnumAttrCase<"Output", 1, "output">,
  I32EnumAttrCase<"F32", 2, "f32">]> {
  let cppNamespace = "::mpt";
  let genSpecializedAttr = 0;
  let description = [{
    - `compute`: the op's compute type (the default).
    - `output`: the op's result type, which differs from the compute type for
      contractions with a wide result (their bias operands).
    - `f32`: always FP32 (normalisation statistics and parameters, FP8
      scales).
  }];
}

//===----------------------------------------------------------------------===//
// The interface.
//===----------------------------------------------------------------------===//

def PrecisionPolicyOpInterface : OpInterface<"PrecisionPolicyOpInterface"> {
  let cppNamespace = "::mpt";
  let description = [{
    The precision policy of an op: its category, its accumulation type, the
    role of each operand and result, and whether it can produce a wider
    result than it computes in or take FP8 operands with scales. Ops declare
    the category and accumulation rule with the `PrecisionPolicy` trait list
    and override the other methods where they differ from the defaults.
  }];

  let methods = [
    InterfaceMethod<
      "The op's precision category.",
      "::mpt::PrecisionCategory", "getPrecisionCategory", (ins), [{}],
      [{ return ConcreteOp::kPrecisionCategory; }]>,
    InterfaceMethod<
      "How the op accumulates: none, always FP32, or in its result type.",
      "::mpt::AccumulationRule", "getAccumulationRule", (ins), [{}],
      [{ return ConcreteOp::kAccumulationRule; }]>,
    InterfaceMethod<[{
        The element type the op accumulates in, or null if it does not
        accumulate.
      }],
      "::mlir::Type", "getAccumulationType", (ins), [{}],
      [{ return ::mpt::detail::accumulationTypeOf($_op, $_op.getAccumulationRule()); }]>,
    InterfaceMethod<[{
        The type operand `index` takes; only float operands are asked.
      }],
      "::mpt::PrecisionRole", "getOperandPrecisionRole",
      (ins "unsigned":$index), [{}],
      [{ return ::mpt::PrecisionRole::Compute; }]>,
    InterfaceMethod<[{
        The type result `index` takes; only float results are asked.
      }],
      "::mpt::PrecisionRole", "getResultPrecisionRole",
      (ins "unsigned":$index), [{}],
      [{ return ::mpt::PrecisionRole::Compute; }]>,
    InterfaceMethod<[{
        Whether the op may state a float result type other than its compute
        type (an FP32 result from low-precision operands). Contractions
        accumulate in FP32 and round once into their result type, so a
        following FP32 op needs no cast and sees no bf16 round trip.
      }],
      "bool", "supportsWideResult", (ins), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op takes FP8 `compute` operands with per-tensor scales
        (see `setFP8Scales`).
      }],
      "bool", "acceptsFP8Operands", (ins), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        Attaches per-tensor FP8 scales, one per `compute` operand in operand
        order, to an op whose `compute` operands now hold `x * scale` in an
        FP8 type; with no scales, removes them. Fails, changing nothing, if
        the op takes no FP8 scales.
      }],
      "::llvm::LogicalResult", "setFP8Scales",
      (ins "::mlir::ValueRange":$scales), [{}],
      [{ return ::llvm::failure(); }]>,
    InterfaceMethod<[{
        The per-tensor FP8 scales attached by `setFP8Scales`, in operand
        order; empty when the op has none.
      }],
      "::mlir::OperandRange", "getFP8Scales", (ins), [{}],
      [{ return $_op->getOperands().take_back(0); }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Declaring a policy on an op.
//===----------------------------------------------------------------------===//

// The category and accumulation rule as static members of the op class.
class PrecisionPolicyParams<string category, string accumulation>
    : ParamNativeOpTrait<"PrecisionPolicyTrait",
                         "::mpt::PrecisionCategory::" # category #
                         ", ::mpt::AccumulationRule::" # accumulation> {
  let cppNamespace = "::mpt";
}

// Declares an op's precision policy: `category` is a PrecisionCategory case
// (AlwaysLow, RequireF32, Follow, Clear, Fixed), `accumulation` an
// AccumulationRule case (None, F32, Result), and `overridden` lists the
// interface methods the op implements itself.
class PrecisionPolicy<string category, string accumulation = "None",
                      list<string> overridden = []>
    : TraitList<[PrecisionPolicyParams<category, accumulation>,
                 DeclareOpInterfaceMethods<PrecisionPolicyOpInterface,
                                           overridden>]>;

#endif // MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_TD
