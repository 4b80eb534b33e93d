// RUN: mpt-opt %s --split-input-file --build-training-step="shard-optimizer-state=2 loss-scale=static:128" | FileCheck %s --check-prefix=ADAMW
// RUN: mpt-opt %s --split-input-file --build-training-step="shard-optimizer-state=2 optimizer=momentum bucket-mb=0.00004" | FileCheck %s --check-prefix=BUCKETS
// RUN: mpt-opt %s --split-input-file --mpt-training-pipeline="shard-optimizer-state=2" | FileCheck %s --check-prefix=LOWERED
// RUN: mpt-opt %s --build-training-step="shard-optimizer-state=2 master-weights=bf16-sr" | FileCheck %s --check-prefix=SR
// RUN: not mpt-opt %s --build-training-step="shard-optimizer-state=2 emit-gradients" 2>&1 | FileCheck %s --check-prefix=GRADS
// RUN: not mpt-opt %s --build-training-step="shard-optimizer-state=-1" 2>&1 | FileCheck %s --check-prefix=NEG

// Tests ZeRO-1 over 2 ranks: the gradients' bucket (b, then w: 3 and 12
// elements) is reduce-scattered into this rank's shards (2 and 6
// elements), before the unscale; the loss is all-reduced; the finite check
// and the norm cover every rank's shards (over_ranks); each AdamW update
// takes its parameter's shard and shard-sized moments; one all_gather, in
// the same bucket, rebuilds the parameters, which are the new state.
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %[[W:arg1]]: tensor<4x3xf32>
// ADAMW-SAME: %[[B:arg2]]: tensor<3xf32>
// ADAMW-SAME: tensor<6xf32> {{{.*}}mpt.param = "w.exp_avg"}
// ADAMW-SAME: tensor<2xf32> {{{.*}}mpt.param = "b.exp_avg_sq"}
// ADAMW: %[[G:.*]]:2 = mpt.reduce_scatter %{{.*}}, %{{.*}} {world_size = 2 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> (tensor<2xf32>, tensor<6xf32>)
// ADAMW-NEXT: %[[L:.*]] = mpt.all_reduce %{{.*}} : (tensor<f32>) -> tensor<f32>
// ADAMW-NEXT: %[[GW:.*]] = mpt.unscale %[[G]]#1, %{{.*}} : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
// ADAMW-NEXT: %[[GB:.*]] = mpt.unscale %[[G]]#0, %{{.*}} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// ADAMW-NEXT: %[[OK:.*]] = mpt.all_finite %[[GW]], %[[GB]] {over_ranks = true}
// ADAMW-NEXT: %[[NORM:.*]] = mpt.global_norm %[[GW]], %[[GB]] {over_ranks = true}
// ADAMW: %[[SW:.*]] = mpt.shard %[[W]] {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
// ADAMW-NEXT: %[[NW:new_param[_0-9]*]], %{{.*}}, %{{.*}} = mpt.adamw_update %[[SW]], %[[GW]], {{.*}} -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
// ADAMW-NEXT: %[[SB:.*]] = mpt.shard %[[B]] {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<2xf32>
// ADAMW-NEXT: %[[NB:new_param[_0-9]*]], %{{.*}}, %{{.*}} = mpt.adamw_update %[[SB]], %[[GB]], {{.*}} -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// ADAMW-NEXT: %[[P:.*]]:2 = mpt.all_gather %[[NB]], %[[NW]] {world_size = 2 : i64} : (tensor<2xf32>, tensor<6xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
// ADAMW: return %[[L]], %{{.*}}, %[[NORM]], {{.*}}%[[P]]#0, %[[P]]#1,
// ADAMW-NOT: mpt.all_reduce %{{.*}} : (tensor<3xf32>

// Tests buckets of at most bucket-mb MiB (41 bytes): b alone, then w
// alone, in the scatter and in the gather; momentum buffers are shards.
// BUCKETS-LABEL: func.func @train_step
// BUCKETS: mpt.reduce_scatter %{{.*}} {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<2xf32>
// BUCKETS-NEXT: mpt.reduce_scatter %{{.*}} {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
// BUCKETS: mpt.sgd_update {{.*}} : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<6xf32>, tensor<6xf32>)
// BUCKETS: mpt.all_gather %{{.*}} {world_size = 2 : i64} : (tensor<2xf32>) -> tensor<3xf32>
// BUCKETS-NEXT: mpt.all_gather %{{.*}} {world_size = 2 : i64} : (tensor<6xf32>) -> tensor<4x3xf32>

// Tests the whole pipeline: the ops become kernels of the same names.
// LOWERED-LABEL: func.func @train_step
// LOWERED: mptrt.reduce_scatter
// LOWERED: mptrt.all_finite {{.*}}over_ranks = true
// LOWERED: mptrt.shard
// LOWERED: mptrt.all_gather

// Tests bf16 masters rounded stochastically, sharded: the bf16 parameter
// is sharded (bf16 shards, f32 moments), each update is `sharded` (its
// draws are offset to the shard's place in the whole parameter) and the
// gather rebuilds bf16 parameters.
// SR-LABEL: func.func @train_step
// SR-SAME: %[[W:arg1]]: tensor<4x3xbf16>
// SR-SAME: tensor<6xf32> {{{.*}}mpt.param = "w.exp_avg"}
// SR: %[[SW:.*]] = mpt.shard %[[W]] {world_size = 2 : i64} : (tensor<4x3xbf16>) -> tensor<6xbf16>
// SR-NEXT: %[[NW:new_param[_0-9]*]], %{{.*}}, %{{.*}} = mpt.adamw_update %[[SW]], {{.*}}sharded = true, stochastic_rounding = true{{.*}} : (tensor<6xbf16>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, {{.*}}) -> (tensor<6xbf16>, tensor<6xf32>, tensor<6xf32>)
// SR: mpt.all_gather %{{.*}}, %[[NW]] {world_size = 2 : i64} : (tensor<2xbf16>, tensor<6xbf16>) -> (tensor<3xbf16>, tensor<4x3xbf16>)
// GRADS: shard-optimizer-state and emit-gradients do not go together
// NEG: shard-optimizer-state is the number of ranks, from 1 to 2^20 (0: off); got -1
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w", mpt.initial_value = dense<0.1> : tensor<4x3xf32>},
                   %b: tensor<3xf32> {mpt.param = "b"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %z = mpt.add %y, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
