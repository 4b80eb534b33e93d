// RUN: mlir-opt %s --load-dialect-plugin=%mpt_plugin --load-pass-plugin=%mpt_plugin --pass-pipeline="builtin.module(mpt-training-pipeline{precision=bf16 optimizer=sgd lr=0.5 loss-kind=mse eval-entry=})" | FileCheck %s

// Tests that the plugin registers the whole compile pipeline too: upstream
// mlir-opt runs mpt-training-pipeline (named in --pass-pipeline, as every
// plugin pass is) through to the lowered, bf16 train_step.
// CHECK-LABEL: func.func @train_step
// CHECK-NEXT: mptrt.arena size(
// CHECK: mptrt.gemm {{.*}} : (tensor<2x3xbf16>, tensor<4x3xbf16>) -> tensor<2x4xf32>
// CHECK: mptrt.lr_schedule {{.*}}lr = 5.000000e-01
// CHECK: mptrt.sgd_update
func.func @forward(%x: tensor<2x3xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w"})
    -> (tensor<2x4xf32> {mpt.output = "y"}) {
  %y = mpt.gemm %x, %w {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
