//===- Passes.td - MPT transformation passes ---------------*- tablegen -*-===//
//
// Every MPT pass is declared here; `createXPass(options)` is the generated
// API that drivers and embedding users call.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_TRANSFORMS_PASSES_TD
#define MPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// An option whose type is one of MPTEnums.td's option enums (or
// mpt::LossScale) takes the enum's cases, with their help texts, through
// the type's llvm::cl parser (mpt/IR/MPTEnumOptions.h): no option lists its
// values here, and a value outside them is an error that lists them.

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
           "Precision mode (auto: from `target`)",
           [{::mpt::withoutValue(::mpt::PrecisionMode::None)}]>,
    Option<"target", "target", "std::string", /*default=*/"",
           "The target the auto mode picks for: cpu or sm_XY (a CUDA compute "
           "capability: sm_70, sm_80, ...)",
           [{::llvm::cl::value_desc("target")}]>,
    ListOption<"keepFP32", "keep-fp32", "std::string",
               "Op types that stay FP32 (e.g. softmax,gelu)">,
    ListOption<"forceLow", "force-low", "std::string",
               "Op types that always compute in low precision">,
    ListOption<"keepFP32Nodes", "keep-fp32-nodes", "std::string",
               "Glob patterns over node names (op locations) that stay FP32">,
    ListOption<"forceLowNodes", "force-low-nodes", "std::string",
               "Glob patterns over node names that compute in low precision">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write --assign-precision's decision report (JSON) to this file "
           "('-' for stdout)",
           [{::llvm::cl::value_desc("file")}]>,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Print a readable summary of the decisions to stderr">,
    Option<"warnUnknown", "warn-unknown", "bool", /*default=*/"false",
           "Warn at every op without a precision policy (kept FP32)">,
    Option<"keepIOTypes", "keep-io-types", "bool", /*default=*/"true",
           "Keep the types of graph inputs and outputs">,
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Ranges measured by mpt-train --collect-ranges (JSON): in fp16 "
           "mode, ops whose values reach the FP16 range or flush to zero "
           "in it stay FP32",
           [{::llvm::cl::value_desc("file")}]>,
    Option<"profileMargin", "profile-margin", "double", /*default=*/"1.0",
           "Doublings (binades) below FP16's largest value a profiled "
           "max |x| must stay">,
    Option<"profileFlushLimit", "profile-flush-limit", "double",
           /*default=*/"0.01",
           "The largest fraction of a profiled op's values FP16 may flush to "
           "zero before the op stays FP32">,
  ];
  let dependentDialects = ["::mpt::MPTDialect"];
}

def FuseAttentionPass : Pass<"fuse-attention", "::mlir::ModuleOp"> {
  let summary = "Replace exported attention subgraphs with mpt.attention";
  let description = [{
    Finds `matmul(softmax(mask(scale * matmul(Q, K^T))), V)` on the last
    axis, as torch.onnx and Hugging Face models export scaled dot-product
    attention, and replaces it with one `mpt.attention`, so that the
    [..., Tq, Tk] scores are never materialised and the gradient is one
    `attention_grad`. Recognised:
    - the scale as a multiplication or division by a scalar constant, on
      the scores or on Q and K^T (torch.onnx's `sqrt(scale)` on each);
    - the mask as an additive float tensor that does not depend on a
      parameter, or as `where(condition, -inf, scores)` (also with the
      fill value in the other branch, and any fill at or below -1e30),
      which becomes the additive mask `where(condition, -inf, 0)`;
    - K^T as a transpose, whose permutation absorbs the swap;
    - a dropout on the probabilities that drops nothing (ratio 0, as the
      training-mode exports of `p = 0` models have it), dropped.
    The intermediate values (scores, probabilities) must have no other
    use: a model that returns its attention weights keeps the unfused
    graph. Run before `--assign-precision`; the pipelines run it with
    `fuse-attention`.

    ```mlir
    %s = mpt.matmul %q, %kt : ... -> tensor<2x4x16x16xf32>
    %t = mpt.mul %s, %c : (tensor<2x4x16x16xf32>, tensor<f32>) -> ...
    %p = mpt.softmax %t {axis = 3 : i64} : tensor<2x4x16x16xf32>
    %o = mpt.matmul %p, %v : ... -> tensor<2x4x16x8xf32>
    // becomes
    %o, %lse = mpt.attention %q, %k, %v {scale = ...} : ...
    ```
  }];
  let dependentDialects = ["::mpt::MPTDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Attention subgraphs replaced">,
  ];
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


def BuildTrainingStepPass : Pass<"build-training-step", "::mlir::ModuleOp"> {
  let summary = "Turn a forward function with a loss into a train_step function";
  let description = [{
    Rewrites the module's forward function (after `--assign-precision`) into
    `train_step`: the forward pass, its gradient graph (built from each op's
    `GradientOpInterface` rule), loss scaling, the finite check, optional
    clipping, the optimizer update and the scale update, as explicit ops.
    docs/training.md describes the ABI and every option.

    - The loss is the model's scalar float output, or one added by
      `loss-kind` (cross_entropy, mse, nll) on `loss-output` against a new
      input `label-input`.
    - Trainable parameters are the `mpt.param` arguments not matched by a
      `freeze` glob; optimizer and scaler state become new parameters.
    - Each new parameter value is a result marked `mpt.updates`, which the
      runtime lowering writes over the parameter in place.
    - Unless `eval-entry` is empty, a second public function (`eval_step`)
      is added beside it: the forward pass and the loss at the same
      precision, with `batch_norm_train` as an inference `batch_norm` on the
      running statistics and dropout off. It returns `loss` and the model's
      other outputs and updates nothing; its parameters and inputs have
      train_step's names, so a plan shares them between the two.
    - With `master-weights=bf16` or `bf16-sr` (AdamW), each trainable
      parameter's argument becomes a bf16 master (its initial value rounded
      to nearest even) read through one inserted cast to f32; the gradients
      and moments stay f32 and `adamw_update` rounds the new weight into
      bf16, to nearest even or (`bf16-sr`) stochastically, keyed by the
      `train.seed` state, the optimizer step and a stream per parameter
      (2^31, 2^31 + 1, ...).
    - After `--assign-precision=fp8`, each `mpt.fp8_scale` argument becomes
      the state `<t>.fp8_scale` with an amax history, the FP8 contractions'
      output gradients are quantized into f8E5M2 with scale state of their
      own, and `update_fp8_scale` keeps every scale (`fp8-scaling`:
      delayed, current or none).

    - With `data-parallel`, the gradients are averaged over the ranks by
      `mpt.all_reduce` ops, each a flat bucket of at most `bucket-mb` MiB
      (at least one gradient), filled from the last parameter back, as the
      backward pass produces them; then come the unscale, the finite check
      and clipping, so every rank takes the same skip decision. The `loss`
      output is averaged too.
    - With `sync-batch-norm`, each `batch_norm_train` becomes FP32 ops whose
      per-channel mean and variance are `mpt.all_reduce`'d over the ranks
      (PyTorch SyncBatchNorm); all_reduce's rule makes the backward global.
    - With `shard-optimizer-state=N` (ZeRO-1 over N ranks), the buckets
      are `mpt.reduce_scatter` ops instead: each rank keeps its shard (1-D,
      ceil(E / N) elements) of each averaged gradient; the finite check and
      the norm (`over_ranks`) cover every rank's shards; each update takes
      the rank's `mpt.shard` of its parameter, and its moments are
      shard-sized state; `mpt.all_gather` ops, in the same buckets, rebuild
      the new parameters on every rank.

    Before:

    ```mlir
    func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                       %w: tensor<4x4xf32> {mpt.param = "w"})
        -> (tensor<f32> {mpt.output = "loss"}) {
      %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
      %l = mpt.reduce_mean %y {keepdims = false} : (tensor<8x4xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    After (`optimizer=sgd lr=0.1`, abridged):

    ```mlir
    func.func @train_step(%x, %w, %opt_step, %train_step)
        -> (loss, skipped, grad_norm, loss_scale, lr, w' {mpt.updates = "w"}, ...) {
      ... forward ..., ... gradient ops ...
      %ok = mpt.all_finite %gw
      %norm = mpt.global_norm %gw
      %lr = mpt.lr_schedule %train_step {lr = 0.1}
      %w2 = mpt.sgd_update %w, %gw, %opt_step, %lr, %ok
      ...
    }
    ```
  }];
  let options = [
    Option<"lossKind", "loss-kind", "::mpt::LossKind",
           /*default=*/"::mpt::LossKind::Model",
           "The loss: the model's scalar output, or one added on loss-output">,
    Option<"lossOutput", "loss-output", "std::string", /*default=*/"",
           "The output an added loss applies to (default: the only float output)">,
    Option<"labelInput", "label-input", "std::string", /*default=*/"\"labels\"",
           "Name of the label input an added loss takes (the model's own input of that name, if it has one)">,
    Option<"lossName", "loss", "std::string", /*default=*/"",
           "The scalar output to use as the loss when the model has several">,
    Option<"optimizer", "optimizer", "::mpt::Optimizer",
           /*default=*/"::mpt::Optimizer::AdamW", "The optimizer">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum of --optimizer=momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "Dampening of --optimizer=momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (default, below 0: 0 for SGD, 0.01 for AdamW, as in PyTorch)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"lossScale", "loss-scale", "::mpt::LossScale",
           /*default=*/"::mpt::LossScale{}",
           "Loss scaling: none, dynamic, static:S (S > 0), or auto (dynamic "
           "when the graph has f16, else none)">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial dynamic loss scale">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Dynamic scale growth factor">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Dynamic scale backoff factor">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "Finite steps before the dynamic scale grows">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Clip gradients to this global L2 norm (0: off)">,
    Option<"schedule", "lr-schedule", "::mpt::LrSchedule",
           /*default=*/"::mpt::LrSchedule::constant",
           "The learning-rate schedule">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Linear warmup steps of warmup_cosine">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Steps over which warmup_cosine decays">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "Final learning rate of warmup_cosine">,
    ListOption<"freeze", "freeze", "std::string",
               "Comma-separated parameter-name globs to keep frozen">,
    Option<"emitGradients", "emit-gradients", "bool", /*default=*/"false",
           "Also return each parameter's unscaled gradient as output grad.<name>">,
    Option<"entry", "entry", "std::string", /*default=*/"\"train_step\"",
           "Name of the training function">,
    Option<"evalEntry", "eval-entry", "std::string", /*default=*/"\"eval_step\"",
           "Name of the evaluation entry point added beside the training one "
           "(forward and loss in inference mode, writing nothing; empty: none)">,
    Option<"fp8Scaling", "fp8-scaling", "::mpt::FP8ScalingMode",
           /*default=*/"::mpt::FP8ScalingMode::Delayed",
           "Where the FP8 scales (after --assign-precision=fp8) come from">,
    Option<"fp8AmaxHistory", "fp8-amax-history", "int64_t", /*default=*/"1024",
           "Length of each FP8 tensor's amax history (delayed scaling)">,
    Option<"fp8AmaxAlgo", "fp8-amax-algo", "::mpt::AmaxComputeAlgo",
           /*default=*/"::mpt::AmaxComputeAlgo::max",
           "The amax a delayed scale comes from">,
    Option<"fp8Margin", "fp8-margin", "int64_t", /*default=*/"0",
           "scale = fp8_max / amax / 2^margin">,
    Option<"masterWeights", "master-weights", "::mpt::MasterWeights",
           /*default=*/"::mpt::MasterWeights::FP32",
           "The trainable parameters' master weights (bf16 ones: AdamW only; "
           "the moments stay fp32)">,
    Option<"dataParallel", "data-parallel", "bool", /*default=*/"false",
           "Average the gradients and the loss over the ranks of a "
           "data-parallel run (mpt.all_reduce), before the unscale, the "
           "finite check and clipping (docs/distributed.md)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "With data-parallel: the gradients' all-reduce buckets, in MiB "
           "(as DDP's bucket_cap_mb)">,
    Option<"allReduceF32", "all-reduce-f32", "bool", /*default=*/"false",
           "With data-parallel: sum the gradients in FP32 whatever their "
           "type">,
    Option<"settableLr", "settable-lr", "bool", /*default=*/"false",
           "Multiply the learning rate by the state optimizer.lr_scale "
           "(initial 1), which a caller may set between steps instead of "
           "recompiling (docs/training.md)">,
    Option<"syncBatchNorm", "sync-batch-norm", "bool", /*default=*/"false",
           "Batch norm with the global batch's statistics: mean and variance "
           "averaged over the ranks (PyTorch SyncBatchNorm), forward and "
           "backward (docs/distributed.md)">,
    Option<"shardOptimizerState", "shard-optimizer-state", "int64_t",
           /*default=*/"0",
           "ZeRO-1 over this many ranks (implies data-parallel; 0: off): "
           "reduce-scatter the gradients, update each rank's shard of the "
           "parameters and optimizer state, all-gather the parameters "
           "(docs/distributed.md)">,
  ];
  let dependentDialects = ["::mpt::MPTDialect", "::mlir::func::FuncDialect"];
}

#endif // MPT_TRANSFORMS_PASSES_TD
