// RUN: mpt-opt %s --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s
// RUN: mpt-opt %s --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" --strip-debuginfo | FileCheck %s --check-prefix=STRIPPED

// Tests that the ops autodiff builds carry the `mpt.backward` attribute and
// the location of the forward op whose rule built them (its ONNX node),
// that the forward ops and the optimizer update carry no mark, and that
// the mark is IR, so stripping the locations keeps it: the plan emitter
// reads it to mark backward kernels.
// CHECK-LABEL: func.func @train_step
// CHECK: mpt.matmul %{{.*}}, %{{.*}} : {{.*}} loc("fc")
// CHECK: mpt.matmul %{{.*}}, %{{.*}} {mpt.backward} : {{.*}} loc("fc")
// CHECK: mpt.all_finite
// CHECK-NOT: mpt.backward
// CHECK: return

// STRIPPED-LABEL: func.func @train_step
// STRIPPED: mpt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>
// STRIPPED: mpt.matmul %{{.*}}, %{{.*}} {mpt.backward} :
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<4x8xf32> {mpt.output = "y"}) {
  %y = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc")
  return %y : tensor<4x8xf32>
}
