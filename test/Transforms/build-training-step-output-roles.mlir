// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t emit-gradients=true" | FileCheck %s
// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" --mlir-print-debuginfo --strip-debuginfo | FileCheck %s --check-prefix=STRIP

// Tests that train_step marks each output with its role in the ABI
// (mpt.output_role): loss, skipped, grad_norm, loss_scale, lr and, with
// emit-gradients, each gradient; the new state has none; eval_step's loss
// has the role loss and the model's other outputs none.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>},
// CHECK-SAME: tensor<i1> {mpt.output = "skipped", mpt.output_role = #mpt.output_role<Skipped>},
// CHECK-SAME: tensor<f32> {mpt.output = "grad_norm", mpt.output_role = #mpt.output_role<GradNorm>},
// CHECK-SAME: tensor<f32> {mpt.output = "loss_scale", mpt.output_role = #mpt.output_role<LossScale>},
// CHECK-SAME: tensor<f32> {mpt.output = "lr", mpt.output_role = #mpt.output_role<Lr>},
// CHECK-SAME: tensor<8x8xf32> {mpt.output = "grad.w", mpt.output_role = #mpt.output_role<Gradient>},
// CHECK-SAME: tensor<8x8xf32> {mpt.updates = "w"}
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: -> (tensor<f32> {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}, tensor<4x8xf32> {mpt.output = "y"})
// The roles are attributes, not locations: stripping the debug information
// keeps them.
// STRIP-LABEL: func.func @train_step
// STRIP-SAME: {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}
// STRIP-SAME: {mpt.output = "lr", mpt.output_role = #mpt.output_role<Lr>}
// STRIP-LABEL: func.func @eval_step
// STRIP-SAME: {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %y = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
