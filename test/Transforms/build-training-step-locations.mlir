// RUN: mpt-opt %s --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s

// Tests that the ops autodiff builds keep their forward op's location (the
// ONNX node) wrapped in a fused location tagged "backward", and that the
// forward ops keep theirs untagged: the plan emitter reads the tag to mark
// backward kernels.
// CHECK-LABEL: func.func @train_step
// CHECK: mpt.matmul {{.*}} loc("fc")
// CHECK: mpt.matmul {{.*}} loc(fused<"backward">["fc"])
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %y = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc")
  return %y : tensor<4x8xf32>
}
