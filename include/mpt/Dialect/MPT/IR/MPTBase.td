//===- MPTBase.td - mpt dialect definition -----------------*- tablegen -*-===//
//
// The `mpt` dialect: the tensor-level IR that MPT imports ONNX into and on
// which precision assignment, autodiff and lowering work.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTBASE_TD
#define MPT_DIALECT_MPT_IR_MPTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def MPT_Dialect : Dialect {
  let name = "mpt";
  let cppNamespace = "::mpt";
  let summary = "Mixed-precision training tensor dialect";
  let description = [{
    The `mpt` dialect models the operators that MLPs, CNNs and transformers
    need when they are exported to ONNX (opsets 13 to 21), at the level of
    ranked tensors with static shapes. Every op verifies its operands and
    infers its result type where the operands determine it; ops whose result
    shape is a value in ONNX (Reshape, Expand, ConstantOfShape, Range) carry
    that shape in their result type and accept the ONNX shape operand only
    until canonicalization proves it redundant.

    Element types are `f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `i64`, `i32`
    and `i1`. Trainable parameters are FP32 function arguments marked with
    `mpt.param`; graph inputs and outputs carry `mpt.input` / `mpt.output`
    with their ONNX names, and every op's location is its ONNX node name.
  }];
  let hasConstantMaterializer = 1;
  // The discardable attributes that carry meaning (`mpt.param`,
  // `mpt.arena_bytes`, `mpt.precision`, ...) are checked by the dialect;
  // an unknown `mpt.*` attribute is an error (MPTAttrVerifier.cpp).
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  // The mptrt dialect is not a dependent one: the passes that create its
  // ops declare it, and every tool registers both (mpt/InitAll.h).
}

//===----------------------------------------------------------------------===//
// Type constraints.
//===----------------------------------------------------------------------===//

def MPT_FloatElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def MPT_IntElement : AnyTypeOf<[I64, I32]>;
def MPT_IndexElement : AnyTypeOf<[I64, I32]>;
def MPT_NumericElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I64, I32]>;
def MPT_AnyElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I64, I32, I1]>;

def MPT_FloatTensor : StaticShapeTensorOf<[MPT_FloatElement]>;
def MPT_NumericTensor : StaticShapeTensorOf<[MPT_NumericElement]>;
def MPT_IndexTensor : StaticShapeTensorOf<[MPT_IndexElement]>;
def MPT_BoolTensor : StaticShapeTensorOf<[I1]>;
def MPT_Tensor : StaticShapeTensorOf<[MPT_AnyElement]>;
def MPT_ShapeTensor : 1DTensorOf<[I64]>;
// A per-tensor FP8 scale.
def MPT_ScaleTensor : 0DTensorOf<[F32]>;

class MPT_Op<string mnemonic, list<Trait> traits = []>
    : Op<MPT_Dialect, mnemonic, traits>;

// The runtime kernel of an op that lowers by renaming: `kernel` names the
// mptrt kernel op's def (MPTRT_...Op), which takes the op's operands, result
// types and attributes, by the same names; the kernel declares the
// attributes as MPTRT_AttrsOf<this op> (MPTRTOps.td), from this record.
// mpt-convert-to-mptrt's pattern for the op is generated from this record
// (mpt-tblgen -gen-kernel-patterns), which also checks that the two ops
// declare the same attributes but for `compilerOnly`, the op's attributes
// that only the compiler reads (for the kernels written out). An op whose kernel needs more than a rename (a choice
// of kernel, operands to reorder) has its pattern written in
// lib/Conversion/RuntimeLowering/ instead.
class MPT_RuntimeKernel<string kernel, list<string> compilerOnly = []> {
  string runtimeKernel = kernel;
  list<string> compilerOnlyAttrs = compilerOnly;
}

// An ONNX operator, from opset `since`, that the importer maps to the op
// through a generic importer: `importer` names a function template of
// lib/Import/ONNX/GenericImporters.h (importBinary, importVariadic,
// importSoftmax, importLoss), instantiated on the op.
class MPT_OnnxRow<string onnxName, int since, string importerName> {
  string onnx = onnxName;
  int sinceOpset = since;
  string importer = importerName;
}

// The ONNX operators an op imports: the importer's table rows for them are
// generated from this record (mpt-tblgen -gen-onnx-imports). An op whose
// import needs more than a generic importer (attributes to translate,
// inputs to rearrange) has its row in its family's *Import.cpp instead.
class MPT_OnnxImport<list<MPT_OnnxRow> rowsArg> {
  list<MPT_OnnxRow> onnxRows = rowsArg;
}

#endif // MPT_DIALECT_MPT_IR_MPTBASE_TD
