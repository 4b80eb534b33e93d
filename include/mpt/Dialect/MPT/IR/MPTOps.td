//===- MPTOps.td - mpt dialect operations ------------------*- tablegen -*-===//
//
// Operation definitions for the `mpt` dialect. Ops are grouped by family;
// each family's shared shape rule lives in lib/Dialect/MPT/IR.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTOPS_TD
#define MPT_DIALECT_MPT_IR_MPTOPS_TD

include "mpt/Dialect/MPT/IR/MPTBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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
    : MPT_BroadcastOp<mnemonic, !listconcat([SameOperandsElementType], traits)> {
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
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant tensor (ONNX Constant and non-trainable initializers)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def MPT_IdentityOp : MPT_UnaryOp<"identity", MPT_Tensor> {
  let summary = "ONNX Identity; folds away";
  let hasFolder = 1;
}

def MPT_CastOp : MPT_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "Element-type conversion (ONNX Cast)";
  let description = [{
    Converts each element to the result's element type. Float narrowing rounds
    to nearest even; conversions into the FP8 types saturate as MLIR's float
    semantics define. A cast written by the user is an `mpt.cast`; casts that
    later passes insert are marked so that those passes may remove them.
  }];
  let arguments = (ins MPT_Tensor:$input);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasFolder = 1;
}

def MPT_DropoutOp : MPT_Op<"dropout", [Pure]> {
  let summary = "ONNX Dropout: the output and the keep mask";
  let description = [{
    In inference (`training = false`) or with `ratio = 0` the output is the
    input and the mask is all true; canonicalization then removes the op.
  }];
  let arguments = (ins MPT_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                   DefaultValuedAttr<BoolAttr, "false">:$training,
                   OptionalAttr<I64Attr>:$seed);
  let results = (outs MPT_FloatTensor:$output, MPT_BoolTensor:$mask);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output) `,` type($mask)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary.
//===----------------------------------------------------------------------===//

def MPT_SqrtOp : MPT_UnaryOp<"sqrt", MPT_FloatTensor> { let summary = "Square root"; }
def MPT_ExpOp : MPT_UnaryOp<"exp", MPT_FloatTensor> { let summary = "Natural exponential"; }
def MPT_LogOp : MPT_UnaryOp<"log", MPT_FloatTensor> { let summary = "Natural logarithm"; }
def MPT_ErfOp : MPT_UnaryOp<"erf", MPT_FloatTensor> { let summary = "Gauss error function"; }
def MPT_TanhOp : MPT_UnaryOp<"tanh", MPT_FloatTensor> { let summary = "Hyperbolic tangent"; }
def MPT_SigmoidOp : MPT_UnaryOp<"sigmoid", MPT_FloatTensor> { let summary = "Logistic sigmoid"; }
def MPT_ReluOp : MPT_UnaryOp<"relu", MPT_NumericTensor> { let summary = "max(x, 0)"; }
def MPT_NegOp : MPT_UnaryOp<"neg", MPT_NumericTensor> {
  let summary = "Negation";
  let hasFolder = 1;
}
def MPT_AbsOp : MPT_UnaryOp<"abs", MPT_NumericTensor> { let summary = "Absolute value"; }
def MPT_NotOp : MPT_UnaryOp<"not", MPT_BoolTensor> {
  let summary = "Logical not";
  let hasFolder = 1;
}

def MPT_LeakyReluOp : MPT_UnaryOp<"leaky_relu", MPT_FloatTensor> {
  let summary = "x if x >= 0 else alpha * x";
  let arguments = (ins MPT_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}

def MPT_GeluOp : MPT_UnaryOp<"gelu", MPT_FloatTensor> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate` is `"none"` (the erf form) or `"tanh"`. The importer also
    recognises nothing implicitly: an exporter's erf decomposition stays as
    the ops it wrote.
  }];
  let arguments = (ins MPT_FloatTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def MPT_ClipOp : MPT_UnaryOp<"clip", MPT_NumericTensor> {
  let summary = "Clamp into [min, max]; an absent bound is unbounded";
  let arguments = (ins MPT_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
}

//===----------------------------------------------------------------------===//
// Elementwise binary and ternary (numpy broadcasting).
//===----------------------------------------------------------------------===//

def MPT_AddOp : MPT_BinaryOp<"add", [Commutative, SameOperandsElementType]> { let summary = "Elementwise sum"; }
def MPT_SubOp : MPT_BinaryOp<"sub", [SameOperandsElementType]> { let summary = "Elementwise difference"; }
def MPT_MulOp : MPT_BinaryOp<"mul", [Commutative, SameOperandsElementType]> { let summary = "Elementwise product"; }
def MPT_DivOp : MPT_BinaryOp<"div", [SameOperandsElementType]> {
  let summary = "Elementwise quotient (integer division truncates)";
}
def MPT_MaxOp : MPT_BinaryOp<"max", [Commutative, SameOperandsElementType]> { let summary = "Elementwise maximum"; }
def MPT_MinOp : MPT_BinaryOp<"min", [Commutative, SameOperandsElementType]> { let summary = "Elementwise minimum"; }
def MPT_PowOp : MPT_BinaryOp<"pow"> {
  let summary = "lhs ** rhs; the exponent may have another element type";
}

def MPT_EqualOp : MPT_CompareOp<"equal", [Commutative]> { let summary = "Elementwise =="; }
def MPT_LessOp : MPT_CompareOp<"less"> { let summary = "Elementwise <"; }
def MPT_GreaterOp : MPT_CompareOp<"greater"> { let summary = "Elementwise >"; }

def MPT_WhereOp : MPT_BroadcastOp<"where"> {
  let summary = "Select x where condition holds, else y";
  let arguments = (ins MPT_BoolTensor:$condition, MPT_Tensor:$x, MPT_Tensor:$y);
  let results = (outs MPT_Tensor:$output);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and pooling.
//===----------------------------------------------------------------------===//

def MPT_MatMulOp : MPT_Op<"matmul", [Pure, InferTypeOpAdaptor, SameOperandsElementType]> {
  let summary = "numpy matmul with batch broadcasting";
  let arguments = (ins MPT_FloatTensor:$lhs, MPT_FloatTensor:$rhs);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def MPT_GemmOp : MPT_Op<"gemm", [Pure, InferTypeOpAdaptor]> {
  let summary = "act(alpha * op(A) * op(B) + beta * C) (ONNX Gemm, plus an epilogue)";
  let description = [{
    ONNX Gemm with an optional fused activation epilogue, `activation`:
    `none` (the default, as ONNX Gemm), `relu`, `gelu` (erf form) or
    `gelu_tanh`. The importer always produces `none`; the runtime lowering's
    kernel selection (`--mpt-fuse-epilogues`) folds a following Relu or Gelu
    into it.
  }];
  let arguments = (ins MPT_FloatTensor:$a, MPT_FloatTensor:$b,
                   Optional<MPT_FloatTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b,
                   DefaultValuedStrAttr<StrAttr, "none">:$activation);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_ConvOp : MPT_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d grouped convolution, NCHW, explicit pads";
  let description = [{
    `pads` holds the begin pads of every spatial axis followed by the end
    pads, as in ONNX; the importer resolves `auto_pad` into them.
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$weight,
                   Optional<MPT_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_MaxPoolOp : MPT_Op<"max_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d max pooling, NCHW, explicit pads";
  let arguments = (ins MPT_NumericTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs MPT_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_AveragePoolOp : MPT_Op<"average_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d average pooling, NCHW, explicit pads";
  let arguments = (ins MPT_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_GlobalAveragePoolOp : MPT_Op<"global_average_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "Mean over every spatial axis, keeping them as size 1";
  let arguments = (ins MPT_FloatTensor:$input);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax and losses.
//===----------------------------------------------------------------------===//

def MPT_BatchNormOp : MPT_Op<"batch_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalisation with running statistics (inference mode)";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   MPT_FloatTensor:$bias, MPT_FloatTensor:$mean,
                   MPT_FloatTensor:$var,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs MPT_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def MPT_BatchNormTrainOp : MPT_Op<"batch_norm_train", [Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalisation with batch statistics (training mode)";
  let description = [{
    Normalises with the batch's own mean and biased variance, and returns the
    updated running statistics `running * momentum + batch * (1 - momentum)`
    as ONNX BatchNormalization-15 with `training_mode = 1` defines them.
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

def MPT_LayerNormOp : MPT_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
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

def MPT_SoftmaxOp : MPT_UnaryOp<"softmax", MPT_FloatTensor> {
  let summary = "Softmax along one axis";
  let arguments = (ins MPT_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def MPT_LogSoftmaxOp : MPT_UnaryOp<"log_softmax", MPT_FloatTensor> {
  let summary = "Log of softmax along one axis";
  let arguments = (ins MPT_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def MPT_SoftmaxCrossEntropyLossOp : MPT_Op<"softmax_cross_entropy_loss",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Cross-entropy of softmax(scores) against class labels";
  let description = [{
    `scores` is (N, C, d1, ...), `labels` (N, d1, ...). `reduction` is
    `"mean"`, `"sum"` or `"none"`; labels equal to `ignore_index` contribute
    nothing. The second result is log_softmax(scores) along axis 1.
  }];
  let arguments = (ins MPT_FloatTensor:$scores, MPT_IndexTensor:$labels,
                   Optional<MPT_FloatTensor>:$weights,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$loss, MPT_FloatTensor:$log_prob);
  let assemblyFormat = "$scores `,` $labels (`,` $weights^)? attr-dict `:` functional-type(operands, results)";
}

def MPT_NegativeLogLikelihoodLossOp : MPT_Op<"nll_loss",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Negative log-likelihood of log-probabilities at the targets";
  let arguments = (ins MPT_FloatTensor:$input, MPT_IndexTensor:$target,
                   Optional<MPT_FloatTensor>:$weight,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$loss);
  let assemblyFormat = "$input `,` $target (`,` $weight^)? attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

def MPT_ReduceSumOp : MPT_ReduceOp<"reduce_sum", MPT_NumericTensor> {
  let summary = "Sum over `axes` (all axes when empty)";
}
def MPT_ReduceMeanOp : MPT_ReduceOp<"reduce_mean", MPT_FloatTensor> {
  let summary = "Mean over `axes` (all axes when empty)";
}
def MPT_ReduceMaxOp : MPT_ReduceOp<"reduce_max", MPT_NumericTensor> {
  let summary = "Maximum over `axes` (all axes when empty)";
}
def MPT_ReduceL2Op : MPT_ReduceOp<"reduce_l2", MPT_FloatTensor> {
  let summary = "sqrt(sum(x^2)) over `axes` (all axes when empty)";
}

//===----------------------------------------------------------------------===//
// Shape and data movement.
//===----------------------------------------------------------------------===//

def MPT_ReshapeOp : MPT_Op<"reshape", [Pure]> {
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

def MPT_ExpandOp : MPT_Op<"expand", [Pure]> {
  let summary = "Broadcast to the result type's shape";
  let arguments = (ins MPT_Tensor:$input, Optional<MPT_ShapeTensor>:$shape);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input (`,` $shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MPT_TransposeOp : MPT_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute axes: output dim i is input dim perm[i]";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_FlattenOp : MPT_Op<"flatten", [Pure, InferTypeOpAdaptor]> {
  let summary = "Reshape to 2-D at `axis`";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_SqueezeOp : MPT_Op<"squeeze", [Pure, InferTypeOpAdaptor]> {
  let summary = "Remove the size-1 axes listed in `axes`";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_UnsqueezeOp : MPT_Op<"unsqueeze", [Pure, InferTypeOpAdaptor]> {
  let summary = "Insert size-1 axes at `axes` (positions in the result)";
  let arguments = (ins MPT_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_ConcatOp : MPT_Op<"concat", [Pure, InferTypeOpAdaptor, SameOperandsElementType]> {
  let summary = "Concatenate along `axis`";
  let arguments = (ins Variadic<MPT_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_SplitOp : MPT_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "Split along `axis` into pieces of the given sizes";
  let arguments = (ins MPT_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<MPT_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MPT_SliceOp : MPT_Op<"slice", [Pure, InferTypeOpAdaptor]> {
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

def MPT_GatherOp : MPT_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "Take slices of `data` along `axis` at `indices`";
  let arguments = (ins MPT_Tensor:$data, MPT_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_TriluOp : MPT_UnaryOp<"trilu", MPT_Tensor> {
  let summary = "Keep the upper or lower triangle of the last two axes";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<BoolAttr, "true">:$upper,
                   DefaultValuedAttr<I64Attr, "0">:$k);
  let hasVerifier = 1;
}

def MPT_RangeOp : MPT_Op<"range", [Pure, SameOperandsElementType]> {
  let summary = "start, start + delta, ... below limit (0-d operands)";
  let arguments = (ins MPT_NumericTensor:$start, MPT_NumericTensor:$limit,
                   MPT_NumericTensor:$delta);
  let results = (outs MPT_NumericTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def MPT_ShapeOp : MPT_Op<"shape", [Pure, InferTypeOpAdaptor]> {
  let summary = "The input's shape (dims [start, end)) as i64; always folds";
  let arguments = (ins MPT_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs MPT_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def MPT_ConstantOfShapeOp : MPT_Op<"constant_of_shape", [Pure]> {
  let summary = "A tensor of the result's shape filled with `value`";
  let arguments = (ins Optional<MPT_ShapeTensor>:$shape, TypedAttrInterface:$value);
  let results = (outs MPT_Tensor:$output);
  let assemblyFormat = "($shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // MPT_DIALECT_MPT_IR_MPTOPS_TD
