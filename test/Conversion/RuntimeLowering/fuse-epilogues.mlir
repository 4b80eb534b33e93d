// RUN: mpt-opt %s -split-input-file --mpt-fuse-epilogues | FileCheck %s

// Tests that a PyTorch Linear on a 3-D activation (transposed weight,
// matmul, bias add) followed by ReLU becomes one gemm with trans_b, the
// bias and the relu epilogue, between two reshapes.
// CHECK-LABEL: func.func @linear_relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x32xf32>, %[[W:.*]]: tensor<96x32xf32>, %[[B:.*]]: tensor<96xf32>)
// CHECK-NEXT: %[[X2:.*]] = mpt.reshape %[[X]] : (tensor<2x16x32xf32>) -> tensor<32x32xf32>
// CHECK-NEXT: %[[G:.*]] = mpt.gemm %[[X2]], %[[W]], %[[B]] {activation = #mpt.activation<relu>, trans_b = true} : (tensor<32x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<32x96xf32>
// CHECK-NEXT: %[[Y:.*]] = mpt.reshape %[[G]] : (tensor<32x96xf32>) -> tensor<2x16x96xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_relu(%x: tensor<2x16x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>) -> tensor<2x16x96xf32> {
  %wt = mpt.transpose %w {perm = array<i64: 1, 0>} : (tensor<96x32xf32>) -> tensor<32x96xf32>
  %m = mpt.matmul %x, %wt : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
  %a = mpt.add %b, %m : (tensor<96xf32>, tensor<2x16x96xf32>) -> tensor<2x16x96xf32>
  %r = mpt.relu %a : tensor<2x16x96xf32>
  return %r : tensor<2x16x96xf32>
}

// -----

// Tests the 2-D forms: a transposed left operand, a [1, N] bias, and both
// GELU forms.
// CHECK-LABEL: func.func @gemm_gelu
// CHECK: mpt.gemm %arg0, %arg1, %arg2 {activation = #mpt.activation<gelu>, trans_a = true}
// CHECK: mpt.gemm %arg0, %arg1 {activation = #mpt.activation<gelu_tanh>, trans_a = true}
// CHECK-NOT: mpt.gelu
// CHECK-NOT: mpt.transpose
func.func @gemm_gelu(%x: tensor<8x4xbf16>, %w: tensor<8x16xbf16>, %b: tensor<1x16xbf16>) -> (tensor<4x16xbf16>, tensor<4x16xbf16>) {
  %xt = mpt.transpose %x {perm = array<i64: 1, 0>} : (tensor<8x4xbf16>) -> tensor<4x8xbf16>
  %g = mpt.gemm %xt, %w : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %a = mpt.add %g, %b : (tensor<4x16xbf16>, tensor<1x16xbf16>) -> tensor<4x16xbf16>
  %y = mpt.gelu %a : tensor<4x16xbf16>
  %g2 = mpt.matmul %xt, %w : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %y2 = mpt.gelu %g2 {approximate = #mpt.gelu_approximate<tanh>} : tensor<4x16xbf16>
  return %y, %y2 : tensor<4x16xbf16>, tensor<4x16xbf16>
}

// -----

// Tests what must not fuse: a gemm whose result is also used elsewhere, a
// bias that varies along rows ([M, 1]), a cast between the gemm and the add
// (the element types differ), and a batched right operand.
// CHECK-LABEL: func.func @no_fusion
// CHECK: %[[G:.*]] = mpt.gemm %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: mpt.relu %[[G]]
// CHECK: %[[G2:.*]] = mpt.gemm %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: mpt.add %[[G2]], %arg2
// CHECK: %[[G3:.*]] = mpt.gemm %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[C:.*]] = mpt.cast %[[G3]]
// CHECK-NEXT: mpt.add %[[C]], %arg3
// CHECK: mpt.matmul %arg4, %arg5
func.func @no_fusion(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %rowbias: tensor<4x1xf32>, %hbias: tensor<16xbf16>,
                     %p: tensor<2x4x8xf32>, %q: tensor<2x8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>) {
  %g = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = mpt.relu %g : tensor<4x16xf32>
  %g2 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = mpt.add %g2, %rowbias : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %g3 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = mpt.cast %g3 : tensor<4x16xf32> to tensor<4x16xbf16>
  %h = mpt.add %c, %hbias : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  %bmm = mpt.matmul %p, %q : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return %g, %r, %a, %h, %bmm : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>
}

// -----

// Tests that the erf form of GELU, as PyTorch exports it, becomes one gelu
// that then fuses into the gemm in front of it (through the reshapes), and
// that a near miss (0.6 instead of 0.5) is left alone.
// CHECK-LABEL: func.func @erf_gelu
// CHECK: %[[G:.*]] = mpt.gemm %{{.*}}, %arg1, %arg2 {activation = #mpt.activation<gelu>, trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = mpt.reshape %[[G]] : (tensor<4x16xf32>) -> tensor<2x2x16xf32>
// CHECK-NOT: mpt.erf
// CHECK: return %[[R]]
func.func @erf_gelu(%x: tensor<2x2x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x2x16xf32> {
  %wt = mpt.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m = mpt.matmul %x, %wt : (tensor<2x2x8xf32>, tensor<8x16xf32>) -> tensor<2x2x16xf32>
  %h = mpt.add %m, %b : (tensor<2x2x16xf32>, tensor<16xf32>) -> tensor<2x2x16xf32>
  %s = mpt.constant dense<1.41421354> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  %half = mpt.constant dense<0.5> : tensor<f32>
  %d = mpt.div %h, %s : (tensor<2x2x16xf32>, tensor<f32>) -> tensor<2x2x16xf32>
  %e = mpt.erf %d : tensor<2x2x16xf32>
  %a = mpt.add %one, %e : (tensor<f32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %p = mpt.mul %a, %h : (tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %y = mpt.mul %half, %p : (tensor<f32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  return %y : tensor<2x2x16xf32>
}

// -----

// CHECK-LABEL: func.func @not_gelu
// CHECK: mpt.erf
// CHECK-NOT: mpt.gelu
func.func @not_gelu(%x: tensor<16xf32>) -> tensor<16xf32> {
  %s = mpt.constant dense<1.41421354> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  %c = mpt.constant dense<0.6> : tensor<f32>
  %d = mpt.div %x, %s : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %e = mpt.erf %d : tensor<16xf32>
  %a = mpt.add %e, %one : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %p = mpt.mul %x, %a : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %y = mpt.mul %p, %c : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
