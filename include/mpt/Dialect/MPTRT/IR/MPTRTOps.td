//===- MPTRTOps.td - mptrt operations ----------------------*- tablegen -*-===//
//
// One op per runtime kernel kind (runtime/include/mptrt/KernelSchema.def),
// grouped as the schema groups them, plus the non-kernel ops: the arena,
// constants and arena views.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPTRT_IR_MPTRTOPS_TD
#define MPT_DIALECT_MPTRT_IR_MPTRTOPS_TD

include "mpt/Dialect/MPTRT/IR/MPTRTBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class MPTRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<MPTRT_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Kernel metadata computed from an op's `ins`/`outs` dags, so that the
// counts and attribute table the schema test and the plan emitter read are
// the ODS definition itself, never restated.
//===----------------------------------------------------------------------===//

// The schema type of one attribute constraint (KernelSchema.def's types).
class MPTRT_AttrKind<Attr a> {
  string kind = !cond(
      !isa<MPTRT_EnumAttr>(a): "String",
      !ne(!find(a.storageType, "BoolAttr"), -1): "Bool",
      !ne(!find(a.storageType, "IntegerAttr"), -1): "Int",
      !ne(!find(a.storageType, "FloatAttr"), -1): "Float",
      !ne(!find(a.storageType, "DenseI64ArrayAttr"), -1): "IntList",
      // constant_of_shape's fill value: a float or an integer of the
      // result's element type; the schema lists it as Float (the runtime
      // reads an int where the result is an integer).
      !ne(!find(a.storageType, "TypedAttr"), -1): "Float",
      true: "Unsupported");
  // The allowed strings of an enum, '|'-separated; empty for other kinds.
  string allowed = !if(!isa<MPTRT_EnumAttr>(a),
      !interleave(!foreach(c, !cast<MPTRT_EnumAttr>(a).enum.enumerants, c.str), "|"),
      "");
}

// Variadic groups with bounds the counts below know: one or more values,
// and dropout's (seed, step), none or both. The kernel verifier checks each
// op's total count against its range.
class MPTRT_OneOrMore<Type type> : Variadic<type>;
class MPTRT_NoneOrTwo<Type type> : Variadic<type>;

class MPTRT_ValueCounts<dag d> {
  list<int> idx = !range(!size(d));
  int min = !foldl(0, idx, acc, i, !add(acc, !cond(
      !initialized(!getdagarg<MPTRT_OneOrMore>(d, i)): 1,
      !or(!initialized(!getdagarg<Attr>(d, i)),
          !initialized(!getdagarg<Optional>(d, i)),
          !initialized(!getdagarg<Variadic>(d, i))): 0,
      true: 1)));
  int max = !foldl(0, idx, acc, i, !cond(
      !lt(acc, 0): acc,
      !initialized(!getdagarg<Attr>(d, i)): acc,
      !initialized(!getdagarg<MPTRT_NoneOrTwo>(d, i)): !add(acc, 2),
      !initialized(!getdagarg<Variadic>(d, i)): -1,
      true: !add(acc, 1)));
}

// An optional kernel attribute with the value the kernel takes when it is
// absent (KernelSchema.def's MPTRT_DEFAULT; a literal as C++ writes it, a
// string quoted). An attribute whose absence means something else (clip's
// bounds, ignore_index) or whose default depends on the operands (pool
// strides, transpose perm) is a plain OptionalAttr.
class MPTRT_Default<Attr attr, string value> : OptionalAttr<attr> {
  string kernelDefault = value;
}
class MPTRT_DefaultOf<MPTRT_Default a> {
  string value = a.kernelDefault;
}

// The attributes of a kernel's `ins`, in order: name, schema type, whether
// required, allowed strings and default ("" for none).
class MPTRT_KernelAttrs<dag d> {
  list<int> idx = !filter(i, !range(!size(d)), !initialized(!getdagarg<Attr>(d, i)));
  list<string> names = !foreach(i, idx, !getdagname(d, i));
  list<bit> required = !foreach(i, idx, !not(!initialized(!getdagarg<OptionalAttr>(d, i))));
  list<Attr> base = !foreach(i, idx, !if(!initialized(!getdagarg<OptionalAttr>(d, i)),
      !getdagarg<OptionalAttr>(d, i).baseAttr, !getdagarg<Attr>(d, i)));
  list<string> kinds = !foreach(a, base, MPTRT_AttrKind<a>.kind);
  list<string> allowed = !foreach(a, base, MPTRT_AttrKind<a>.allowed);
  list<string> valuesMacros = !foreach(a, base,
      !if(!isa<MPTRT_EnumAttr>(a), !cast<MPTRT_EnumAttr>(a).schemaValues, ""));
  list<string> defaults = !foreach(i, idx, !if(!initialized(!getdagarg<MPTRT_Default>(d, i)),
      MPTRT_DefaultOf<!getdagarg<MPTRT_Default>(d, i)>.value, ""));
  // The body of kernelAttrFrom(): each enum attribute from another
  // dialect's attribute over the same enum.
  string fromOtherDialect = !foldl("", !range(!size(names)), acc, i,
      acc # !if(!isa<MPTRT_EnumAttr>(base[i]),
        "if (name == \"" # names[i] # "\")\n  return ::mpt::enumAttrFrom<" #
          base[i].storageType # ">(value);\n", ""));
  // The rows of kernelAttrInfo() (C++ initializers).
  string rows = !foldl("", !range(!size(names)), acc, i,
      acc # "{\"" # names[i] # "\", ::mpt::rt::KernelAttrType::" # kinds[i] # ", " #
        !if(required[i], "true", "false") # ", \"" # allowed[i] # "\"},\n");
}

// A kernel: `kernelIns` holds its operands then its attributes, exactly the
// kernel's; every kernel op also has `offsets`, its results' arena byte
// offsets (set by the memory planner; not a kernel attribute).
//
// These records are the runtime's kernel schema: `mpt-tblgen
// -gen-kernel-schema` writes runtime/include/mptrt/generated/KernelKinds.def
// from them (one MPTRT_KERNEL row per op, in the order of this file), which
// every backend's kind table, the decoders' attribute checks and the plan
// validator read. `family` names the decoder and the backends' prepare
// function (Unary: prepareUnary, ...); empty, it is the op's C++ name
// (MPTRT_<Family>Op).
class MPTRT_KernelOp<string mnemonic, dag kernelIns, dag kernelOuts, list<Trait> traits = []>
    : MPTRT_Op<mnemonic, !listconcat([MPTRT_KernelOpInterface], traits)> {
  let arguments = !con(kernelIns, (ins OptionalAttr<DenseI64ArrayAttr>:$offsets));
  let results = kernelOuts;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  string family = "";
  // Set for the unary functions' kernels, whose schema rows their records
  // give (mptrt/generated/UnaryKinds.def) instead of KernelKinds.def.
  bit rowsInUnaryKinds = 0;
  MPTRT_ValueCounts operandCounts = MPTRT_ValueCounts<kernelIns>;
  MPTRT_ValueCounts resultCounts = MPTRT_ValueCounts<kernelOuts>;
  MPTRT_KernelAttrs kernelAttrs = MPTRT_KernelAttrs<kernelIns>;
  let extraClassDeclaration = [{
    static constexpr unsigned kMinOperands = }] # operandCounts.min # [{;
    static constexpr int kMaxOperands = }] # operandCounts.max # [{;
    static constexpr unsigned kMinResults = }] # resultCounts.min # [{;
    static constexpr int kMaxResults = }] # resultCounts.max # [{;
    static ::llvm::ArrayRef<::mpt::rt::KernelAttrInfo> kernelAttrInfo() {
      static const ::mpt::rt::KernelAttrInfo rows[] = {
        }] # kernelAttrs.rows # [{
        {"", ::mpt::rt::KernelAttrType::Int, false, ""}};
      return ::llvm::ArrayRef(rows).drop_back();
    }
    /// `value`, another dialect's form of the kernel attribute `name`, as
    /// this op takes it: an enum attribute becomes this dialect's attribute
    /// over the same enum (null if `value` holds another enum); any other
    /// attribute is taken as it is.
    static ::mlir::Attribute kernelAttrFrom(::llvm::StringRef name,
                                            ::mlir::Attribute value) {
      (void)name;
      }] # kernelAttrs.fromOtherDialect # [{
      return value;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Shared shapes of kernels.
//===----------------------------------------------------------------------===//

class MPTRT_UnaryKernel<string mnemonic, dag attrs = (ins)>
    : MPTRT_KernelOp<mnemonic, !con((ins MPTRT_Tensor:$input), attrs),
                     (outs MPTRT_Tensor:$output)> {
  let summary = "Elementwise " # mnemonic;
}

class MPTRT_BinaryKernel<string mnemonic>
    : MPTRT_KernelOp<mnemonic, (ins MPTRT_Tensor:$lhs, MPTRT_Tensor:$rhs),
                     (outs MPTRT_Tensor:$output)> {
  let summary = "Elementwise " # mnemonic # " with numpy broadcasting";
}

// Window attributes of conv and pooling, and of their gradients.
defvar ConvWindow = (ins OptionalAttr<DenseI64ArrayAttr>:$strides,
                     OptionalAttr<DenseI64ArrayAttr>:$pads,
                     OptionalAttr<DenseI64ArrayAttr>:$dilations,
                     MPTRT_Default<I64Attr, "1">:$group,
                     OptionalAttr<DenseI64ArrayAttr>:$kernel_shape);
defvar PoolWindow = (ins DenseI64ArrayAttr:$kernel_shape,
                     OptionalAttr<DenseI64ArrayAttr>:$strides,
                     OptionalAttr<DenseI64ArrayAttr>:$pads,
                     OptionalAttr<DenseI64ArrayAttr>:$dilations,
                     MPTRT_Default<BoolAttr, "false">:$ceil_mode);
defvar Reduce = (ins OptionalAttr<DenseI64ArrayAttr>:$axes,
                 MPTRT_Default<BoolAttr, "true">:$keepdims);
defvar LossAttrs = (ins MPTRT_Default<MPTRT_ReductionAttr, "mean">:$reduction,
                    OptionalAttr<I64Attr>:$ignore_index);
defvar SliceAttrs = (ins DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$ends,
                     OptionalAttr<DenseI64ArrayAttr>:$steps);

//===----------------------------------------------------------------------===//
// Elementwise unary.
//===----------------------------------------------------------------------===//

// One kernel op per function without attributes (MPTUnaryFunctions.td).
let family = "Unary" in {
let rowsInUnaryKinds = 1 in
foreach f = !filter(f, MPTUnaryFunctions, !and(f.kernel, !not(f.attrs))) in
  def MPTRT_ # f.name # Op : MPTRT_UnaryKernel<f.kind,
      !dag(ins, !foreach(i, !range(!size(f.params)),
                         MPTRT_Default<F32Attr, f.paramDefaults[i]>), f.params)>;

def MPTRT_LeakyReluOp : MPTRT_UnaryKernel<"leaky_relu", (ins MPTRT_Default<F32Attr, "0.01">:$alpha)>;
def MPTRT_GeluOp : MPTRT_UnaryKernel<"gelu",
    (ins MPTRT_Default<MPTRT_GeluApproximateAttr, "none">:$approximate)>;
def MPTRT_ClipOp : MPTRT_UnaryKernel<"clip",
    (ins OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max)>;
} // family Unary

//===----------------------------------------------------------------------===//
// Elementwise binary with broadcasting, and select.
//===----------------------------------------------------------------------===//

let family = "Binary" in
foreach k = [["Add", "add"], ["Sub", "sub"], ["Mul", "mul"], ["Div", "div"],
             ["Pow", "pow"], ["Max", "max"], ["Min", "min"], ["Equal", "equal"],
             ["Less", "less"], ["Greater", "greater"]] in
  def MPTRT_ # k[0] # Op : MPTRT_BinaryKernel<k[1]>;

def MPTRT_WhereOp : MPTRT_KernelOp<"where",
    (ins MPTRT_Tensor:$condition, MPTRT_Tensor:$x, MPTRT_Tensor:$y),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Select x where condition holds, else y";
}

//===----------------------------------------------------------------------===//
// Contractions.
//===----------------------------------------------------------------------===//

def MPTRT_MatMulOp : MPTRT_KernelOp<"matmul",
    (ins MPTRT_Tensor:$lhs, MPTRT_Tensor:$rhs), (outs MPTRT_Tensor:$output)> {
  let summary = "numpy matmul, FP32 accumulation";
}

def MPTRT_GemmOp : MPTRT_KernelOp<"gemm",
    (ins MPTRT_Tensor:$a, MPTRT_Tensor:$b, Optional<MPTRT_Tensor>:$c,
         MPTRT_Default<F32Attr, "1.0">:$alpha, MPTRT_Default<F32Attr, "1.0">:$beta,
         MPTRT_Default<BoolAttr, "false">:$trans_a, MPTRT_Default<BoolAttr, "false">:$trans_b,
         MPTRT_Default<MPTRT_ActivationAttr, "none">:$activation),
    (outs MPTRT_Tensor:$output)> {
  let summary = "act(alpha * op(A) * op(B) + beta * C)";
}

def MPTRT_ScaledMatMulOp : MPTRT_KernelOp<"scaled_matmul",
    (ins MPTRT_Tensor:$lhs, MPTRT_Tensor:$rhs, MPTRT_ScaleTensor:$lhs_scale,
         MPTRT_ScaleTensor:$rhs_scale),
    (outs MPTRT_Tensor:$output)> {
  let summary = "FP8 numpy matmul: (lhs rhs) * (1/lhs_scale) * (1/rhs_scale), FP32 accumulation";
}

def MPTRT_ScaledGemmOp : MPTRT_KernelOp<"scaled_gemm",
    (ins MPTRT_Tensor:$a, MPTRT_Tensor:$b, Optional<MPTRT_Tensor>:$c,
         MPTRT_ScaleTensor:$a_scale, MPTRT_ScaleTensor:$b_scale,
         MPTRT_Default<F32Attr, "1.0">:$alpha, MPTRT_Default<F32Attr, "1.0">:$beta,
         MPTRT_Default<BoolAttr, "false">:$trans_a, MPTRT_Default<BoolAttr, "false">:$trans_b),
    (outs MPTRT_Tensor:$output)> {
  let summary = "FP8 gemm: alpha * (1/a_scale) * (1/b_scale) * op(A) op(B) + beta * C";
}

def MPTRT_AttentionOp : MPTRT_KernelOp<"attention",
    (ins MPTRT_Tensor:$query, MPTRT_Tensor:$key, MPTRT_Tensor:$value,
         Optional<MPTRT_Tensor>:$mask, F32Attr:$scale),
    (outs MPTRT_Tensor:$output, MPTRT_Tensor:$logsumexp)> {
  let summary = "Scaled dot-product attention";
}
def MPTRT_ConvOp : MPTRT_KernelOp<"conv",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$weight, Optional<MPTRT_Tensor>:$bias),
         ConvWindow),
    (outs MPTRT_Tensor:$output)> {
  let summary = "N-d grouped convolution, NCHW, explicit pads";
}

//===----------------------------------------------------------------------===//
// Pooling.
//===----------------------------------------------------------------------===//

def MPTRT_MaxPoolOp : MPTRT_KernelOp<"max_pool",
    !con((ins MPTRT_Tensor:$input), PoolWindow), (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "N-d max pooling";
}
def MPTRT_AveragePoolOp : MPTRT_KernelOp<"average_pool",
    !con((ins MPTRT_Tensor:$input), PoolWindow,
         (ins MPTRT_Default<BoolAttr, "false">:$count_include_pad)),
    (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "N-d average pooling";
}
def MPTRT_GlobalAveragePoolOp : MPTRT_KernelOp<"global_average_pool",
    (ins MPTRT_Tensor:$input), (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "Mean over every spatial axis";
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax.
//===----------------------------------------------------------------------===//

def MPTRT_BatchNormOp : MPTRT_KernelOp<"batch_norm",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$bias,
         MPTRT_Tensor:$mean, MPTRT_Tensor:$var,
         MPTRT_Default<F32Attr, "1e-5">:$epsilon, MPTRT_Default<F32Attr, "0.9">:$momentum),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Batch normalisation with running statistics";
}
def MPTRT_BatchNormTrainOp : MPTRT_KernelOp<"batch_norm_train",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$bias,
         MPTRT_Tensor:$running_mean, MPTRT_Tensor:$running_var,
         MPTRT_Default<F32Attr, "1e-5">:$epsilon, MPTRT_Default<F32Attr, "0.9">:$momentum),
    (outs MPTRT_Tensor:$output, Optional<MPTRT_Tensor>:$new_running_mean,
          Optional<MPTRT_Tensor>:$new_running_var), [AttrSizedResultSegments]> {
  let family = "BatchNorm";
  let summary = "Batch normalisation with batch statistics";
  // Its optional results are statistics; the sizes are explicit.
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}
def MPTRT_LayerNormOp : MPTRT_KernelOp<"layer_norm",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, Optional<MPTRT_Tensor>:$bias,
         MPTRT_Default<I64Attr, "-1">:$axis, MPTRT_Default<F32Attr, "1e-5">:$epsilon),
    (outs MPTRT_Tensor:$output, Optional<MPTRT_Tensor>:$mean,
          Optional<MPTRT_Tensor>:$inv_std_dev), [AttrSizedResultSegments]> {
  let summary = "Layer normalisation from `axis` on";
  // Its optional results are statistics; the sizes are explicit.
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}
def MPTRT_SoftmaxOp : MPTRT_UnaryKernel<"softmax", (ins MPTRT_Default<I64Attr, "-1">:$axis)>;
let family = "Softmax" in
def MPTRT_LogSoftmaxOp : MPTRT_UnaryKernel<"log_softmax", (ins MPTRT_Default<I64Attr, "-1">:$axis)>;

//===----------------------------------------------------------------------===//
// Reductions and losses.
//===----------------------------------------------------------------------===//

let family = "Reduce" in
foreach k = [["ReduceSum", "reduce_sum"], ["ReduceMean", "reduce_mean"],
             ["ReduceMax", "reduce_max"], ["ReduceL2", "reduce_l2"]] in
  def MPTRT_ # k[0] # Op : MPTRT_UnaryKernel<k[1], Reduce>;

def MPTRT_SoftmaxCrossEntropyLossOp : MPTRT_KernelOp<"softmax_cross_entropy_loss",
    !con((ins MPTRT_Tensor:$scores, MPTRT_Tensor:$labels, Optional<MPTRT_Tensor>:$weights),
         LossAttrs),
    (outs MPTRT_Tensor:$loss, Optional<MPTRT_Tensor>:$log_prob)> {
  let family = "Loss";
  let summary = "Cross-entropy of softmax(scores) against class labels";
}
def MPTRT_NegativeLogLikelihoodLossOp : MPTRT_KernelOp<"nll_loss",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$target, Optional<MPTRT_Tensor>:$weight),
         LossAttrs),
    (outs MPTRT_Tensor:$loss)> {
  let family = "Loss";
  let summary = "Negative log-likelihood at the targets";
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

// Copies: the memory planner makes most of them arena views.
def MPTRT_CopyOp : MPTRT_UnaryKernel<"copy">;
let family = "Copy" in {
def MPTRT_IdentityOp : MPTRT_UnaryKernel<"identity">;
def MPTRT_ReshapeOp : MPTRT_KernelOp<"reshape",
    (ins MPTRT_Tensor:$input, Optional<MPTRT_Tensor>:$shape), (outs MPTRT_Tensor:$output)> {
  let summary = "Reshape (copies; the memory planner makes arena reshapes views)";
}
def MPTRT_FlattenOp : MPTRT_UnaryKernel<"flatten", (ins OptionalAttr<I64Attr>:$axis)>;
def MPTRT_SqueezeOp : MPTRT_UnaryKernel<"squeeze", (ins OptionalAttr<DenseI64ArrayAttr>:$axes)>;
def MPTRT_UnsqueezeOp : MPTRT_UnaryKernel<"unsqueeze", (ins OptionalAttr<DenseI64ArrayAttr>:$axes)>;
} // family Copy
def MPTRT_CastOp : MPTRT_UnaryKernel<"cast", (ins MPTRT_Default<BoolAttr, "false">:$saturate)>;
def MPTRT_QuantizeOp : MPTRT_KernelOp<"quantize",
    (ins MPTRT_Tensor:$input, MPTRT_ScaleTensor:$scale), (outs MPTRT_Tensor:$output)> {
  let summary = "saturate(round(input * scale)) into FP8";
}
def MPTRT_DropoutOp : MPTRT_KernelOp<"dropout",
    (ins MPTRT_Tensor:$input, MPTRT_NoneOrTwo<0DTensorOf<[I64]>>:$rng,
         MPTRT_Default<F32Attr, "0.5">:$ratio, MPTRT_Default<BoolAttr, "false">:$training,
         OptionalAttr<I64Attr>:$stream),
    (outs MPTRT_Tensor:$output, Optional<MPTRT_Tensor>:$mask)> {
  let summary = "Dropout with a Philox mask of (seed, step, stream, index)";
  let hasVerifier = 1;
}
def MPTRT_TransposeOp : MPTRT_UnaryKernel<"transpose", (ins OptionalAttr<DenseI64ArrayAttr>:$perm)>;
def MPTRT_ConcatOp : MPTRT_KernelOp<"concat",
    (ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs, I64Attr:$axis), (outs MPTRT_Tensor:$output)> {
  let summary = "Concatenate along `axis`";
}
def MPTRT_SplitOp : MPTRT_KernelOp<"split",
    (ins MPTRT_Tensor:$input, MPTRT_Default<I64Attr, "0">:$axis,
         OptionalAttr<DenseI64ArrayAttr>:$sizes),
    (outs MPTRT_OneOrMore<MPTRT_Tensor>:$outputs)> {
  let summary = "Split along `axis` into pieces of the given sizes";
}
def MPTRT_SliceOp : MPTRT_KernelOp<"slice",
    !con((ins MPTRT_Tensor:$input), SliceAttrs), (outs MPTRT_Tensor:$output)> {
  let summary = "Strided slice";
}
def MPTRT_GatherOp : MPTRT_KernelOp<"gather",
    (ins MPTRT_Tensor:$data, MPTRT_Tensor:$indices, MPTRT_Default<I64Attr, "0">:$axis),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Take slices of `data` along `axis` at `indices`";
}
def MPTRT_ExpandOp : MPTRT_KernelOp<"expand",
    (ins MPTRT_Tensor:$input, Optional<MPTRT_Tensor>:$shape), (outs MPTRT_Tensor:$output)> {
  let summary = "Broadcast to the result's shape";
}
def MPTRT_TriluOp : MPTRT_UnaryKernel<"trilu",
    (ins MPTRT_Default<BoolAttr, "true">:$upper, MPTRT_Default<I64Attr, "0">:$k)>;
def MPTRT_ConstantOfShapeOp : MPTRT_KernelOp<"constant_of_shape",
    (ins Optional<MPTRT_Tensor>:$shape, MPTRT_Default<TypedAttrInterface, "0.0">:$value),
    (outs MPTRT_Tensor:$output)> {
  let family = "Fill";
  let summary = "A tensor of the result's shape filled with `value`";
}

//===----------------------------------------------------------------------===//
// Backward (docs/training.md).
//===----------------------------------------------------------------------===//

def MPTRT_UnaryGradOp : MPTRT_KernelOp<"unary_grad",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad, MPTRT_UnaryGradKindAttr:$kind,
         OptionalAttr<F32Attr>:$alpha, OptionalAttr<F32Attr>:$beta,
         OptionalAttr<F32Attr>:$gamma, OptionalAttr<F64Attr>:$min,
         OptionalAttr<F64Attr>:$max),
    (outs MPTRT_Tensor:$output)> {
  let summary = "f'(input) * grad";
}
def MPTRT_SoftmaxGradOp : MPTRT_KernelOp<"softmax_grad",
    (ins MPTRT_Tensor:$output, MPTRT_Tensor:$grad, I64Attr:$axis,
         MPTRT_Default<BoolAttr, "false">:$log),
    (outs MPTRT_Tensor:$input_grad)> {
  let summary = "Backward of softmax or log_softmax";
}
def MPTRT_LayerNormGradOp : MPTRT_KernelOp<"layer_norm_grad",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$mean,
         MPTRT_Tensor:$inv_std_dev, MPTRT_Tensor:$grad, I64Attr:$axis),
    (outs MPTRT_Tensor:$input_grad, MPTRT_Tensor:$scale_grad, MPTRT_Tensor:$bias_grad)> {
  let summary = "Backward of layer_norm";
}
def MPTRT_AttentionGradOp : MPTRT_KernelOp<"attention_grad",
    (ins MPTRT_Tensor:$query, MPTRT_Tensor:$key, MPTRT_Tensor:$value,
         MPTRT_Tensor:$output, MPTRT_Tensor:$logsumexp, MPTRT_Tensor:$grad,
         Optional<MPTRT_Tensor>:$mask, F32Attr:$scale),
    (outs MPTRT_Tensor:$query_grad, MPTRT_Tensor:$key_grad, MPTRT_Tensor:$value_grad)> {
  let summary = "Backward of attention";
}
def MPTRT_SoftmaxCrossEntropyLossGradOp : MPTRT_KernelOp<"softmax_cross_entropy_loss_grad",
    !con((ins MPTRT_Tensor:$log_prob, MPTRT_Tensor:$labels, Optional<MPTRT_Tensor>:$weights,
              MPTRT_Tensor:$loss_grad), LossAttrs),
    (outs MPTRT_Tensor:$scores_grad)> {
  let family = "LossGrad";
  let summary = "Backward of softmax_cross_entropy_loss";
}
def MPTRT_NegativeLogLikelihoodLossGradOp : MPTRT_KernelOp<"nll_loss_grad",
    !con((ins MPTRT_Tensor:$target, Optional<MPTRT_Tensor>:$weight,
              MPTRT_Tensor:$loss_grad), LossAttrs),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "LossGrad";
  let summary = "Backward of nll_loss";
}
def MPTRT_GatherGradOp : MPTRT_KernelOp<"gather_grad",
    (ins MPTRT_Tensor:$indices, MPTRT_Tensor:$grad, I64Attr:$axis),
    (outs MPTRT_Tensor:$data_grad)> {
  let summary = "Scatter-add of gather's gradient";
}
def MPTRT_SliceGradOp : MPTRT_KernelOp<"slice_grad",
    !con((ins MPTRT_Tensor:$grad), SliceAttrs), (outs MPTRT_Tensor:$input_grad)> {
  let summary = "Backward of slice";
}
def MPTRT_MaxPoolGradOp : MPTRT_KernelOp<"max_pool_grad",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad), PoolWindow),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "PoolGrad";
  let summary = "Backward of max_pool";
}
def MPTRT_AveragePoolGradOp : MPTRT_KernelOp<"average_pool_grad",
    !con((ins MPTRT_Tensor:$grad), PoolWindow,
         (ins MPTRT_Default<BoolAttr, "false">:$count_include_pad)),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "PoolGrad";
  let summary = "Backward of average_pool";
}
def MPTRT_ConvGradInputOp : MPTRT_KernelOp<"conv_grad_input",
    !con((ins MPTRT_Tensor:$grad, MPTRT_Tensor:$weight), ConvWindow),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "ConvGrad";
  let summary = "Gradient of conv with respect to its input";
}
def MPTRT_ConvGradWeightOp : MPTRT_KernelOp<"conv_grad_weight",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad), ConvWindow),
    (outs MPTRT_Tensor:$weight_grad)> {
  let family = "ConvGrad";
  let summary = "Gradient of conv with respect to its weight";
}
def MPTRT_BatchNormGradOp : MPTRT_KernelOp<"batch_norm_grad",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$grad,
         MPTRT_Default<F32Attr, "1e-5">:$epsilon),
    (outs MPTRT_Tensor:$input_grad, MPTRT_Tensor:$scale_grad, MPTRT_Tensor:$bias_grad)> {
  let summary = "Backward of training-mode batch_norm";
}

//===----------------------------------------------------------------------===//
// Training: loss scaling, norms, optimizer updates, counters, FP8 scales.
//===----------------------------------------------------------------------===//

def MPTRT_ScaleLossOp : MPTRT_KernelOp<"scale_loss",
    (ins MPTRT_Tensor:$loss, MPTRT_ScaleTensor:$scale), (outs MPTRT_Tensor:$output)> {
  let summary = "loss * scale";
}
def MPTRT_UnscaleOp : MPTRT_KernelOp<"unscale",
    (ins MPTRT_Tensor:$grad, MPTRT_ScaleTensor:$scale), (outs MPTRT_Tensor:$output)> {
  let summary = "grad / scale";
}
def MPTRT_AllFiniteOp : MPTRT_KernelOp<"all_finite",
    (ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), (outs MPTRT_Tensor:$output)> {
  let summary = "Whether every element of every operand is finite";
}
def MPTRT_GlobalNormOp : MPTRT_KernelOp<"global_norm",
    (ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), (outs MPTRT_Tensor:$output)> {
  let summary = "The L2 norm of all operands together";
}
def MPTRT_ClipByNormOp : MPTRT_KernelOp<"clip_by_norm",
    (ins MPTRT_Tensor:$grad, MPTRT_Tensor:$norm, F64Attr:$max_norm),
    (outs MPTRT_Tensor:$output)> {
  let summary = "grad * min(1, max_norm / (norm + 1e-6))";
}
def MPTRT_SGDUpdateOp : MPTRT_KernelOp<"sgd_update",
    (ins MPTRT_Tensor:$param, MPTRT_Tensor:$grad, Optional<MPTRT_Tensor>:$momentum_buffer,
         MPTRT_Tensor:$step, MPTRT_Tensor:$lr, MPTRT_Tensor:$finite,
         MPTRT_Default<F64Attr, "0.0">:$momentum, MPTRT_Default<F64Attr, "0.0">:$dampening,
         MPTRT_Default<BoolAttr, "false">:$nesterov, MPTRT_Default<F64Attr, "0.0">:$weight_decay),
    (outs MPTRT_Tensor:$new_param, Optional<MPTRT_Tensor>:$new_momentum_buffer)> {
  let family = "SgdUpdate";
  let summary = "One torch.optim.SGD step";
}
def MPTRT_AdamWUpdateOp : MPTRT_KernelOp<"adamw_update",
    (ins MPTRT_Tensor:$param, MPTRT_Tensor:$grad, MPTRT_Tensor:$exp_avg,
         MPTRT_Tensor:$exp_avg_sq, MPTRT_Tensor:$step, MPTRT_Tensor:$lr,
         MPTRT_Tensor:$finite, Optional<MPTRT_Tensor>:$seed,
         MPTRT_Default<F64Attr, "0.9">:$beta1, MPTRT_Default<F64Attr, "0.999">:$beta2,
         MPTRT_Default<F64Attr, "1e-8">:$eps, MPTRT_Default<F64Attr, "0.01">:$weight_decay,
         MPTRT_Default<BoolAttr, "false">:$stochastic_rounding, OptionalAttr<I64Attr>:$stream),
    (outs MPTRT_Tensor:$new_param, MPTRT_Tensor:$new_exp_avg, MPTRT_Tensor:$new_exp_avg_sq)> {
  let summary = "One torch.optim.AdamW step (f32 or bf16 master, bf16 rounded "
                "to nearest even or stochastically)";
}
def MPTRT_UpdateLossScaleOp : MPTRT_KernelOp<"update_loss_scale",
    (ins MPTRT_Tensor:$scale, MPTRT_Tensor:$growth_tracker, MPTRT_Tensor:$finite,
         MPTRT_Default<F64Attr, "2.0">:$growth_factor, MPTRT_Default<F64Attr, "0.5">:$backoff_factor,
         MPTRT_Default<I64Attr, "2000">:$growth_interval),
    (outs MPTRT_Tensor:$new_scale, MPTRT_Tensor:$new_growth_tracker)> {
  let summary = "The dynamic loss scale's update";
}
def MPTRT_LRScheduleOp : MPTRT_KernelOp<"lr_schedule",
    (ins MPTRT_Tensor:$step, MPTRT_Default<MPTRT_LrScheduleAttr, "constant">:$schedule, F64Attr:$lr,
         MPTRT_Default<I64Attr, "0">:$warmup_steps, MPTRT_Default<I64Attr, "0">:$total_steps,
         MPTRT_Default<F64Attr, "0.0">:$min_lr),
    (outs MPTRT_Tensor:$output)> {
  let family = "LrSchedule";
  let summary = "The learning rate at a step";
}
def MPTRT_AdvanceStepOp : MPTRT_KernelOp<"advance_step",
    (ins MPTRT_Tensor:$count, Optional<MPTRT_Tensor>:$finite), (outs MPTRT_Tensor:$output)> {
  let summary = "count + 1, or count when `finite` is false";
}
def MPTRT_AmaxOp : MPTRT_KernelOp<"amax", (ins MPTRT_Tensor:$input), (outs MPTRT_Tensor:$output)> {
  let summary = "max |x|";
}
def MPTRT_UpdateFP8ScaleOp : MPTRT_KernelOp<"update_fp8_scale",
    (ins MPTRT_Tensor:$amax_history, MPTRT_ScaleTensor:$scale, MPTRT_Tensor:$amax,
         MPTRT_Default<F64Attr, "448.0">:$fp8_max, MPTRT_Default<I64Attr, "0">:$margin,
         MPTRT_Default<MPTRT_AmaxComputeAlgoAttr, "max">:$amax_compute_algo),
    (outs MPTRT_Tensor:$new_amax_history, MPTRT_ScaleTensor:$new_scale)> {
  let family = "UpdateFp8Scale";
  let summary = "Delayed FP8 scaling: roll the amax history, rescale";
}

//===----------------------------------------------------------------------===//
// Not kernels: the arena, constants and arena views.
//===----------------------------------------------------------------------===//

def MPTRT_ArenaOp : MPTRT_Op<"arena"> {
  let summary = "The function's arena: the bytes its placed values live in";
  let description = [{
    Declares the one byte buffer of an entry point that every kernel result
    with an arena offset (`offsets` >= 0) and every `mptrt.view` lives in:
    `size` bytes, 64-byte aligned. The memory planner (`--mpt-plan-memory`)
    writes it as the first op of each function it plans, with the planned
    peak; the plan emitter reads the entry point's arena size from it and
    refuses a function without one.

    The verifier checks that it is the first op of a function body and that
    every placed value of that function fits in it: offset + byte size <=
    `size` for each kernel result and each view.

    ```mlir
    mptrt.arena size(8192)
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$size);
  let assemblyFormat = "`size` `(` $size `)` attr-dict";
  let hasVerifier = 1;
}

def MPTRT_ConstantOp : MPTRT_Op<"constant", [ConstantLike, AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant tensor, stored in the plan's constants blob";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs MPTRT_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
}

def MPTRT_ViewOp : MPTRT_Op<"view"> {
  let summary = "Another shape of arena bytes: no kernel, no copy";
  let description = [{
    The result is the `source` arena value's bytes at byte offset `offset`
    of the function's arena, read with the result's shape and element type
    (same byte size). The memory planner turns shape-only kernels
    (`reshape`, `flatten`, `squeeze`, `unsqueeze`, `identity`) of arena
    values into views; the plan emitter writes a tensor record for it and
    no kernel.

    ```mlir
    %v = mptrt.view %h[4096] : tensor<2x16x64xf32> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins MPTRT_Tensor:$source, I64Attr:$offset);
  let results = (outs MPTRT_Tensor:$output);
  let assemblyFormat =
      "$source `[` $offset `]` attr-dict `:` type($source) `->` type($output)";
  let hasVerifier = 1;
}

#endif // MPT_DIALECT_MPTRT_IR_MPTRTOPS_TD
