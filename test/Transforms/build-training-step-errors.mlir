// RUN: mpt-opt %s -split-input-file --build-training-step -verify-diagnostics -o /dev/null
// RUN: not mpt-opt %s -split-input-file --build-training-step="optimizer=lion" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not mpt-opt %s -split-input-file --build-training-step="loss-scale=static" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: echo "module {}" | not mpt-opt --build-training-step 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Tests that a typed option's value outside its set is rejected as the
// options are parsed, naming the values it takes (MPTEnums.td).
// OPT: for the --optimizer option: must be sgd, momentum or adamw; got 'lion'
// SCALE: for the --loss-scale option: must be none, dynamic, static:S (S > 0) or auto; got 'static'
// NOFUNC: --build-training-step expects one public function, found 0

// Tests that an op without a gradient rule on the path from a parameter to
// the loss is an error at that op (its location is the ONNX node).
func.func @forward(%p: tensor<f32> {mpt.param = "p"}) -> (tensor<f32> {mpt.output = "loss"}) {
  %limit = mpt.constant dense<4.0> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'mpt.range' has no gradient rule, and it lies on the path from a trainable value to the loss}}
  %r = mpt.range %p, %limit, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  %l = mpt.reduce_sum %r {keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that a model without a scalar loss needs loss-kind.
// expected-error @+1 {{the model has no scalar float output (its outputs are 'y'); add a loss with loss-kind=cross_entropy|mse|nll, loss-output and label-input}}
func.func @forward(%x: tensor<2x4xf32> {mpt.input = "x"}, %w: tensor<4x4xf32> {mpt.param = "w"})
    -> (tensor<2x4xf32> {mpt.output = "y"}) {
  %y = mpt.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Tests that a parameter that cannot reach the loss is left frozen, with a
// warning, and that the step fails when no parameter reaches it.
// expected-error @+1 {{no trainable parameter reaches the loss}}
func.func @forward(%x: tensor<4xf32> {mpt.input = "x"},
                   // expected-warning @+1 {{parameter 'unused' does not reach the loss; it is left frozen}}
                   %u: tensor<4xf32> {mpt.param = "unused"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %l = mpt.reduce_sum %x {keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that the eval entry's name must be free.
// expected-error @+1 {{the module already has a symbol named 'eval_step', the name of the eval entry (choose another with eval-entry=NAME, or none with eval-entry=)}}
func.func @forward(%x: tensor<4x5xf32> {mpt.input = "x"},
                   %w: tensor<5x5xf32> {mpt.param = "w"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %h = mpt.matmul %x, %w : (tensor<4x5xf32>, tensor<5x5xf32>) -> tensor<4x5xf32>
  %l = mpt.reduce_mean %h {keepdims = false} : (tensor<4x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @eval_step()
