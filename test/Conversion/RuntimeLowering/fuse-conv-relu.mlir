// RUN: mpt-opt %s -split-input-file --mpt-fuse-conv-relu | FileCheck %s

// Tests that relu(conv(x, w, b)) becomes one conv with the relu epilogue,
// and that the relu's unary_grad, which then reads the conv's (relu'd)
// output, gives the same mask.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xbf16>, %[[W:.*]]: tensor<4x3x3x3xbf16>, %[[B:.*]]: tensor<4xbf16>, %[[DZ:.*]]: tensor<2x4x8x8xbf16>)
// CHECK-NEXT: %[[Y:.*]] = mptrt.conv %[[X]], %[[W]], %[[B]] {activation = #mptrt.activation<relu>, pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: %[[G:.*]] = mptrt.unary_grad %[[Y]], %[[DZ]]
// CHECK-NEXT: return %[[Y]], %[[G]]
func.func @conv_bias_relu(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>, %dz: tensor<2x4x8x8xbf16>) -> (tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>) {
  %y = mptrt.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
  %z = mptrt.relu %y : (tensor<2x4x8x8xbf16>) -> tensor<2x4x8x8xbf16>
  %g = mptrt.unary_grad %y, %dz {kind = #mptrt.unary_grad_kind<relu>} : (tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>) -> tensor<2x4x8x8xbf16>
  return %z, %g : tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>
}

// -----

// Tests that a conv whose output has another reader (here returned) keeps
// its relu separate: the reader needs the value before the relu.
// CHECK-LABEL: func.func @other_use
// CHECK-NEXT: %[[Y:.*]] = mptrt.conv
// CHECK-NOT: activation
// CHECK-NEXT: %[[Z:.*]] = mptrt.relu %[[Y]]
func.func @other_use(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = mptrt.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = mptrt.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Tests that two relus of one conv (a malformed but legal graph) fold
// neither, and that a relu of a non-conv value is left alone.
// CHECK-LABEL: func.func @two_relus
// CHECK: mptrt.conv
// CHECK-NOT: activation
// CHECK: mptrt.relu
// CHECK: mptrt.relu
// CHECK: mptrt.relu
func.func @two_relus(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = mptrt.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = mptrt.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = mptrt.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = mptrt.relu %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %a, %b, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
