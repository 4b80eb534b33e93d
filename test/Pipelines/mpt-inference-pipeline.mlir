// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16" | FileCheck %s
// RUN: mpt-opt %s --mpt-inference-pipeline | FileCheck %s --check-prefix=FP32
// RUN: mpt-opt %s --mpt-inference-pipeline="fuse-epilogues=0" | FileCheck %s --check-prefix=NOFUSE

// Tests that --mpt-inference-pipeline assigns the precision and lowers to
// the runtime: bf16 gemms with the relu fused, the output kept f32.
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: mptrt.arena size(
// CHECK: mptrt.gemm {{.*}}activation = #mptrt.activation<relu>{{.*}} : (tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
// CHECK: mptrt.gemm {{.*}} -> tensor<8x4xf32>
// CHECK-NOT: = mpt.

// Without precision the model's types stay; fuse-epilogues=0 keeps the relu.
// FP32-LABEL: func.func @forward
// FP32-NOT: bf16
// FP32: mptrt.gemm {{.*}}activation = #mptrt.activation<relu>{{.*}} -> tensor<8x32xf32>
// NOFUSE-LABEL: func.func @forward
// NOFUSE: mptrt.gemm {{.*}}activation = #mptrt.activation<none>
// NOFUSE-NEXT: mptrt.relu
func.func @forward(%x: tensor<8x16xf32> {mpt.input = "x"},
                   %w1: tensor<32x16xf32> {mpt.param = "w1"},
                   %b1: tensor<32xf32> {mpt.param = "b1"},
                   %w2: tensor<4x32xf32> {mpt.param = "w2"},
                   %b2: tensor<4xf32> {mpt.param = "b2"})
    -> (tensor<8x4xf32> {mpt.output = "logits"}) {
  %h0 = mpt.gemm %x, %w1, %b1 {trans_b = true} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %h = mpt.relu %h0 : tensor<8x32xf32>
  %y = mpt.gemm %h, %w2, %b2 {trans_b = true} : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
