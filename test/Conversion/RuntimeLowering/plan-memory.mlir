// RUN: mpt-opt %s -split-input-file -verify-diagnostics --mpt-plan-memory="report-peak=1" | FileCheck %s

// Tests liveness-based reuse on a chain of 4 KiB values: each value lives
// from its op to its last use, so the chain needs two buffers, not four.
// Returned values and constants are not in the arena (-1).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {mpt.arena_bytes = 8192 : i64}
// CHECK: mpt.exp {{.*}}mpt.arena_offsets = array<i64: [[A:0|4096]]>
// CHECK: mpt.tanh {{.*}}mpt.arena_offsets = array<i64: [[B:0|4096]]>
// CHECK: mpt.exp {{.*}}mpt.arena_offsets = array<i64: [[A]]>
// CHECK: mpt.add {{.*}}mpt.arena_offsets = array<i64: -1>
// expected-remark @+1 {{arena peak for @chain: 8192 bytes for 3 buffers (12288 bytes without reuse; largest live set 8192 bytes)}}
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = mpt.constant dense<1.0> : tensor<1024xf32>
  %a = mpt.exp %x : tensor<1024xf32>
  %b = mpt.tanh %a : tensor<1024xf32>
  %d = mpt.exp %b : tensor<1024xf32>
  %e = mpt.add %d, %c : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %e : tensor<1024xf32>
}

// -----

// Tests that a reshape of an arena value is a view: same offset, marked
// mpt.view, and it keeps its source alive until the view's last use, so %b
// cannot take %a's bytes. A reshape of an argument is a real copy, and it
// may reuse %a's bytes once %a and its view are dead.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = mpt.exp {{.*}}mpt.arena_offsets = array<i64: [[OA:[0-9]+]]>
// CHECK-NEXT: mpt.reshape %[[A]] {mpt.arena_offsets = array<i64: [[OA]]>, mpt.view}
// CHECK-NEXT: mpt.exp
// CHECK-NOT: array<i64: [[OA]]>
// CHECK: mpt.reshape %arg0 {mpt.arena_offsets = array<i64: {{[0-9]+}}>}
// expected-remark @+1 {{arena peak for @views: 192 bytes for 4 buffers (256 bytes without reuse; largest live set 192 bytes)}}
func.func @views(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %a = mpt.exp %x : tensor<4x4xf32>
  %v = mpt.reshape %a : (tensor<4x4xf32>) -> tensor<16xf32>
  %b = mpt.exp %x : tensor<4x4xf32>
  %w = mpt.reshape %b : (tensor<4x4xf32>) -> tensor<16xf32>
  %s = mpt.add %v, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = mpt.reshape %x : (tensor<4x4xf32>) -> tensor<16xf32>
  %t = mpt.add %s, %r : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %t : tensor<16xf32>
}

// -----

// Tests that unused results still get bytes (their kernel writes them) and
// that placement is 64-byte aligned: a 6-byte bf16 value and the 4-byte
// statistics take 64 each.
// CHECK-LABEL: func.func @unused
// CHECK-SAME: mpt.arena_bytes = 192
// expected-remark @+1 {{arena peak for @unused: 192 bytes for 3 buffers (192 bytes without reuse; largest live set 192 bytes)}}
func.func @unused(%x: tensor<3xbf16>, %g: tensor<3xbf16>) -> tensor<3xbf16> {
  %y, %mean, %inv = mpt.layer_norm %x, %g {axis = 0 : i64} : (tensor<3xbf16>, tensor<3xbf16>) -> (tensor<3xbf16>, tensor<1xf32>, tensor<1xf32>)
  %z = mpt.relu %y : tensor<3xbf16>
  return %z : tensor<3xbf16>
}
