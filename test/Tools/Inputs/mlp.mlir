// A two-layer MLP in the mpt dialect (as the importer writes it), for the
// mpt-compile tests that need no ONNX.
func.func @forward(%x: tensor<8x16xf32> {mpt.input = "x"},
                   %w1: tensor<32x16xf32> {mpt.param = "w1"},
                   %b1: tensor<32xf32> {mpt.param = "b1"},
                   %w2: tensor<4x32xf32> {mpt.param = "w2"},
                   %b2: tensor<4xf32> {mpt.param = "b2"})
    -> (tensor<8x4xf32> {mpt.output = "logits"}) {
  %h0 = mpt.gemm %x, %w1, %b1 {trans_b = true} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %h = mpt.relu %h0 : tensor<8x32xf32>
  %y = mpt.gemm %h, %w2, %b2 {trans_b = true} : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
