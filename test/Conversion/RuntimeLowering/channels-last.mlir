// RUN: mpt-opt %s -split-input-file --mpt-channels-last | FileCheck %s

// Tests a conv -> batch_norm (relu) -> conv chain: its values become NHWC,
// its kernels get layout = nhwc, and there are exactly two transposes, the
// input's into the chain and the result's out of it; the weights, their
// casts and the batch norm's parameters keep their layout.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[W1:.*]]: tensor<4x3x3x3xf32>, %{{.*}}, %[[W2:.*]]: tensor<5x4x1x1xf32>)
// CHECK-NEXT: %[[XL:.*]] = mptrt.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x8x8x3xf32>
// CHECK-NEXT: %[[C1:.*]] = mptrt.conv %[[XL]], %[[W1]] {layout = #mptrt.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x8x8x4xf32>
// CHECK-NEXT: %[[B:.*]] = mptrt.batch_norm %[[C1]], {{.*}}layout = #mptrt.layout<nhwc>{{.*}} -> tensor<2x8x8x4xf32>
// CHECK-NEXT: %[[C2:.*]] = mptrt.conv %[[B]], %[[W2]] {layout = #mptrt.layout<nhwc>} : (tensor<2x8x8x4xf32>, tensor<5x4x1x1xf32>) -> tensor<2x8x8x5xf32>
// CHECK-NEXT: %[[Y:.*]] = mptrt.transpose %[[C2]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x8x8x5xf32>) -> tensor<2x5x8x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @chain(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x3x3xf32>, %c: tensor<4xf32>, %w2: tensor<5x4x1x1xf32>) -> tensor<2x5x8x8xf32> {
  %c1 = mptrt.conv %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %b = mptrt.batch_norm %c1, %c, %c, %c, %c {activation = #mptrt.activation<relu>} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %c2 = mptrt.conv %b, %w2 : (tensor<2x4x8x8xf32>, tensor<5x4x1x1xf32>) -> tensor<2x5x8x8xf32>
  return %c2 : tensor<2x5x8x8xf32>
}

// -----

// Tests the weight gradient (its activations x and dy in the chain, the
// gradient a weight) and layout-free kernels (a cast of an activation
// joins; the cast of a weight does not).
// CHECK-LABEL: func.func @weight_grad
// CHECK: %[[XL:.*]] = mptrt.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[WB:.*]] = mptrt.cast %arg1 : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xbf16>
// CHECK: %[[XB:.*]] = mptrt.cast %[[XL]] : (tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xbf16>
// CHECK: %[[Y:.*]] = mptrt.conv %[[XB]], %[[WB]] {layout = #mptrt.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x3xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x8x8x4xbf16>
// CHECK: %[[DW:.*]] = mptrt.conv_grad_weight %[[XB]], %[[Y]] {layout = #mptrt.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x3xbf16>, tensor<2x8x8x4xbf16>) -> tensor<4x3x3x3xf32>
// CHECK-NOT: mptrt.transpose
// CHECK: return %[[DW]]
func.func @weight_grad(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %wb = mptrt.cast %w : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xbf16>
  %xb = mptrt.cast %x : (tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xbf16>
  %y = mptrt.conv %xb, %wb {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
  %dw = mptrt.conv_grad_weight %xb, %y {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<2x4x8x8xbf16>) -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}

// -----

// Tests a pooling between two convolutions: it joins the chain (layout =
// nhwc), so no transpose leaves or enters it there.
// CHECK-LABEL: func.func @pool_between
// CHECK: %[[A:.*]] = mptrt.conv {{.*}}layout = #mptrt.layout<nhwc>
// CHECK-NEXT: %[[P:.*]] = mptrt.max_pool %[[A]] {kernel_shape = array<i64: 2, 2>, layout = #mptrt.layout<nhwc>, strides = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT: mptrt.conv %[[P]], {{.*}}layout = #mptrt.layout<nhwc>
func.func @pool_between(%x: tensor<1x2x8x8xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %a = mptrt.conv %x, %w : (tensor<1x2x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  %p = mptrt.max_pool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  %b = mptrt.conv %p, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %b : tensor<1x2x4x4xf32>
}

// -----

// Tests a network's head and its gradient: the global average pool joins
// the chain, and its [N, 1, 1, C] result leaves it by a reshape (only unit
// axes move: the same bytes); the gradient's expand from [N, C, 1, 1]
// joins it as a broadcast from [N, 1, 1, C], entered by a reshape too;
// max_pool_grad takes the forward input and the gradient channels last.
// CHECK-LABEL: func.func @head
// CHECK: %[[A:.*]] = mptrt.conv {{.*}} -> tensor<2x4x4x3xf32>
// CHECK-NEXT: %[[P:.*]] = mptrt.max_pool %[[A]] {{{.*}}layout = #mptrt.layout<nhwc>{{.*}}} : (tensor<2x4x4x3xf32>) -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[G:.*]] = mptrt.global_average_pool %[[P]] {layout = #mptrt.layout<nhwc>} : (tensor<2x2x2x3xf32>) -> tensor<2x1x1x3xf32>
// CHECK-NEXT: %[[GF:.*]] = mptrt.reshape %[[G]] : (tensor<2x1x1x3xf32>) -> tensor<2x3x1x1xf32>
// CHECK-NEXT: %[[S:.*]] = mptrt.mul %[[GF]], %arg2
// CHECK-NEXT: %[[SL:.*]] = mptrt.reshape %[[S]] : (tensor<2x3x1x1xf32>) -> tensor<2x1x1x3xf32>
// CHECK-NEXT: %[[E:.*]] = mptrt.expand %[[SL]] : (tensor<2x1x1x3xf32>) -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[D:.*]] = mptrt.max_pool_grad %[[A]], %[[E]] {{{.*}}layout = #mptrt.layout<nhwc>{{.*}}} : (tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK-NEXT: %[[DF:.*]] = mptrt.transpose %[[D]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NOT: mptrt.transpose
// CHECK: return %[[DF]]
func.func @head(%x: tensor<2x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %k: tensor<f32>) -> tensor<2x3x4x4xf32> {
  %a = mptrt.conv %x, %w : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %p = mptrt.max_pool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>) -> tensor<2x3x2x2xf32>
  %g = mptrt.global_average_pool %p : (tensor<2x3x2x2xf32>) -> tensor<2x3x1x1xf32>
  %s = mptrt.mul %g, %k : (tensor<2x3x1x1xf32>, tensor<f32>) -> tensor<2x3x1x1xf32>
  %e = mptrt.expand %s : (tensor<2x3x1x1xf32>) -> tensor<2x3x2x2xf32>
  %d = mptrt.max_pool_grad %a, %e {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x4x4xf32>
  return %d : tensor<2x3x4x4xf32>
}

// -----

// Tests what does not join: a 1-D pooling (its values are not images) and
// an expand whose shape is an operand (stated channels first).
// CHECK-LABEL: func.func @not_joining
// CHECK: mptrt.conv {{.*}}layout = #mptrt.layout<nhwc>
// CHECK-NEXT: %[[OUT:.*]] = mptrt.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// CHECK: mptrt.expand %[[OUT]], %arg2 : (tensor<1x2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
// CHECK: mptrt.max_pool %arg3 {kernel_shape = array<i64: 2>} : (tensor<1x2x8xf32>) -> tensor<1x2x7xf32>
func.func @not_joining(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %shape: tensor<4xi64>, %v: tensor<1x2x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x7xf32>) {
  %a = mptrt.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %e = mptrt.expand %a, %shape : (tensor<1x2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
  %p = mptrt.max_pool %v {kernel_shape = array<i64: 2>} : (tensor<1x2x8xf32>) -> tensor<1x2x7xf32>
  return %e, %p : tensor<1x2x4x4xf32>, tensor<1x2x7xf32>
}

// -----

// Tests that a batch norm and relu without a convolution keep their layout.
// CHECK-LABEL: func.func @no_conv
// CHECK-NOT: transpose
// CHECK-NOT: layout
func.func @no_conv(%x: tensor<2x4x3x3xf32>, %c: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %b = mptrt.batch_norm %x, %c, %c, %c, %c : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  %r = mptrt.relu %b : (tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}
