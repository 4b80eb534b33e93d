// RUN: mpt-opt %s --mpt-training-pipeline="precision=bf16 optimizer=adamw lr=3e-4 loss-kind=cross_entropy" | FileCheck %s
// RUN: mpt-opt %s --mpt-training-pipeline="optimizer=sgd lr=0.1 loss-kind=mse eval-entry=" | FileCheck %s --check-prefix=SGD
// RUN: mpt-opt %s --pass-pipeline="builtin.module(mpt-training-pipeline{optimizer=sgd lr=0.1 loss-kind=mse eval-entry=})" | FileCheck %s --check-prefix=SGD

// Tests that --mpt-training-pipeline runs every stage with its options: the
// precision passes (bf16 contractions), the training step (an added
// cross-entropy loss, AdamW at the given rate, an eval_step beside it) and
// the lowering (mptrt kernels in a planned arena).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {mpt.input = "labels"}
// CHECK-SAME: mpt.param = "w1.exp_avg"
// CHECK-NEXT: mptrt.arena size(
// CHECK: mptrt.gemm {{.*}} : (tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
// CHECK: mptrt.softmax_cross_entropy_loss
// CHECK: mptrt.lr_schedule {{.*}}lr = 3.000000e-04
// CHECK: mptrt.adamw_update
// CHECK-NOT: = mpt.
// CHECK-LABEL: func.func @eval_step
// CHECK: mptrt.gemm {{.*}}activation = #mptrt.activation<relu>

// Without precision the model's own types train; the options reach the
// pass, whether given as the flag or inside --pass-pipeline.
// SGD-LABEL: func.func @train_step
// SGD: mptrt.gemm {{.*}} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// SGD: mptrt.lr_schedule {{.*}}lr = 1.000000e-01
// SGD: mptrt.sgd_update
// SGD-NOT: adamw_update
// SGD-NOT: @eval_step
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
