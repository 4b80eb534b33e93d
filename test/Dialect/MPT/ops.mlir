// RUN: mpt-opt %s -split-input-file | mpt-opt -split-input-file | FileCheck %s

// Tests that contractions, norms and losses round-trip.
// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>,
                        %img: tensor<1x3x8x8xbf16>, %k: tensor<6x1x3x3xbf16>) -> (tensor<2x4xf32>, tensor<1x6x4x4xbf16>) {
  // CHECK: mpt.gemm %{{.*}} {trans_b = true}
  %0 = mpt.gemm %x, %w, %b {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: mpt.gemm %{{.*}} {activation = "gelu_tanh", trans_b = true}
  %g = mpt.gemm %x, %w, %b {activation = "gelu_tanh", trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: mpt.conv
  %1 = mpt.conv %img, %k {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x3x8x8xbf16>, tensor<6x1x3x3xbf16>) -> tensor<1x6x4x4xbf16>
  return %0, %1 : tensor<2x4xf32>, tensor<1x6x4x4xbf16>
}

// -----

// Tests that layer_norm returns f32 statistics and the loss a scalar.
// CHECK-LABEL: func.func @norm_and_loss
func.func @norm_and_loss(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  // CHECK: mpt.layer_norm {{.*}} -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %y, %mean, %inv = mpt.layer_norm %x, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %loss, %lp = mpt.softmax_cross_entropy_loss %y, %labels {ignore_index = -100 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x8xf32>)
  return %loss : tensor<f32>
}

// -----

// Tests the low-precision element types and casts between them.
// CHECK-LABEL: func.func @types
func.func @types(%x: tensor<4xf32>) -> tensor<4xf8E5M2> {
  // CHECK: mpt.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %0 = mpt.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = mpt.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf16>
  %2 = mpt.cast %1 : tensor<4xf16> to tensor<4xf8E5M2>
  return %2 : tensor<4xf8E5M2>
}

// -----

// Tests FP8 quantize, contractions with scales, and contractions whose
// result type is wider than their operands.
// CHECK-LABEL: func.func @fp8_and_wide_results
func.func @fp8_and_wide_results(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32>, %sx: tensor<f32>, %sw: tensor<f32>,
                                %b: tensor<8xbf16>, %img: tensor<1x4x6x6xf8E4M3FN>, %k: tensor<8x4x3x3xf8E4M3FN>)
    -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<4x8xf32>) {
  // CHECK: mpt.quantize %{{.*}}, %{{.*}} {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
  %qx = mpt.quantize %x, %sx {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
  %qw = mpt.quantize %w, %sw : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf8E4M3FN>
  // CHECK: mpt.matmul %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  %0 = mpt.matmul %qx, %qw scales(%sx, %sw) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: mpt.gemm %{{.*}}, %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) {trans_b = true}
  %1 = mpt.gemm %qx, %qw, %b scales(%sx, %sw) {trans_b = true} : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<8xbf16>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
  // CHECK: mpt.conv %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) {dilations
  %2 = mpt.conv %img, %k scales(%sx, %sw) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E4M3FN>, tensor<8x4x3x3xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<1x8x4x4xbf16>
  // CHECK: mpt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
  %wl = mpt.cast %w : tensor<8x8xf32> to tensor<8x8xbf16>
  %3 = mpt.matmul %x, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<4x8xf32>
}

// -----

// Tests that dropout round-trips imported (training, no seed) and seeded
// (the seed and step operands, a stream id).
// CHECK-LABEL: func.func @dropouts
func.func @dropouts(%x: tensor<2x3xbf16>, %seed: tensor<i64>, %step: tensor<i64>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>) {
  // CHECK: mpt.dropout %{{[^,]*}} {ratio = 1.000000e-01 : f32, training = true} : tensor<2x3xbf16> -> tensor<2x3xbf16>, tensor<2x3xi1>
  %0, %m0 = mpt.dropout %x {ratio = 0.1 : f32, training = true} : tensor<2x3xbf16> -> tensor<2x3xbf16>, tensor<2x3xi1>
  // CHECK: mpt.dropout %{{.*}}, %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f32, stream = 7 : i64, training = true} : tensor<2x3xbf16>, tensor<i64>, tensor<i64> -> tensor<2x3xbf16>, tensor<2x3xi1>
  %1, %m1 = mpt.dropout %x, %seed, %step {ratio = 0.1 : f32, training = true, stream = 7 : i64} : tensor<2x3xbf16>, tensor<i64>, tensor<i64> -> tensor<2x3xbf16>, tensor<2x3xi1>
  return %0, %1 : tensor<2x3xbf16>, tensor<2x3xbf16>
}
