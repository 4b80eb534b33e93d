// REQUIRES: onnx
// The three front ends reject the same option sets with the same message:
// mpt-compile's flags, the C API's option string (what the Python package
// passes) and the registered pipelines of mpt-opt. The check is one
// function, mpt::verifyOptions (lib/Pipelines/Pipelines.cpp).
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --target=sm_80 -o %t.1.mptp 2>&1 | FileCheck %s
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 0 "target=sm_80" 2>&1 | FileCheck %s
// RUN: not mpt-opt %s --mpt-inference-pipeline="target=sm_80" 2>&1 | FileCheck %s
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --precision-report=%t.r.json -o %t.2.mptp 2>&1 | FileCheck %s
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "precision-report=%t.r.json" 2>&1 | FileCheck %s
// RUN: not mpt-opt %s --mpt-training-pipeline="precision-report=%t.r.json" 2>&1 | FileCheck %s
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --precision-profile=%t.p.json -o %t.3.mptp 2>&1 | FileCheck %s
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "precision-profile=%t.p.json" 2>&1 | FileCheck %s
// RUN: not mpt-opt %s --mpt-training-pipeline="precision-profile=%t.p.json" 2>&1 | FileCheck %s
//
// CHECK: invalid options: target, precision-report and precision-profile need precision
// CHECK-NOT: func.func

// With a precision, each front end accepts them (the profile file must
// exist for the pass, so only target and report here).
// RUN: mpt-compile %fixtures/mlp/model.onnx --precision=auto --target=sm_80 -o %t.4.mptp
// RUN: mpt-capi-compile %fixtures/mlp/model.onnx 0 "precision=auto target=sm_80" | FileCheck %s --check-prefix=OK
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 precision-report=%t.r2.json" -o /dev/null
// OK: mpt-capi-compile: {{[0-9]+}} bytes of plan
func.func @forward(%x: tensor<8x16xf32> {mpt.input = "x"}) -> (tensor<8x16xf32> {mpt.output = "y"}) {
  %y = mpt.relu %x : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
