// RUN: mpt-opt %s -split-input-file -canonicalize | FileCheck %s

// Tests that the exporters' shape chain folds to one static reshape.
// CHECK-LABEL: func.func @shape_chain
// CHECK-NEXT: %[[R:.*]] = mpt.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: return %[[R]]
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %s = mpt.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = mpt.constant dense<0> : tensor<i64>
  %d = mpt.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %u = mpt.unsqueeze %d {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %m = mpt.constant dense<-1> : tensor<1xi64>
  %c = mpt.concat %u, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %id = mpt.identity %x : tensor<2x3x4xf32>
  %r = mpt.reshape %id, %c : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// Tests that shape arithmetic on constants folds (mul, div, cast, range).
// CHECK-LABEL: func.func @arith
// CHECK: %[[C:.*]] = mpt.constant dense<[0, 3, 6]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @arith() -> tensor<3xi64> {
  %a = mpt.constant dense<12> : tensor<i64>
  %b = mpt.constant dense<4> : tensor<i64>
  %q = mpt.div %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %z = mpt.constant dense<0> : tensor<i64>
  %n = mpt.constant dense<9> : tensor<i64>
  %r = mpt.range %z, %n, %q : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// -----

// Tests that a float range folds, each element rounded once to the type.
// CHECK-LABEL: func.func @float_range
// CHECK: %[[C:.*]] = mpt.constant dense<[1.000000e+00, 1.101560e+00, 1.203130e+00]> : tensor<3xbf16>
// CHECK-NEXT: return %[[C]]
func.func @float_range() -> tensor<3xbf16> {
  %s = mpt.constant dense<1.0> : tensor<bf16>
  %l = mpt.constant dense<1.3> : tensor<bf16>
  %d = mpt.constant dense<0.1> : tensor<bf16>
  %r = mpt.range %s, %l, %d : (tensor<bf16>, tensor<bf16>, tensor<bf16>) -> tensor<3xbf16>
  return %r : tensor<3xbf16>
}

// -----

// Tests that inference dropout and reshape-of-reshape disappear, and that a
// user's cast is kept.
// CHECK-LABEL: func.func @cleanup
// CHECK-NEXT: %[[C:.*]] = mpt.cast %arg0
// CHECK-NEXT: %[[R:.*]] = mpt.reshape %[[C]] : (tensor<2x6xbf16>) -> tensor<12xbf16>
// CHECK-NEXT: return %[[R]]
func.func @cleanup(%x: tensor<2x6xf32>) -> tensor<12xbf16> {
  %c = mpt.cast %x : tensor<2x6xf32> to tensor<2x6xbf16>
  %d, %mask = mpt.dropout %c {ratio = 0.1 : f32} : tensor<2x6xbf16> -> tensor<2x6xbf16>, tensor<2x6xi1>
  %r1 = mpt.reshape %d : (tensor<2x6xbf16>) -> tensor<3x4xbf16>
  %r2 = mpt.reshape %r1 : (tensor<3x4xbf16>) -> tensor<12xbf16>
  return %r2 : tensor<12xbf16>
}

// -----

// Tests that expand of a splat constant and constant_of_shape fold.
// CHECK-LABEL: func.func @splats
// CHECK: mpt.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK: mpt.constant dense<7> : tensor<4xi64>
func.func @splats() -> (tensor<2x3xf32>, tensor<4xi64>) {
  %c = mpt.constant dense<1.5> : tensor<3xf32>
  %e = mpt.expand %c : (tensor<3xf32>) -> tensor<2x3xf32>
  %k = mpt.constant_of_shape {value = 7 : i64} : () -> tensor<4xi64>
  return %e, %k : tensor<2x3xf32>, tensor<4xi64>
}

// -----

// Tests that casts of constants fold: float to int truncates toward zero,
// int to bool is "non-zero", bool to float is 0 or 1.
// CHECK-LABEL: func.func @cast_constants
// CHECK-DAG: mpt.constant dense<[1, -2, 0]> : tensor<3xi64>
// CHECK-DAG: mpt.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: mpt.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
func.func @cast_constants() -> (tensor<3xi64>, tensor<2xi1>, tensor<2xf32>) {
  %f = mpt.constant dense<[1.9, -2.7, 0.0]> : tensor<3xf32>
  %i = mpt.cast %f : tensor<3xf32> to tensor<3xi64>
  %b = mpt.constant dense<[0, 5]> : tensor<2xi64>
  %bb = mpt.cast %b : tensor<2xi64> to tensor<2xi1>
  %ff = mpt.cast %bb : tensor<2xi1> to tensor<2xf32>
  return %i, %bb, %ff : tensor<3xi64>, tensor<2xi1>, tensor<2xf32>
}

// -----

// Tests that casts of constants into FP8 saturate: beyond the largest finite
// value (448 for E4M3FN, 57344 for E5M2), infinity included, clamps with its
// sign; NaN stays NaN; values in range round to nearest even.
// CHECK-LABEL: func.func @fp8_saturating_cast
// CHECK-DAG: mpt.constant dense<[4.480000e+02, -4.480000e+02, 4.480000e+02, -4.480000e+02, 0x7F, 2.560000e+02]> : tensor<6xf8E4M3FN>
// CHECK-DAG: mpt.constant dense<[5.734400e+04, -5.734400e+04, 0x7E, 4.480000e+02]> : tensor<4xf8E5M2>
// CHECK-DAG: mpt.constant dense<[4.480000e+02, -4.480000e+02]> : tensor<2xf8E4M3FN>
func.func @fp8_saturating_cast() -> (tensor<6xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xf8E4M3FN>) {
  %f = mpt.constant dense<[1000.0, -1.0e9, 0x7F800000, 0xFF800000, 0x7FC00000, 250.0]> : tensor<6xf32>
  %a = mpt.cast %f : tensor<6xf32> to tensor<6xf8E4M3FN>
  %g = mpt.constant dense<[1.0e6, 0xFF800000, 0x7FC00000, 448.0]> : tensor<4xf32>
  %b = mpt.cast %g : tensor<4xf32> to tensor<4xf8E5M2>
  %i = mpt.constant dense<[1000, -70000]> : tensor<2xi64>
  %c = mpt.cast %i : tensor<2xi64> to tensor<2xf8E4M3FN>
  return %a, %b, %c : tensor<6xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xf8E4M3FN>
}

// -----

// Tests that a pair of inserted casts whose first is exact folds to the
// source, while casts the user wrote stay.
// CHECK-LABEL: func.func @inserted_cast_pairs
// CHECK-NEXT: %[[U:.*]] = mpt.cast %arg1 : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: %[[V:.*]] = mpt.cast %[[U]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[N:.*]] = mpt.cast %arg0 {inserted} : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[W:.*]] = mpt.cast %[[N]] {inserted} : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: return %arg1, %[[V]], %[[W]]
func.func @inserted_cast_pairs(%x: tensor<4xf32>, %y: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>) {
  %0 = mpt.cast %y {inserted} : tensor<4xbf16> to tensor<4xf32>
  %1 = mpt.cast %0 {inserted} : tensor<4xf32> to tensor<4xbf16>
  %2 = mpt.cast %y : tensor<4xbf16> to tensor<4xf32>
  %3 = mpt.cast %2 : tensor<4xf32> to tensor<4xbf16>
  %4 = mpt.cast %x {inserted} : tensor<4xf32> to tensor<4xbf16>
  %5 = mpt.cast %4 {inserted} : tensor<4xbf16> to tensor<4xf32>
  return %1, %3, %5 : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>
}

// -----

// Tests that the erf form of GELU as exporters write it becomes one gelu
// (operands of the muls and the add in either order), so that a precision
// pass sees one op that rounds once.
// CHECK-LABEL: func.func @erf_gelu
// CHECK-NEXT: %[[G:.*]] = mpt.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = mpt.constant dense<1.41421354> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  %half = mpt.constant dense<0.5> : tensor<f32>
  %d = mpt.div %x, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = mpt.erf %d : tensor<2x8xf32>
  %a = mpt.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %p = mpt.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = mpt.mul %p, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Tests that a near miss (x / 2 instead of x / sqrt(2)) stays as it is.
// CHECK-LABEL: func.func @erf_not_gelu
// CHECK: mpt.erf
// CHECK-NOT: mpt.gelu
func.func @erf_not_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = mpt.constant dense<2.0> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  %half = mpt.constant dense<0.5> : tensor<f32>
  %d = mpt.div %x, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = mpt.erf %d : tensor<2x8xf32>
  %a = mpt.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %p = mpt.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = mpt.mul %p, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Tests the dynamo exporter's grouping, x * ((erf(x / sqrt(2)) + 1) * 0.5).
// CHECK-LABEL: func.func @erf_gelu_dynamo
// CHECK-NEXT: %[[G:.*]] = mpt.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_gelu_dynamo(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = mpt.constant dense<1.41421354> : tensor<f32>
  %one = mpt.constant dense<1.0> : tensor<f32>
  %half = mpt.constant dense<0.5> : tensor<f32>
  %d = mpt.div %x, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = mpt.erf %d : tensor<2x8xf32>
  %a = mpt.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %h = mpt.mul %a, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = mpt.mul %x, %h : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
