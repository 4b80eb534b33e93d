//===- MPTTrainingOps.td - loss scaling and optimizer ops --*- tablegen -*-===//
//
// The ops `--build-training-step` puts after the gradient graph: loss
// scaling, the finite check, clipping, the optimizer updates, the scale
// update, the learning-rate schedule and FP8 delayed scaling. They are
// functional (each returns the new state); the runtime lowering writes the
// new state over the old in place. Each is a runtime kernel kind of the same
// name; docs/training.md gives the exact semantics.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTTRAININGOPS_TD
#define MPT_DIALECT_MPT_IR_MPTTRAININGOPS_TD

def MPT_I64Scalar : 0DTensorOf<[I64]>;
def MPT_F32Scalar : 0DTensorOf<[F32]>;
def MPT_BoolScalar : 0DTensorOf<[I1]>;

class MPT_TrainingOp<string mnemonic, list<Trait> traits = []>
    : MPT_Op<mnemonic, !listconcat([Pure, PrecisionPolicy<"Fixed">], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def MPT_ScaleLossOp : MPT_TrainingOp<"scale_loss", [DifferentiableWithConstants]>,
    MPT_RuntimeKernel<"MPTRT_ScaleLossOp"> {
  let summary = "loss * scale, the start of the scaled backward pass";
  let arguments = (ins MPT_F32Scalar:$loss, MPT_F32Scalar:$scale);
  let results = (outs MPT_F32Scalar:$output);
}

def MPT_UnscaleOp : MPT_TrainingOp<"unscale", [AllShapesMatch<["grad", "output"]>]>,
    MPT_RuntimeKernel<"MPTRT_UnscaleOp"> {
  let summary = "An FP32 gradient divided by the loss scale (times its reciprocal)";
  let arguments = (ins MPT_FloatTensor:$grad, MPT_F32Scalar:$scale);
  let results = (outs F32Tensor:$output);
}

def MPT_AllFiniteOp : MPT_TrainingOp<"all_finite">,
    MPT_RuntimeKernel<"MPTRT_AllFiniteOp"> {
  let summary = "Whether every element of every operand is finite";
  let description = [{
    With `over_ranks` the operands are this rank's shards of the gradients
    (`--shard-optimizer-state`), and the result says whether every element
    of every rank's operands is finite: the same on every rank.
  }];
  let arguments = (ins Variadic<MPT_FloatTensor>:$inputs,
                   DefaultValuedAttr<BoolAttr, "false">:$over_ranks);
  let results = (outs MPT_BoolScalar:$output);
}

def MPT_GlobalNormOp : MPT_TrainingOp<"global_norm">,
    MPT_RuntimeKernel<"MPTRT_GlobalNormOp"> {
  let summary = "The L2 norm of all operands together, accumulated in f64";
  let description = [{
    With `over_ranks` the operands are this rank's shards, and the result
    is the norm of every rank's operands together: the f64 sums of squares
    are added over the ranks before the square root.
  }];
  let arguments = (ins Variadic<MPT_FloatTensor>:$inputs,
                   DefaultValuedAttr<BoolAttr, "false">:$over_ranks);
  let results = (outs MPT_F32Scalar:$output);
}

def MPT_AllReduceOp : MPT_Op<"all_reduce",
    [Differentiable, PrecisionPolicy<"Fixed", "Result", ["getAccumulationType"]>]>,
    MPT_RuntimeKernel<"MPTRT_AllReduceOp"> {
  let summary = "The mean of each operand over the ranks of a data-parallel run";
  let description = [{
    Data parallelism's collective (docs/distributed.md): every rank runs the
    same step on its own slice of the global batch, and each result is the
    element-wise mean, over the ranks, of the operand at the same position.
    The operands are one flat bucket: a backend reduces them together, as
    one buffer, in one collective call. With one rank the results equal the
    operands bit for bit.

    Its precision follows the gradients: each result has its operand's type.
    `reduce_in_f32` asks for the sum in FP32 whatever the operands' type;
    without it a backend may sum in the operands' type (NCCL does for
    bf16). The CPU backend's MPI reduction always sums bf16 and f16 through
    an FP32 staging buffer, since MPI has no such types, then divides by the
    world size and rounds once.

    `--build-training-step="data-parallel"` puts it on the gradients, in
    buckets of `bucket-mb` megabytes, before the finite check, the unscale
    and clipping, so that every rank takes the same skip decision; and on
    the loss, so that the loss reported is the global batch's.

    With `sum` the results are the sums over the ranks instead of the means
    (`--sync-batch-norm` counts the ranks with it).

    Its gradient rule is itself: each rank's loss reads the same result, so
    the gradient of the ranks' summed losses with respect to one rank's
    operand is the mean (or the sum) of the ranks' result gradients, an
    `mpt.all_reduce` of the same kind in the backward pass. Only a forward
    all_reduce has a gradient (`--sync-batch-norm`'s statistics); the
    training step's own gradient and loss averages are built after the
    gradients.

    The op has effects (it talks to the other ranks): it is neither folded,
    moved nor removed.

    ```mlir
    %a, %b = mpt.all_reduce %ga, %gb {reduce_in_f32 = true}
        : (tensor<4x4xf32>, tensor<4xbf16>) -> (tensor<4x4xf32>, tensor<4xbf16>)
    ```
  }];
  let arguments = (ins Variadic<MPT_FloatTensor>:$inputs,
                   DefaultValuedAttr<BoolAttr, "false">:$reduce_in_f32,
                   DefaultValuedAttr<BoolAttr, "false">:$sum);
  let results = (outs Variadic<MPT_FloatTensor>:$outputs);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// The sharded optimizer state's ops (ZeRO-1, `--shard-optimizer-state=N`).
// A tensor of E elements sharded over N ranks is split into N shards of
// S = ceil(E / N) elements, in C order: rank r holds elements [r S, r S + S),
// the elements past E zero. Each shard is a 1-D tensor<S>.
class MPT_ShardingOp<string mnemonic, list<Trait> traits = []>
    : MPT_Op<mnemonic, traits> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def MPT_ReduceScatterOp : MPT_ShardingOp<"reduce_scatter",
    [PrecisionPolicy<"Fixed", "Result", ["getAccumulationType"]>]>,
    MPT_RuntimeKernel<"MPTRT_ReduceScatterOp"> {
  let summary = "This rank's shard of each operand's mean over the ranks";
  let description = [{
    The sharded counterpart of `mpt.all_reduce`: each result is this rank's
    shard (1-D, ceil(E / world_size) elements, the elements past E zero) of
    the element-wise mean over the ranks of the operand at the same
    position. The operands are one flat bucket, reduced in one collective
    call. Each result has its operand's element type; `reduce_in_f32` as for
    `mpt.all_reduce`. The op talks to the other ranks: it is neither folded,
    moved nor removed.

    ```mlir
    %a, %b = mpt.reduce_scatter %ga, %gb {world_size = 2 : i64}
        : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<6xf32>, tensor<2xf32>)
    ```
  }];
  let arguments = (ins Variadic<MPT_FloatTensor>:$inputs, I64Attr:$world_size,
                   DefaultValuedAttr<BoolAttr, "false">:$reduce_in_f32);
  let results = (outs Variadic<MPT_FloatTensor>:$outputs);
}

def MPT_AllGatherOp : MPT_ShardingOp<"all_gather",
    [PrecisionPolicy<"Fixed">]>,
    MPT_RuntimeKernel<"MPTRT_AllGatherOp"> {
  let summary = "Each whole tensor, rebuilt from every rank's shard of it";
  let description = [{
    Each operand is this rank's shard of a tensor of the result's type (the
    layout of `mpt.reduce_scatter`); the result is the whole tensor, rank
    r's shard giving its elements [r S, r S + S), the padding dropped. The
    operands are one flat bucket, gathered in one collective call. With one
    rank each result holds its operand's elements bit for bit.

    ```mlir
    %w, %b = mpt.all_gather %sw, %sb {world_size = 2 : i64}
        : (tensor<6xf32>, tensor<2xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins Variadic<MPT_FloatTensor>:$inputs, I64Attr:$world_size);
  let results = (outs Variadic<MPT_FloatTensor>:$outputs);
}

def MPT_ShardOp : MPT_ShardingOp<"shard", [Pure, PrecisionPolicy<"Fixed">]>,
    MPT_RuntimeKernel<"MPTRT_ShardOp"> {
  let summary = "This rank's shard of a tensor every rank holds whole";
  let description = [{
    Elements [r S, r S + S) of the operand in C order, for this rank r and
    S = ceil(E / world_size), the elements past E zero: the part of a
    parameter this rank's optimizer update owns. It reads the rank but
    exchanges nothing.

    ```mlir
    %s = mpt.shard %w {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins MPT_FloatTensor:$input, I64Attr:$world_size);
  let results = (outs MPT_FloatTensor:$output);
}

def MPT_ClipByNormOp : MPT_TrainingOp<"clip_by_norm", [AllTypesMatch<["grad", "output"]>]>,
    MPT_RuntimeKernel<"MPTRT_ClipByNormOp"> {
  let summary = "grad * min(1, max_norm / (norm + 1e-6)) (PyTorch clip_grad_norm_)";
  let arguments = (ins F32Tensor:$grad, MPT_F32Scalar:$norm, F64Attr:$max_norm);
  let results = (outs F32Tensor:$output);
}

def MPT_SGDUpdateOp : MPT_TrainingOp<"sgd_update">,
    MPT_RuntimeKernel<"MPTRT_SGDUpdateOp"> {
  let summary = "One torch.optim.SGD step, skipped when `finite` is false";
  let description = [{
    Returns the new parameter and, with momentum, the new momentum buffer.
    `step` counts the optimizer steps taken before this one (the buffer
    starts as the first gradient). When `finite` is false both results
    equal the operands bit for bit.
  }];
  let arguments = (ins F32Tensor:$param, F32Tensor:$grad,
                   Optional<F32Tensor>:$momentum_buffer, MPT_I64Scalar:$step,
                   MPT_F32Scalar:$lr, MPT_BoolScalar:$finite,
                   DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs F32Tensor:$new_param, Optional<F32Tensor>:$new_momentum_buffer);
  let hasVerifier = 1;
}

def MPT_MasterTensor : TensorOf<[F32, BF16]>;

def MPT_AdamWUpdateOp : MPT_TrainingOp<"adamw_update",
    [AllTypesMatch<["param", "new_param"]>]>,
    MPT_RuntimeKernel<"MPTRT_AdamWUpdateOp"> {
  let summary = "One torch.optim.AdamW step, skipped when `finite` is false";
  let description = [{
    The moments are FP32; the parameter (the master weight) is FP32 or, with
    `--build-training-step="master-weights=bf16|bf16-sr"`, bf16: the update
    is computed in FP32 from the widened weight and rounded once into bf16,
    to nearest even, or with `stochastic_rounding` stochastically, from the
    Philox4x32-10 word of (`seed`, `step`, `stream`, element index).
    `sharded` (ZeRO-1, `--shard-optimizer-state`): the parameter is this
    rank's shard of the whole one (`mpt.shard`), so its element k is the
    whole parameter's element rank x numel + k, and that is the index of
    its draw: the ranks round as one process rounds the whole parameter.

    ```mlir
    %p1, %m1, %v1 = mpt.adamw_update %p, %g, %m, %v, %step, %lr, %ok, %seed
        {stochastic_rounding = true, stream = 2147483648 : i64}
        : (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
           tensor<i64>, tensor<f32>, tensor<i1>, tensor<i64>)
        -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins MPT_MasterTensor:$param, F32Tensor:$grad, F32Tensor:$exp_avg,
                   F32Tensor:$exp_avg_sq, MPT_I64Scalar:$step, MPT_F32Scalar:$lr,
                   MPT_BoolScalar:$finite, Optional<MPT_I64Scalar>:$seed,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                   DefaultValuedAttr<F64Attr, "0.01">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$stochastic_rounding,
                   OptionalAttr<I64Attr>:$stream,
                   DefaultValuedAttr<BoolAttr, "false">:$sharded);
  let results = (outs MPT_MasterTensor:$new_param, F32Tensor:$new_exp_avg,
                 F32Tensor:$new_exp_avg_sq);
  let hasVerifier = 1;
}

def MPT_UpdateLossScaleOp : MPT_TrainingOp<"update_loss_scale">,
    MPT_RuntimeKernel<"MPTRT_UpdateLossScaleOp"> {
  let summary = "The dynamic loss scale's update (PyTorch GradScaler.update)";
  let arguments = (ins MPT_F32Scalar:$scale, MPT_I64Scalar:$growth_tracker,
                   MPT_BoolScalar:$finite,
                   DefaultValuedAttr<F64Attr, "2.0">:$growth_factor,
                   DefaultValuedAttr<F64Attr, "0.5">:$backoff_factor,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval);
  let results = (outs MPT_F32Scalar:$new_scale, MPT_I64Scalar:$new_growth_tracker);
}

def MPT_LRScheduleOp : MPT_TrainingOp<"lr_schedule">,
    MPT_RuntimeKernel<"MPTRT_LRScheduleOp"> {
  let summary = "The learning rate at a step: constant, or linear warmup then cosine";
  let arguments = (ins MPT_I64Scalar:$step,
                   DefaultValuedAttr<MPT_LrScheduleAttr, "::mpt::LrSchedule::constant">:$schedule,
                   F64Attr:$lr,
                   DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
                   DefaultValuedAttr<I64Attr, "0">:$total_steps,
                   DefaultValuedAttr<F64Attr, "0.0">:$min_lr);
  let results = (outs MPT_F32Scalar:$output);
  let hasVerifier = 1;
}

def MPT_AdvanceStepOp : MPT_TrainingOp<"advance_step">,
    MPT_RuntimeKernel<"MPTRT_AdvanceStepOp"> {
  let summary = "count + 1, or count when `finite` is given and false";
  let arguments = (ins MPT_I64Scalar:$count, Optional<MPT_BoolScalar>:$finite);
  let results = (outs MPT_I64Scalar:$output);
}

def MPT_AmaxOp : MPT_TrainingOp<"amax">, MPT_RuntimeKernel<"MPTRT_AmaxOp"> {
  let summary = "max |x| (NaN if any element is NaN)";
  let arguments = (ins MPT_FloatTensor:$input);
  let results = (outs MPT_F32Scalar:$output);
}

def MPT_UpdateFP8ScaleOp : MPT_TrainingOp<"update_fp8_scale",
    [AllTypesMatch<["amax_history", "new_amax_history"]>]>,
    MPT_RuntimeKernel<"MPTRT_UpdateFP8ScaleOp"> {
  let summary = "Delayed FP8 scaling (Transformer Engine): roll the amax history, rescale";
  let description = [{
    `history' = [amax, history[0 .. H-2]]`; `a = max(history')`
    (`amax_compute_algo` `max`) or `history'[0]` (`most_recent`);
    `scale' = fp8_max / a / 2^margin`, or `scale` when `a` is 0 or not
    finite (a NaN anywhere in the history counts as not finite for `max`).
  }];
  let arguments = (ins 1DTensorOf<[F32]>:$amax_history, MPT_F32Scalar:$scale,
                   MPT_F32Scalar:$amax,
                   DefaultValuedAttr<F64Attr, "448.0">:$fp8_max,
                   DefaultValuedAttr<I64Attr, "0">:$margin,
                   DefaultValuedAttr<MPT_AmaxComputeAlgoAttr,
                                     "::mpt::AmaxComputeAlgo::max">:$amax_compute_algo);
  let results = (outs 1DTensorOf<[F32]>:$new_amax_history, MPT_F32Scalar:$new_scale);
  let hasVerifier = 1;
}

#endif // MPT_DIALECT_MPT_IR_MPTTRAININGOPS_TD
