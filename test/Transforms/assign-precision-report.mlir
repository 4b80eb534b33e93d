// The decision report (JSON) and the readable summary.
// RUN: mpt-opt %s --assign-precision="bf16 report=%t.json summary=true keep-fp32-nodes=/head/M*" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: mpt-opt %s --assign-precision="fp16 report=-" -o /dev/null | FileCheck %s --check-prefix=STDOUT

// Tests that every op is listed with its node name, precision, reason and
// accumulation type, and that the totals count conversions and casts.
// SUMMARY: assign-precision: mode bf16: converted 3/5 ops to bf16 using 2 casts
// SUMMARY-NEXT: 0 constants converted, 0 earlier inserted casts removed, 0 ops without a policy kept FP32
// SUMMARY-NEXT: reasons: between-low-ops=1 category=3 override:keep-fp32-nodes=1

// REPORT: "mode": "bf16",
// REPORT: "name": "report",
// REPORT: "node": "/fc1/MatMul",
// REPORT-NEXT: "op": "mpt.matmul",
// REPORT-NEXT: "category": "always-low",
// REPORT-NEXT: "precision": "bf16",
// REPORT-NEXT: "accumulation": "f32",
// REPORT-NEXT: "reason": "category"
// REPORT: "node": "/act/Gelu",
// REPORT-NEXT: "op": "mpt.gelu",
// REPORT-NEXT: "category": "follow",
// REPORT-NEXT: "precision": "bf16",
// REPORT-NEXT: "reason": "between-low-ops"
// REPORT: "node": "/fc2/MatMul",
// REPORT-NEXT: "op": "mpt.matmul",
// REPORT-NEXT: "category": "always-low",
// REPORT-NEXT: "precision": "bf16",
// REPORT-NEXT: "result": "f32",
// REPORT: "node": "/head/Softmax",
// REPORT-NEXT: "op": "mpt.softmax",
// REPORT-NEXT: "category": "require-f32",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "accumulation": "f32",
// REPORT-NEXT: "reason": "category"
// REPORT: "node": "/head/Mul",
// REPORT-NEXT: "op": "mpt.mul",
// REPORT-NEXT: "category": "follow",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "reason": "override:keep-fp32-nodes"
// REPORT: "totals": {
// REPORT-NEXT: "ops": 5,
// REPORT-NEXT: "converted": 3,
// REPORT-NEXT: "kept_f32": 2,
// REPORT-NEXT: "unknown_ops": 0,
// REPORT-NEXT: "casts_inserted": 2,

// STDOUT: "mode": "fp16",
// STDOUT: "precision": "f16",
func.func @report(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("/fc1/MatMul")
  %1 = mpt.gelu %0 : tensor<4x8xf32> loc("/act/Gelu")
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("/fc2/MatMul")
  %3 = mpt.softmax %2 {axis = 1 : i64} : tensor<4x8xf32> loc("/head/Softmax")
  %4 = mpt.mul %3, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("/head/Mul")
  return %4 : tensor<4x8xf32>
}
