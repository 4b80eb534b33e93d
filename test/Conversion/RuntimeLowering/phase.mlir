// RUN: mpt-opt %s --lower-to-runtime | FileCheck %s
// RUN: mpt-opt %s --lower-to-runtime --strip-debuginfo | mpt-translate --mlir-to-plan -o %t.mptp
// RUN: mpt-train %t.mptp --entry step --synthetic --steps 1 -q --collect-ranges=%t.json 2>/dev/null
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t.json

// Tests that the backward mark (`mpt.backward`, which autodiff sets) goes
// through the runtime lowering: canonicalization (reshape of reshape),
// epilogue fusion (matmul + bias + relu into one gemm), the conversion to
// mptrt kernels, and the copy of a value returned twice; and that the plan
// records it as the kernel's phase with the debug locations stripped (no
// kernel has an origin then). The forward ops carry no mark.

// CHECK-LABEL: func.func @step
// CHECK: %[[F:.*]] = mptrt.gemm %arg0, %arg1, %arg2 {activation = #mptrt.activation<relu>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, offsets
// CHECK: %[[B:.*]] = mptrt.gemm %[[F]], %arg1, %arg2 {{{.*}}, mpt.backward, offsets
// CHECK: %[[S:.*]] = mptrt.sqrt %[[B]] {mpt.backward, offsets
// CHECK: %[[C:.*]] = mptrt.identity %[[S]] {mpt.backward, offsets
// CHECK: return %[[F]], %[[S]], %[[C]]

// PLAN: "kind": "gemm", "node": "", "phase": "forward"
// PLAN: "kind": "gemm", "node": "", "phase": "backward"
// PLAN: "kind": "sqrt", "node": "", "phase": "backward"
// PLAN: "kind": "identity", "node": "", "phase": "backward"
func.func @step(%x: tensor<4x8xf32> {mpt.input = "x"},
                %w: tensor<8x8xf32> {mpt.param = "w", mpt.initial_value = dense<0.5> : tensor<8x8xf32>},
                %b: tensor<8xf32> {mpt.param = "b", mpt.initial_value = dense<0.25> : tensor<8xf32>})
    -> (tensor<4x8xf32> {mpt.output = "y"}, tensor<4x8xf32> {mpt.output = "dy"},
        tensor<4x8xf32> {mpt.output = "dy_again"}) {
  %m = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc")
  %a = mpt.add %m, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("fc_bias")
  %y = mpt.relu %a : tensor<4x8xf32> loc("fc_relu")
  %gm = mpt.matmul %y, %w {mpt.backward} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc")
  %ga = mpt.add %gm, %b {mpt.backward} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("fc_bias")
  %gy = mpt.relu %ga {mpt.backward} : tensor<4x8xf32> loc("fc_relu")
  %r1 = mpt.reshape %gy {mpt.backward} : (tensor<4x8xf32>) -> tensor<2x16xf32> loc("fc_relu")
  %r2 = mpt.reshape %r1 {mpt.backward} : (tensor<2x16xf32>) -> tensor<4x8xf32> loc("fc_relu")
  %s = mpt.sqrt %r2 {mpt.backward} : tensor<4x8xf32> loc("fc_relu")
  return %y, %s, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
