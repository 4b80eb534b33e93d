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
// The mpt ops' records, whose attributes the kernels they are renamed to
// take (MPTRT_AttrsOf). Only the `mptrt` ops are generated from this file
// (include/mpt/Dialect/MPTRT/IR/CMakeLists.txt: -op-include-regex).
include "mpt/Dialect/MPT/IR/MPTOps.td"

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
// Kernel attributes from the mpt ops' records. A kernel that an mpt op is
// renamed to (MPT_RuntimeKernel) takes the op's attributes: it declares
// them as MPTRT_AttrsOf<MPT_XOp>.attrs, not again. Each keeps its name, its
// storage and its default; an enum becomes this dialect's attribute over
// the same enum, and its default the case's string (the plan's). What only
// the kernel says stays in the kernel's record: an attribute of the op's
// that the runtime also takes absent (MPTRT_Absent: the op always has it,
// a plan from elsewhere need not), and the kernel's own attributes, added
// to the dag.
//===----------------------------------------------------------------------===//

// An attribute of the op's that the kernel takes absent: `value` is the
// kernel's default then ("": none; the kernel works it out, or absence
// means something of its own).
class MPTRT_Absent<string nameArg, string valueArg = ""> {
  string name = nameArg;
  string value = valueArg;
}

// `base` (an mpt op's attribute, less its default or optionality) as a
// kernel attribute: an mpt enum attribute becomes the mptrt one
// (MPT_ReductionAttr -> MPTRT_ReductionAttr); any other stays itself.
class MPTRT_KernelAttrBase<Attr base> {
  Attr attr = !if(!isa<MPT_EnumAttr>(base),
      !cast<Attr>("MPTRT_" # !substr(!cast<string>(base), !size("MPT_"))),
      base);
}

// The kernel default of an mpt op attribute's C++ default `cpp`: the
// literal itself, or for an enum case (`::mpt::Reduction::mean`) its
// string (`mean`).
class MPTRT_KernelDefault<Attr base, string cpp> {
  string value = !if(!isa<MPT_EnumAttr>(base),
      !foldl("", !cast<MPT_EnumAttr>(base).enum.enumerants, acc, c,
             !if(!eq(!cast<MPT_EnumAttr>(base).enum.cppNamespace # "::" #
                     !cast<MPT_EnumAttr>(base).enum.className # "::" #
                     c.symbol, cpp), c.str, acc)),
      cpp);
}

// The mpt op attribute `a`, named `name`, as its kernel declares it.
class MPTRT_KernelAttr<Attr a, string name, list<MPTRT_Absent> absent> {
  Attr base = !if(!initialized(a.baseAttr), a.baseAttr, a);
  Attr kernelBase = MPTRT_KernelAttrBase<base>.attr;
  list<MPTRT_Absent> given = !filter(x, absent, !eq(x.name, name));
  string givenValue = !foldl("", given, acc, x, x.value);
  Attr attr = !cond(
      !and(!not(!empty(given)), !empty(givenValue)): OptionalAttr<kernelBase>,
      !not(!empty(given)): MPTRT_Default<kernelBase, givenValue>,
      !initialized(a.defaultValue):
        MPTRT_Default<kernelBase, MPTRT_KernelDefault<base, a.defaultValue>.value>,
      a.isOptional: OptionalAttr<kernelBase>,
      true: kernelBase);
}

// The attributes of the mpt op `op` (in its order, less those its
// MPT_RuntimeKernel record says only the compiler reads) as the `ins` of
// its kernel; `absent` names those the kernel also takes absent.
class MPTRT_AttrsOf<MPT_RuntimeKernel op, list<MPTRT_Absent> absent = []> {
  dag args = !cast<Op>(op).arguments;
  list<int> idx = !filter(i, !range(!size(args)),
      !and(!initialized(!getdagarg<Attr>(args, i)),
           !empty(!filter(n, op.compilerOnlyAttrs, !eq(n, !getdagname(args, i))))));
  list<string> names = !foreach(i, idx, !getdagname(args, i));
  list<Attr> opAttrs = !foreach(i, idx, !getdagarg<Attr>(args, i));
  dag attrs = !dag(ins, !foreach(i, !range(!size(idx)),
                                 MPTRT_KernelAttr<opAttrs[i], names[i], absent>.attr),
                   names);
  // Every name in `absent` is one of the op's attributes.
  assert !empty(!filter(x, absent, !empty(!filter(n, names, !eq(n, x.name))))),
         "MPTRT_Absent names an attribute " # !cast<string>(op) # " does not have";
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

// The window attributes that the runtime takes absent (its defaults: unit
// strides and dilations, no padding).
defvar AbsentWindow = [MPTRT_Absent<"strides">, MPTRT_Absent<"pads">,
                       MPTRT_Absent<"dilations">];

// Window attributes of conv and average pooling (whose mpt ops have no
// dilations: the kernels' own attribute, between the op's), and of their
// gradients.
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

def MPTRT_LeakyReluOp : MPTRT_UnaryKernel<"leaky_relu", MPTRT_AttrsOf<MPT_LeakyReluOp>.attrs>;
def MPTRT_GeluOp : MPTRT_UnaryKernel<"gelu", MPTRT_AttrsOf<MPT_GeluOp>.attrs>;
def MPTRT_ClipOp : MPTRT_UnaryKernel<"clip", MPTRT_AttrsOf<MPT_ClipOp>.attrs>;
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
    !con((ins MPTRT_Tensor:$query, MPTRT_Tensor:$key, MPTRT_Tensor:$value,
              Optional<MPTRT_Tensor>:$mask),
         MPTRT_AttrsOf<MPT_AttentionOp>.attrs),
    (outs MPTRT_Tensor:$output, MPTRT_Tensor:$logsumexp)> {
  let summary = "Scaled dot-product attention";
}
// conv takes a fused epilogue (mpt-fuse-conv-relu): `activation` (none or
// relu) after the bias and the rounding of the result; the unfused conv and
// relu give the same bits.
def MPTRT_ConvOp : MPTRT_KernelOp<"conv",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$weight, Optional<MPTRT_Tensor>:$bias),
         ConvWindow, (ins MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout,
                          MPTRT_Default<MPTRT_ActivationAttr, "none">:$activation)),
    (outs MPTRT_Tensor:$output)> {
  let summary = "N-d grouped convolution, NCHW (or NHWC activations), explicit pads, "
                "optional relu";
}

//===----------------------------------------------------------------------===//
// Pooling.
//===----------------------------------------------------------------------===//

// The pooling kernels join convolution chains (mpt-channels-last): with
// `layout = nhwc` their input and result are channels last.
def MPTRT_MaxPoolOp : MPTRT_KernelOp<"max_pool",
    !con((ins MPTRT_Tensor:$input), MPTRT_AttrsOf<MPT_MaxPoolOp, AbsentWindow>.attrs,
         (ins MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "N-d max pooling";
}
def MPTRT_AveragePoolOp : MPTRT_KernelOp<"average_pool",
    !con((ins MPTRT_Tensor:$input), PoolWindow,
         (ins MPTRT_Default<BoolAttr, "false">:$count_include_pad,
              MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "N-d average pooling";
}
def MPTRT_GlobalAveragePoolOp : MPTRT_KernelOp<"global_average_pool",
    (ins MPTRT_Tensor:$input, MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout),
    (outs MPTRT_Tensor:$output)> {
  let family = "Pool";
  let summary = "Mean over every spatial axis";
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax.
//===----------------------------------------------------------------------===//

// Both batch norms take a fused epilogue (mpt-fuse-batch-norm): `residual`,
// added to the normalised value once that is rounded to the output's
// dtype, then `activation` (none or relu), then the one rounding of the
// result; the unfused batch_norm, add and relu give the same bits.
def MPTRT_BatchNormOp : MPTRT_KernelOp<"batch_norm",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$bias,
              MPTRT_Tensor:$mean, MPTRT_Tensor:$var, Optional<MPTRT_Tensor>:$residual),
         MPTRT_AttrsOf<MPT_BatchNormOp>.attrs,
         // The kernel's own: the training kernel's momentum, which an
         // inference batch_norm does not read, and the epilogue.
         (ins MPTRT_Default<F32Attr, "0.9">:$momentum,
              MPTRT_Default<MPTRT_ActivationAttr, "none">:$activation,
              MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Batch normalisation with running statistics";
}
def MPTRT_BatchNormTrainOp : MPTRT_KernelOp<"batch_norm_train",
    (ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$bias,
         MPTRT_Tensor:$running_mean, MPTRT_Tensor:$running_var,
         Optional<MPTRT_Tensor>:$residual,
         MPTRT_Default<F32Attr, "1e-5">:$epsilon, MPTRT_Default<F32Attr, "0.9">:$momentum,
         MPTRT_Default<MPTRT_ActivationAttr, "none">:$activation,
         MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout),
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
def MPTRT_SoftmaxOp : MPTRT_UnaryKernel<"softmax",
    MPTRT_AttrsOf<MPT_SoftmaxOp, [MPTRT_Absent<"axis", "-1">]>.attrs>;
let family = "Softmax" in
def MPTRT_LogSoftmaxOp : MPTRT_UnaryKernel<"log_softmax",
    MPTRT_AttrsOf<MPT_LogSoftmaxOp, [MPTRT_Absent<"axis", "-1">]>.attrs>;

//===----------------------------------------------------------------------===//
// Reductions and losses.
//===----------------------------------------------------------------------===//

let family = "Reduce" in
foreach k = [["ReduceSum", "reduce_sum"], ["ReduceMean", "reduce_mean"],
             ["ReduceMax", "reduce_max"], ["ReduceL2", "reduce_l2"]] in
  def MPTRT_ # k[0] # Op : MPTRT_UnaryKernel<k[1],
      MPTRT_AttrsOf<!cast<MPT_RuntimeKernel>("MPT_" # k[0] # "Op"),
                    [MPTRT_Absent<"axes">]>.attrs>;

def MPTRT_SoftmaxCrossEntropyLossOp : MPTRT_KernelOp<"softmax_cross_entropy_loss",
    !con((ins MPTRT_Tensor:$scores, MPTRT_Tensor:$labels, Optional<MPTRT_Tensor>:$weights),
         MPTRT_AttrsOf<MPT_SoftmaxCrossEntropyLossOp>.attrs),
    (outs MPTRT_Tensor:$loss, Optional<MPTRT_Tensor>:$log_prob)> {
  let family = "Loss";
  let summary = "Cross-entropy of softmax(scores) against class labels";
}
def MPTRT_NegativeLogLikelihoodLossOp : MPTRT_KernelOp<"nll_loss",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$target, Optional<MPTRT_Tensor>:$weight),
         MPTRT_AttrsOf<MPT_NegativeLogLikelihoodLossOp>.attrs),
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
def MPTRT_FlattenOp : MPTRT_UnaryKernel<"flatten",
    MPTRT_AttrsOf<MPT_FlattenOp, [MPTRT_Absent<"axis">]>.attrs>;
def MPTRT_SqueezeOp : MPTRT_UnaryKernel<"squeeze",
    MPTRT_AttrsOf<MPT_SqueezeOp, [MPTRT_Absent<"axes">]>.attrs>;
def MPTRT_UnsqueezeOp : MPTRT_UnaryKernel<"unsqueeze",
    MPTRT_AttrsOf<MPT_UnsqueezeOp, [MPTRT_Absent<"axes">]>.attrs>;
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
def MPTRT_TransposeOp : MPTRT_UnaryKernel<"transpose",
    MPTRT_AttrsOf<MPT_TransposeOp, [MPTRT_Absent<"perm">]>.attrs>;
def MPTRT_ConcatOp : MPTRT_KernelOp<"concat",
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_ConcatOp>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Concatenate along `axis`";
}
def MPTRT_SplitOp : MPTRT_KernelOp<"split",
    !con((ins MPTRT_Tensor:$input),
         MPTRT_AttrsOf<MPT_SplitOp, [MPTRT_Absent<"axis", "0">,
                                     MPTRT_Absent<"sizes">]>.attrs),
    (outs MPTRT_OneOrMore<MPTRT_Tensor>:$outputs)> {
  let summary = "Split along `axis` into pieces of the given sizes";
}
def MPTRT_SliceOp : MPTRT_KernelOp<"slice",
    !con((ins MPTRT_Tensor:$input),
         MPTRT_AttrsOf<MPT_SliceOp, [MPTRT_Absent<"steps">]>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Strided slice";
}
def MPTRT_GatherOp : MPTRT_KernelOp<"gather",
    !con((ins MPTRT_Tensor:$data, MPTRT_Tensor:$indices),
         MPTRT_AttrsOf<MPT_GatherOp, [MPTRT_Absent<"axis", "0">]>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Take slices of `data` along `axis` at `indices`";
}
def MPTRT_ExpandOp : MPTRT_KernelOp<"expand",
    (ins MPTRT_Tensor:$input, Optional<MPTRT_Tensor>:$shape), (outs MPTRT_Tensor:$output)> {
  let summary = "Broadcast to the result's shape";
}
def MPTRT_TriluOp : MPTRT_UnaryKernel<"trilu", MPTRT_AttrsOf<MPT_TriluOp>.attrs>;
def MPTRT_ConstantOfShapeOp : MPTRT_KernelOp<"constant_of_shape",
    !con((ins Optional<MPTRT_Tensor>:$shape),
         MPTRT_AttrsOf<MPT_ConstantOfShapeOp, [MPTRT_Absent<"value", "0.0">]>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let family = "Fill";
  let summary = "A tensor of the result's shape filled with `value`";
}

//===----------------------------------------------------------------------===//
// Backward (docs/training.md).
//===----------------------------------------------------------------------===//

def MPTRT_UnaryGradOp : MPTRT_KernelOp<"unary_grad",
    // alpha's default is the op's for leaky_relu; the kernel reads it for
    // other kinds too, each with its own default.
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_UnaryGradOp, [MPTRT_Absent<"alpha">]>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "f'(input) * grad";
}
def MPTRT_SoftmaxGradOp : MPTRT_KernelOp<"softmax_grad",
    !con((ins MPTRT_Tensor:$output, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_SoftmaxGradOp>.attrs),
    (outs MPTRT_Tensor:$input_grad)> {
  let summary = "Backward of softmax or log_softmax";
}
def MPTRT_LayerNormGradOp : MPTRT_KernelOp<"layer_norm_grad",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$mean,
              MPTRT_Tensor:$inv_std_dev, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_LayerNormGradOp>.attrs),
    (outs MPTRT_Tensor:$input_grad, MPTRT_Tensor:$scale_grad, MPTRT_Tensor:$bias_grad)> {
  let summary = "Backward of layer_norm";
}
def MPTRT_AttentionGradOp : MPTRT_KernelOp<"attention_grad",
    !con((ins MPTRT_Tensor:$query, MPTRT_Tensor:$key, MPTRT_Tensor:$value,
              MPTRT_Tensor:$output, MPTRT_Tensor:$logsumexp, MPTRT_Tensor:$grad,
              Optional<MPTRT_Tensor>:$mask),
         MPTRT_AttrsOf<MPT_AttentionGradOp>.attrs),
    (outs MPTRT_Tensor:$query_grad, MPTRT_Tensor:$key_grad, MPTRT_Tensor:$value_grad)> {
  let summary = "Backward of attention";
}
def MPTRT_SoftmaxCrossEntropyLossGradOp : MPTRT_KernelOp<"softmax_cross_entropy_loss_grad",
    !con((ins MPTRT_Tensor:$log_prob, MPTRT_Tensor:$labels, Optional<MPTRT_Tensor>:$weights,
              MPTRT_Tensor:$loss_grad),
         MPTRT_AttrsOf<MPT_SoftmaxCrossEntropyLossGradOp>.attrs),
    (outs MPTRT_Tensor:$scores_grad)> {
  let family = "LossGrad";
  let summary = "Backward of softmax_cross_entropy_loss";
}
def MPTRT_NegativeLogLikelihoodLossGradOp : MPTRT_KernelOp<"nll_loss_grad",
    !con((ins MPTRT_Tensor:$target, Optional<MPTRT_Tensor>:$weight,
              MPTRT_Tensor:$loss_grad),
         MPTRT_AttrsOf<MPT_NegativeLogLikelihoodLossGradOp>.attrs),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "LossGrad";
  let summary = "Backward of nll_loss";
}
def MPTRT_GatherGradOp : MPTRT_KernelOp<"gather_grad",
    !con((ins MPTRT_Tensor:$indices, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_GatherGradOp>.attrs),
    (outs MPTRT_Tensor:$data_grad)> {
  let summary = "Scatter-add of gather's gradient";
}
def MPTRT_SliceGradOp : MPTRT_KernelOp<"slice_grad",
    !con((ins MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_SliceGradOp, [MPTRT_Absent<"steps">]>.attrs),
    (outs MPTRT_Tensor:$input_grad)> {
  let summary = "Backward of slice";
}
def MPTRT_MaxPoolGradOp : MPTRT_KernelOp<"max_pool_grad",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_MaxPoolGradOp, AbsentWindow>.attrs,
         (ins MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "PoolGrad";
  let summary = "Backward of max_pool";
}
def MPTRT_AveragePoolGradOp : MPTRT_KernelOp<"average_pool_grad",
    !con((ins MPTRT_Tensor:$grad), PoolWindow,
         (ins MPTRT_Default<BoolAttr, "false">:$count_include_pad,
              MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "PoolGrad";
  let summary = "Backward of average_pool";
}
// The conv gradients' own attribute: conv's kernel_shape, which the runtime
// reads from the weight when it is absent.
defvar ConvGradKernelShape = (ins OptionalAttr<DenseI64ArrayAttr>:$kernel_shape);
def MPTRT_ConvGradInputOp : MPTRT_KernelOp<"conv_grad_input",
    !con((ins MPTRT_Tensor:$grad, MPTRT_Tensor:$weight),
         MPTRT_AttrsOf<MPT_ConvGradInputOp, AbsentWindow>.attrs, ConvGradKernelShape,
         (ins MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$input_grad)> {
  let family = "ConvGrad";
  let summary = "Gradient of conv with respect to its input";
}
def MPTRT_ConvGradWeightOp : MPTRT_KernelOp<"conv_grad_weight",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$grad),
         MPTRT_AttrsOf<MPT_ConvGradWeightOp, AbsentWindow>.attrs, ConvGradKernelShape,
         (ins MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
    (outs MPTRT_Tensor:$weight_grad)> {
  let family = "ConvGrad";
  let summary = "Gradient of conv with respect to its weight";
}
// With `activation = relu` (mpt-fuse-batch-norm), `grad` is the gradient of
// relu(batch_norm(input)) and `output` that forward output: the gradient
// reaching batch_norm is grad where output > 0, else 0, as relu's
// unary_grad gives it.
def MPTRT_BatchNormGradOp : MPTRT_KernelOp<"batch_norm_grad",
    !con((ins MPTRT_Tensor:$input, MPTRT_Tensor:$scale, MPTRT_Tensor:$grad,
              Optional<MPTRT_Tensor>:$output),
         MPTRT_AttrsOf<MPT_BatchNormGradOp>.attrs,
         (ins MPTRT_Default<MPTRT_ActivationAttr, "none">:$activation,
              MPTRT_Default<MPTRT_LayoutAttr, "nchw">:$layout)),
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
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_AllFiniteOp>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "Whether every element of every operand is finite";
}
def MPTRT_GlobalNormOp : MPTRT_KernelOp<"global_norm",
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_GlobalNormOp>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "The L2 norm of all operands together";
}
def MPTRT_AllReduceOp : MPTRT_KernelOp<"all_reduce",
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_AllReduceOp>.attrs),
    (outs MPTRT_OneOrMore<MPTRT_Tensor>:$outputs)> {
  let summary = "The mean of each operand over the ranks, as one flat bucket";
}
def MPTRT_ReduceScatterOp : MPTRT_KernelOp<"reduce_scatter",
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_ReduceScatterOp>.attrs),
    (outs MPTRT_OneOrMore<MPTRT_Tensor>:$outputs)> {
  let summary = "This rank's shard of each operand's mean over the ranks, as one flat bucket";
}
def MPTRT_AllGatherOp : MPTRT_KernelOp<"all_gather",
    !con((ins MPTRT_OneOrMore<MPTRT_Tensor>:$inputs), MPTRT_AttrsOf<MPT_AllGatherOp>.attrs),
    (outs MPTRT_OneOrMore<MPTRT_Tensor>:$outputs)> {
  let summary = "Each whole tensor from every rank's shard, as one flat bucket";
}
def MPTRT_ShardOp : MPTRT_KernelOp<"shard",
    !con((ins MPTRT_Tensor:$input), MPTRT_AttrsOf<MPT_ShardOp>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "This rank's shard of a whole tensor";
}
def MPTRT_ClipByNormOp : MPTRT_KernelOp<"clip_by_norm",
    !con((ins MPTRT_Tensor:$grad, MPTRT_Tensor:$norm), MPTRT_AttrsOf<MPT_ClipByNormOp>.attrs),
    (outs MPTRT_Tensor:$output)> {
  let summary = "grad * min(1, max_norm / (norm + 1e-6))";
}
def MPTRT_SGDUpdateOp : MPTRT_KernelOp<"sgd_update",
    !con((ins MPTRT_Tensor:$param, MPTRT_Tensor:$grad, Optional<MPTRT_Tensor>:$momentum_buffer,
              MPTRT_Tensor:$step, MPTRT_Tensor:$lr, MPTRT_Tensor:$finite),
         MPTRT_AttrsOf<MPT_SGDUpdateOp>.attrs),
    (outs MPTRT_Tensor:$new_param, Optional<MPTRT_Tensor>:$new_momentum_buffer)> {
  let family = "SgdUpdate";
  let summary = "One torch.optim.SGD step";
}
def MPTRT_AdamWUpdateOp : MPTRT_KernelOp<"adamw_update",
    !con((ins MPTRT_Tensor:$param, MPTRT_Tensor:$grad, MPTRT_Tensor:$exp_avg,
              MPTRT_Tensor:$exp_avg_sq, MPTRT_Tensor:$step, MPTRT_Tensor:$lr,
              MPTRT_Tensor:$finite, Optional<MPTRT_Tensor>:$seed),
         MPTRT_AttrsOf<MPT_AdamWUpdateOp>.attrs),
    (outs MPTRT_Tensor:$new_param, MPTRT_Tensor:$new_exp_avg, MPTRT_Tensor:$new_exp_avg_sq)> {
  let summary = "One torch.optim.AdamW step (f32 or bf16 master, bf16 rounded "
                "to nearest even or stochastically)";
}
def MPTRT_UpdateLossScaleOp : MPTRT_KernelOp<"update_loss_scale",
    !con((ins MPTRT_Tensor:$scale, MPTRT_Tensor:$growth_tracker, MPTRT_Tensor:$finite),
         MPTRT_AttrsOf<MPT_UpdateLossScaleOp>.attrs),
    (outs MPTRT_Tensor:$new_scale, MPTRT_Tensor:$new_growth_tracker)> {
  let summary = "The dynamic loss scale's update";
}
def MPTRT_LRScheduleOp : MPTRT_KernelOp<"lr_schedule",
    !con((ins MPTRT_Tensor:$step), MPTRT_AttrsOf<MPT_LRScheduleOp>.attrs),
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
    !con((ins MPTRT_Tensor:$amax_history, MPTRT_ScaleTensor:$scale, MPTRT_Tensor:$amax),
         MPTRT_AttrsOf<MPT_UpdateFP8ScaleOp>.attrs),
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
