//===- MPTOps.td - mpt dialect operations ------------------*- tablegen -*-===//
//
// Operation definitions for the `mpt` dialect. Ops are grouped by family;
// each family's shared shape rule lives in lib/Dialect/MPT/IR.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTOPS_TD
#define MPT_DIALECT_MPT_IR_MPTOPS_TD

include "mpt/Dialect/MPT/IR/MPTAttrs.td"
include "mpt/Dialect/MPT/IR/MPTBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mpt/Interfaces/PrecisionPolicyOpInterface.td"
include "mpt/Interfaces/GradientOpInterface.td"
include "mpt/Dialect/MPT/IR/MPTUnaryFunctions.td"

//===----------------------------------------------------------------------===//
// Family classes.
//===----------------------------------------------------------------------===//

// y = f(x), same type in and out.
class MPT_UnaryOp<string mnemonic, Type T, list<Trait> traits = []>
    : MPT_Op<mnemonic, !listconcat([Pure, Elementwise, SameOperandsAndResultType,
                                    InferTypeOpInterface], traits)> {
  let arguments = (ins T:$input);
  let results = (outs T:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

// z = f(x, y) with numpy broadcasting; the result keeps the lhs element type
// unless the op states otherwise (comparisons produce i1).
class MPT_BroadcastOp<string mnemonic, list<Trait> traits = []>
    : MPT_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

class MPT_BinaryOp<string mnemonic, list<Trait> traits = []>
    : MPT_BroadcastOp<mnemonic, traits> {
  let arguments = (ins MPT_NumericTensor:$lhs, MPT_NumericTensor:$rhs);
  let results = (outs MPT_NumericTensor:$output);
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mpt::inferBroadcastResult(loc, adaptor.getOperands(),
                                         /*elementType=*/nullptr, types);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mpt::foldBinaryOp(*this, adaptor.getLhs(), adaptor.getRhs());
    }
  }];
}

class MPT_CompareOp<string mnemonic, list<Trait> traits = []>
    : MPT_BroadcastOp<mnemonic, !listconcat([SameOperandsElementType,
                                             PrecisionPolicy<"Clear">], traits)> {
  let arguments = (ins MPT_Tensor:$lhs, MPT_Tensor:$rhs);
  let results = (outs MPT_BoolTensor:$output);
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mpt::inferBroadcastResult(loc, adaptor.getOperands(),
                                         ::mlir::IntegerType::get(ctx, 1),
                                         types);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mpt::foldBinaryOp(*this, adaptor.getLhs(), adaptor.getRhs());
    }
  }];
}

class MPT_ReduceOp<string mnemonic, Type T, list<Trait> traits = []>
    : MPT_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let arguments = (ins T:$input, DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs T:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mpt::inferReduceResult(loc, adaptor.getInput().getType(),
                                      adaptor.getAxes(), adaptor.getKeepdims(),
                                      types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Constants and identity-like ops.
//===----------------------------------------------------------------------===//

def MPT_ConstantOp : MPT_Op<"constant",
    [PrecisionPolicy<"Clear">, ConstantLike, Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant tensor (ONNX Constant and non-trainable initializers)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def MPT_IdentityOp : MPT_UnaryOp<"identity", MPT_Tensor,
    [Differentiable, PrecisionPolicy<"Clear">]>,
    MPT_RuntimeKernel<"MPTRT_IdentityOp"> {
  let summary = "ONNX Identity; folds away";
  let hasFolder = 1;
}

def MPT_CastOp : MPT_Op<"cast", [Differentiable, Pure, SameOperandsAndResultShape,
                                  PrecisionPolicy<"Fixed">]> {
  let summary = "Element-type conversion (ONNX Cast)";
  let description = [{
    Converts each element to the result's element type. Float narrowing rounds
    to nearest even. Conversions into the FP8 types saturate: a value beyond
    the largest finite one, infinity included, becomes that value with its
    sign (448 for `f8E4M3FN`, 57344 for `f8E5M2`); NaN stays NaN.

    A cast the user wrote (without `inserted`) is never removed. A cast that
    a pass inserts carries `inserted`; passes may remove or re-derive those,
    and canonicalization folds a pair of inserted casts whose first one is
    exact (a widening) into one cast.

    ```mlir
    %w16 = mpt.cast %w {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins MPT_Tensor:$input, UnitAttr:$inserted);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MPT_QuantizeOp : MPT_Op<"quantize", [DifferentiableWithConstants, Pure,
    AllShapesMatch<["input", "output"]>, PrecisionPolicy<"Fixed">]>,
    MPT_RuntimeKernel<"MPTRT_QuantizeOp", ["inserted"]> {
  let summary = "Scale by a per-tensor factor into an FP8 type, saturating";
  let description = [{
    `output = saturate(round(input * scale))`: the product is formed in FP32,
    rounded to nearest even into the result's FP8 type, and values beyond its
    largest finite value (infinity included) clamp to it with their sign;
    NaN stays NaN. `scale` is a 0-d f32 tensor. A contraction that consumes
    quantized operands takes the same scales (`scales(...)`) and divides its
    product by them.

    `--assign-precision=fp8` inserts these (marked `inserted`) in front of
    every contraction, one per producer, with the scales as function
    arguments marked `mpt.fp8_scale`.

    ```mlir
    %q = mpt.quantize %x, %s : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
    ```
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_ScaleTensor:$scale,
                   UnitAttr:$inserted);
  let results = (outs StaticShapeTensorOf<[F8E4M3FN, F8E5M2]>:$output);
  let assemblyFormat = "$input `,` $scale attr-dict `:` functional-type(operands, results)";
}

def MPT_DropoutOp : MPT_Op<"dropout", [Differentiable, PrecisionPolicy<"Follow">, Pure]> {
  let summary = "ONNX Dropout: the output and the keep mask";
  let description = [{
    In inference (`training = false`) or with `ratio = 0` the output is the
    input and the mask is all true; canonicalization then removes the op.

    In training mode the op also takes `rng` = (seed, step), two `tensor<i64>`
    values, and a `stream` id; `--build-training-step` adds them (the
    `train.seed` and `train.step` state, one stream per dropout op). Element
    `i` is kept when its Philox4x32-10 word for (seed, step, stream, i)
    (runtime/include/mptrt/Philox.h) is at least `round(ratio * 2^32)`, so
    the mask is a pure function of those four values; the output is
    `x * (keep ? 1 / (1 - ratio) : 0)`, rounded once into the input's type.
    A training-mode dropout without `rng` (as imported) has no runtime kernel.

    ```mlir
    %y, %mask = mpt.dropout %x, %seed, %step {ratio = 1.000000e-01 : f32, stream = 0 : i64, training = true}
        : tensor<4x8xf32>, tensor<i64>, tensor<i64> -> tensor<4x8xf32>, tensor<4x8xi1>
    ```
  }];
  let arguments = (ins MPT_FloatTensor:$input,
                   Variadic<0DTensorOf<[I64]>>:$rng,
                   DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                   DefaultValuedAttr<BoolAttr, "false">:$training,
                   OptionalAttr<I64Attr>:$stream);
  let results = (outs MPT_FloatTensor:$output, MPT_BoolTensor:$mask);
  let assemblyFormat = [{
    $input (`,` $rng^)? attr-dict `:` type($input) (`,` type($rng)^)? `->` type($output) `,` type($mask)
  }];
  let extraClassDeclaration = [{
    /// The seed and step operands (null until --build-training-step adds them).
    ::mlir::Value getSeed() { return getRng().empty() ? ::mlir::Value() : getRng()[0]; }
    ::mlir::Value getStep() { return getRng().size() < 2 ? ::mlir::Value() : getRng()[1]; }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary.
//===----------------------------------------------------------------------===//

// The op of a function of MPTUnaryFunctions.td: its mnemonic, operand
// types, precision policy and summary come from the record.
class MPT_FunctionOp<MPT_UnaryFunction f, list<Trait> traits = [],
                     Type T = !cond(!eq(f.operands, "Float") : MPT_FloatTensor,
                                    !eq(f.operands, "Numeric") : MPT_NumericTensor,
                                    !eq(f.operands, "Bool") : MPT_BoolTensor)>
    : MPT_UnaryOp<f.kind, T, !listconcat(traits, [PrecisionPolicy<f.policy>])> {
  let summary = f.summary;
  // The record's float parameters, with their defaults.
  let arguments = !con((ins T:$input),
                       !dag(ins, !foreach(d, f.paramDefaults,
                                          DefaultValuedAttr<F32Attr, d>),
                            f.params));
}

// `gb.builder().getNamedAttr("alpha", <alpha as an F32 attribute>), ...`:
// the record's parameters, passed on to `unary_grad`.
class MPT_ParamsToGrad<MPT_UnaryFunction f> {
  string text = !interleave(
      !foreach(p, f.params,
               "gb.builder().getNamedAttr(\"" # p #
               "\", gb.builder().getF32FloatAttr(get" #
               !toupper(!substr(p, 0, 1)) # !substr(p, 1) #
               "().convertToFloat()))"),
      ", ");
}

// The functions that are kernels without attributes and whose gradient is
// `unary_grad` of their kind, or zero: the whole op, gradient rule
// included, comes from the record.
foreach f = !filter(f, MPTUnaryFunctions, f.genOp) in
def MPT_ # f.name # Op : MPT_FunctionOp<f, [Differentiable]> {
  let extraClassDefinition = !if(f.zeroGrad,
      "::llvm::LogicalResult $cppClass::buildGradient(::mpt::GradientBuilder &) {\n" #
      "  return ::llvm::success(); // piecewise constant: no contribution\n}\n",
      "::llvm::LogicalResult $cppClass::buildGradient(::mpt::GradientBuilder &gb) {\n" #
      "  return ::mpt::grad::unaryGradRule(gb, ::mpt::UnaryGradKind::" # f.kind # ", {" #
      MPT_ParamsToGrad<f>.text # "});\n}\n");
}

// The functions whose op is written here (a folder, a rule of its own, or
// attributes), from the same records.
def MPT_NegOp : MPT_FunctionOp<MPT_UF_Neg, [Differentiable]> {
  let hasFolder = 1;
}
def MPT_NotOp : MPT_FunctionOp<MPT_UF_Not> {
  let hasFolder = 1;
}

def MPT_LeakyReluOp : MPT_FunctionOp<MPT_UF_LeakyRelu, [Differentiable]>,
    MPT_RuntimeKernel<"MPTRT_LeakyReluOp"> {
  let arguments = (ins MPT_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}

def MPT_GeluOp : MPT_FunctionOp<MPT_UF_Gelu, [Differentiable]>,
    MPT_RuntimeKernel<"MPTRT_GeluOp"> {
  let description = [{
    `approximate` is `none` (the erf form) or `tanh`. The importer also
    recognises nothing implicitly: an exporter's erf decomposition stays as
    the ops it wrote.
  }];
  let arguments = (ins MPT_FloatTensor:$input,
                   DefaultValuedAttr<MPT_GeluApproximateAttr,
                                     "::mpt::GeluApproximate::none">:$approximate);
}

def MPT_ClipOp : MPT_FunctionOp<MPT_UF_Clip, [Differentiable]>,
    MPT_RuntimeKernel<"MPTRT_ClipOp"> {
  let arguments = (ins MPT_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
}

//===----------------------------------------------------------------------===//
// Elementwise binary and ternary (numpy broadcasting).
//===----------------------------------------------------------------------===//

def MPT_AddOp : MPT_BinaryOp<"add", [Differentiable, PrecisionPolicy<"Follow">, Commutative, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_AddOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Add", 1, "importLegacyBinary">,
                    MPT_OnnxRow<"Add", 7, "importBinary">,
                    MPT_OnnxRow<"Sum", 6, "importVariadic">]> {
  let summary = "Elementwise sum";
}
def MPT_SubOp : MPT_BinaryOp<"sub", [Differentiable, PrecisionPolicy<"Follow">, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_SubOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Sub", 1, "importLegacyBinary">,
                    MPT_OnnxRow<"Sub", 7, "importBinary">]> {
  let summary = "Elementwise difference";
}
def MPT_MulOp : MPT_BinaryOp<"mul", [Differentiable, PrecisionPolicy<"Follow">, Commutative, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_MulOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Mul", 1, "importLegacyBinary">,
                    MPT_OnnxRow<"Mul", 7, "importBinary">]> {
  let summary = "Elementwise product";
  let description = [{
    Canonicalization recognizes the erf form of GELU that exporters write,
    `(x * (erf(x / sqrt(2)) + 1)) * 0.5`, and replaces it with one `gelu`.
  }];
  let hasCanonicalizer = 1;
}
def MPT_DivOp : MPT_BinaryOp<"div", [Differentiable, PrecisionPolicy<"Follow">, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_DivOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Div", 1, "importLegacyBinary">,
                    MPT_OnnxRow<"Div", 7, "importBinary">]> {
  let summary = "Elementwise quotient (integer division truncates)";
}
def MPT_MaxOp : MPT_BinaryOp<"max", [Differentiable, PrecisionPolicy<"Clear">, Commutative, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_MaxOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Max", 6, "importVariadic">]> {
  let summary = "Elementwise maximum";
}
def MPT_MinOp : MPT_BinaryOp<"min", [Differentiable, PrecisionPolicy<"Clear">, Commutative, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_MinOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Min", 6, "importVariadic">]> {
  let summary = "Elementwise minimum";
}
def MPT_PowOp : MPT_BinaryOp<"pow", [Differentiable, PrecisionPolicy<"RequireF32">]>,
    MPT_RuntimeKernel<"MPTRT_PowOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Pow", 1, "importLegacyBinary">,
                    MPT_OnnxRow<"Pow", 7, "importBinary">]> {
  let summary = "lhs ** rhs; the exponent may have another element type";
}

def MPT_EqualOp : MPT_CompareOp<"equal", [Commutative]>,
    MPT_RuntimeKernel<"MPTRT_EqualOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Equal", 7, "importBinary">]> {
  let summary = "Elementwise ==";
}
def MPT_LessOp : MPT_CompareOp<"less">,
    MPT_RuntimeKernel<"MPTRT_LessOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Less", 7, "importBinary">]> {
  let summary = "Elementwise <";
}
def MPT_GreaterOp : MPT_CompareOp<"greater">,
    MPT_RuntimeKernel<"MPTRT_GreaterOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Greater", 7, "importBinary">]> {
  let summary = "Elementwise >";
}

def MPT_WhereOp : MPT_BroadcastOp<"where", [Differentiable, PrecisionPolicy<"Clear">]>,
    MPT_RuntimeKernel<"MPTRT_WhereOp"> {
  let summary = "Select x where condition holds, else y";
  let arguments = (ins MPT_BoolTensor:$condition, MPT_Tensor:$x, MPT_Tensor:$y);
  let results = (outs MPT_Tensor:$output);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and pooling.
//===----------------------------------------------------------------------===//

// Contractions compute in the low-precision type, accumulate in FP32, may
// state a wider result type, and take FP8 operands with per-tensor scales.
// Their bias operand (gemm's C, conv's bias) has the result's type.
def MPT_ContractionPolicy : PrecisionPolicy<"AlwaysLow", "F32",
    ["getOperandPrecisionRole", "supportsWideResult", "acceptsFP8Operands",
     "setFP8Scales", "getFP8Scales"]>;

def MPT_MatMulOp : MPT_Op<"matmul", [Differentiable, Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptorWithIsCompatible, MPT_ContractionPolicy]> {
  let summary = "numpy matmul with batch broadcasting";
  let description = [{
    `lhs` and `rhs` have one element type (or are both FP8). The product
    accumulates in FP32 and is rounded once into the result's element type,
    which may be any float type: `--assign-precision` gives a bf16 matmul an
    f32 result when an FP32 op consumes it. With `scales(%sl, %sr)` the
    operands hold `x * scale` (see `mpt.quantize`) and the product is divided
    by both scales before rounding.
  }];
  let arguments = (ins MPT_FloatTensor:$lhs, MPT_FloatTensor:$rhs,
                   Optional<MPT_ScaleTensor>:$lhs_scale,
                   Optional<MPT_ScaleTensor>:$rhs_scale);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs (`scales` `(` $lhs_scale^ `,` $rhs_scale `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  // Without FP8 scales.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$lhs,
                   "::mlir::Value":$rhs), [{
      build($_builder, $_state, output, lhs, rhs, ::mlir::Value(),
            ::mlir::Value());
    }]>,
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state, lhs, rhs, ::mlir::Value(), ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def MPT_GemmOp : MPT_Op<"gemm", [Differentiable, Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptorWithIsCompatible, MPT_ContractionPolicy]> {
  let summary = "act(alpha * op(A) * op(B) + beta * C) (ONNX Gemm, plus an epilogue)";
  let description = [{
    ONNX Gemm with an optional fused activation epilogue, `activation`:
    `none` (the default, as ONNX Gemm), `relu`, `gelu` (erf form) or
    `gelu_tanh`. The importer always produces `none`; the runtime lowering's
    kernel selection (`--mpt-fuse-epilogues`) folds a following Relu or Gelu
    into it.

    `op(A) * op(B)` accumulates in FP32; the epilogue runs in FP32 and the
    result is rounded once into its element type, which may be any float
    type (`C` normally has the result's type). With `scales(%sa, %sb)`, A and
    B hold `x * scale` (see `mpt.quantize`) and the product is divided by both
    scales before alpha, C and the activation are applied.
  }];
  let arguments = (ins MPT_FloatTensor:$a, MPT_FloatTensor:$b,
                   Optional<MPT_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b,
                   DefaultValuedAttr<MPT_ActivationAttr, "::mpt::Activation::none">:$activation,
                   Optional<MPT_ScaleTensor>:$a_scale,
                   Optional<MPT_ScaleTensor>:$b_scale);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? (`scales` `(` $a_scale^ `,` $b_scale `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  // Without FP8 scales.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$a,
                   "::mlir::Value":$b, "::mlir::Value":$c,
                   "::llvm::APFloat":$alpha, "::llvm::APFloat":$beta,
                   "bool":$trans_a, "bool":$trans_b,
                   "::mpt::Activation":$activation), [{
      build($_builder, $_state, output, a, b, c, alpha, beta, trans_a,
            trans_b, activation, ::mlir::Value(), ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def MPT_AttentionOp : MPT_Op<"attention", [DifferentiableWithConstants, Pure,
    InferTypeOpAdaptor, PrecisionPolicy<"AlwaysLow", "F32",
    ["getOperandPrecisionRole", "getResultPrecisionRole"]>]>,
    MPT_RuntimeKernel<"MPTRT_AttentionOp"> {
  let summary = "Scaled dot-product attention, softmax(scale * Q K^T + mask) V";
  let description = [{
    `query` is [..., Tq, D], `key` [..., Tk, D] and `value` [..., Tk, Dv],
    with the same leading (batch and head) axes; `output` is [..., Tq, Dv].
    The optional additive `mask` broadcasts to [..., Tq, Tk] (numpy rules);
    -inf removes a key. `logsumexp` ([..., Tq], FP32) is each row's
    log(sum(exp(scores))), which the gradient rule reuses.

    The precision policy is a contraction's: `query`, `key` and `value` are
    in the compute type, the scores, the softmax statistics and the mask are
    FP32 (`AlwaysLow` with FP32 accumulation), and the output is rounded
    once. `--fuse-attention` builds the op from the matmul, scale, mask and
    softmax pattern that exporters write; the mask is a constant of the step
    (no gradient).
    ```mlir
    %o, %lse = mpt.attention %q, %k, %v, %mask {scale = 0.125 : f32}
      : (tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>,
         tensor<1x1x16x16xf32>) -> (tensor<2x4x16x64xbf16>, tensor<2x4x16xf32>)
    ```
  }];
  let arguments = (ins MPT_FloatTensor:$query, MPT_FloatTensor:$key,
                   MPT_FloatTensor:$value, Optional<MPT_FloatTensor>:$mask,
                   F32Attr:$scale);
  let results = (outs MPT_FloatTensor:$output, F32Tensor:$logsumexp);
  let assemblyFormat = "$query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_ConvOp : MPT_Op<"conv", [Differentiable, Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptorWithIsCompatible, MPT_ContractionPolicy]> {
  let summary = "N-d grouped convolution, NCHW, explicit pads";
  let description = [{
    `pads` holds the begin pads of every spatial axis followed by the end
    pads, as in ONNX; the importer resolves `auto_pad` into them.

    The convolution accumulates in FP32, adds the bias in FP32 and rounds
    once into the result's element type, which may be any float type (the
    bias normally has the result's type). With `scales(%sx, %sw)`, input and
    weight hold `x * scale` (see `mpt.quantize`) and the sum is divided by
    both scales before the bias is added.
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$weight,
                   Optional<MPT_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   Optional<MPT_ScaleTensor>:$input_scale,
                   Optional<MPT_ScaleTensor>:$weight_scale);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`scales` `(` $input_scale^ `,`
    $weight_scale `)`)? attr-dict `:` functional-type(operands, results)
  }];
  // Without FP8 scales.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "::mlir::Value":$bias,
                   "::llvm::ArrayRef<int64_t>":$strides,
                   "::llvm::ArrayRef<int64_t>":$pads,
                   "::llvm::ArrayRef<int64_t>":$dilations,
                   CArg<"uint64_t", "1">:$group), [{
      build($_builder, $_state, output, input, weight, bias, strides, pads,
            dilations, group, ::mlir::Value(), ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def MPT_MaxPoolOp : MPT_Op<"max_pool", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_MaxPoolOp"> {
  let summary = "N-d max pooling, NCHW, explicit pads";
  let arguments = (ins MPT_NumericTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs MPT_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_AveragePoolOp : MPT_Op<"average_pool", [Differentiable, PrecisionPolicy<"Follow", "F32">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_AveragePoolOp"> {
  let summary = "N-d average pooling, NCHW, explicit pads";
  let arguments = (ins MPT_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_GlobalAveragePoolOp : MPT_Op<"global_average_pool", [Differentiable, PrecisionPolicy<"Follow", "F32">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_GlobalAveragePoolOp"> {
  let summary = "Mean over every spatial axis, keeping them as size 1";
  let arguments = (ins MPT_FloatTensor:$input);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax and losses.
//===----------------------------------------------------------------------===//

def MPT_BatchNormOp : MPT_Op<"batch_norm", [DifferentiableWithConstants, PrecisionPolicy<"Follow", "None", ["getOperandPrecisionRole"]>, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_BatchNormOp"> {
  let summary = "Batch normalisation with running statistics (inference mode)";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   MPT_FloatTensor:$bias, MPT_FloatTensor:$mean,
                   MPT_FloatTensor:$var,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def MPT_BatchNormTrainOp : MPT_Op<"batch_norm_train", [Differentiable, PrecisionPolicy<"Follow", "F32", ["getOperandPrecisionRole", "getResultPrecisionRole"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalisation with batch statistics (training mode)";
  let description = [{
    Normalises with the batch's own mean and biased variance, and returns the
    updated running statistics `running * momentum + batch * (1 - momentum)`
    as ONNX BatchNormalization-15 with `training_mode = 1` defines them, except
    that the running variance takes the *unbiased* batch variance (times
    `n / (n - 1)`, n the elements per channel), as PyTorch's BatchNorm does
    (ONNX momentum 0.9 is PyTorch momentum 0.1).
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   MPT_FloatTensor:$bias, MPT_FloatTensor:$running_mean,
                   MPT_FloatTensor:$running_var,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.9">:$momentum);
  let results = (outs MPT_FloatTensor:$output, MPT_FloatTensor:$new_running_mean,
                 MPT_FloatTensor:$new_running_var);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def MPT_LayerNormOp : MPT_Op<"layer_norm", [Differentiable, PrecisionPolicy<"RequireF32", "F32", ["getResultPrecisionRole"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalisation over the axes from `axis` on";
  let description = [{
    Also returns the f32 mean and inverse standard deviation that ONNX
    LayerNormalization-17 defines as its optional outputs; autodiff reuses them.
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   Optional<MPT_FloatTensor>:$bias, I64Attr:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs MPT_FloatTensor:$output, F32Tensor:$mean,
                 F32Tensor:$inv_std_dev);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_SoftmaxOp : MPT_UnaryOp<"softmax", MPT_FloatTensor,
    [Differentiable, PrecisionPolicy<"RequireF32", "F32">]>,
    MPT_RuntimeKernel<"MPTRT_SoftmaxOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"Softmax", 1, "importSoftmaxCoerced">,
                    MPT_OnnxRow<"Softmax", 13, "importSoftmax">]> {
  let summary = "Softmax along one axis";
  let arguments = (ins MPT_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def MPT_LogSoftmaxOp : MPT_UnaryOp<"log_softmax", MPT_FloatTensor,
    [Differentiable, PrecisionPolicy<"RequireF32", "F32">]>,
    MPT_RuntimeKernel<"MPTRT_LogSoftmaxOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"LogSoftmax", 1, "importSoftmaxCoerced">,
                    MPT_OnnxRow<"LogSoftmax", 13, "importSoftmax">]> {
  let summary = "Log of softmax along one axis";
  let arguments = (ins MPT_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def MPT_SoftmaxCrossEntropyLossOp : MPT_Op<"softmax_cross_entropy_loss",
    [DifferentiableWithConstants, PrecisionPolicy<"RequireF32", "Result">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_SoftmaxCrossEntropyLossOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"SoftmaxCrossEntropyLoss", 12, "importLoss">]> {
  let summary = "Cross-entropy of softmax(scores) against class labels";
  let description = [{
    `scores` is (N, C, d1, ...), `labels` (N, d1, ...). `reduction` is
    `mean`, `sum` or `none`; labels equal to `ignore_index` contribute
    nothing. The second result is log_softmax(scores) along axis 1.
  }];
  let arguments = (ins MPT_FloatTensor:$scores, MPT_IndexTensor:$labels,
                   Optional<MPT_FloatTensor>:$weights,
                   DefaultValuedAttr<MPT_ReductionAttr, "::mpt::Reduction::mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$loss, MPT_FloatTensor:$log_prob);
  let assemblyFormat = "$scores `,` $labels (`,` $weights^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_NegativeLogLikelihoodLossOp : MPT_Op<"nll_loss",
    [DifferentiableWithConstants, PrecisionPolicy<"RequireF32", "Result">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_NegativeLogLikelihoodLossOp">,
    MPT_OnnxImport<[MPT_OnnxRow<"NegativeLogLikelihoodLoss", 12, "importLoss">]> {
  let summary = "Negative log-likelihood of log-probabilities at the targets";
  let arguments = (ins MPT_FloatTensor:$input, MPT_IndexTensor:$target,
                   Optional<MPT_FloatTensor>:$weight,
                   DefaultValuedAttr<MPT_ReductionAttr, "::mpt::Reduction::mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$loss);
  let assemblyFormat = "$input `,` $target (`,` $weight^)? attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

def MPT_ReduceSumOp : MPT_ReduceOp<"reduce_sum", MPT_NumericTensor,
    [Differentiable, PrecisionPolicy<"RequireF32", "Result">]>,
    MPT_RuntimeKernel<"MPTRT_ReduceSumOp"> {
  let summary = "Sum over `axes` (all axes when empty)";
}
def MPT_ReduceMeanOp : MPT_ReduceOp<"reduce_mean", MPT_FloatTensor,
    [Differentiable, PrecisionPolicy<"RequireF32", "Result">]>,
    MPT_RuntimeKernel<"MPTRT_ReduceMeanOp"> {
  let summary = "Mean over `axes` (all axes when empty)";
}
def MPT_ReduceMaxOp : MPT_ReduceOp<"reduce_max", MPT_NumericTensor,
    [Differentiable, PrecisionPolicy<"Clear">]>,
    MPT_RuntimeKernel<"MPTRT_ReduceMaxOp"> {
  let summary = "Maximum over `axes` (all axes when empty)";
}
def MPT_ReduceL2Op : MPT_ReduceOp<"reduce_l2", MPT_FloatTensor,
    [Differentiable, PrecisionPolicy<"RequireF32", "Result">]>,
    MPT_RuntimeKernel<"MPTRT_ReduceL2Op"> {
  let summary = "sqrt(sum(x^2)) over `axes` (all axes when empty)";
}

//===----------------------------------------------------------------------===//
// Shape and data movement.
//===----------------------------------------------------------------------===//

def MPT_ReshapeOp : MPT_Op<"reshape", [Differentiable, PrecisionPolicy<"Clear">, Pure]>,
    MPT_RuntimeKernel<"MPTRT_ReshapeOp"> {
  let summary = "Reshape to the result type's shape";
  let description = [{
    The result type holds the new shape. The optional `shape` operand is the
    ONNX shape input: while it is present the verifier checks a constant one
    against the result type, and canonicalization drops it, which leaves the
    exporters' Shape/Gather/Concat chains dead.

    ```mlir
    %s = mpt.constant dense<[6]> : tensor<1xi64>
    %y = mpt.reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
    // canonicalizes to
    %y = mpt.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins MPT_Tensor:$input, Optional<MPT_ShapeTensor>:$shape);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input (`,` $shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MPT_ExpandOp : MPT_Op<"expand", [Differentiable, PrecisionPolicy<"Clear">, Pure]>,
    MPT_RuntimeKernel<"MPTRT_ExpandOp"> {
  let summary = "Broadcast to the result type's shape";
  let arguments = (ins MPT_Tensor:$input, Optional<MPT_ShapeTensor>:$shape);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input (`,` $shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MPT_TransposeOp : MPT_Op<"transpose", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_TransposeOp"> {
  let summary = "Permute axes: output dim i is input dim perm[i]";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_FlattenOp : MPT_Op<"flatten", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_FlattenOp"> {
  let summary = "Reshape to 2-D at `axis`";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_SqueezeOp : MPT_Op<"squeeze", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_SqueezeOp"> {
  let summary = "Remove the size-1 axes listed in `axes`";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_UnsqueezeOp : MPT_Op<"unsqueeze", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_UnsqueezeOp"> {
  let summary = "Insert size-1 axes at `axes` (positions in the result)";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_ConcatOp : MPT_Op<"concat", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor, SameOperandsElementType]>,
    MPT_RuntimeKernel<"MPTRT_ConcatOp"> {
  let summary = "Concatenate along `axis`";
  let arguments = (ins Variadic<MPT_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_SplitOp : MPT_Op<"split", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_SplitOp"> {
  let summary = "Split along `axis` into pieces of the given sizes";
  let arguments = (ins MPT_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<MPT_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_SliceOp : MPT_Op<"slice", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_SliceOp"> {
  let summary = "Strided slice with one normalised start, end and step per axis";
  let description = [{
    Every axis has an entry. For a positive step, `0 <= start <= end <= dim`;
    for a negative step, `-1 <= end <= start < dim` (end -1 means "through
    index 0"). The importer clamps ONNX's negative and out-of-range values.
  }];
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_GatherOp : MPT_Op<"gather", [Differentiable, PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]>,
    MPT_RuntimeKernel<"MPTRT_GatherOp"> {
  let summary = "Take slices of `data` along `axis` at `indices`";
  let arguments = (ins MPT_Tensor:$data, MPT_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_TriluOp : MPT_UnaryOp<"trilu", MPT_Tensor,
    [Differentiable, PrecisionPolicy<"Clear">]>,
    MPT_RuntimeKernel<"MPTRT_TriluOp"> {
  let summary = "Keep the upper or lower triangle of the last two axes";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<BoolAttr, "true">:$upper,
                   DefaultValuedAttr<I64Attr, "0">:$k);
  let hasVerifier = 1;
}

def MPT_RangeOp : MPT_Op<"range", [PrecisionPolicy<"Follow">, Pure, SameOperandsElementType]> {
  let summary = "start, start + delta, ... below limit (0-d operands)";
  let arguments = (ins MPT_NumericTensor:$start, MPT_NumericTensor:$limit,
                   MPT_NumericTensor:$delta);
  let results = (outs MPT_NumericTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def MPT_ShapeOp : MPT_Op<"shape", [PrecisionPolicy<"Clear">, Pure, InferTypeOpAdaptor]> {
  let summary = "The input's shape (dims [start, end)) as i64; always folds";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs MPT_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_ConstantOfShapeOp : MPT_Op<"constant_of_shape", [PrecisionPolicy<"Clear">, Pure]>,
    MPT_RuntimeKernel<"MPTRT_ConstantOfShapeOp"> {
  let summary = "A tensor of the result's shape filled with `value`";
  let arguments = (ins Optional<MPT_ShapeTensor>:$shape, TypedAttrInterface:$value);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "($shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

include "mpt/Dialect/MPT/IR/MPTGradOps.td"
include "mpt/Dialect/MPT/IR/MPTTrainingOps.td"

#endif // MPT_DIALECT_MPT_IR_MPTOPS_TD
