// RUN: mpt-opt %s -split-input-file --fuse-attention | FileCheck %s

// Tests the GPT form (torch.onnx of q @ k^T * c, masked_fill(mask == 0,
// -inf), softmax, @ v): the key's transpose absorbs the swap, the scale is
// the constant, and the boolean mask becomes an additive f32 one.
// CHECK-LABEL: func.func @gpt
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x16x8xf32>, %[[KR:.*]]: tensor<2x16x2x8xf32>, %[[V:.*]]: tensor<2x2x16x8xf32>, %[[C:.*]]: tensor<1x1x16x16xi1>)
// CHECK-DAG: %[[NEG:.*]] = mpt.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[ZERO:.*]] = mpt.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[K:.*]] = mpt.transpose %[[KR]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[M:.*]] = mpt.where %[[C]], %[[NEG]], %[[ZERO]] : (tensor<1x1x16x16xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x16x16xf32>
// CHECK: %[[O:.*]], %{{.*}} = mpt.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f32} : (tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<1x1x16x16xf32>) -> (tensor<2x2x16x8xf32>, tensor<2x2x16xf32>)
// CHECK-NOT: mpt.softmax
// CHECK-NOT: mpt.matmul
// CHECK: return %[[O]]
func.func @gpt(%q: tensor<2x2x16x8xf32>, %kr: tensor<2x16x2x8xf32>, %v: tensor<2x2x16x8xf32>, %c: tensor<1x1x16x16xi1>) -> tensor<2x2x16x8xf32> {
  %scale = mpt.constant dense<0.25> : tensor<f32>
  %neg = mpt.constant dense<0xFF800000> : tensor<f32>
  %kt = mpt.transpose %kr {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x16x2x8xf32>) -> tensor<2x2x8x16xf32>
  %s = mpt.matmul %q, %kt : (tensor<2x2x16x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x16x16xf32>
  %t = mpt.mul %s, %scale : (tensor<2x2x16x16xf32>, tensor<f32>) -> tensor<2x2x16x16xf32>
  %m = mpt.where %c, %neg, %t : (tensor<1x1x16x16xi1>, tensor<f32>, tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %p = mpt.softmax %m {axis = 3 : i64} : tensor<2x2x16x16xf32>
  %o = mpt.matmul %p, %v : (tensor<2x2x16x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x16x8xf32>
  return %o : tensor<2x2x16x8xf32>
}

// -----

// Tests torch.onnx's scaled_dot_product_attention form: sqrt(scale) on q
// and on k^T, an additive float mask, a k^T that is not a transpose.
// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<3x4x8xf32>, %[[KT:.*]]: tensor<3x8x5xf32>, %[[V:.*]]: tensor<3x5x6xf32>, %[[M:.*]]: tensor<4x5xf32>)
// CHECK: %[[K:.*]] = mpt.transpose %[[KT]] {perm = array<i64: 0, 2, 1>}
// CHECK: %[[O:.*]], %{{.*}} = mpt.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 0.12499999{{[0-9]*}} : f32}
// CHECK-NOT: mpt.softmax
// CHECK: return %[[O]]
func.func @sdpa(%q: tensor<3x4x8xf32>, %kt: tensor<3x8x5xf32>, %v: tensor<3x5x6xf32>, %mask: tensor<4x5xf32>) -> tensor<3x4x6xf32> {
  %r = mpt.constant dense<0.353553385> : tensor<f32>
  %qs = mpt.mul %q, %r : (tensor<3x4x8xf32>, tensor<f32>) -> tensor<3x4x8xf32>
  %ks = mpt.mul %kt, %r : (tensor<3x8x5xf32>, tensor<f32>) -> tensor<3x8x5xf32>
  %s = mpt.matmul %qs, %ks : (tensor<3x4x8xf32>, tensor<3x8x5xf32>) -> tensor<3x4x5xf32>
  %a = mpt.add %s, %mask : (tensor<3x4x5xf32>, tensor<4x5xf32>) -> tensor<3x4x5xf32>
  %p = mpt.softmax %a {axis = 2 : i64} : tensor<3x4x5xf32>
  %o = mpt.matmul %p, %v : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  return %o : tensor<3x4x6xf32>
}

// -----

// Tests a division by sqrt(d) and no mask; the fill value in the other
// branch of the where (where(keep, scores, -1e38)) also counts as a mask.
// CHECK-LABEL: func.func @div_keep_branch
// CHECK: %[[M:.*]] = mpt.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK: mpt.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 5.000000e-01 : f32}
// CHECK-NOT: mpt.softmax
func.func @div_keep_branch(%q: tensor<2x4x4xf32>, %k: tensor<2x4x4xf32>, %v: tensor<2x4x4xf32>, %keep: tensor<4x4xi1>) -> tensor<2x4x4xf32> {
  %two = mpt.constant dense<2.0> : tensor<f32>
  %fill = mpt.constant dense<-1.0e+38> : tensor<f32>
  %kt = mpt.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = mpt.matmul %q, %kt : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %t = mpt.div %s, %two : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m = mpt.where %keep, %t, %fill : (tensor<4x4xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = mpt.softmax %m {axis = 2 : i64} : tensor<2x4x4xf32>
  %o = mpt.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}

// -----

// Tests what stays unfused: attention weights the model returns, a mask
// that depends on a parameter (its gradient would be lost), a fill value
// that is not a mask, and a softmax over another axis.
// CHECK-LABEL: func.func @weights_returned
// CHECK-NOT: mpt.attention
// CHECK: mpt.softmax
func.func @weights_returned(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  %o = mpt.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o, %p : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @learned_bias
// CHECK-NOT: mpt.attention
// CHECK: mpt.softmax
func.func @learned_bias(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>, %bias: tensor<4x4xf32> {mpt.param = "bias"}) -> tensor<4x4xf32> {
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = mpt.add %s, %bias : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %a {axis = 1 : i64} : tensor<4x4xf32>
  %o = mpt.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @not_a_mask_fill
// CHECK-NOT: mpt.attention
// CHECK: mpt.softmax
func.func @not_a_mask_fill(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>, %c: tensor<4x4xi1>) -> tensor<4x4xf32> {
  %fill = mpt.constant dense<-1.0e+04> : tensor<f32>
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = mpt.where %c, %fill, %s : (tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %m {axis = 1 : i64} : tensor<4x4xf32>
  %o = mpt.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @other_axis
// CHECK-NOT: mpt.attention
// CHECK: mpt.softmax
func.func @other_axis(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %s {axis = 0 : i64} : tensor<4x4xf32>
  %o = mpt.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// -----

// Tests that an attention dropout that drops nothing (ratio 0, as
// training-mode exports of p = 0 models write it) is fused through, and
// that one that drops is not.
// CHECK-LABEL: func.func @dropout_zero
// CHECK: mpt.attention
// CHECK-NOT: mpt.dropout
func.func @dropout_zero(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  %d, %keep = mpt.dropout %p {ratio = 0.0 : f32, training = true} : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xi1>
  %o = mpt.matmul %d, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @dropout_drops
// CHECK-NOT: mpt.attention
// CHECK: mpt.dropout
func.func @dropout_drops(%q: tensor<4x4xf32>, %kt: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = mpt.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = mpt.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  %d, %keep = mpt.dropout %p {ratio = 0.1 : f32, training = true} : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xi1>
  %o = mpt.matmul %d, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}
