// RUN: mpt-opt %s --allow-unregistered-dialect --assign-precision="bf16 warn-unknown=true" -verify-diagnostics | FileCheck %s --check-prefix=UNKNOWN
// RUN: mpt-opt %s --allow-unregistered-dialect --assign-precision="bf16 summary=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY

// SUMMARY: assign-precision: mode bf16: converted 3/4 ops to bf16 using 3 casts
// SUMMARY-NEXT: 0 constants converted, 0 earlier inserted casts removed, 1 ops without a policy kept FP32

// Tests that an op without a precision policy keeps its FP32 operand (an
// exact cast up of the bf16 relu feeds it) and its FP32 result, which keeps
// the add after it FP32; with a warning when asked for.
// UNKNOWN-LABEL: func.func @unknown_op
// UNKNOWN: %[[R:.*]] = mpt.relu %{{.*}} : tensor<4x4xbf16>
// UNKNOWN-NEXT: %[[C:.*]] = mpt.cast %[[R]] {inserted} : tensor<4x4xbf16> to tensor<4x4xf32>
// UNKNOWN: %[[U:.*]] = "test.custom"(%[[C]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// UNKNOWN-NEXT: mpt.add %{{.*}}, %[[U]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @unknown_op(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {mpt.param = "w"}) -> tensor<4x4xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = mpt.relu %0 : tensor<4x4xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-warning @+1 {{'test.custom' declares no precision policy}}
  %3 = "test.custom"(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = mpt.add %2, %3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}
