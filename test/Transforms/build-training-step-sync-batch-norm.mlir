// RUN: mpt-opt %s --build-training-step="optimizer=sgd lr=0.1 data-parallel sync-batch-norm" | FileCheck %s
// RUN: mpt-opt %s --build-training-step="optimizer=sgd lr=0.1 data-parallel" | FileCheck %s --check-prefix=LOCAL

// Tests that sync-batch-norm rewrites batch_norm_train into FP32 ops whose
// per-channel mean and biased variance are all_reduce'd over the ranks; the
// running variance takes the global count's unbiased variance (the world
// size from an all_reduce with sum of 1); the running statistics are the
// new values the step returns; and the backward pass reaches the input
// through the statistics, with an all_reduce of their gradients (the op's
// own rule).
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: mpt.batch_norm_train
// CHECK: %[[H:.*]] = mpt.mul %arg0, %arg1
// CHECK-NEXT: %[[M0:.*]] = mpt.reduce_mean %[[H]] {axes = array<i64: 0, 2>} : (tensor<4x2x3xf32>) -> tensor<1x2x1xf32>
// CHECK-NEXT: %[[MEAN:.*]] = mpt.all_reduce %[[M0]] : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
// CHECK-NEXT: %[[D:.*]] = mpt.sub %[[H]], %[[MEAN]]
// CHECK-NEXT: %[[SQ:.*]] = mpt.mul %[[D]], %[[D]]
// CHECK-NEXT: %[[V0:.*]] = mpt.reduce_mean %[[SQ]] {axes = array<i64: 0, 2>}
// CHECK-NEXT: %[[VAR:.*]] = mpt.all_reduce %[[V0]] : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
// CHECK: mpt.all_reduce %{{.*}} {sum = true} : (tensor<f32>) -> tensor<f32>
// CHECK: %[[NEWMEAN:.*]] = mpt.add %{{.*}}, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[NEWVAR:.*]] = mpt.add %{{.*}}, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: mpt.all_reduce %{{.*}} {mpt.backward} : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
// CHECK: return {{.*}}, %[[NEWMEAN]], %[[NEWVAR]] :

// Tests that without it the batch norm keeps its per-rank statistics.
// LOCAL-LABEL: func.func @train_step
// LOCAL: mpt.batch_norm_train
// LOCAL-NOT: mpt.all_reduce {{.*}}tensor<1x2x1xf32>
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %w: tensor<2x1xf32> {mpt.param = "w", mpt.initial_value = dense<1.0> : tensor<2x1xf32>},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"},
                   %m: tensor<2xf32> {mpt.param = "bn.running_mean"},
                   %v: tensor<2xf32> {mpt.param = "bn.running_var"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %h = mpt.mul %x, %w : (tensor<4x2x3xf32>, tensor<2x1xf32>) -> tensor<4x2x3xf32>
  %y, %nm, %nv = mpt.batch_norm_train %h, %s, %b, %m, %v {momentum = 0.9 : f32} : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = mpt.relu %y : tensor<4x2x3xf32>
  %q = mpt.mul %r, %r : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %l = mpt.reduce_mean %q {keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
