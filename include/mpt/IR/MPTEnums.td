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

// A case of an option's enum (MPT_OptionEnum): `str` is how the option,
// and the plan, spell it, `help` the option's help text for it, `symbol`
// the C++ enumerator.
class MPT_OptionCase<string strArg, string helpArg, string symbolArg = strArg> {
  string str = strArg;
  string help = helpArg;
  string symbol = symbolArg;
}

// An enum that is also the type of pass and pipeline options: the values
// such an option takes, with their help texts, are its cases
// (`mpt-tblgen -gen-enum-options` writes them into MPTEnumOptions.h.inc,
// which mpt/IR/MPTEnumOptions.h makes the option's llvm::cl parser).
class MPT_OptionEnum<string name, string summary, list<MPT_OptionCase> cases>
    : I32EnumAttr<name, summary,
        !foreach(i, !range(!size(cases)),
                 I32EnumAttrCase<cases[i].symbol, i, cases[i].str>)> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mpt";
  list<MPT_OptionCase> optionCases = cases;
}

def MPT_GeluApproximate : MPT_Enum<"GeluApproximate", "gelu's form", ["none", "tanh"]>;
def MPT_Activation : MPT_Enum<"Activation", "gemm's fused epilogue",
    ["none", "relu", "gelu", "gelu_tanh"]>;
def MPT_Reduction : MPT_Enum<"Reduction", "a loss's reduction", ["mean", "sum", "none"]>;
// How a convolution or batch norm kernel's activations are stored:
// channels first ([N, C, spatial...], ONNX's) or last ([N, spatial..., C]);
// mpt-channels-last chooses it.
def MPT_Layout : MPT_Enum<"Layout", "an activation's memory layout", ["nchw", "nhwc"]>;
// The functions with a gradient (MPTUnaryFunctions.td).
def MPT_UnaryGradKind : MPT_Enum<"UnaryGradKind", "unary_grad's forward function",
    !foreach(f, !filter(f, MPTUnaryFunctions, f.grad), f.kind)>;
def MPT_LrSchedule : MPT_OptionEnum<"LrSchedule", "the learning-rate schedule", [
    MPT_OptionCase<"constant", "lr at every step">,
    MPT_OptionCase<"warmup_cosine", "Linear warmup over warmup-steps, then "
                   "cosine decay to min-lr at total-steps">]>;
def MPT_AmaxComputeAlgo : MPT_OptionEnum<"AmaxComputeAlgo",
    "the amax a delayed FP8 scale comes from", [
    MPT_OptionCase<"max", "The largest amax of the history">,
    MPT_OptionCase<"most_recent", "The previous step's amax">]>;

//===----------------------------------------------------------------------===//
// The closed sets of the compiler's options (Passes.td, Pipelines.h).
//===----------------------------------------------------------------------===//

// --assign-precision's `mode`, and the pipelines' `precision`, which alone
// takes `none`.
def MPT_PrecisionMode : MPT_OptionEnum<"PrecisionMode",
    "the precision a model is compiled in", [
    MPT_OptionCase<"none", "The model's own types (no --assign-precision)",
                   "None">,
    MPT_OptionCase<"bf16", "BF16 mixed precision", "BF16">,
    MPT_OptionCase<"fp16", "FP16 mixed precision", "FP16">,
    MPT_OptionCase<"fp8", "FP8 (E4M3) contraction inputs, otherwise BF16",
                   "FP8">,
    MPT_OptionCase<"fp32", "Everything FP32", "FP32">,
    MPT_OptionCase<"auto", "Chosen from `target`", "Auto">]>;

// The pipelines' `conv-layout`: how convolution chains store their
// activations (mpt-channels-last; docs/lowering.md).
def MPT_ConvLayout : MPT_OptionEnum<"ConvLayout",
    "the layout of convolution chains' activations", [
    MPT_OptionCase<"auto", "Chosen from `target`: nhwc for sm_70 and newer "
                   "(cuDNN's tensor-core engines read NHWC), for cpu (its "
                   "default fast numerics: oneDNN on NHWC) and without a "
                   "target; nchw for older GPUs", "Auto">,
    MPT_OptionCase<"nchw", "Channels first, as ONNX states them", "NCHW">,
    MPT_OptionCase<"nhwc", "Channels last (mpt-channels-last)", "NHWC">]>;

def MPT_Optimizer : MPT_OptionEnum<"Optimizer", "the training step's optimizer", [
    MPT_OptionCase<"sgd", "Plain SGD", "SGD">,
    MPT_OptionCase<"momentum", "SGD with momentum (momentum, dampening, "
                   "nesterov)", "Momentum">,
    MPT_OptionCase<"adamw", "AdamW (beta1, beta2, eps)", "AdamW">]>;

// `loss-scale`'s mode; `static` carries its scale (static:S, mpt::LossScale).
def MPT_LossScaleMode : MPT_OptionEnum<"LossScaleMode", "the loss scaling", [
    MPT_OptionCase<"none", "No loss scaling", "None">,
    MPT_OptionCase<"dynamic", "A scale that grows and backs off "
                   "(init-scale, growth-factor, backoff-factor, "
                   "growth-interval)", "Dynamic">,
    MPT_OptionCase<"static", "The fixed scale S of static:S (S > 0)",
                   "Static">,
    MPT_OptionCase<"auto", "dynamic when the graph has f16, else none",
                   "Auto">]>;

def MPT_MasterWeights : MPT_OptionEnum<"MasterWeights",
    "the trainable parameters' master weights", [
    MPT_OptionCase<"fp32", "FP32 masters (as PyTorch AMP keeps them)", "FP32">,
    MPT_OptionCase<"bf16", "bf16 masters, each update rounded to nearest "
                   "even (small ones stall)", "BF16">,
    MPT_OptionCase<"bf16-sr", "bf16 masters, each update rounded "
                   "stochastically (keyed by train.seed, the step and the "
                   "element)", "BF16SR">]>;

// `loss-kind`: the loss the training step minimises, the model's own
// scalar output or one --build-training-step adds (lib/Transforms/
// TrainingLoss.cpp); a case's name is also the added loss's location
// (`loss.mse`).
def MPT_LossKind : MPT_OptionEnum<"LossKind", "the training step's loss", [
    MPT_OptionCase<"model", "The model's own scalar float output (loss= "
                   "chooses one of several)", "Model">,
    MPT_OptionCase<"cross_entropy", "Softmax cross-entropy of loss-output's "
                   "class scores (last axis) against the labels",
                   "CrossEntropy">,
    MPT_OptionCase<"mse", "Mean squared error of loss-output against the "
                   "labels", "MSE">,
    MPT_OptionCase<"nll", "Negative log-likelihood of loss-output's "
                   "log-probabilities (last axis) at the labels", "NLL">]>;

def MPT_FP8ScalingMode : MPT_OptionEnum<"FP8ScalingMode",
    "where an FP8 tensor's scale comes from", [
    MPT_OptionCase<"delayed", "The amax history of earlier steps sets this "
                   "step's scale", "Delayed">,
    MPT_OptionCase<"current", "This step's own amax sets its scale",
                   "Current">,
    MPT_OptionCase<"none", "Every scale stays 1 (for comparison only)",
                   "None">]>;

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
