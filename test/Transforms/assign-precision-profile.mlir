// --assign-precision with a measured range profile (profile=FILE, written
// by mpt-train --collect-ranges): fp16 mode keeps the ops whose measured
// values reach FP16's range, or flush to zero in it, in FP32.
// RUN: mpt-opt %s -split-input-file --assign-precision="fp16 profile=%S/Inputs/profile-ranges.json" | FileCheck %s
// RUN: mpt-opt %s -split-input-file --assign-precision="fp16 profile=%S/Inputs/profile-ranges.json profile-margin=0" | FileCheck %s --check-prefix=MARGIN0
// RUN: mpt-opt %s -split-input-file --assign-precision="fp16 profile=%S/Inputs/profile-ranges.json report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 profile=%S/Inputs/profile-ranges.json" 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --assign-precision="fp8 profile=%S/Inputs/profile-ranges.json" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: mpt-opt %s -split-input-file --assign-precision="fp16 profile=%S/Inputs/profile-ranges.json profile-flush-limit=0.5" | FileCheck %s --check-prefix=FLUSH50

// Tests an overflowing node: it stays FP32, and so do the ops that read its
// values (the range rule); the layer after the LayerNorm is fp16 again.
// Nodes the profile lacks are left to the policy.
// CHECK-LABEL: func.func @overflow
// CHECK: mpt.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: mpt.relu %{{.*}} : tensor<4x8xf32>
// CHECK: mpt.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: mpt.layer_norm
// CHECK: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
// REPORT: "node": "big"
// REPORT: "precision": "f32"
// REPORT: "reason": "profile:overflow"
// REPORT-NEXT: "measured": {
// REPORT-NEXT: "max_abs": 150000
// REPORT: "node": "act"
// REPORT: "reason": "profile:overflow"
// REPORT: "node": "reader"
// REPORT: "reason": "fp16-range"
// REPORT: "node": "head"
// REPORT-NEXT: "op": "mpt.matmul"
// REPORT-NEXT: "category": "always-low"
// REPORT-NEXT: "precision": "f16"
// BF16: warning: assign-precision: the precision profile '{{.*}}profile-ranges.json' is used in fp16 mode only, not in bf16 mode (bf16 has FP32's range)
// BF16: mpt.matmul {{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// FP8: warning: assign-precision: the precision profile '{{.*}}profile-ranges.json' is used in fp16 mode only, not in fp8 mode (fp8 tensors are scaled from their measured amax)
func.func @overflow(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"},
                    %g: tensor<8xf32> {mpt.param = "g"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("big")
  %1 = mpt.relu %0 : tensor<4x8xf32> loc("act")
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("reader")
  %3, %m, %r = mpt.layer_norm %2, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) loc("ln")
  %4 = mpt.matmul %3, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("head")
  return %4 : tensor<4x8xf32>
}

// -----

// Tests the margin: a node measured at 40000 is within one doubling of
// 65504 (the default profile-margin=1), so it stays FP32; with
// profile-margin=0 it fits fp16.
// CHECK-LABEL: func.func @near
// CHECK: mpt.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// MARGIN0-LABEL: func.func @near
// MARGIN0: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
func.func @near(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("near")
  return %0 : tensor<4x8xf32>
}

// -----

// Tests underflow: a node whose values fp16 would flush to zero beyond the
// limit (1% by default) stays FP32; its values are small, so its reader
// does not. A backward entry of the profile (the loss scale's business) is
// not used: "grad" measured 1e9 there and still computes in fp16.
// CHECK-LABEL: func.func @underflow
// CHECK: mpt.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
// A limit above the measured 20% lets "tiny" compute in fp16 too.
// FLUSH50-LABEL: func.func @underflow
// FLUSH50-NOT: mpt.matmul %arg0, %arg1 : (tensor<4x8xf32>
// FLUSH50: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>)
// FLUSH50: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>)
func.func @underflow(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("tiny")
  %1 = mpt.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("grad")
  return %1 : tensor<4x8xf32>
}
