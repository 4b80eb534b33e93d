// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=cross_entropy label-input=labels" -verify-diagnostics | FileCheck %s

// Tests that an added loss takes the model's own input named label-input
// when the model reads the labels too (T5 shifts them into its decoder):
// no second labels argument is added, and both the model and the loss read
// the one input.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[LABELS:[a-z0-9]+]]: tensor<2x3xi64> {mpt.input = "labels"}
// CHECK-NOT: mpt.input = "labels"
// CHECK: mpt.gather %{{.*}}, %[[LABELS]]
// CHECK: mpt.softmax_cross_entropy_loss %{{.*}}, %[[LABELS]]
func.func @forward(%labels: tensor<2x3xi64> {mpt.input = "labels"},
                   %e: tensor<5x5xf32> {mpt.param = "embedding"})
    -> (tensor<2x3x5xf32> {mpt.output = "logits"}) {
  %h = mpt.gather %e, %labels {axis = 0 : i64} : (tensor<5x5xf32>, tensor<2x3xi64>) -> tensor<2x3x5xf32>
  return %h : tensor<2x3x5xf32>
}

// -----

// Tests that the model's input named label-input must have the labels'
// type.
// expected-error @+1 {{the model's input 'labels' is 'tensor<2x3xf32>', but the loss needs labels of type 'tensor<2xi64>'; choose another label-input}}
func.func @forward(%labels: tensor<2x3xf32> {mpt.input = "labels"},
                   %w: tensor<3x5xf32> {mpt.param = "w"})
    -> (tensor<2x5xf32> {mpt.output = "logits"}) {
  %h = mpt.matmul %labels, %w : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return %h : tensor<2x5xf32>
}
