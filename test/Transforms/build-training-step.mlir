// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=sgd lr=0.1" | FileCheck %s --check-prefix=SGD
// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=adamw loss-scale=dynamic growth-interval=7 clip-norm=1.0" | FileCheck %s --check-prefix=ADAM
// RUN: mpt-opt %s -split-input-file --build-training-step="optimizer=momentum freeze=b* emit-gradients=1" | FileCheck %s --check-prefix=MOM

// Tests the train_step ABI: the model's scalar loss is used, state becomes
// parameters with initial values, the optimizer is gated by one finite
// check, and new state is returned with mpt.updates.
// SGD-LABEL: func.func @train_step
// SGD-SAME: {mpt.input = "x"}
// SGD-SAME: {mpt.param = "w"}
// SGD-SAME: {mpt.param = "b"}
// SGD-SAME: {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "optimizer.step"}
// SGD-SAME: {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "train.step"}
// SGD-SAME: -> (tensor<f32> {mpt.output = "loss", mpt.output_role = #mpt.output_role<Loss>}, tensor<i1> {mpt.output = "skipped", mpt.output_role = #mpt.output_role<Skipped>}, tensor<f32> {mpt.output = "grad_norm", mpt.output_role = #mpt.output_role<GradNorm>}, tensor<f32> {mpt.output = "loss_scale", mpt.output_role = #mpt.output_role<LossScale>}, tensor<f32> {mpt.output = "lr", mpt.output_role = #mpt.output_role<Lr>}, tensor<4x3xf32> {mpt.updates = "w"}, tensor<3xf32> {mpt.updates = "b"}, tensor<i64> {mpt.updates = "optimizer.step"}, tensor<i64> {mpt.updates = "train.step"})
// SGD: mpt.matmul %arg0, %arg1
// SGD: %[[LOSS:.*]] = mpt.reduce_mean
// SGD-NOT: mpt.scale_loss
// SGD: %[[GB:.*]] = mpt.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = false, mpt.backward}
// SGD: %[[XT:.*]] = mpt.transpose %arg0 {mpt.backward, perm = array<i64: 1, 0>}
// SGD: %[[GW:.*]] = mpt.matmul %[[XT]]
// SGD: %[[OK:.*]] = mpt.all_finite %[[GW]], %[[GB]] :
// SGD: %[[NORM:.*]] = mpt.global_norm %[[GW]], %[[GB]] :
// SGD: %[[LR:.*]] = mpt.lr_schedule %arg4 {lr = 1.000000e-01 : f64}
// SGD: %[[W:.*]] = mpt.sgd_update %arg1, %[[GW]], %arg3, %[[LR]], %[[OK]] :
// SGD: %[[B:.*]] = mpt.sgd_update %arg2, %[[GB]], %arg3, %[[LR]], %[[OK]] :
// SGD: %[[S1:.*]] = mpt.advance_step %arg3, %[[OK]]
// SGD: %[[S2:.*]] = mpt.advance_step %arg4 :
// SGD: %[[SKIP:.*]] = mpt.not %[[OK]]
// SGD: %[[ONE:.*]] = mpt.constant dense<1.000000e+00>
// SGD: return %[[LOSS]], %[[SKIP]], %[[NORM]], %[[ONE]], %[[LR]], %[[W]], %[[B]], %[[S1]], %[[S2]]

// Tests dynamic loss scaling: the loss is scaled, gradients unscaled before
// the finite check, clipped by the global norm, and the scale updated last.
// ADAM-LABEL: func.func @train_step
// ADAM-SAME: {mpt.initial_value = dense<6.553600e+04> : tensor<f32>, mpt.param = "loss_scale.scale"}
// ADAM-SAME: mpt.param = "w.exp_avg"
// ADAM-SAME: mpt.param = "w.exp_avg_sq"
// ADAM-SAME: mpt.param = "loss_scale.growth_tracker"
// ADAM: %[[LOSS:.*]] = mpt.reduce_mean
// ADAM: mpt.scale_loss %[[LOSS]], %[[SCALE:arg[0-9]+]]
// ADAM: %[[GW:.*]] = mpt.unscale %{{.*}}, %[[SCALE]] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// ADAM: %[[GB:.*]] = mpt.unscale
// ADAM: %[[OK:.*]] = mpt.all_finite %[[GW]], %[[GB]]
// ADAM: %[[NORM:.*]] = mpt.global_norm %[[GW]], %[[GB]]
// ADAM: %[[CW:.*]] = mpt.clip_by_norm %[[GW]], %[[NORM]] {max_norm = 1.000000e+00 : f64}
// ADAM: mpt.adamw_update %arg1, %[[CW]], {{.*}}, %[[OK]] :
// ADAM: mpt.update_loss_scale %[[SCALE]], %{{.*}}, %[[OK]] {growth_interval = 7 : i64}
// ADAM: return %[[LOSS]], %{{.*}}, %[[NORM]], %[[SCALE]],

// Tests freezing by glob, momentum state and the gradient outputs.
// MOM-LABEL: func.func @train_step
// MOM-SAME: mpt.param = "w.momentum_buffer"
// MOM-NOT: b.momentum_buffer
// MOM-SAME: tensor<4x3xf32> {mpt.output = "grad.w", mpt.output_role = #mpt.output_role<Gradient>}, tensor<4x3xf32> {mpt.updates = "w"}, tensor<4x3xf32> {mpt.updates = "w.momentum_buffer"}
// MOM: mpt.sgd_update %arg1, %{{.*}}, %arg5, %arg3, %{{.*}}, %{{.*}} {momentum = 9.000000e-01 : f64}
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w"},
                   %b: tensor<3xf32> {mpt.param = "b"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %z = mpt.add %y, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
