// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd lr=0.1" -verify-diagnostics | FileCheck %s

// Tests that batch_norm_train's running statistics are train_step state:
// the parameters are not trained (no sgd_update, no "left frozen" warning),
// and the new running mean and variance are returned with mpt.updates,
// ungated by the finite check.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {mpt.param = "bn.running_mean"}
// CHECK-SAME: {mpt.param = "bn.running_var"}
// CHECK-SAME: tensor<2xf32> {mpt.updates = "bn.weight"}, tensor<2xf32> {mpt.updates = "bn.bias"}, tensor<i64> {mpt.updates = "optimizer.step"}, tensor<i64> {mpt.updates = "train.step"}, tensor<2xf32> {mpt.updates = "bn.running_mean"}, tensor<2xf32> {mpt.updates = "bn.running_var"})
// CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[VAR:.*]] = mpt.batch_norm_train %arg0, %arg1, %arg2, %arg3, %arg4 :
// CHECK-NOT: mpt.sgd_update %arg3
// CHECK-NOT: mpt.sgd_update %arg4
// CHECK: return {{.*}}, %[[MEAN]], %[[VAR]] :
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"},
                   %m: tensor<2xf32> {mpt.param = "bn.running_mean"},
                   %v: tensor<2xf32> {mpt.param = "bn.running_var"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y, %nm, %nv = mpt.batch_norm_train %x, %s, %b, %m, %v {momentum = 0.9 : f32} : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = mpt.relu %y : tensor<4x2x3xf32>
  %l = mpt.reduce_mean %r {keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that one parameter cannot be the running statistic of two batch norms.
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"},
                   %m: tensor<2xf32> {mpt.param = "bn.running_mean"},
                   %v: tensor<2xf32> {mpt.param = "bn.running_var"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y, %nm, %nv = mpt.batch_norm_train %x, %s, %b, %m, %v : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  // expected-error @+1 {{parameter 'bn.running_mean' is the running statistic of more than one batch_norm_train}}
  %z, %nm2, %nv2 = mpt.batch_norm_train %y, %s, %b, %m, %v : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that running statistics that are not parameters are not written back.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: mpt.updates = "m"
// CHECK: return
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %m: tensor<2xf32> {mpt.input = "m"},
                   %v: tensor<2xf32> {mpt.input = "v"},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  // expected-warning @+2 {{the running mean of this batch_norm_train is not a parameter; its update is dropped}}
  // expected-warning @+1 {{the running variance of this batch_norm_train is not a parameter; its update is dropped}}
  %y, %nm, %nv = mpt.batch_norm_train %x, %s, %b, %m, %v : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %l = mpt.reduce_mean %y {keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that batch norm in inference mode is trained as PyTorch's eval mode
// (its running statistics are constants here) with one warning that says
// so and names --batch-norm-training.
// CHECK-LABEL: func.func @train_step
// CHECK: mpt.batch_norm %arg0
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %m = mpt.constant dense<0.0> : tensor<2xf32>
  %v = mpt.constant dense<1.0> : tensor<2xf32>
  // expected-warning @+1 {{1 batch_norm op(s) in inference mode: the training step normalises with their running statistics, which stay frozen (PyTorch's eval mode); the dynamo exporter writes a module in train mode this way: import with --batch-norm-training to use batch statistics}}
  %y = mpt.batch_norm %x, %s, %b, %m, %v : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2x3xf32>
  %l = mpt.reduce_mean %y {keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
