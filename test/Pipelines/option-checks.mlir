// REQUIRES: onnx
// The three front ends reject the same option sets with the same message:
// mpt-compile's flags, the C API's option string (what the Python package
// passes) and the registered pipelines of mpt-opt. The check is one
// function, mpt::verifyOptions (lib/Pipelines/Pipelines.cpp), which runs
// --build-training-step's own check (mpt::verifyTrainingStepOptions), before
// the model is read.
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --target=gpu -o %t.1.mptp 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 0 "target=gpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not mpt-opt %s --mpt-inference-pipeline="target=gpu" 2>&1 | FileCheck %s --check-prefix=TARGET
//
// TARGET: invalid options: unknown target 'gpu'; expected sm_XY (e.g. sm_80, sm_90) or cpu
// TARGET-NOT: func.func
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --precision-report=%t.r.json -o %t.2.mptp 2>&1 | FileCheck %s
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "precision-report=%t.r.json" 2>&1 | FileCheck %s
// RUN: not mpt-opt %s --mpt-training-pipeline="precision-report=%t.r.json" 2>&1 | FileCheck %s
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --precision-profile=%t.p.json -o %t.3.mptp 2>&1 | FileCheck %s
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "precision-profile=%t.p.json" 2>&1 | FileCheck %s
// RUN: not mpt-opt %s --mpt-training-pipeline="precision-profile=%t.p.json" 2>&1 | FileCheck %s
//
// CHECK: invalid options: precision-report and precision-profile need precision
// CHECK-NOT: func.func

// Options of the training step that do not go together, or a value outside
// its set: the same three front ends, the same message.
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --optimizer=sgd --master-weights=bf16 -o %t.5.mptp 2>&1 | FileCheck %s --check-prefix=MASTERS
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "optimizer=sgd master-weights=bf16" 2>&1 | FileCheck %s --check-prefix=MASTERS
// RUN: not mpt-opt %s --mpt-training-pipeline="optimizer=sgd master-weights=bf16" 2>&1 | FileCheck %s --check-prefix=MASTERS
// MASTERS: invalid options: master-weights=bf16 needs optimizer=adamw; got 'sgd'
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --lr-schedule=warmup_cosine --warmup-steps=10 -o %t.6.mptp 2>&1 | FileCheck %s --check-prefix=COSINE
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "lr-schedule=warmup_cosine warmup-steps=10" 2>&1 | FileCheck %s --check-prefix=COSINE
// RUN: not mpt-opt %s --mpt-training-pipeline="lr-schedule=warmup_cosine warmup-steps=10" 2>&1 | FileCheck %s --check-prefix=COSINE
// COSINE: invalid options: lr-schedule=warmup_cosine needs total-steps > warmup-steps
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --loss-scale=static:0 -o %t.7.mptp 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "loss-scale=static:0" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not mpt-opt %s --mpt-training-pipeline="loss-scale=static:0" 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: for the --loss-scale option: must be none, dynamic, static:S (S > 0) or auto; got 'static:0'
//
// A typed option's value outside its enum (MPTEnums.td): the option's
// parser names the values it takes.
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --optimizer=lion -o %t.10.mptp 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "optimizer=lion" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not mpt-opt %s --mpt-training-pipeline="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: for the --optimizer option: must be sgd, momentum or adamw; got 'lion'
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --precision=bf32 -o %t.11.mptp 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 0 "precision=bf32" 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not mpt-opt %s --mpt-inference-pipeline="precision=bf32" 2>&1 | FileCheck %s --check-prefix=PRECISION
// PRECISION: for the --precision option: must be none, bf16, fp16, fp8, fp32 or auto; got 'bf32'
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --lr-schedule=cosine -o %t.12.mptp 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "lr-schedule=cosine" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not mpt-opt %s --mpt-training-pipeline="lr-schedule=cosine" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: for the --lr-schedule option: must be constant or warmup_cosine; got 'cosine'
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --loss-kind=hinge -o %t.13.mptp 2>&1 | FileCheck %s --check-prefix=LOSSKIND
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "loss-kind=hinge" 2>&1 | FileCheck %s --check-prefix=LOSSKIND
// RUN: not mpt-opt %s --mpt-training-pipeline="loss-kind=hinge" 2>&1 | FileCheck %s --check-prefix=LOSSKIND
// LOSSKIND: for the --loss-kind option: must be model, cross_entropy, mse or nll; got 'hinge'
//
// RUN: not mpt-compile %fixtures/mlp/model.onnx --train --fp8-margin=200 -o %t.8.mptp 2>&1 | FileCheck %s --check-prefix=MARGIN
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 1 "fp8-margin=200" 2>&1 | FileCheck %s --check-prefix=MARGIN
// RUN: not mpt-opt %s --mpt-training-pipeline="fp8-margin=200" 2>&1 | FileCheck %s --check-prefix=MARGIN
// MARGIN: invalid options: fp8-margin must be in [-126, 126]; got 200
//
// A training option without train: mpt-compile and the C API say the same
// (the inference pipeline of mpt-opt has no such option at all).
// RUN: not mpt-compile %fixtures/mlp/model.onnx --lr=0.1 -o %t.9.mptp 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: not mpt-capi-compile %fixtures/mlp/model.onnx 0 "lr=0.1" 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: invalid options: lr needs train

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
