//===- MPTEnums.td - the closed sets both dialects share ----*- tablegen -*-===//
//
// Every closed set of values that the `mpt` ops, the `mptrt` kernels and
// the runtime's plans name: one C++ enum each, in namespace `mpt`
// (mpt/IR/MPTEnums.h). Each dialect wraps them in its own attribute
// (`#mpt.activation<relu>`, `#mptrt.activation<relu>`; MPTAttrs.td and
// MPTRTBase.td), and the conversion to `mptrt` copies the value across
// (MPT_EnumAttrInterface). A case's name is the string the plan holds.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_IR_MPTENUMS_TD
#define MPT_IR_MPTENUMS_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/Interfaces.td"
include "mpt/Dialect/MPT/IR/MPTUnaryFunctions.td"

// An enum whose cases are `cases`, numbered from 0.
class MPT_Enum<string name, string summary, list<string> cases>
    : I32EnumAttr<name, summary,
        !foreach(i, !range(!size(cases)), I32EnumAttrCase<cases[i], i>)> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mpt";
}

def MPT_GeluApproximate : MPT_Enum<"GeluApproximate", "gelu's form", ["none", "tanh"]>;
def MPT_Activation : MPT_Enum<"Activation", "gemm's fused epilogue",
    ["none", "relu", "gelu", "gelu_tanh"]>;
def MPT_Reduction : MPT_Enum<"Reduction", "a loss's reduction", ["mean", "sum", "none"]>;
// The functions with a gradient (MPTUnaryFunctions.td).
def MPT_UnaryGradKind : MPT_Enum<"UnaryGradKind", "unary_grad's forward function",
    !foreach(f, !filter(f, MPTUnaryFunctions, f.grad), f.kind)>;
def MPT_LrSchedule : MPT_Enum<"LrSchedule", "the learning-rate schedule",
    ["constant", "warmup_cosine"]>;
def MPT_AmaxComputeAlgo : MPT_Enum<"AmaxComputeAlgo",
    "the amax a delayed FP8 scale comes from", ["max", "most_recent"]>;

//===----------------------------------------------------------------------===//
// The interface of every dialect's attribute over one of these enums.
//===----------------------------------------------------------------------===//

def MPT_EnumAttrInterface : AttrInterface<"EnumAttrInterface"> {
  let cppNamespace = "::mpt";
  let description = [{
    An attribute that holds a case of one of MPTEnums.td's enums, in any
    dialect: what lets another dialect's attribute over the same enum take
    its value (mpt::enumAttrFrom).
  }];
  let methods = [
    InterfaceMethod<"The enum's type.", "::mlir::TypeID", "getEnumTypeID",
      (ins), [{}],
      [{ return ::mlir::TypeID::get<decltype($_attr.getValue())>(); }]>,
    InterfaceMethod<"The case, as its enum's underlying integer.", "uint32_t",
      "getEnumValue", (ins), [{}],
      [{ return static_cast<uint32_t>($_attr.getValue()); }]>,
    InterfaceMethod<"The case's name.", "::llvm::StringRef", "getEnumString",
      (ins), [{}], [{ return stringifyEnum($_attr.getValue()); }]>,
  ];
}

#endif // MPT_IR_MPTENUMS_TD
