// RUN: mpt-opt %s -split-input-file | mpt-opt -split-input-file | FileCheck %s

// Round trip of every mptrt op: each kernel kind (KernelSchema.def) and the
// non-kernel ops (constant, view).

// Tests that mptrt.sqrt round-trips.
// CHECK-LABEL: func.func @sqrt
func.func @sqrt(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.sqrt %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.sqrt %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.exp round-trips.
// CHECK-LABEL: func.func @exp
func.func @exp(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.exp %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.exp %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.log round-trips.
// CHECK-LABEL: func.func @log
func.func @log(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.log %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.log %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.erf round-trips.
// CHECK-LABEL: func.func @erf
func.func @erf(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.erf %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.erf %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.tanh round-trips.
// CHECK-LABEL: func.func @tanh
func.func @tanh(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.tanh %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.sigmoid round-trips.
// CHECK-LABEL: func.func @sigmoid
func.func @sigmoid(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.sigmoid %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.sigmoid %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.relu round-trips.
// CHECK-LABEL: func.func @relu
func.func @relu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.relu %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.relu %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.neg round-trips.
// CHECK-LABEL: func.func @neg
func.func @neg(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.neg %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.neg %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.abs round-trips.
// CHECK-LABEL: func.func @abs
func.func @abs(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.abs %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.abs %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.not round-trips.
// CHECK-LABEL: func.func @not
func.func @not(%a0: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %r = mptrt.not %a0 : (tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{.*}} = mptrt.not %arg0 : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}
// -----

// Tests that mptrt.leaky_relu round-trips.
// CHECK-LABEL: func.func @leaky_relu
func.func @leaky_relu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.leaky_relu %a0 {alpha = 2.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.leaky_relu %arg0 {alpha = 2.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.gelu round-trips.
// CHECK-LABEL: func.func @gelu
func.func @gelu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.gelu %a0 {approximate = #mptrt.gelu_approximate<tanh>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.gelu %arg0 {approximate = #mptrt.gelu_approximate<tanh>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.clip round-trips.
// CHECK-LABEL: func.func @clip
func.func @clip(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.clip %a0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.clip %arg0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.add round-trips.
// CHECK-LABEL: func.func @add
func.func @add(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.add %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.sub round-trips.
// CHECK-LABEL: func.func @sub
func.func @sub(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.sub %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.sub %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.mul round-trips.
// CHECK-LABEL: func.func @mul
func.func @mul(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.mul %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.mul %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.div round-trips.
// CHECK-LABEL: func.func @div
func.func @div(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.div %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.div %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.pow round-trips.
// CHECK-LABEL: func.func @pow
func.func @pow(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.pow %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.pow %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.max round-trips.
// CHECK-LABEL: func.func @max
func.func @max(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.max %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.max %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.min round-trips.
// CHECK-LABEL: func.func @min
func.func @min(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.min %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.min %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.equal round-trips.
// CHECK-LABEL: func.func @equal
func.func @equal(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = mptrt.equal %a0, %a1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{.*}} = mptrt.equal %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}
// -----

// Tests that mptrt.less round-trips.
// CHECK-LABEL: func.func @less
func.func @less(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = mptrt.less %a0, %a1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{.*}} = mptrt.less %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}
// -----

// Tests that mptrt.greater round-trips.
// CHECK-LABEL: func.func @greater
func.func @greater(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = mptrt.greater %a0, %a1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{.*}} = mptrt.greater %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}
// -----

// Tests that mptrt.where round-trips.
// CHECK-LABEL: func.func @where
func.func @where(%a0: tensor<2x3xi1>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.where %a0, %a1, %a2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.where %arg0, %arg1, %arg2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.matmul round-trips.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%a0: tensor<2x4xf32>, %a1: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.matmul %a0, %a1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.matmul %arg0, %arg1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.gemm round-trips.
// CHECK-LABEL: func.func @gemm
func.func @gemm(%a0: tensor<4x2xf32>, %a1: tensor<3x4xf32>, %a2: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.gemm %a0, %a1, %a2 {activation = #mptrt.activation<gelu_tanh>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, trans_a = true, trans_b = true} : (tensor<4x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.gemm %arg0, %arg1, %arg2 {activation = #mptrt.activation<gelu_tanh>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, trans_a = true, trans_b = true} : (tensor<4x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.conv round-trips.
// CHECK-LABEL: func.func @conv
func.func @conv(%a0: tensor<1x3x8x8xf32>, %a1: tensor<4x3x3x3xf32>, %a2: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %r = mptrt.conv %a0, %a1, %a2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{.*}} = mptrt.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
// -----

// Tests that mptrt.max_pool round-trips.
// CHECK-LABEL: func.func @max_pool
func.func @max_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = mptrt.max_pool %a0 {ceil_mode = false, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %{{.*}} = mptrt.max_pool %arg0 {ceil_mode = false, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}
// -----

// Tests that mptrt.average_pool round-trips.
// CHECK-LABEL: func.func @average_pool
func.func @average_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = mptrt.average_pool %a0 {count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %{{.*}} = mptrt.average_pool %arg0 {count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}
// -----

// Tests that mptrt.global_average_pool round-trips.
// CHECK-LABEL: func.func @global_average_pool
func.func @global_average_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32> {
  %r = mptrt.global_average_pool %a0 : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
// CHECK-NEXT: %{{.*}} = mptrt.global_average_pool %arg0 : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
  return %r : tensor<1x3x1x1xf32>
}
// -----

// Tests that mptrt.batch_norm round-trips.
// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>, %a3: tensor<3xf32>, %a4: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %r = mptrt.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %{{.*}} = mptrt.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %r : tensor<2x3x4x4xf32>
}
// -----

// Tests that mptrt.batch_norm_train round-trips.
// CHECK-LABEL: func.func @batch_norm_train
func.func @batch_norm_train(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>, %a3: tensor<3xf32>, %a4: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = mptrt.batch_norm_train %a0, %a1, %a2, %a3, %a4 {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.batch_norm_train %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}
// -----

// Tests that mptrt.layer_norm round-trips.
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %r:3 = mptrt.layer_norm %a0, %a1, %a2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.layer_norm %arg0, %arg1, %arg2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
// -----

// Tests that mptrt.softmax round-trips.
// CHECK-LABEL: func.func @softmax
func.func @softmax(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.softmax %a0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.softmax %arg0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.log_softmax round-trips.
// CHECK-LABEL: func.func @log_softmax
func.func @log_softmax(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.log_softmax %a0 {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.log_softmax %arg0 {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.reduce_sum round-trips.
// CHECK-LABEL: func.func @reduce_sum
func.func @reduce_sum(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = mptrt.reduce_sum %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %{{.*}} = mptrt.reduce_sum %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}
// -----

// Tests that mptrt.reduce_mean round-trips.
// CHECK-LABEL: func.func @reduce_mean
func.func @reduce_mean(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = mptrt.reduce_mean %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %{{.*}} = mptrt.reduce_mean %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}
// -----

// Tests that mptrt.reduce_max round-trips.
// CHECK-LABEL: func.func @reduce_max
func.func @reduce_max(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = mptrt.reduce_max %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %{{.*}} = mptrt.reduce_max %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}
// -----

// Tests that mptrt.reduce_l2 round-trips.
// CHECK-LABEL: func.func @reduce_l2
func.func @reduce_l2(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = mptrt.reduce_l2 %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %{{.*}} = mptrt.reduce_l2 %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}
// -----

// Tests that mptrt.softmax_cross_entropy_loss round-trips.
// CHECK-LABEL: func.func @softmax_cross_entropy_loss
func.func @softmax_cross_entropy_loss(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>) {
  %r:2 = mptrt.softmax_cross_entropy_loss %a0, %a1 {ignore_index = -100 : i64, reduction = #mptrt.reduction<mean>} : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.softmax_cross_entropy_loss %arg0, %arg1 {ignore_index = -100 : i64, reduction = #mptrt.reduction<mean>} : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<2x5xf32>
}
// -----

// Tests that mptrt.nll_loss round-trips.
// CHECK-LABEL: func.func @nll_loss
func.func @nll_loss(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>, %a2: tensor<5xf32>) -> tensor<f32> {
  %r = mptrt.nll_loss %a0, %a1, %a2 {reduction = #mptrt.reduction<sum>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<5xf32>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = mptrt.nll_loss %arg0, %arg1, %arg2 {reduction = #mptrt.reduction<sum>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
// -----

// Tests that mptrt.copy round-trips.
// CHECK-LABEL: func.func @copy
func.func @copy(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.copy %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.copy %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.identity round-trips.
// CHECK-LABEL: func.func @identity
func.func @identity(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.identity %a0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.identity %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.reshape round-trips.
// CHECK-LABEL: func.func @reshape
func.func @reshape(%a0: tensor<2x3xf32>) -> tensor<6xf32> {
  %r = mptrt.reshape %a0 : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: %{{.*}} = mptrt.reshape %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}
// -----

// Tests that mptrt.flatten round-trips.
// CHECK-LABEL: func.func @flatten
func.func @flatten(%a0: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %r = mptrt.flatten %a0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: %{{.*}} = mptrt.flatten %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}
// -----

// Tests that mptrt.squeeze round-trips.
// CHECK-LABEL: func.func @squeeze
func.func @squeeze(%a0: tensor<2x1x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.squeeze %a0 {axes = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.squeeze %arg0 {axes = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.unsqueeze round-trips.
// CHECK-LABEL: func.func @unsqueeze
func.func @unsqueeze(%a0: tensor<2x3xf32>) -> tensor<2x1x3xf32> {
  %r = mptrt.unsqueeze %a0 {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.unsqueeze %arg0 {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
  return %r : tensor<2x1x3xf32>
}
// -----

// Tests that mptrt.cast round-trips.
// CHECK-LABEL: func.func @cast
func.func @cast(%a0: tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN> {
  %r = mptrt.cast %a0 {saturate = true} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %{{.*}} = mptrt.cast %arg0 {saturate = true} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
  return %r : tensor<2x3xf8E4M3FN>
}
// -----

// Tests that mptrt.quantize round-trips.
// CHECK-LABEL: func.func @quantize
func.func @quantize(%a0: tensor<2x3xbf16>, %a1: tensor<f32>) -> tensor<2x3xf8E4M3FN> {
  %r = mptrt.quantize %a0, %a1 : (tensor<2x3xbf16>, tensor<f32>) -> tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %{{.*}} = mptrt.quantize %arg0, %arg1 : (tensor<2x3xbf16>, tensor<f32>) -> tensor<2x3xf8E4M3FN>
  return %r : tensor<2x3xf8E4M3FN>
}
// -----

// Tests that mptrt.dropout round-trips.
// CHECK-LABEL: func.func @dropout
func.func @dropout(%a0: tensor<2x3xf32>, %a1: tensor<i64>, %a2: tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %r:2 = mptrt.dropout %a0, %a1, %a2 {ratio = 1.000000e-01 : f32, stream = 3 : i64, training = true} : (tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.dropout %arg0, %arg1, %arg2 {ratio = 1.000000e-01 : f32, stream = 3 : i64, training = true} : (tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xi1>
}
// -----

// Tests that mptrt.transpose round-trips.
// CHECK-LABEL: func.func @transpose
func.func @transpose(%a0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = mptrt.transpose %a0 {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %{{.*}} = mptrt.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
// -----

// Tests that mptrt.concat round-trips.
// CHECK-LABEL: func.func @concat
func.func @concat(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = mptrt.concat %a0, %a1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// -----

// Tests that mptrt.split round-trips.
// CHECK-LABEL: func.func @split
func.func @split(%a0: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:2 = mptrt.split %a0 {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %{{.*}} = mptrt.split %arg0 {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>
}
// -----

// Tests that mptrt.slice round-trips.
// CHECK-LABEL: func.func @slice
func.func @slice(%a0: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.slice %a0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.slice %arg0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.gather round-trips.
// CHECK-LABEL: func.func @gather
func.func @gather(%a0: tensor<5x3xf32>, %a1: tensor<2xi64>) -> tensor<2x3xf32> {
  %r = mptrt.gather %a0, %a1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.gather %arg0, %arg1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.expand round-trips.
// CHECK-LABEL: func.func @expand
func.func @expand(%a0: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.expand %a0 : (tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.expand %arg0 : (tensor<1x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.trilu round-trips.
// CHECK-LABEL: func.func @trilu
func.func @trilu(%a0: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = mptrt.trilu %a0 {k = 0 : i64, upper = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.trilu %arg0 {k = 0 : i64, upper = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}
// -----

// Tests that mptrt.constant_of_shape round-trips.
// CHECK-LABEL: func.func @constant_of_shape
func.func @constant_of_shape() -> tensor<2x3xf32> {
  %r = mptrt.constant_of_shape {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.constant_of_shape  {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.unary_grad round-trips.
// CHECK-LABEL: func.func @unary_grad
func.func @unary_grad(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.unary_grad %a0, %a1 {kind = #mptrt.unary_grad_kind<leaky_relu>, alpha = 0.00999999977 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.unary_grad %arg0, %arg1 {alpha = 0.00999999977 : f32, kind = #mptrt.unary_grad_kind<leaky_relu>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.softmax_grad round-trips.
// CHECK-LABEL: func.func @softmax_grad
func.func @softmax_grad(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = mptrt.softmax_grad %a0, %a1 {axis = 1 : i64, log = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.softmax_grad %arg0, %arg1 {axis = 1 : i64, log = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.layer_norm_grad round-trips.
// CHECK-LABEL: func.func @layer_norm_grad
func.func @layer_norm_grad(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>, %a2: tensor<2x1xf32>, %a3: tensor<2x1xf32>, %a4: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = mptrt.layer_norm_grad %a0, %a1, %a2, %a3, %a4 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.layer_norm_grad %arg0, %arg1, %arg2, %arg3, %arg4 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}
// -----

// Tests that mptrt.softmax_cross_entropy_loss_grad round-trips.
// CHECK-LABEL: func.func @softmax_cross_entropy_loss_grad
func.func @softmax_cross_entropy_loss_grad(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>, %a2: tensor<f32>) -> tensor<2x5xf32> {
  %r = mptrt.softmax_cross_entropy_loss_grad %a0, %a1, %a2 {reduction = #mptrt.reduction<none>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
// CHECK-NEXT: %{{.*}} = mptrt.softmax_cross_entropy_loss_grad %arg0, %arg1, %arg2 {reduction = #mptrt.reduction<none>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}
// -----

// Tests that mptrt.nll_loss_grad round-trips.
// CHECK-LABEL: func.func @nll_loss_grad
func.func @nll_loss_grad(%a0: tensor<2xi64>, %a1: tensor<f32>) -> tensor<2x5xf32> {
  %r = mptrt.nll_loss_grad %a0, %a1 {ignore_index = 0 : i64} : (tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
// CHECK-NEXT: %{{.*}} = mptrt.nll_loss_grad %arg0, %arg1 {ignore_index = 0 : i64} : (tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}
// -----

// Tests that mptrt.gather_grad round-trips.
// CHECK-LABEL: func.func @gather_grad
func.func @gather_grad(%a0: tensor<2xi64>, %a1: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %r = mptrt.gather_grad %a0, %a1 {axis = 0 : i64} : (tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.gather_grad %arg0, %arg1 {axis = 0 : i64} : (tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
// -----

// Tests that mptrt.slice_grad round-trips.
// CHECK-LABEL: func.func @slice_grad
func.func @slice_grad(%a0: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = mptrt.slice_grad %a0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.slice_grad %arg0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
// -----

// Tests that mptrt.max_pool_grad round-trips.
// CHECK-LABEL: func.func @max_pool_grad
func.func @max_pool_grad(%a0: tensor<1x3x8x8xf32>, %a1: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %r = mptrt.max_pool_grad %a0, %a1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %{{.*}} = mptrt.max_pool_grad %arg0, %arg1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}
// -----

// Tests that mptrt.average_pool_grad round-trips.
// CHECK-LABEL: func.func @average_pool_grad
func.func @average_pool_grad(%a0: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %r = mptrt.average_pool_grad %a0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %{{.*}} = mptrt.average_pool_grad %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}
// -----

// Tests that mptrt.conv_grad_input round-trips.
// CHECK-LABEL: func.func @conv_grad_input
func.func @conv_grad_input(%a0: tensor<1x4x8x8xf32>, %a1: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %r = mptrt.conv_grad_input %a0, %a1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %{{.*}} = mptrt.conv_grad_input %arg0, %arg1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}
// -----

// Tests that mptrt.conv_grad_weight round-trips.
// CHECK-LABEL: func.func @conv_grad_weight
func.func @conv_grad_weight(%a0: tensor<1x3x8x8xf32>, %a1: tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32> {
  %r = mptrt.conv_grad_weight %a0, %a1 {group = 1 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.conv_grad_weight %arg0, %arg1 {group = 1 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  return %r : tensor<4x3x3x3xf32>
}
// -----

// Tests that mptrt.batch_norm_grad round-trips.
// CHECK-LABEL: func.func @batch_norm_grad
func.func @batch_norm_grad(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = mptrt.batch_norm_grad %a0, %a1, %a2 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.batch_norm_grad %arg0, %arg1, %arg2 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}
// -----

// Tests that mptrt.scale_loss round-trips.
// CHECK-LABEL: func.func @scale_loss
func.func @scale_loss(%a0: tensor<f32>, %a1: tensor<f32>) -> tensor<f32> {
  %r = mptrt.scale_loss %a0, %a1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = mptrt.scale_loss %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
// -----

// Tests that mptrt.unscale round-trips.
// CHECK-LABEL: func.func @unscale
func.func @unscale(%a0: tensor<2x3xf32>, %a1: tensor<f32>) -> tensor<2x3xf32> {
  %r = mptrt.unscale %a0, %a1 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.unscale %arg0, %arg1 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.all_finite round-trips.
// CHECK-LABEL: func.func @all_finite
func.func @all_finite(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<i1> {
  %r = mptrt.all_finite %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<i1>
// CHECK-NEXT: %{{.*}} = mptrt.all_finite %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<i1>
  return %r : tensor<i1>
}
// -----

// Tests that mptrt.all_reduce round-trips, one result per operand.
// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%a0: tensor<2x3xf32>, %a1: tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>) {
  %r:2 = mptrt.all_reduce %a0, %a1 {reduce_in_f32 = true} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
// CHECK-NEXT: %{{.*}}:2 = mptrt.all_reduce %arg0, %arg1 {reduce_in_f32 = true} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<3xbf16>
}
// -----

// Tests that mptrt.global_norm round-trips.
// CHECK-LABEL: func.func @global_norm
func.func @global_norm(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<f32> {
  %r = mptrt.global_norm %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = mptrt.global_norm %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
// -----

// Tests that mptrt.clip_by_norm round-trips.
// CHECK-LABEL: func.func @clip_by_norm
func.func @clip_by_norm(%a0: tensor<2x3xf32>, %a1: tensor<f32>) -> tensor<2x3xf32> {
  %r = mptrt.clip_by_norm %a0, %a1 {max_norm = 1.000000e+00 : f64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}} = mptrt.clip_by_norm %arg0, %arg1 {max_norm = 1.000000e+00 : f64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// -----

// Tests that mptrt.sgd_update round-trips.
// CHECK-LABEL: func.func @sgd_update
func.func @sgd_update(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>, %a3: tensor<i64>, %a4: tensor<f32>, %a5: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:2 = mptrt.sgd_update %a0, %a1, %a2, %a3, %a4, %a5 {dampening = 0.000000e+00 : f64, momentum = 0.90000000000000002 : f64, nesterov = true, weight_decay = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.sgd_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>
}
// -----

// Tests that mptrt.adamw_update round-trips.
// CHECK-LABEL: func.func @adamw_update
func.func @adamw_update(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>, %a3: tensor<2x3xf32>, %a4: tensor<i64>, %a5: tensor<f32>, %a6: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:3 = mptrt.adamw_update %a0, %a1, %a2, %a3, %a4, %a5, %a6 {beta1 = 0.90000000000000002 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.01 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.adamw_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
// -----

// Tests that mptrt.update_loss_scale round-trips.
// CHECK-LABEL: func.func @update_loss_scale
func.func @update_loss_scale(%a0: tensor<f32>, %a1: tensor<i64>, %a2: tensor<i1>) -> (tensor<f32>, tensor<i64>) {
  %r:2 = mptrt.update_loss_scale %a0, %a1, %a2 {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.update_loss_scale %arg0, %arg1, %arg2 {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>)
  return %r#0, %r#1 : tensor<f32>, tensor<i64>
}
// -----

// Tests that mptrt.lr_schedule round-trips.
// CHECK-LABEL: func.func @lr_schedule
func.func @lr_schedule(%a0: tensor<i64>) -> tensor<f32> {
  %r = mptrt.lr_schedule %a0 {lr = 1.000000e-01 : f64, min_lr = 0.000000e+00 : f64, schedule = #mptrt.lr_schedule<warmup_cosine>, total_steps = 100 : i64, warmup_steps = 10 : i64} : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = mptrt.lr_schedule %arg0 {lr = 1.000000e-01 : f64, min_lr = 0.000000e+00 : f64, schedule = #mptrt.lr_schedule<warmup_cosine>, total_steps = 100 : i64, warmup_steps = 10 : i64} : (tensor<i64>) -> tensor<f32>
  return %r : tensor<f32>
}
// -----

// Tests that mptrt.advance_step round-trips.
// CHECK-LABEL: func.func @advance_step
func.func @advance_step(%a0: tensor<i64>, %a1: tensor<i1>) -> tensor<i64> {
  %r = mptrt.advance_step %a0, %a1 : (tensor<i64>, tensor<i1>) -> tensor<i64>
// CHECK-NEXT: %{{.*}} = mptrt.advance_step %arg0, %arg1 : (tensor<i64>, tensor<i1>) -> tensor<i64>
  return %r : tensor<i64>
}
// -----

// Tests that mptrt.amax round-trips.
// CHECK-LABEL: func.func @amax
func.func @amax(%a0: tensor<2x3xf32>) -> tensor<f32> {
  %r = mptrt.amax %a0 : (tensor<2x3xf32>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = mptrt.amax %arg0 : (tensor<2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
// -----

// Tests that mptrt.update_fp8_scale round-trips.
// CHECK-LABEL: func.func @update_fp8_scale
func.func @update_fp8_scale(%a0: tensor<16xf32>, %a1: tensor<f32>, %a2: tensor<f32>) -> (tensor<16xf32>, tensor<f32>) {
  %r:2 = mptrt.update_fp8_scale %a0, %a1, %a2 {fp8_max = 4.480000e+02 : f64, margin = 0 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.update_fp8_scale %arg0, %arg1, %arg2 {fp8_max = 4.480000e+02 : f64, margin = 0 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
  return %r#0, %r#1 : tensor<16xf32>, tensor<f32>
}
// -----

// Tests that mptrt.arena, mptrt.constant and mptrt.view round-trip.
// CHECK-LABEL: func.func @constant_and_view
// CHECK-NEXT: mptrt.arena size(192)
// CHECK: mptrt.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK: mptrt.exp %{{.*}} {offsets = array<i64: 128>}
// CHECK: mptrt.view %{{.*}}[128] : tensor<2x3xf32> -> tensor<6xf32>
func.func @constant_and_view() -> tensor<6xf32> {
  mptrt.arena size(192)
  %c = mptrt.constant dense<1.000000e+00> : tensor<2x3xf32>
  %e = mptrt.exp %c {offsets = array<i64: 128>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = mptrt.view %e[128] : tensor<2x3xf32> -> tensor<6xf32>
  %r = mptrt.relu %v {offsets = array<i64: -1>} : (tensor<6xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}
// -----

// Tests that mptrt.attention and mptrt.attention_grad round-trip, with and
// without a mask.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x8xbf16>, %k: tensor<2x5x8xbf16>, %v: tensor<2x5x6xbf16>, %m: tensor<4x5xf32>, %o: tensor<2x4x6xbf16>, %lse: tensor<2x4xf32>, %g: tensor<2x4x6xbf16>) -> (tensor<2x4x6xbf16>, tensor<2x4x8xbf16>) {
  %r:2 = mptrt.attention %q, %k, %v, %m {scale = 5.000000e-01 : f32} : (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>, tensor<4x5xf32>) -> (tensor<2x4x6xbf16>, tensor<2x4xf32>)
// CHECK-NEXT: mptrt.attention %arg0, %arg1, %arg2, %arg3 {scale = 5.000000e-01 : f32}
  %g3:3 = mptrt.attention_grad %q, %k, %v, %o, %lse, %g {scale = 5.000000e-01 : f32} : (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>, tensor<2x4x6xbf16>, tensor<2x4xf32>, tensor<2x4x6xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>)
// CHECK-NEXT: mptrt.attention_grad %arg0, %arg1, %arg2, %arg4, %arg5, %arg6 {scale = 5.000000e-01 : f32}
  return %r#0, %g3#0 : tensor<2x4x6xbf16>, tensor<2x4x8xbf16>
}
// -----

// Tests that the sharding kernels round-trip.
// CHECK-LABEL: func.func @sharding
func.func @sharding(%w: tensor<4x3xf32>, %b: tensor<3xbf16>) -> (tensor<4x3xf32>, tensor<3xbf16>, tensor<6xf32>) {
  %s:2 = mptrt.reduce_scatter %w, %b {world_size = 2 : i64} : (tensor<4x3xf32>, tensor<3xbf16>) -> (tensor<6xf32>, tensor<2xbf16>)
// CHECK-NEXT: %{{.*}}:2 = mptrt.reduce_scatter %arg0, %arg1 {world_size = 2 : i64} : (tensor<4x3xf32>, tensor<3xbf16>) -> (tensor<6xf32>, tensor<2xbf16>)
  %g:2 = mptrt.all_gather %s#0, %s#1 {world_size = 2 : i64} : (tensor<6xf32>, tensor<2xbf16>) -> (tensor<4x3xf32>, tensor<3xbf16>)
// CHECK-NEXT: mptrt.all_gather
  %h = mptrt.shard %w {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: mptrt.shard %arg0 {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
  return %g#0, %g#1, %h : tensor<4x3xf32>, tensor<3xbf16>, tensor<6xf32>
}
