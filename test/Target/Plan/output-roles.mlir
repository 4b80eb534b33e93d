// RUN: mpt-opt %s --lower-to-runtime | mpt-translate --mlir-to-plan -o %t.mptp
// RUN: mpt-run %t.mptp --list | FileCheck %s

// Tests that each output's role in the plan is its mpt.output_role, not its
// name: "cost" is the loss, "dw" a gradient, and "loss", without a role,
// has none.
// CHECK: entry point 'step': arena {{[0-9]+}} bytes
// CHECK-NEXT: param  w: f32 [2]
// CHECK-NEXT: output cost: f32 [] (role loss)
// CHECK-NEXT: output dw: f32 [2] (role gradient)
// CHECK-NEXT: output loss: f32 []{{$}}
func.func @step(%w: tensor<2xf32> {mpt.param = "w", mpt.initial_value = dense<[1.0, 2.0]> : tensor<2xf32>})
    -> (tensor<f32> {mpt.output = "cost", mpt.output_role = #mpt.output_role<Loss>},
        tensor<2xf32> {mpt.output = "dw", mpt.output_role = #mpt.output_role<Gradient>},
        tensor<f32> {mpt.output = "loss"}) {
  %s = mpt.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  %d = mpt.relu %w : tensor<2xf32>
  %n = mpt.neg %s : tensor<f32>
  return %s, %d, %n : tensor<f32>, tensor<2xf32>, tensor<f32>
}
