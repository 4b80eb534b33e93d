// RUN: mpt-opt %s --build-training-step="master-weights=fp16" -verify-diagnostics -o /dev/null
// RUN: not mpt-opt %s --build-training-step="master-weights=bf16-sr optimizer=sgd" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SGD

// Tests that master-weights knows its values (fp32, bf16, bf16-sr), and that
// bf16 masters need AdamW.
// SGD: master-weights=bf16-sr needs optimizer=adamw; got 'sgd'
// expected-error @+1 {{master-weights must be fp32, bf16 or bf16-sr; got 'fp16'}}
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"}, %w: tensor<4x3xf32> {mpt.param = "w"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %y {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
