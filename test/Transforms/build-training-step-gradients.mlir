// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" | FileCheck %s

// Tests that the backward pass follows the forward precision: the gradient
// matmuls of a bf16 matmul are bf16, and the two uses of the shared bf16
// weight cast are summed in FP32 and reach the FP32 master weight without a
// bf16 round trip (the gradient of a cast is a cast back).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {mpt.input = "t"}
// CHECK: %[[WL:.*]] = mpt.cast %arg1 {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK: %[[H:.*]] = mpt.matmul %{{.*}}, %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK: mpt.reduce_mean
// CHECK: %[[DY:.*]] = mpt.cast %{{.*}} {inserted, mpt.backward} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[HT:.*]] = mpt.transpose %[[H]]
// CHECK: %[[DW2:.*]] = mpt.matmul %[[HT]], %[[DY]] {mpt.backward} : (tensor<8x4xbf16>, tensor<4x8xbf16>) -> tensor<8x8xbf16>
// CHECK: %[[DW1:.*]] = mpt.matmul %{{.*}} : (tensor<8x4xbf16>, tensor<4x8xbf16>) -> tensor<8x8xbf16>
// CHECK: %[[DW2F:.*]] = mpt.cast %[[DW2]] {inserted, mpt.backward} : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK: %[[DW1F:.*]] = mpt.cast %[[DW1]] {inserted, mpt.backward} : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK: %[[SUM:.*]] = mpt.add %[[DW2F]], %[[DW1F]] {mpt.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NOT: mpt.cast %[[SUM]]
// CHECK: mpt.all_finite %[[SUM]]
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %xl = mpt.cast %x {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
  %wl = mpt.cast %w {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
  %h = mpt.matmul %xl, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %y = mpt.matmul %h, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %yf = mpt.cast %y {inserted} : tensor<4x8xbf16> to tensor<4x8xf32>
  return %yf : tensor<4x8xf32>
}

// -----

// Tests the FP32 rules of softmax and layer norm: their backward ops run on
// the forward outputs and statistics, in FP32.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = mpt.layer_norm %arg0, %arg1, %arg2
// CHECK: %[[S:.*]] = mpt.softmax %[[Y]] {axis = 1 : i64}
// CHECK: %[[DX:.*]] = mpt.softmax_grad %[[S]], %{{.*}} {axis = 1 : i64, mpt.backward} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: mpt.layer_norm_grad %arg0, %arg1, %[[MEAN]], %[[RSTD]], %[[DX]] {axis = 1 : i64, mpt.backward} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @forward(%x: tensor<2x4xf32> {mpt.input = "x"},
                   %g: tensor<4xf32> {mpt.param = "g"},
                   %b: tensor<4xf32> {mpt.param = "b"})
    -> (tensor<2x4xf32> {mpt.output = "y"}) {
  %y, %m, %r = mpt.layer_norm %x, %g, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %s = mpt.softmax %y {axis = 1 : i64} : tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}
