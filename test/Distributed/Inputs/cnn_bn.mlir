// A small CNN with batch norm in the mpt dialect, for the data-parallel
// batch-norm cases of data_parallel_equivalence.py: conv 3x3 (3 -> 4
// channels) + batch norm + ReLU, a global average pool and a linear
// classifier of 4 classes, at a batch of 8 (the script rewrites it).
func.func @forward(%x: tensor<8x3x8x8xf32> {mpt.input = "x"},
                   %k: tensor<4x3x3x3xf32> {mpt.param = "conv.weight"},
                   %s: tensor<4xf32> {mpt.param = "bn.weight", mpt.initial_value = dense<1.0> : tensor<4xf32>},
                   %b: tensor<4xf32> {mpt.param = "bn.bias", mpt.initial_value = dense<0.0> : tensor<4xf32>},
                   %m: tensor<4xf32> {mpt.param = "bn.running_mean", mpt.initial_value = dense<0.0> : tensor<4xf32>},
                   %v: tensor<4xf32> {mpt.param = "bn.running_var", mpt.initial_value = dense<1.0> : tensor<4xf32>},
                   %w: tensor<4x4xf32> {mpt.param = "fc.weight"},
                   %c: tensor<4xf32> {mpt.param = "fc.bias", mpt.initial_value = dense<0.0> : tensor<4xf32>})
    -> (tensor<8x4xf32> {mpt.output = "logits"}) {
  %0 = mpt.conv %x, %k {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<8x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<8x4x8x8xf32>
  %1, %nm, %nv = mpt.batch_norm_train %0, %s, %b, %m, %v {momentum = 0.9 : f32} : (tensor<8x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %2 = mpt.relu %1 : tensor<8x4x8x8xf32>
  %3 = mpt.reduce_mean %2 {axes = array<i64: 2, 3>, keepdims = false} : (tensor<8x4x8x8xf32>) -> tensor<8x4xf32>
  %y = mpt.gemm %3, %w, %c {trans_b = true} : (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
