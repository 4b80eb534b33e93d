// RUN: mpt-opt %s -split-input-file --build-training-step="master-weights=bf16" | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --build-training-step="master-weights=bf16-sr" | FileCheck %s --check-prefix=SR
// RUN: mpt-opt %s -split-input-file --build-training-step | FileCheck %s --check-prefix=FP32
// RUN: mpt-opt %s -split-input-file --mpt-training-pipeline="master-weights=bf16" | FileCheck %s --check-prefix=LOWERED

// Tests bf16 master weights rounded to nearest: each trainable parameter
// becomes bf16 (its initial value rounded to nearest even, 0.1 -> 0.10009),
// read through one inserted cast to f32 in train_step and in eval_step; the
// gradient and the moments stay f32, adamw_update takes and returns the
// bf16 master, and no seed is added.
// BF16-LABEL: func.func @train_step
// BF16-SAME: %[[W:arg1]]: tensor<4x3xbf16> {mpt.initial_value = dense<1.000980e-01> : tensor<4x3xbf16>, mpt.param = "w"}
// BF16-SAME: %[[B:arg2]]: tensor<3xbf16> {mpt.param = "b"}
// BF16-SAME: tensor<4x3xf32> {{{.*}}mpt.param = "w.exp_avg"}
// BF16-NOT: train.seed
// BF16-SAME: -> (
// BF16-SAME: tensor<4x3xbf16> {mpt.updates = "w"}, tensor<4x3xf32> {mpt.updates = "w.exp_avg"}, tensor<4x3xf32> {mpt.updates = "w.exp_avg_sq"}, tensor<3xbf16> {mpt.updates = "b"}
// BF16-DAG: %[[B32:.*]] = mpt.cast %[[B]] {inserted} : tensor<3xbf16> to tensor<3xf32>
// BF16-DAG: %[[W32:.*]] = mpt.cast %[[W]] {inserted} : tensor<4x3xbf16> to tensor<4x3xf32>
// BF16: mpt.matmul %arg0, %[[W32]]
// BF16: mpt.add %{{.*}}, %[[B32]]
// BF16: %[[GW:.*]] = mpt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// BF16: mpt.adamw_update %[[W]], %[[GW]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^, ]*}} : (tensor<4x3xbf16>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<4x3xbf16>, tensor<4x3xf32>, tensor<4x3xf32>)
// BF16: mpt.adamw_update %[[B]], {{.*}} -> (tensor<3xbf16>, tensor<3xf32>, tensor<3xf32>)
// BF16-LABEL: func.func @eval_step
// BF16-SAME: %arg1: tensor<4x3xbf16> {mpt.initial_value = dense<1.000980e-01> : tensor<4x3xbf16>, mpt.param = "w"}
// BF16-DAG: mpt.cast %arg1 {inserted} : tensor<4x3xbf16> to tensor<4x3xf32>
// BF16-DAG: mpt.cast %arg2 {inserted} : tensor<3xbf16> to tensor<3xf32>

// Tests bf16 masters with stochastic rounding: train.seed is added, and
// each update takes it with stochastic_rounding and its own Philox stream
// (2^31, 2^31 + 1, ...).
// SR-LABEL: func.func @train_step
// SR-SAME: %[[SEED:arg[0-9]+]]: tensor<i64> {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "train.seed"}
// SR: mpt.adamw_update %arg1, {{.*}}, %[[SEED]] {stochastic_rounding = true, stream = 2147483648 : i64} : (tensor<4x3xbf16>, {{.*}}, tensor<i64>) -> (tensor<4x3xbf16>, tensor<4x3xf32>, tensor<4x3xf32>)
// SR: mpt.adamw_update %arg2, {{.*}}, %[[SEED]] {stochastic_rounding = true, stream = 2147483649 : i64}

// Tests the default: FP32 masters, no cast, no seed.
// FP32-LABEL: func.func @train_step
// FP32-SAME: %arg1: tensor<4x3xf32> {mpt.initial_value = dense<1.000000e-01> : tensor<4x3xf32>, mpt.param = "w"}
// FP32-NOT: mpt.cast
// FP32-NOT: train.seed
// FP32: mpt.adamw_update %arg1, {{.*}} -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)

// Tests the whole pipeline: the lowered update kernel takes the bf16
// master in place.
// LOWERED-LABEL: func.func @train_step
// LOWERED-SAME: tensor<4x3xbf16> {mpt.initial_value = dense<1.000980e-01> : tensor<4x3xbf16>, mpt.param = "w"}
// LOWERED: mptrt.adamw_update %arg1, {{.*}} : (tensor<4x3xbf16>, tensor<4x3xf32>,
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w", mpt.initial_value = dense<0.1> : tensor<4x3xf32>},
                   %b: tensor<3xf32> {mpt.param = "b"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %y = mpt.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %z = mpt.add %y, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that after --assign-precision=bf16 the inserted widening cast meets
// the bf16 copy of the weight (cast bf16 -> f32 -> bf16) and canonicalizes
// away, so the bf16 contraction reads the master itself; a parameter that
// does not reach the loss is not trained and stays f32.
// BF16-LABEL: func.func @train_step
// BF16-SAME: %arg1: tensor<4x3xbf16> {mpt.param = "w"}
// BF16-SAME: %arg2: tensor<4x3xf32> {mpt.param = "unused"}
// BF16: mpt.cast %arg1 {inserted} : tensor<4x3xbf16> to tensor<4x3xf32>
// BF16-NOT: mpt.adamw_update %arg2
// SR-LABEL: func.func @train_step
// SR: mpt.adamw_update %arg1, {{.*}} {stochastic_rounding = true, stream = 2147483648 : i64}
// SR-NOT: mpt.adamw_update %arg2
// LOWERED-LABEL: func.func @train_step
// LOWERED-NOT: mptrt.cast %arg1
// LOWERED: mptrt.gemm %{{.*}}, %arg1 {{.*}} : (tensor<8x4xbf16>, tensor<4x3xbf16>)
func.func @forward(%x: tensor<8x4xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w"},
                   %unused: tensor<4x3xf32> {mpt.param = "unused"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %x16 = mpt.cast %x {inserted} : tensor<8x4xf32> to tensor<8x4xbf16>
  %w16 = mpt.cast %w {inserted} : tensor<4x3xf32> to tensor<4x3xbf16>
  %y16 = mpt.matmul %x16, %w16 : (tensor<8x4xbf16>, tensor<4x3xbf16>) -> tensor<8x3xbf16>
  %y = mpt.cast %y16 {inserted} : tensor<8x3xbf16> to tensor<8x3xf32>
  %f = mpt.constant dense<1.0> : tensor<8x3xf32>
  %z = mpt.mul %y, %f : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %l = mpt.reduce_mean %z {keepdims = false} : (tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that stochastic rounding and training-mode dropout share the one
// train.seed (dropout's streams count from 0, the roundings' from 2^31).
// SR-LABEL: func.func @train_step
// SR-SAME: %[[SEED:arg[0-9]+]]: tensor<i64> {mpt.initial_value = dense<0> : tensor<i64>, mpt.param = "train.seed"}
// SR-NOT: mpt.param = "train.seed"
// SR: mpt.dropout %{{.*}}, %[[SEED]], %{{.*}} {ratio = 1.000000e-01 : f32, stream = 0 : i64, training = true}
// SR: mpt.adamw_update %arg1, {{.*}}, %[[SEED]] {stochastic_rounding = true, stream = 2147483648 : i64}
func.func @forward(%x: tensor<4x8xf32> {mpt.input = "x"},
                   %w: tensor<8x8xf32> {mpt.param = "w"})
    -> (tensor<f32> {mpt.output = "loss"}) {
  %h = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d, %m = mpt.dropout %h {ratio = 0.1 : f32, training = true} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi1>
  %l = mpt.reduce_mean %d {keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
