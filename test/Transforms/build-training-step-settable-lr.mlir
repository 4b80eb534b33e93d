// RUN: mpt-opt %s --build-training-step="optimizer=sgd lr=0.5 settable-lr" | FileCheck %s
// RUN: mpt-opt %s --build-training-step="optimizer=sgd lr=0.5" | FileCheck %s --check-prefix=FIXED

// Tests that settable-lr multiplies the scheduled learning rate by the
// state optimizer.lr_scale (initial 1, never written back), and that the
// product is both the lr output and what the update reads.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SCALE:arg[0-9]+]]: tensor<f32> {mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "optimizer.lr_scale"}
// CHECK-NOT: mpt.updates = "optimizer.lr_scale"
// CHECK: %[[SCHED:.*]] = mpt.lr_schedule %{{.*}} {lr = 5.000000e-01 : f64}
// CHECK-NEXT: %[[LR:.*]] = mpt.mul %[[SCHED]], %[[SCALE]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: mpt.sgd_update %{{.*}}, %{{.*}}, %{{.*}}, %[[LR]],
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LR]],

// Tests that without it the plan has no such state.
// FIXED-LABEL: func.func @train_step
// FIXED-NOT: optimizer.lr_scale
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w", mpt.initial_value = dense<0.1> : tensor<4x3xf32>})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %y {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
