//===- Passes.td - MPT transformation passes ---------------*- tablegen -*-===//
//
// Every MPT pass is declared here; `createXPass(options)` is the generated
// API that drivers and embedding users call.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_TRANSFORMS_PASSES_TD
#define MPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignPrecisionPass : Pass<"assign-precision", "::mlir::ModuleOp"> {
  let summary = "Assign a precision to every op of the model";
  let description = [{
    Chooses, for every op of every function, whether it computes in FP32 or
    in the mode's low-precision type, from the precision category each op
    declares (`PrecisionPolicyOpInterface`), and inserts the casts that
    choice needs: one per producer and type, shared by all users. The
    analysis is one forward and one backward walk over the whole graph
    (linear in its size); docs/precision.md describes the rules.

    - `always-low` ops (contractions) compute low and accumulate in FP32; one
      that feeds an FP32 op produces FP32 directly.
    - `require-f32` ops (softmax, norms, exp, log, pow, sums, losses) stay
      FP32, and so does everything downstream of them up to a contraction.
    - `follow` and `clear` ops between low-precision ops become low.
    - Parameters stay FP32 masters; the signature stays as it was unless
      `keep-io-types=false`.

    The mode may be given bare: `--assign-precision=bf16` is
    `--assign-precision="mode=bf16"`.

    Before (a layer followed by softmax, `--assign-precision=bf16`):

    ```mlir
    %0 = mpt.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<8x4xf32>
    ```

    After:

    ```mlir
    %xl = mpt.cast %x {inserted} : tensor<8x16xf32> to tensor<8x16xbf16>
    %wl = mpt.cast %w {inserted} : tensor<16x4xf32> to tensor<16x4xbf16>
    %0 = mpt.matmul %xl, %wl : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
    %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<8x4xf32>
    ```
  }];
  let options = [
    Option<"mode", "mode", "::mpt::PrecisionMode", "::mpt::PrecisionMode::BF16",
           "Precision mode: bf16, fp16, fp8, fp32, or auto (from `target`)",
           [{::llvm::cl::values(
               clEnumValN(::mpt::PrecisionMode::BF16, "bf16", "BF16 mixed precision"),
               clEnumValN(::mpt::PrecisionMode::FP16, "fp16", "FP16 mixed precision"),
               clEnumValN(::mpt::PrecisionMode::FP8, "fp8", "FP8 (E4M3) contraction inputs, otherwise BF16"),
               clEnumValN(::mpt::PrecisionMode::FP32, "fp32", "Everything FP32"),
               clEnumValN(::mpt::PrecisionMode::Auto, "auto", "Chosen from `target`"))}]>,
    Option<"target", "target", "std::string", /*default=*/"",
           "Target for mode=auto: sm_XY (CUDA compute capability) or cpu">,
    ListOption<"keepFP32", "keep-fp32", "std::string",
               "Op types that stay FP32 (e.g. softmax,gelu)">,
    ListOption<"forceLow", "force-low", "std::string",
               "Op types that always compute in low precision">,
    ListOption<"keepFP32Nodes", "keep-fp32-nodes", "std::string",
               "Glob patterns over node names (op locations) that stay FP32">,
    ListOption<"forceLowNodes", "force-low-nodes", "std::string",
               "Glob patterns over node names that compute in low precision">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write the decision report (JSON) to this path ('-' for stdout)">,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Print a readable summary of the decisions to stderr">,
    Option<"warnUnknown", "warn-unknown", "bool", /*default=*/"false",
           "Warn at every op without a precision policy (kept FP32)">,
    Option<"keepIOTypes", "keep-io-types", "bool", /*default=*/"true",
           "Keep the types of graph inputs and outputs">,
  ];
  let dependentDialects = ["::mpt::MPTDialect"];
}

def VerifyPrecisionPass : Pass<"verify-precision", "::mlir::ModuleOp"> {
  let summary = "Check the precision invariants of a model";
  let description = [{
    Fails with a diagnostic at the offending op when
    - an op whose category is `require-f32` (softmax, norms, losses, exp,
      log, pow, sums) has a float operand or result below FP32, unless the
      op carries `mpt.precision = "low"`;
    - an operand or result that an op keeps FP32 (normalisation statistics,
      FP8 scales) is not FP32;
    - an op accumulates in a type below FP32;
    - a parameter (`mpt.param`) is not FP32;
    - two inserted casts convert one producer to one type, or an inserted
      cast converts the result of another.

    ```mlir
    // expected-error: 'mpt.softmax' must run in FP32 ...
    %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<8x4xbf16>
    ```
  }];
  let dependentDialects = ["::mpt::MPTDialect"];
}

#endif // MPT_TRANSFORMS_PASSES_TD
