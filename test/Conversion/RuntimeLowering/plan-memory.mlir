// RUN: mpt-opt %s -split-input-file -verify-diagnostics --mpt-plan-memory="report-peak=1" | FileCheck %s

// Tests liveness-based reuse on a chain of 4 KiB values: each value lives
// from its kernel to its last use, so the chain needs two buffers, not four.
// Returned values and constants are not in the arena (-1).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: mptrt.arena size(8192)
// CHECK: mptrt.exp {{.*}}offsets = array<i64: [[A:0|4096]]>
// CHECK: mptrt.tanh {{.*}}offsets = array<i64: [[B:0|4096]]>
// CHECK: mptrt.exp {{.*}}offsets = array<i64: [[A]]>
// CHECK: mptrt.add {{.*}}offsets = array<i64: -1>
// expected-remark @+1 {{arena peak for @chain: 8192 bytes for 3 buffers (12288 bytes without reuse; largest live set 8192 bytes)}}
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = mptrt.constant dense<1.0> : tensor<1024xf32>
  %a = mptrt.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = mptrt.tanh %a : (tensor<1024xf32>) -> tensor<1024xf32>
  %d = mptrt.exp %b : (tensor<1024xf32>) -> tensor<1024xf32>
  %e = mptrt.add %d, %c : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %e : tensor<1024xf32>
}

// -----

// Tests that a reshape of an arena value becomes an mptrt.view at its
// source's offset, and that it keeps its source alive until the view's last
// use, so %b cannot take %a's bytes. A reshape of an argument stays a kernel
// (a real copy), and it may reuse %a's bytes once %a and its view are dead.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = mptrt.exp {{.*}}offsets = array<i64: [[OA:[0-9]+]]>
// CHECK-NEXT: mptrt.view %[[A]][[[OA]]] : tensor<4x4xf32> -> tensor<16xf32>
// CHECK-NEXT: mptrt.exp
// CHECK-NOT: array<i64: [[OA]]>
// CHECK: mptrt.reshape %arg0 {offsets = array<i64: {{[0-9]+}}>}
// expected-remark @+1 {{arena peak for @views: 192 bytes for 4 buffers (256 bytes without reuse; largest live set 192 bytes)}}
func.func @views(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %a = mptrt.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = mptrt.reshape %a : (tensor<4x4xf32>) -> tensor<16xf32>
  %b = mptrt.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %w = mptrt.reshape %b : (tensor<4x4xf32>) -> tensor<16xf32>
  %s = mptrt.add %v, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = mptrt.reshape %x : (tensor<4x4xf32>) -> tensor<16xf32>
  %t = mptrt.add %s, %r : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %t : tensor<16xf32>
}

// -----

// Tests that unused results still get bytes (their kernel writes them) and
// that placement is 64-byte aligned: a 6-byte bf16 value and the 4-byte
// statistics take 64 each.
// CHECK-LABEL: func.func @unused
// CHECK-NEXT: mptrt.arena size(192)
// CHECK: mptrt.layer_norm {{.*}}offsets = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>
// expected-remark @+1 {{arena peak for @unused: 192 bytes for 3 buffers (192 bytes without reuse; largest live set 192 bytes)}}
func.func @unused(%x: tensor<3xbf16>, %g: tensor<3xbf16>) -> tensor<3xbf16> {
  %y, %mean, %inv = mptrt.layer_norm %x, %g {axis = 0 : i64, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<3xbf16>, tensor<3xbf16>) -> (tensor<3xbf16>, tensor<1xf32>, tensor<1xf32>)
  %z = mptrt.relu %y : (tensor<3xbf16>) -> tensor<3xbf16>
  return %z : tensor<3xbf16>
}

// -----

// Tests that the planner refuses IR that was not converted to mptrt.
func.func @unconverted(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not an mptrt kernel; run --mpt-convert-to-mptrt first}}
  %a = mpt.exp %x : tensor<4xf32>
  %b = mpt.exp %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
