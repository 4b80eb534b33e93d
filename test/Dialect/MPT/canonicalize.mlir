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
