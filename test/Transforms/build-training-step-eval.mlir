// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=cross_entropy loss-output=logits label-input=labels" -verify-diagnostics | FileCheck %s
// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=cross_entropy loss-output=logits label-input=labels eval-entry=" -verify-diagnostics | FileCheck %s --check-prefix=NONE

// Tests the eval_step entry: cloned from the forward function with its
// added loss, after train_step, with the same parameter and input names
// (the label input included); batch_norm_train becomes an inference
// batch_norm on the running statistics, whose new values are dropped;
// training-mode dropout is removed; it returns "loss", then the model's
// other outputs, and updates nothing. The assigned precision (the bf16
// casts) is kept.
// CHECK-LABEL: func.func @train_step
// CHECK: mpt.batch_norm_train
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4x2x3xf32> {mpt.input = "x"}, %[[S:arg[0-9]+]]: tensor<2xf32> {mpt.param = "bn.weight"}, %[[B:arg[0-9]+]]: tensor<2xf32> {mpt.param = "bn.bias"}, %[[M:arg[0-9]+]]: tensor<2xf32> {mpt.param = "bn.running_mean"}, %[[V:arg[0-9]+]]: tensor<2xf32> {mpt.param = "bn.running_var"}, %[[W:arg[0-9]+]]: tensor<6x5xf32> {mpt.param = "fc.weight"}, %{{.*}}: tensor<4xi64> {mpt.input = "labels"})
// CHECK-SAME: -> (tensor<f32> {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}, tensor<4x5xf32> {mpt.output = "logits"})
// CHECK-NOT: mpt.updates
// CHECK-NOT: batch_norm_train
// CHECK-NOT: mpt.dropout
// CHECK: mpt.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]] {epsilon = 1.000000e-03 : f32} :
// CHECK: mpt.cast {{.*}} to tensor<4x6xbf16>
// CHECK: %[[LOGITS:.*]] = mpt.cast {{.*}} to tensor<4x5xf32>
// CHECK: %[[LOSS:.*]], %{{.*}} = mpt.softmax_cross_entropy_loss %[[LOGITS]]
// CHECK: return %[[LOSS]], %[[LOGITS]] : tensor<f32>, tensor<4x5xf32>
// NONE-LABEL: func.func @train_step
// NONE-NOT: eval_step
func.func @forward(%x: tensor<4x2x3xf32> {mpt.input = "x"},
                   %s: tensor<2xf32> {mpt.param = "bn.weight"},
                   %b: tensor<2xf32> {mpt.param = "bn.bias"},
                   %m: tensor<2xf32> {mpt.param = "bn.running_mean"},
                   %v: tensor<2xf32> {mpt.param = "bn.running_var"},
                   %w: tensor<6x5xf32> {mpt.param = "fc.weight"})
    -> (tensor<4x5xf32> {mpt.output = "logits"}) {
  %y, %nm, %nv = mpt.batch_norm_train %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32, momentum = 0.9 : f32} : (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  %d, %mask = mpt.dropout %y {ratio = 0.25 : f32, training = true} : tensor<4x2x3xf32> -> tensor<4x2x3xf32>, tensor<4x2x3xi1>
  %f = mpt.reshape %d : (tensor<4x2x3xf32>) -> tensor<4x6xf32>
  %fh = mpt.cast %f : tensor<4x6xf32> to tensor<4x6xbf16>
  %wh = mpt.cast %w : tensor<6x5xf32> to tensor<6x5xbf16>
  %h = mpt.matmul %fh, %wh : (tensor<4x6xbf16>, tensor<6x5xbf16>) -> tensor<4x5xbf16>
  %logits = mpt.cast %h : tensor<4x5xbf16> to tensor<4x5xf32>
  return %logits : tensor<4x5xf32>
}


// -----

// Tests that the loss is known by its value, not by an output's name: the
// model's own output named "loss" is not the added loss, and eval_step
// leaves it out (its name is the loss output's).
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: -> (tensor<f32> {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}, tensor<4x5xf32> {mpt.output = "logits"})
// CHECK: %[[LOGITS:.*]] = mpt.matmul
// CHECK: %[[LOSS:.*]], %{{.*}} = mpt.softmax_cross_entropy_loss %[[LOGITS]]
// CHECK: return %[[LOSS]], %[[LOGITS]] : tensor<f32>, tensor<4x5xf32>
// NONE-LABEL: func.func @train_step
// NONE-NOT: eval_step
func.func @forward(%x: tensor<4x6xf32> {mpt.input = "x"},
                   %w: tensor<6x5xf32> {mpt.param = "fc.weight"})
    -> (tensor<4x5xf32> {mpt.output = "logits"}, tensor<f32> {mpt.output = "loss"}) {
  %h = mpt.matmul %x, %w : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %l = mpt.reduce_mean %h {keepdims = false} : (tensor<4x5xf32>) -> tensor<f32>
  return %h, %l : tensor<4x5xf32>, tensor<f32>
}
