// A function without a convolution: mpt-channels-last changes nothing.
func.func @no_conv(%x: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %r = mptrt.relu %x : (tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}
