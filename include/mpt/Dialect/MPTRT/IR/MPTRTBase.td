//===- MPTRTBase.td - the mptrt execution dialect ----------*- tablegen -*-===//
//
// The `mptrt` dialect: the IR `--lower-to-runtime` produces and the plan
// emitter serialises. One op per runtime kernel kind, with typed attributes,
// plus the ops that are not kernels (constants, arena views).
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPTRT_IR_MPTRTBASE_TD
#define MPT_DIALECT_MPTRT_IR_MPTRTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mpt/IR/MPTEnums.td"

def MPTRT_Dialect : Dialect {
  let name = "mptrt";
  let cppNamespace = "::mpt::rt";
  let summary = "Execution dialect: the runtime's kernels, arena placement and views";
  let description = [{
    The contract between the compiler and the runtime (runtime/). Each kernel
    op is one kernel kind of `runtime/include/mptrt/KernelSchema.def`, with
    the same operand and result counts and the same attributes, typed:
    enums for string-valued modes, `array<i64>` for shapes and integer
    lists, `f32`/`f64` floats. A test (`mpt-mptrt-schema-test`) fails when
    the two disagree. Ops work on static-shape tensors; the memory planner
    records each kernel result's arena byte offset in the op's `offsets`
    attribute and turns shape-only kernels of arena values into
    `mptrt.view`s.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def MPTRT_Tensor : StaticShapeTensorOf<[AnyType]>;
def MPTRT_ScaleTensor : 0DTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// String-valued kernel attributes, as attributes over the shared enums
// (mpt/IR/MPTEnums.td). Each case's string is what the plan holds and the
// runtime decodes.
//===----------------------------------------------------------------------===//

def MPTRT_KernelStringAttrInterface : AttrInterface<"KernelStringAttrInterface"> {
  let cppNamespace = "::mpt::rt";
  let description = [{
    An enum attribute that a plan stores as a string: its case's name.
  }];
  let methods = [
    InterfaceMethod<"The string the plan holds for this value.",
      "::llvm::StringRef", "getKernelString", (ins), [{}],
      [{ return stringifyEnum($_attr.getValue()); }]>,
  ];
}

class MPTRT_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<MPTRT_Dialect, info, mnemonic, [MPTRT_KernelStringAttrInterface]> {
  // The dialect's namespace, not the shared enum's.
  let cppNamespace = "::mpt::rt";
  let assemblyFormat = "`<` $value `>`";
  // A macro the kernel schema writes for the allowed strings instead of
  // listing the cases, when another generated file lists them already.
  string schemaValues = "";
}

def MPTRT_GeluApproximateAttr : MPTRT_EnumAttr<MPT_GeluApproximate, "gelu_approximate">;
def MPTRT_ActivationAttr : MPTRT_EnumAttr<MPT_Activation, "activation">;
def MPTRT_ReductionAttr : MPTRT_EnumAttr<MPT_Reduction, "reduction">;
def MPTRT_LayoutAttr : MPTRT_EnumAttr<MPT_Layout, "layout">;
def MPTRT_UnaryGradKindAttr : MPTRT_EnumAttr<MPT_UnaryGradKind, "unary_grad_kind"> {
  // UnaryKinds.def's list of the same cases.
  let schemaValues = "MPTRT_UNARY_GRAD_KINDS";
}
def MPTRT_LrScheduleAttr : MPTRT_EnumAttr<MPT_LrSchedule, "lr_schedule">;
def MPTRT_AmaxComputeAlgoAttr : MPTRT_EnumAttr<MPT_AmaxComputeAlgo, "amax_compute_algo">;

//===----------------------------------------------------------------------===//
// The kernel op interface.
//===----------------------------------------------------------------------===//

def MPTRT_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::mpt::rt";
  let description = [{
    A runtime kernel. Its kind, operand and result counts and attributes are
    derived from the op's ODS definition (MPTRT_KernelOp) so that the plan
    emitter and the schema test read them from one place.
  }];
  let methods = [
    InterfaceMethod<"The kernel kind: the op's mnemonic.",
      "::llvm::StringRef", "getKernelKind", (ins), [{}],
      [{ return $_op->getName().stripDialect(); }]>,
    InterfaceMethod<"The kernel's attributes, in ODS order.",
      "::llvm::ArrayRef<::mpt::rt::KernelAttrInfo>", "getKernelAttrInfo", (ins), [{}],
      [{ return ConcreteOp::kernelAttrInfo(); }]>,
    InterfaceMethod<"Fewest operands.", "unsigned", "getMinOperands", (ins), [{}],
      [{ return ConcreteOp::kMinOperands; }]>,
    InterfaceMethod<"Most operands; -1: no bound.", "int", "getMaxOperands", (ins), [{}],
      [{ return ConcreteOp::kMaxOperands; }]>,
    InterfaceMethod<"Fewest results.", "unsigned", "getMinResults", (ins), [{}],
      [{ return ConcreteOp::kMinResults; }]>,
    InterfaceMethod<"Most results; -1: no bound.", "int", "getMaxResults", (ins), [{}],
      [{ return ConcreteOp::kMaxResults; }]>,
    InterfaceMethod<"The arena byte offset of each result (-1: not in the "
                    "arena), or null before memory planning.",
      "::mlir::DenseI64ArrayAttr", "getArenaOffsets", (ins), [{}],
      [{ return $_op.getOffsetsAttr(); }]>,
    InterfaceMethod<"Sets the arena offsets.", "void", "setArenaOffsets",
      (ins "::llvm::ArrayRef<int64_t>":$offsets), [{}],
      [{ $_op.setOffsets(offsets); }]>,
  ];
  let verify = [{
    return ::mpt::rt::verifyKernelOp($_op, ConcreteOp::kMinOperands,
        ConcreteOp::kMaxOperands, ConcreteOp::kMinResults, ConcreteOp::kMaxResults);
  }];
}

#endif // MPT_DIALECT_MPTRT_IR_MPTRTBASE_TD
