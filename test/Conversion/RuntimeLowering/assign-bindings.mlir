// RUN: mpt-opt %s -split-input-file -verify-diagnostics --mpt-assign-bindings | FileCheck %s

// Tests that unnamed arguments and results get names, and that results no
// kernel writes (an argument, a constant, a value returned twice) get an mptrt.identity copy.
// CHECK-LABEL: func.func @writers
// CHECK-SAME: %arg0: tensor<4xf32> {mpt.input = "input0"}
// CHECK-SAME: %arg1: tensor<4xf32> {mpt.param = "w"}
// CHECK-SAME: -> (tensor<4xf32> {mpt.output = "output0"}, tensor<4xf32> {mpt.output = "output1"}, tensor<4xf32> {mpt.output = "sum"}, tensor<4xf32> {mpt.output = "output3"})
// CHECK-DAG: %[[C:.*]] = mptrt.constant
// CHECK-DAG: %[[S:.*]] = mptrt.add %arg0, %arg1
// CHECK-DAG: %[[A:.*]] = mptrt.identity %arg1
// CHECK-DAG: %[[K:.*]] = mptrt.identity %[[C]]
// CHECK-DAG: %[[D:.*]] = mptrt.identity %[[S]]
// CHECK: return %[[A]], %[[K]], %[[S]], %[[D]]
func.func @writers(%x: tensor<4xf32>, %w: tensor<4xf32> {mpt.param = "w"})
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32> {mpt.output = "sum"}, tensor<4xf32>) {
  %c = mptrt.constant dense<1.0> : tensor<4xf32>
  %s = mptrt.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %w, %c, %s, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a generated name steps around a name already taken.
// CHECK-LABEL: func.func @taken
// CHECK-SAME: {mpt.input = "input1"}
// CHECK-SAME: {mpt.input = "input1_"}
func.func @taken(%a: tensor<f32> {mpt.input = "input1"}, %b: tensor<f32>) -> tensor<f32> {
  %s = mptrt.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Tests that two parameters with one name are an error: the runtime binds
// by name.
func.func @duplicate(%a: tensor<f32> {mpt.param = "w"},
                     // expected-error @+1 {{two parameters are named 'w'}}
                     %b: tensor<f32> {mpt.param = "w"}) -> tensor<f32> {
  %s = mptrt.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
