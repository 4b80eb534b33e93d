// RUN: mpt-opt %s --assign-precision=fp8 --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t" | FileCheck %s --check-prefix=DELAYED
// RUN: mpt-opt %s --assign-precision=fp8 --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t fp8-scaling=current" | FileCheck %s --check-prefix=CURRENT
// RUN: mpt-opt %s --assign-precision=fp8 --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t fp8-scaling=none" | FileCheck %s --check-prefix=NONE
// RUN: mpt-opt %s --assign-precision=fp8 --build-training-step="optimizer=sgd loss-kind=mse loss-output=y label-input=t fp8-amax-history=16 fp8-amax-algo=most_recent fp8-margin=1" | FileCheck %s --check-prefix=OPTS
// RUN: not mpt-opt %s --assign-precision=fp8 --build-training-step="loss-kind=mse loss-output=y fp8-scaling=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mpt-opt %s --assign-precision=fp8 --build-training-step="loss-kind=mse loss-output=y fp8-amax-algo=mean" 2>&1 | FileCheck %s --check-prefix=BADALGO
// RUN: not mpt-opt %s --assign-precision=fp8 --build-training-step="loss-kind=mse loss-output=y fp8-amax-history=0" 2>&1 | FileCheck %s --check-prefix=BADLEN

// Tests FP8 training (--assign-precision=fp8, then --build-training-step):
// E4M3 forward operands, E5M2 output gradients in the backward
// contractions, which reuse the forward's E4M3 copies; and the scale state
// of every quantized tensor plumbed through train_step.

// Each forward scale argument becomes the state `<t>.fp8_scale` (initially
// 1) with an amax history of 1024; each output gradient gets the same
// state; eval_step reads the forward scales as parameters of the same names.
// DELAYED-LABEL: func.func @train_step
// DELAYED-SAME: %[[SX:[^:]*]]: tensor<f32> {mpt.fp8_scale = "x", mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "x.fp8_scale"}
// DELAYED-SAME: %[[SW1:[^:]*]]: tensor<f32> {mpt.fp8_scale = "fc1.weight", mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "fc1.weight.fp8_scale"}
// DELAYED-SAME: %[[SR:[^:]*]]: tensor<f32> {mpt.fp8_scale = "relu", mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "relu.fp8_scale"}
// DELAYED-SAME: %[[SW2:[^:]*]]: tensor<f32> {mpt.fp8_scale = "fc2.weight", {{.*}}mpt.param = "fc2.weight.fp8_scale"}
// DELAYED-SAME: %[[HX:[^:]*]]: tensor<1024xf32> {mpt.initial_value = dense<0.000000e+00> : tensor<1024xf32>, mpt.param = "x.amax_history"}
// DELAYED-SAME: %[[SG2:[^:]*]]: tensor<f32> {mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "fc2.grad.fp8_scale"}
// DELAYED-SAME: tensor<1024xf32> {{{.*}}mpt.param = "fc2.grad.amax_history"}
// DELAYED-SAME: %[[SG1:[^:]*]]: tensor<f32> {{{.*}}mpt.param = "fc1.grad.fp8_scale"}
// DELAYED-SAME: tensor<f32> {mpt.updates = "x.fp8_scale"}
// DELAYED-SAME: tensor<f32> {mpt.updates = "fc1.grad.fp8_scale"}
// Forward: the amax of each quantized tensor; the quantize reads the stored
// scale (delayed).
// DELAYED: %[[AX:.*]] = mpt.amax %arg0
// DELAYED: %[[QX:.*]] = mpt.quantize %arg0, %[[SX]] {inserted} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// DELAYED: %[[QW2:.*]] = mpt.quantize %arg2, %[[SW2]] {inserted} : (tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf8E4M3FN>
// DELAYED: mpt.matmul %[[QX]], %{{.*}} scales(%[[SX]], %[[SW1]]) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
// DELAYED: %[[QR:.*]] = mpt.quantize %{{.*}}, %[[SR]] {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// Backward: dY in E5M2 with its own scale; dA = dY B^T with B's E4M3 copy,
// then divided by A's scale (the quantize's rule multiplies it back).
// DELAYED: %[[DY:.*]] = mpt.quantize %{{.*}}, %[[SG2]] {inserted, mpt.backward} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf8E5M2>
// DELAYED: %[[W2T:.*]] = mpt.transpose %[[QW2]] {{.*}} -> tensor<3x8xf8E4M3FN>
// DELAYED: %[[DR:.*]] = mpt.matmul %[[DY]], %[[W2T]] scales(%[[SG2]], %[[SW2]]) {mpt.backward} : (tensor<4x3xf8E5M2>, tensor<3x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
// DELAYED: mpt.div %[[DR]], %[[SR]]
// DELAYED: %[[RT:.*]] = mpt.transpose %[[QR]] {{.*}} -> tensor<8x4xf8E4M3FN>
// DELAYED: mpt.matmul %[[RT]], %[[DY]] scales(%[[SR]], %[[SG2]]) {mpt.backward} : (tensor<8x4xf8E4M3FN>, tensor<4x3xf8E5M2>, tensor<f32>, tensor<f32>) -> tensor<8x3xf32>
// DELAYED: mpt.quantize %{{.*}}, %[[SG1]] {inserted, mpt.backward} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E5M2>
// The updates run after every reader of this step's scales (they write
// them in place): E4M3 tensors with fp8_max 448, E5M2 ones with 57344.
// DELAYED: mpt.sgd_update
// DELAYED: mpt.update_fp8_scale %[[HX]], %[[SX]], %[[AX]] : (tensor<1024xf32>, tensor<f32>, tensor<f32>) -> (tensor<1024xf32>, tensor<f32>)
// DELAYED: mpt.update_fp8_scale %{{.*}}, %[[SG2]], %{{.*}} {fp8_max = 5.734400e+04 : f64}
// DELAYED: return
// DELAYED-LABEL: func.func @eval_step
// DELAYED-SAME: tensor<f32> {mpt.fp8_scale = "x", mpt.initial_value = dense<1.000000e+00> : tensor<f32>, mpt.param = "x.fp8_scale"}
// DELAYED-NOT: update_fp8_scale
// DELAYED: return

// Current scaling: the quantize and the contractions read the scale this
// step's amax gives (a temporary update on a fresh one-entry history); the
// state keeps one entry and that scale.
// CURRENT-LABEL: func.func @train_step
// CURRENT-SAME: %[[SX:[^:]*]]: tensor<f32> {{{.*}}mpt.param = "x.fp8_scale"}
// CURRENT-SAME: %[[HX:[^:]*]]: tensor<1xf32> {{{.*}}mpt.param = "x.amax_history"}
// CURRENT: %[[AX:.*]] = mpt.amax %arg0
// CURRENT: %[[FRESH:.*]] = mpt.constant dense<0.000000e+00> : tensor<1xf32>
// CURRENT: %{{.*}}, %[[NOW:.*]] = mpt.update_fp8_scale %[[FRESH]], %[[SX]], %[[AX]]
// CURRENT: mpt.quantize %arg0, %[[NOW]] {inserted}
// CURRENT: mpt.matmul %{{.*}}, %{{.*}} scales(%[[NOW]], %{{.*}})
// CURRENT: mpt.sgd_update
// CURRENT: mpt.update_fp8_scale %[[HX]], %[[SX]], %[[AX]]

// none: the scales stay 1 (state without updates).
// NONE-LABEL: func.func @train_step
// NONE-SAME: mpt.param = "x.fp8_scale"
// NONE-NOT: amax_history
// NONE-NOT: mpt.update_fp8_scale
// NONE: return
// NONE-NOT: mpt.update_fp8_scale

// The history length, the amax algorithm and the margin reach every update.
// OPTS-LABEL: func.func @train_step
// OPTS-SAME: tensor<16xf32> {{{.*}}mpt.param = "x.amax_history"}
// OPTS: mpt.update_fp8_scale {{.*}} {amax_compute_algo = #mpt.amax_compute_algo<most_recent>, margin = 1 : i64}
// OPTS: mpt.update_fp8_scale {{.*}} {amax_compute_algo = #mpt.amax_compute_algo<most_recent>, fp8_max = 5.734400e+04 : f64, margin = 1 : i64}

// BAD: for the --fp8-scaling option: must be delayed, current or none; got 'sometimes'
// BADALGO: for the --fp8-amax-algo option: must be max or most_recent; got 'mean'
// BADLEN: error: fp8-amax-history must be at least 1; got 0
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w1: tensor<8x8xf32> {mpt.param = "fc1.weight"},
                   %w2: tensor<8x3xf32> {mpt.param = "fc2.weight"})
    -> (tensor<4x3xf32> {mpt.output = "y"}) {
  %h = mpt.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc1")
  %r = mpt.relu %h : tensor<4x8xf32> loc("relu")
  %y = mpt.matmul %r, %w2 : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32> loc("fc2")
  return %y : tensor<4x3xf32>
}
