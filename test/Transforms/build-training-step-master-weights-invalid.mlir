// RUN: not mpt-opt %s --build-training-step="master-weights=fp16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not mpt-opt %s --build-training-step="master-weights=bf16-sr optimizer=sgd" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SGD

// Tests that master-weights knows its values (MPTEnums.td's MasterWeights,
// listed by the option's parser), and that bf16 masters need AdamW.
// VALUE: for the --master-weights option: must be fp32, bf16 or bf16-sr; got 'fp16'
// VALUE-NOT: func.func
// SGD: master-weights=bf16-sr needs optimizer=adamw; got 'sgd'
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"}, %w: tensor<4x3xf32> {mpt.param = "w"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %y {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
