// RUN: mpt-opt %s --build-training-step="data-parallel" | FileCheck %s --check-prefix=DP
// RUN: mpt-opt %s --build-training-step="data-parallel loss-scale=static:128 optimizer=sgd" | FileCheck %s --check-prefix=SCALED
// RUN: mpt-opt %s --build-training-step="data-parallel bucket-mb=0.00004 all-reduce-f32" | FileCheck %s --check-prefix=BUCKETS
// RUN: mpt-opt %s --build-training-step | FileCheck %s --check-prefix=NODP
// RUN: mpt-opt %s --mpt-training-pipeline="data-parallel" | FileCheck %s --check-prefix=LOWERED
// RUN: not mpt-opt %s --build-training-step="data-parallel bucket-mb=0" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that data-parallel averages the gradients in one bucket (25 MiB
// holds both), filled from the last parameter back (b, then w), before the
// finite check and the norm, which read the averaged gradients; the loss is
// averaged too and is the loss output; the updates take the averages.
// DP-LABEL: func.func @train_step
// DP: %[[G:.*]]:2 = mpt.all_reduce %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
// DP-NEXT: %[[L:.*]] = mpt.all_reduce %{{.*}} : (tensor<f32>) -> tensor<f32>
// DP-NEXT: %[[OK:.*]] = mpt.all_finite %[[G]]#1, %[[G]]#0
// DP-NEXT: %[[NORM:.*]] = mpt.global_norm %[[G]]#1, %[[G]]#0
// DP: mpt.adamw_update %arg1, %[[G]]#1,
// DP: mpt.adamw_update %arg2, %[[G]]#0,
// DP: return %[[L]], %{{.*}}, %[[NORM]],
// DP-NOT: mpt.all_reduce

// Tests that with loss scaling the averages are taken of the scaled
// gradients, before the unscale: the finite check then sees an overflow on
// any rank, on every rank.
// SCALED-LABEL: func.func @train_step
// SCALED: mpt.scale_loss
// SCALED: %[[G:.*]]:2 = mpt.all_reduce
// SCALED: mpt.unscale %[[G]]#1,
// SCALED: mpt.unscale %[[G]]#0,
// SCALED: mpt.all_finite

// Tests buckets of at most bucket-mb MiB (0.00004 MiB, 41 bytes): b's 12
// bytes, then w's 48 bytes alone; all-reduce-f32 asks each for an FP32 sum.
// BUCKETS-LABEL: func.func @train_step
// BUCKETS: mpt.all_reduce %{{.*}} {reduce_in_f32 = true} : (tensor<3xf32>) -> tensor<3xf32>
// BUCKETS-NEXT: mpt.all_reduce %{{.*}} {reduce_in_f32 = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// BUCKETS-NEXT: mpt.all_reduce %{{.*}} {reduce_in_f32 = true} : (tensor<f32>) -> tensor<f32>
// BUCKETS-NEXT: mpt.all_finite

// Tests that without data-parallel there is no collective.
// NODP-LABEL: func.func @train_step
// NODP-NOT: mpt.all_reduce

// Tests the whole pipeline: the buckets become mptrt.all_reduce kernels.
// LOWERED-LABEL: func.func @train_step
// LOWERED: mptrt.all_reduce %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
// LOWERED: mptrt.all_reduce %{{.*}} : (tensor<f32>) -> tensor<f32>

// Tests that a bucket must hold something.
// BAD: bucket-mb must be above 0 and at most 1e6 MiB; got 0
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w", mpt.initial_value = dense<0.1> : tensor<4x3xf32>},
                   %b: tensor<3xf32> {mpt.param = "b"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %z = mpt.add %y, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
