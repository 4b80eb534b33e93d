// RUN: mpt-opt %s --mpt-inference-pipeline="precision=fp16 precision-profile=%S/../Transforms/Inputs/profile-ranges.json precision-report=-" -o /dev/null | FileCheck %s
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=fp16 precision-profile=%S/../Transforms/Inputs/profile-ranges.json precision-report=- profile-flush-limit=0.5 profile-margin=0" -o /dev/null | FileCheck %s --check-prefix=LOOSE

// Tests that the pipeline hands its profile options to --assign-precision:
// with the defaults "big" (max |x| 150000) and "near" (40000, within a
// doubling of 65504) overflow and "tiny" (20% of its values flushed by
// fp16) underflows; with a margin of 0 and a limit of 50% only "big" stays
// FP32.
// CHECK: "node": "big"
// CHECK: "precision": "f32"
// CHECK-NEXT: "accumulation": "f32"
// CHECK-NEXT: "reason": "profile:overflow"
// CHECK: "node": "near"
// CHECK: "precision": "f32"
// CHECK-NEXT: "accumulation": "f32"
// CHECK-NEXT: "reason": "profile:overflow"
// CHECK: "node": "tiny"
// CHECK: "precision": "f32"
// CHECK-NEXT: "accumulation": "f32"
// CHECK-NEXT: "reason": "profile:underflow"
// LOOSE: "node": "big"
// LOOSE: "precision": "f32"
// LOOSE-NEXT: "accumulation": "f32"
// LOOSE-NEXT: "reason": "profile:overflow"
// LOOSE: "node": "near"
// LOOSE: "precision": "f16"
// LOOSE: "node": "tiny"
// LOOSE: "precision": "f16"
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}, tensor<4x8xf32> {mpt.output = "z"},
        tensor<4x8xf32> {mpt.output = "t"}) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("big")
  %1 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("near")
  %2 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("tiny")
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
