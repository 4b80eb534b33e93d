//===- MPTUnaryFunctions.td - the elementwise unary functions -*- tablegen -*-===//
//
// One record per elementwise unary function: the single source of every
// fact that the compiler and the runtime state about it.
//
//   - MPTOps.td defines an `mpt` op (with its gradient rule, `unary_grad` of
//     the same kind) for each record with `genOp` set, and builds the
//     others' hand-written ops from their record (MPT_FunctionOp);
//   - MPTRTBase.td takes `unary_grad`'s kinds, and MPTRTOps.td defines an
//     `mptrt` kernel op for each kernel without attributes;
//   - `mpt-tblgen -gen-unary-kinds` writes them to the runtime's
//     `runtime/include/mptrt/generated/UnaryKinds.def` (checked in, so the
//     runtime builds without LLVM; the ctest `generated-current` fails when
//     it differs from what this file generates), which every C++ list of
//     kinds expands: the runtime's `UnaryOp` enum, its decoders' tables, the
//     kernel schema's rows, the CPU and CUDA dispatch (the math itself is in
//     runtime/src/kernels/elementwise/UnaryMath.h), in-place kinds, the
//     importer's rows, the lowering patterns and `unary_grad`'s verifier.
//
// Adding a function (docs/adding-an-op.md): a record here, its forward and
// derivative in UnaryMath.h, its float64 oracle in runtime/test/UnaryOracle.h,
// and `scripts/regen-generated.sh` to rewrite the generated files
// (UnaryKinds.def and docs/unary-functions.md).
//
// This file is plain TableGen (no ODS): mpt-tblgen reads it alone.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTUNARYFUNCTIONS_TD
#define MPT_DIALECT_MPT_IR_MPTUNARYFUNCTIONS_TD

// kind: the runtime kernel kind, the `mpt` op mnemonic and the `unary_grad`
//   kind (snake_case).
// name: the C++ name: `mpt::<name>Op`, `mpt::rt::<name>Op`,
//   `mptrt::rt::UnaryOp::<name>` and `mptrt::math::<name>` (UnaryMath.h).
class MPT_UnaryFunction<string kindArg, string nameArg> {
  string kind = kindArg;
  string name = nameArg;
  // The `mpt` op's summary.
  string summary = "";
  // The op's precision policy (PrecisionPolicyOpInterface): Follow,
  // RequireF32 or Clear.
  string policy = "Follow";
  // The element types the op takes: "Float", "Numeric" (float or integer)
  // or "Bool".
  string operands = "Float";
  // A kernel kind of its own (gelu_tanh is a mode of gelu's kernel).
  bit kernel = 1;
  // The kernel has attributes: its `mpt` op, `mptrt` op, lowering and
  // importer are written by hand.
  bit attrs = 0;
  // The runtime kernel also takes integer tensors (computed in int64).
  bit integer = 0;
  // Costs like a transcendental function (~8 element operations; the CPU
  // backend's parallel grain).
  bit transcendental = 0;
  // A `unary_grad` kind: dx = f'(x) * dy.
  bit grad = 1;
  // Piecewise constant (floor, ceil, round, sign): the derivative is zero
  // wherever it is defined, so the op's gradient rule contributes nothing
  // (PyTorch's gradient is zero too) and there is no `unary_grad` kind.
  bit zeroGrad = 0;
  // Defined only for x > 0 (test inputs are drawn there).
  bit positive = 0;
  // Float parameters, each an attribute of the same name on the ops, the
  // runtime kernel and `unary_grad` (alpha, beta or gamma), with the value
  // it takes when absent (a float literal). They are not `attrs`: the ops,
  // kernels, lowering and importer are still generated.
  list<string> params = [];
  list<string> paramDefaults = [];
  // The ONNX operator imported as this op ("": none, or imported by hand),
  // from opset `onnxSince`; its attributes named as `params` are read.
  string onnx = "";
  int onnxSince = 0;
  // The `mpt` op is generated from this record (a kernel without
  // attributes whose gradient is `unary_grad` of its kind, or zero).
  bit genOp = !and(kernel, !not(attrs), !or(grad, zeroGrad));
}

defset list<MPT_UnaryFunction> MPTUnaryFunctions = {

def MPT_UF_Sqrt : MPT_UnaryFunction<"sqrt", "Sqrt"> {
  let summary = "Square root";
  let positive = 1;
  let onnx = "Sqrt";
  let onnxSince = 6;
}
def MPT_UF_Exp : MPT_UnaryFunction<"exp", "Exp"> {
  let summary = "Natural exponential";
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Exp";
  let onnxSince = 6;
}
def MPT_UF_Log : MPT_UnaryFunction<"log", "Log"> {
  let summary = "Natural logarithm";
  let policy = "RequireF32";
  let transcendental = 1;
  let positive = 1;
  let onnx = "Log";
  let onnxSince = 6;
}
def MPT_UF_Erf : MPT_UnaryFunction<"erf", "Erf"> {
  let summary = "Gauss error function";
  let transcendental = 1;
  let onnx = "Erf";
  let onnxSince = 9;
}
def MPT_UF_Tanh : MPT_UnaryFunction<"tanh", "Tanh"> {
  let summary = "Hyperbolic tangent";
  let transcendental = 1;
  let onnx = "Tanh";
  let onnxSince = 6;
}
def MPT_UF_Sigmoid : MPT_UnaryFunction<"sigmoid", "Sigmoid"> {
  let summary = "Logistic sigmoid";
  let transcendental = 1;
  let onnx = "Sigmoid";
  let onnxSince = 6;
}
def MPT_UF_Relu : MPT_UnaryFunction<"relu", "Relu"> {
  let summary = "max(x, 0)";
  let policy = "Clear";
  let operands = "Numeric";
  let integer = 1;
  let onnx = "Relu";
  let onnxSince = 6;
}
// Its gradient is a neg of dy, and it folds: the op is written by hand.
def MPT_UF_Neg : MPT_UnaryFunction<"neg", "Neg"> {
  let summary = "Negation";
  let policy = "Clear";
  let operands = "Numeric";
  let integer = 1;
  let grad = 0;
  let onnx = "Neg";
  let onnxSince = 6;
}
def MPT_UF_Abs : MPT_UnaryFunction<"abs", "Abs"> {
  let summary = "Absolute value";
  let policy = "Clear";
  let operands = "Numeric";
  let integer = 1;
  let onnx = "Abs";
  let onnxSince = 6;
}
// Boolean only; folds; no gradient.
def MPT_UF_Not : MPT_UnaryFunction<"not", "Not"> {
  let summary = "Logical not";
  let policy = "Clear";
  let operands = "Bool";
  let integer = 1;
  let grad = 0;
  let onnx = "Not";
  let onnxSince = 1;
}
def MPT_UF_Softplus : MPT_UnaryFunction<"softplus", "Softplus"> {
  let summary = "log(1 + exp(x))";
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Softplus";
  let onnxSince = 1;
}
def MPT_UF_Sin : MPT_UnaryFunction<"sin", "Sin"> {
  let summary = "Sine";
  // Rotary embeddings take the sine of positions in the thousands, where a
  // bf16 argument is off by more than a period.
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Sin";
  let onnxSince = 7;
}
def MPT_UF_Cos : MPT_UnaryFunction<"cos", "Cos"> {
  let summary = "Cosine";
  // As sin: large arguments (rotary positions) need FP32.
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Cos";
  let onnxSince = 7;
}
// x * relu6(x + 3) / 6, as PyTorch computes it (ONNX: x * HardSigmoid(x)
// with alpha = 1/6 and beta = 0.5).
def MPT_UF_HardSwish : MPT_UnaryFunction<"hard_swish", "HardSwish"> {
  let summary = "x * min(max(x + 3, 0), 6) / 6";
  let onnx = "HardSwish";
  let onnxSince = 14;
}
// x if x > 0 else alpha * (exp(x) - 1), as PyTorch: expm1.
def MPT_UF_Elu : MPT_UnaryFunction<"elu", "Elu"> {
  let summary = "x if x > 0 else alpha * (exp(x) - 1)";
  let transcendental = 1;
  let params = ["alpha"];
  let paramDefaults = ["1.0"];
  let onnx = "Elu";
  let onnxSince = 6;
}
def MPT_UF_Selu : MPT_UnaryFunction<"selu", "Selu"> {
  let summary = "gamma * (x if x > 0 else alpha * (exp(x) - 1))";
  let transcendental = 1;
  let params = ["alpha", "gamma"];
  let paramDefaults = ["1.67326319217681884765625", "1.05070102214813232421875"];
  let onnx = "Selu";
  let onnxSince = 6;
}
def MPT_UF_Celu : MPT_UnaryFunction<"celu", "Celu"> {
  let summary = "x if x > 0 else alpha * (exp(x / alpha) - 1)";
  let transcendental = 1;
  let params = ["alpha"];
  let paramDefaults = ["1.0"];
  let onnx = "Celu";
  let onnxSince = 12;
}
// PyTorch's hardsigmoid exports as alpha = 1/6, beta = 0.5.
def MPT_UF_HardSigmoid : MPT_UnaryFunction<"hard_sigmoid", "HardSigmoid"> {
  let summary = "min(max(alpha * x + beta, 0), 1)";
  let params = ["alpha", "beta"];
  let paramDefaults = ["0.2", "0.5"];
  let onnx = "HardSigmoid";
  let onnxSince = 6;
}
def MPT_UF_ThresholdedRelu : MPT_UnaryFunction<"thresholded_relu",
                                               "ThresholdedRelu"> {
  let summary = "x if x > alpha else 0";
  let policy = "Clear";
  let params = ["alpha"];
  let paramDefaults = ["1.0"];
  let onnx = "ThresholdedRelu";
  let onnxSince = 10;
}
def MPT_UF_Floor : MPT_UnaryFunction<"floor", "Floor"> {
  let summary = "The largest integer not above x";
  let grad = 0;
  let zeroGrad = 1;
  let onnx = "Floor";
  let onnxSince = 6;
}
def MPT_UF_Ceil : MPT_UnaryFunction<"ceil", "Ceil"> {
  let summary = "The smallest integer not below x";
  let grad = 0;
  let zeroGrad = 1;
  let onnx = "Ceil";
  let onnxSince = 6;
}
def MPT_UF_Round : MPT_UnaryFunction<"round", "Round"> {
  let summary = "The nearest integer, halves to even";
  let grad = 0;
  let zeroGrad = 1;
  let onnx = "Round";
  let onnxSince = 11;
}
def MPT_UF_Sign : MPT_UnaryFunction<"sign", "Sign"> {
  let summary = "-1, 0 or 1 as x is negative, zero or positive (NaN stays NaN)";
  let policy = "Clear";
  let operands = "Numeric";
  let integer = 1;
  let grad = 0;
  let zeroGrad = 1;
  let onnx = "Sign";
  let onnxSince = 9;
}
def MPT_UF_LeakyRelu : MPT_UnaryFunction<"leaky_relu", "LeakyRelu"> {
  let summary = "x if x >= 0 else alpha * x";
  let attrs = 1;
}
def MPT_UF_Gelu : MPT_UnaryFunction<"gelu", "Gelu"> {
  let summary = "Gaussian error linear unit";
  let attrs = 1;
  let transcendental = 1;
}
// gelu with approximate = tanh.
def MPT_UF_GeluTanh : MPT_UnaryFunction<"gelu_tanh", "GeluTanh"> {
  let summary = "GELU's tanh approximation (gelu with approximate = tanh)";
  let kernel = 0;
  let transcendental = 1;
}
def MPT_UF_Clip : MPT_UnaryFunction<"clip", "Clip"> {
  let summary = "Clamp into [min, max]; an absent bound is unbounded";
  let policy = "Clear";
  let operands = "Numeric";
  let attrs = 1;
  let integer = 1;
}

def MPT_UF_Softsign : MPT_UnaryFunction<"softsign", "Softsign"> {
  let summary = "x / (1 + |x|)";
  let onnx = "Softsign";
  let onnxSince = 1;
}
def MPT_UF_Sinh : MPT_UnaryFunction<"sinh", "Sinh"> {
  let summary = "Hyperbolic sine";
  // Exponential growth (PyTorch's autocast runs sinh in FP32 too).
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Sinh";
  let onnxSince = 9;
}
def MPT_UF_Cosh : MPT_UnaryFunction<"cosh", "Cosh"> {
  let summary = "Hyperbolic cosine";
  let policy = "RequireF32";
  let transcendental = 1;
  let onnx = "Cosh";
  let onnxSince = 9;
}
def MPT_UF_Asinh : MPT_UnaryFunction<"asinh", "Asinh"> {
  let summary = "Inverse hyperbolic sine";
  let transcendental = 1;
  let onnx = "Asinh";
  let onnxSince = 9;
}

} // MPTUnaryFunctions

#endif // MPT_DIALECT_MPT_IR_MPTUNARYFUNCTIONS_TD
