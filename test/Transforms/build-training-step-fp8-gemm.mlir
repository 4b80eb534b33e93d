// RUN: mpt-opt %s --assign-precision=fp8 --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" | FileCheck %s

// Tests the gradient rule of an FP8-scaled gemm (a PyTorch Linear: B is
// [N, K], trans_b): dY quantized into E5M2 with its own scale; the weight's
// gradient B^T = dY^T A is one scaled gemm on the forward's E4M3 copy of A
// (trans_a, no transpose op), divided by B's scale, which the quantize's
// rule multiplies back; the bias gets beta * dY summed in FP32.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SX:[^:]*]]: tensor<f32> {{{.*}}mpt.param = "x.fp8_scale"}
// CHECK-SAME: %[[SW:[^:]*]]: tensor<f32> {{{.*}}mpt.param = "fc.weight.fp8_scale"}
// CHECK-SAME: %[[SG:[^:]*]]: tensor<f32> {{{.*}}mpt.param = "fc.grad.fp8_scale"}
// CHECK: %[[QX:.*]] = mpt.quantize %arg0, %[[SX]] {inserted} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// CHECK: %[[QW:.*]] = mpt.quantize %arg1, %[[SW]] {inserted} : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf8E4M3FN>
// CHECK: mpt.gemm %[[QX]], %[[QW]], %arg2 scales(%[[SX]], %[[SW]]) {trans_b = true} : (tensor<4x8xf8E4M3FN>, tensor<3x8xf8E4M3FN>, tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: %[[DY:.*]] = mpt.quantize %[[G:.*]], %[[SG]] {inserted, mpt.backward} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf8E5M2>
// CHECK-NOT: mpt.transpose
// CHECK: %[[DW:.*]] = mpt.gemm %[[DY]], %[[QX]] scales(%[[SG]], %[[SX]]) {mpt.backward, trans_a = true} : (tensor<4x3xf8E5M2>, tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<3x8xf32>
// CHECK: %[[DQ:.*]] = mpt.div %[[DW]], %[[SW]]
// CHECK: %[[DB:.*]] = mpt.mul %[[G]], %{{.*}} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: mpt.reduce_sum %[[DB]] {axes = array<i64: 0>, keepdims = false, mpt.backward}
// CHECK: mpt.mul %[[DQ]], %[[SW]] {mpt.backward} : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<3x8xf32> {mpt.param = "fc.weight"},
                   %b: tensor<3xf32> {mpt.param = "fc.bias"})
    -> (tensor<4x3xf32> {mpt.output = "y"}) {
  %y = mpt.gemm %x, %w, %b {trans_b = true} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc")
  return %y : tensor<4x3xf32>
}
