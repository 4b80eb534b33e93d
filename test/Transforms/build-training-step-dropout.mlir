// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" | FileCheck %s

// Tests that training-mode dropout gets the seed state: one `train.seed`
// parameter (i64, initial 0, never updated), the `train.step` counter as
// the step, a distinct stream per dropout op in program order, and the
// gradient of each as the same dropout (seed, step, stream, ratio) of the
// incoming gradient, which redraws the forward mask: no mask is kept from
// the forward pass (the forward masks have no use).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[TSTEP:arg[0-9]+]]: tensor<i64> {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "train.step"}
// CHECK-SAME: %[[SEED:arg[0-9]+]]: tensor<i64> {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "train.seed"}
// CHECK-NOT: mpt.updates = "train.seed"
// CHECK: %{{.*}}, %[[M0:.*]] = mpt.dropout %{{.*}}, %[[SEED]], %[[TSTEP]] {ratio = 1.000000e-01 : f32, stream = 0 : i64, training = true} : tensor<8x8xf32>, tensor<i64>, tensor<i64> -> tensor<8x8xf32>, tensor<8x8xi1>
// CHECK: %{{.*}}, %[[M1:.*]] = mpt.dropout %{{.*}}, %[[SEED]], %[[TSTEP]] {ratio = 3.000000e-01 : f32, stream = 1 : i64, training = true}
// CHECK: mpt.reduce_mean
// CHECK: mpt.dropout %{{.*}}, %[[SEED]], %[[TSTEP]] {mpt.backward, ratio = 3.000000e-01 : f32, stream = 1 : i64, training = true} : tensor<4x8xf32>
// CHECK: mpt.dropout %{{.*}}, %[[SEED]], %[[TSTEP]] {mpt.backward, ratio = 1.000000e-01 : f32, stream = 0 : i64, training = true} : tensor<8x8xf32>
// CHECK-NOT: %[[M0]]
// CHECK-NOT: %[[M1]]
// CHECK: mpt.advance_step %[[TSTEP]]
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %d0, %m0 = mpt.dropout %w {ratio = 0.1 : f32, training = true} : tensor<8x8xf32> -> tensor<8x8xf32>, tensor<8x8xi1>
  %h = mpt.matmul %x, %d0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d1, %m1 = mpt.dropout %h {ratio = 0.3 : f32, training = true} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi1>
  return %d1 : tensor<4x8xf32>
}

// -----

// Tests that a model whose dropouts are all inference-mode (or ratio 0)
// gets no seed state.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: train.seed
// CHECK: mpt.dropout %{{[^,]*}} {ratio = 0.000000e+00 : f32, training = true} :
// CHECK: mpt.dropout %{{[^,]*}} {ratio = 3.000000e-01 : f32} :
// CHECK-NOT: train.seed
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %d0, %m0 = mpt.dropout %x {ratio = 0.0 : f32, training = true} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi1>
  %h = mpt.matmul %d0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d1, %m1 = mpt.dropout %h {ratio = 0.3 : f32} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi1>
  return %d1 : tensor<4x8xf32>
}
