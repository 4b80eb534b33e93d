// RUN: mpt-opt %s -split-input-file --mpt-fuse-batch-norm | FileCheck %s

// Tests that relu(batch_norm(x)) becomes one inference batch_norm with the
// relu epilogue.
// CHECK-LABEL: func.func @bn_relu
// CHECK-NEXT: %[[Y:.*]] = mptrt.batch_norm %{{.*}} {activation = #mptrt.activation<relu>}
// CHECK-NEXT: return %[[Y]]
func.func @bn_relu(%x: tensor<2x3x4x4xbf16>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xbf16> {
  %y = mptrt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xbf16>
  %z = mptrt.relu %y : (tensor<2x3x4x4xbf16>) -> tensor<2x3x4x4xbf16>
  return %z : tensor<2x3x4x4xbf16>
}

// -----

// Tests a training step's pair: batch_norm_train -> relu forward, and the
// relu's unary_grad feeding batch_norm_grad backward. The forward takes the
// relu; the unary_grad, which then reads the relu'd output (the same mask),
// folds into batch_norm_grad as its `output` operand.
// CHECK-LABEL: func.func @train_pair
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[S:.*]]: tensor<3xf32>, %{{.*}}, %{{.*}}, %{{.*}}, %[[DZ:.*]]: tensor<2x3x4x4xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = mptrt.batch_norm_train %[[X]], {{.*}}activation = #mptrt.activation<relu>
// CHECK-NEXT: %[[DX:.*]], %{{.*}}, %{{.*}} = mptrt.batch_norm_grad %[[X]], %[[S]], %[[DZ]], %[[Y]] {activation = #mptrt.activation<relu>}
// CHECK-NOT: unary_grad
// CHECK-NOT: mptrt.relu
func.func @train_pair(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %dz: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %nm, %nv = mptrt.batch_norm_train %x, %s, %b, %m, %v {resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %z = mptrt.relu %y : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %g = mptrt.unary_grad %y, %dz {kind = #mptrt.unary_grad_kind<relu>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %dx, %ds, %db = mptrt.batch_norm_grad %x, %s, %g : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %z, %dx, %ds, %db : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests a ResNet block's residual: relu(add(batch_norm(x), skip)) becomes
// one batch_norm with `residual = skip` and relu.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[S:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>, %[[SKIP:.*]]: tensor<2x3x4x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = mptrt.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]], %[[SKIP]] {activation = #mptrt.activation<relu>}
// CHECK-NEXT: return %[[Y]]
func.func @residual(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %skip: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %y = mptrt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %a = mptrt.add %skip, %y : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %z = mptrt.relu %a : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %z : tensor<2x3x4x4xf32>
}

// -----

// Tests the downsampling block's add of two batch norms: the later one
// takes the earlier one's output as its residual (it is ready there).
// CHECK-LABEL: func.func @two_batch_norms
// CHECK-NEXT: %[[Y1:.*]] = mptrt.batch_norm %arg0,
// CHECK-NOT: activation
// CHECK-NEXT: %[[Y2:.*]] = mptrt.batch_norm %arg5, %arg1, %arg2, %arg3, %arg4, %[[Y1]] {activation = #mptrt.activation<relu>}
// CHECK-NEXT: return %[[Y2]]
func.func @two_batch_norms(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %x2: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %y1 = mptrt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %y2 = mptrt.batch_norm %x2, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %a = mptrt.add %y1, %y2 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %z = mptrt.relu %a : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %z : tensor<2x3x4x4xf32>
}

// -----

// Tests that nothing fuses where the batch norm's output has another use
// (it is returned too), or where the add broadcasts (the element types and
// shapes of the add must be the batch norm's).
// CHECK-LABEL: func.func @not_fused
// CHECK: mptrt.batch_norm
// CHECK-NOT: activation
// CHECK: mptrt.relu
// CHECK: mptrt.batch_norm
// CHECK-NOT: activation
// CHECK: mptrt.add
// CHECK: mptrt.relu
func.func @not_fused(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %c: tensor<4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %y = mptrt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %z = mptrt.relu %y : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %y2 = mptrt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %a = mptrt.add %y2, %c : (tensor<2x3x4x4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  %z2 = mptrt.relu %a : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %y, %z, %z2 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests that the backward fusion needs the relu gradient to have one use
// (a residual block's gradient also flows to the skip) and dy's type.
// CHECK-LABEL: func.func @grad_not_fused
// CHECK: mptrt.unary_grad
// CHECK-NEXT: mptrt.batch_norm_grad %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[0-9]+}} :
func.func @grad_not_fused(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %y: tensor<2x3x4x4xf32>, %dz: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %g = mptrt.unary_grad %y, %dz {kind = #mptrt.unary_grad_kind<relu>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %dx, %ds, %db = mptrt.batch_norm_grad %x, %s, %g : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %dx, %g : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}
