// RUN: mpt-opt %s -split-input-file -verify-diagnostics --mpt-convert-to-mptrt | FileCheck %s

// Tests the conversion of every mpt op that has a runtime kernel (inputs in
// generic form, one function each): the mptrt kernel of the same name, with
// string attributes as enums and nothing left of the mpt dialect.

// Tests that mpt.sqrt becomes mptrt.sqrt.
// CHECK-LABEL: func.func @sqrt(
// CHECK-NEXT: %{{.*}} = mptrt.sqrt %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sqrt(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.sqrt"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.exp becomes mptrt.exp.
// CHECK-LABEL: func.func @exp(
// CHECK-NEXT: %{{.*}} = mptrt.exp %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @exp(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.exp"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.log becomes mptrt.log.
// CHECK-LABEL: func.func @log(
// CHECK-NEXT: %{{.*}} = mptrt.log %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @log(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.log"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.erf becomes mptrt.erf.
// CHECK-LABEL: func.func @erf(
// CHECK-NEXT: %{{.*}} = mptrt.erf %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @erf(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.erf"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.tanh becomes mptrt.tanh.
// CHECK-LABEL: func.func @tanh(
// CHECK-NEXT: %{{.*}} = mptrt.tanh %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @tanh(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.tanh"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.sigmoid becomes mptrt.sigmoid.
// CHECK-LABEL: func.func @sigmoid(
// CHECK-NEXT: %{{.*}} = mptrt.sigmoid %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sigmoid(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.sigmoid"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.relu becomes mptrt.relu.
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT: %{{.*}} = mptrt.relu %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @relu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.relu"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.neg becomes mptrt.neg.
// CHECK-LABEL: func.func @neg(
// CHECK-NEXT: %{{.*}} = mptrt.neg %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @neg(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.neg"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.abs becomes mptrt.abs.
// CHECK-LABEL: func.func @abs(
// CHECK-NEXT: %{{.*}} = mptrt.abs %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @abs(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.abs"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.not becomes mptrt.not.
// CHECK-LABEL: func.func @not(
// CHECK-NEXT: %{{.*}} = mptrt.not %arg0 : (tensor<2x3xi1>) -> tensor<2x3xi1>
func.func @not(%a0: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %r = "mpt.not"(%a0) : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// -----

// Tests that mpt.leaky_relu becomes mptrt.leaky_relu.
// CHECK-LABEL: func.func @leaky_relu(
// CHECK-NEXT: %{{.*}} = mptrt.leaky_relu %arg0 {alpha = 2.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @leaky_relu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.leaky_relu"(%a0) {alpha = 2.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.gelu becomes mptrt.gelu.
// CHECK-LABEL: func.func @gelu(
// CHECK-NEXT: %{{.*}} = mptrt.gelu %arg0 {approximate = #mptrt.gelu_approximate<tanh>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @gelu(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.gelu"(%a0) {approximate = #mpt.gelu_approximate<tanh>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.clip becomes mptrt.clip.
// CHECK-LABEL: func.func @clip(
// CHECK-NEXT: %{{.*}} = mptrt.clip %arg0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @clip(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.clip"(%a0) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.add becomes mptrt.add.
// CHECK-LABEL: func.func @add(
// CHECK-NEXT: %{{.*}} = mptrt.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @add(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.add"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.sub becomes mptrt.sub.
// CHECK-LABEL: func.func @sub(
// CHECK-NEXT: %{{.*}} = mptrt.sub %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @sub(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.sub"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.mul becomes mptrt.mul.
// CHECK-LABEL: func.func @mul(
// CHECK-NEXT: %{{.*}} = mptrt.mul %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @mul(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.mul"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.div becomes mptrt.div.
// CHECK-LABEL: func.func @div(
// CHECK-NEXT: %{{.*}} = mptrt.div %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @div(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.div"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.pow becomes mptrt.pow.
// CHECK-LABEL: func.func @pow(
// CHECK-NEXT: %{{.*}} = mptrt.pow %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @pow(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.pow"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.max becomes mptrt.max.
// CHECK-LABEL: func.func @max(
// CHECK-NEXT: %{{.*}} = mptrt.max %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @max(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.max"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.min becomes mptrt.min.
// CHECK-LABEL: func.func @min(
// CHECK-NEXT: %{{.*}} = mptrt.min %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @min(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.min"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.equal becomes mptrt.equal.
// CHECK-LABEL: func.func @equal(
// CHECK-NEXT: %{{.*}} = mptrt.equal %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
func.func @equal(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = "mpt.equal"(%a0, %a1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// -----

// Tests that mpt.less becomes mptrt.less.
// CHECK-LABEL: func.func @less(
// CHECK-NEXT: %{{.*}} = mptrt.less %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
func.func @less(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = "mpt.less"(%a0, %a1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// -----

// Tests that mpt.greater becomes mptrt.greater.
// CHECK-LABEL: func.func @greater(
// CHECK-NEXT: %{{.*}} = mptrt.greater %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
func.func @greater(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %r = "mpt.greater"(%a0, %a1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// -----

// Tests that mpt.where becomes mptrt.where.
// CHECK-LABEL: func.func @where(
// CHECK-NEXT: %{{.*}} = mptrt.where %arg0, %arg1, %arg2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @where(%a0: tensor<2x3xi1>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.where"(%a0, %a1, %a2) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.matmul becomes mptrt.matmul.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT: %{{.*}} = mptrt.matmul %arg0, %arg1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
func.func @matmul(%a0: tensor<2x4xf32>, %a1: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.matmul"(%a0, %a1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.gemm becomes mptrt.gemm.
// CHECK-LABEL: func.func @gemm(
// CHECK-NEXT: %{{.*}} = mptrt.gemm %arg0, %arg1, %arg2 {activation = #mptrt.activation<gelu_tanh>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, trans_a = true, trans_b = true} : (tensor<4x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @gemm(%a0: tensor<4x2xf32>, %a1: tensor<3x4xf32>, %a2: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.gemm"(%a0, %a1, %a2) {activation = #mpt.activation<gelu_tanh>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, trans_a = true, trans_b = true} : (tensor<4x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.conv becomes mptrt.conv.
// CHECK-LABEL: func.func @conv(
// CHECK-NEXT: %{{.*}} = mptrt.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
func.func @conv(%a0: tensor<1x3x8x8xf32>, %a1: tensor<4x3x3x3xf32>, %a2: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %r = "mpt.conv"(%a0, %a1, %a2) {dilations = array<i64: 1, 1>, group = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// Tests that mpt.max_pool becomes mptrt.max_pool.
// CHECK-LABEL: func.func @max_pool(
// CHECK-NEXT: %{{.*}} = mptrt.max_pool %arg0 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
func.func @max_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = "mpt.max_pool"(%a0) {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// -----

// Tests that mpt.average_pool becomes mptrt.average_pool.
// CHECK-LABEL: func.func @average_pool(
// CHECK-NEXT: %{{.*}} = mptrt.average_pool %arg0 {ceil_mode = false, count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
func.func @average_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = "mpt.average_pool"(%a0) {count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// -----

// Tests that mpt.global_average_pool becomes mptrt.global_average_pool.
// CHECK-LABEL: func.func @global_average_pool(
// CHECK-NEXT: %{{.*}} = mptrt.global_average_pool %arg0 : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
func.func @global_average_pool(%a0: tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32> {
  %r = "mpt.global_average_pool"(%a0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
  return %r : tensor<1x3x1x1xf32>
}

// -----

// Tests that mpt.batch_norm becomes mptrt.batch_norm.
// CHECK-LABEL: func.func @batch_norm(
// CHECK-NEXT: %{{.*}} = mptrt.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
func.func @batch_norm(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>, %a3: tensor<3xf32>, %a4: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %r = "mpt.batch_norm"(%a0, %a1, %a2, %a3, %a4) {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %r : tensor<2x3x4x4xf32>
}

// -----

// Tests that mpt.batch_norm_train becomes mptrt.batch_norm_train.
// CHECK-LABEL: func.func @batch_norm_train(
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.batch_norm_train %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @batch_norm_train(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>, %a3: tensor<3xf32>, %a4: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = "mpt.batch_norm_train"(%a0, %a1, %a2, %a3, %a4) {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that mpt.layer_norm becomes mptrt.layer_norm.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.layer_norm %arg0, %arg1, %arg2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
func.func @layer_norm(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %r:3 = "mpt.layer_norm"(%a0, %a1, %a2) {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// Tests that mpt.softmax becomes mptrt.softmax.
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT: %{{.*}} = mptrt.softmax %arg0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @softmax(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.softmax"(%a0) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.log_softmax becomes mptrt.log_softmax.
// CHECK-LABEL: func.func @log_softmax(
// CHECK-NEXT: %{{.*}} = mptrt.log_softmax %arg0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @log_softmax(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.log_softmax"(%a0) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.reduce_sum becomes mptrt.reduce_sum.
// CHECK-LABEL: func.func @reduce_sum(
// CHECK-NEXT: %{{.*}} = mptrt.reduce_sum %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
func.func @reduce_sum(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = "mpt.reduce_sum"(%a0) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// Tests that mpt.reduce_mean becomes mptrt.reduce_mean.
// CHECK-LABEL: func.func @reduce_mean(
// CHECK-NEXT: %{{.*}} = mptrt.reduce_mean %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
func.func @reduce_mean(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = "mpt.reduce_mean"(%a0) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// Tests that mpt.reduce_max becomes mptrt.reduce_max.
// CHECK-LABEL: func.func @reduce_max(
// CHECK-NEXT: %{{.*}} = mptrt.reduce_max %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
func.func @reduce_max(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = "mpt.reduce_max"(%a0) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// Tests that mpt.reduce_l2 becomes mptrt.reduce_l2.
// CHECK-LABEL: func.func @reduce_l2(
// CHECK-NEXT: %{{.*}} = mptrt.reduce_l2 %arg0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
func.func @reduce_l2(%a0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = "mpt.reduce_l2"(%a0) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// Tests that mpt.softmax_cross_entropy_loss becomes mptrt.softmax_cross_entropy_loss.
// CHECK-LABEL: func.func @softmax_cross_entropy_loss(
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.softmax_cross_entropy_loss %arg0, %arg1 {ignore_index = -100 : i64, reduction = #mptrt.reduction<mean>} : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
func.func @softmax_cross_entropy_loss(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>) {
  %r:2 = "mpt.softmax_cross_entropy_loss"(%a0, %a1) {ignore_index = -100 : i64, reduction = #mpt.reduction<mean>} : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<2x5xf32>
}

// -----

// Tests that mpt.nll_loss becomes mptrt.nll_loss.
// CHECK-LABEL: func.func @nll_loss(
// CHECK-NEXT: %{{.*}} = mptrt.nll_loss %arg0, %arg1, %arg2 {reduction = #mptrt.reduction<sum>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<5xf32>) -> tensor<f32>
func.func @nll_loss(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>, %a2: tensor<5xf32>) -> tensor<f32> {
  %r = "mpt.nll_loss"(%a0, %a1, %a2) {reduction = #mpt.reduction<sum>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that mpt.identity becomes mptrt.identity.
// CHECK-LABEL: func.func @identity(
func.func @identity(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.identity"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.reshape becomes mptrt.reshape.
// CHECK-LABEL: func.func @reshape(
// CHECK-NEXT: %{{.*}} = mptrt.reshape %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>
func.func @reshape(%a0: tensor<2x3xf32>) -> tensor<6xf32> {
  %r = "mpt.reshape"(%a0) : (tensor<2x3xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// Tests that mpt.flatten becomes mptrt.flatten.
// CHECK-LABEL: func.func @flatten(
// CHECK-NEXT: %{{.*}} = mptrt.flatten %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
func.func @flatten(%a0: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %r = "mpt.flatten"(%a0) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// Tests that mpt.squeeze becomes mptrt.squeeze.
// CHECK-LABEL: func.func @squeeze(
// CHECK-NEXT: %{{.*}} = mptrt.squeeze %arg0 {axes = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
func.func @squeeze(%a0: tensor<2x1x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.squeeze"(%a0) {axes = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.unsqueeze becomes mptrt.unsqueeze.
// CHECK-LABEL: func.func @unsqueeze(
// CHECK-NEXT: %{{.*}} = mptrt.unsqueeze %arg0 {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
func.func @unsqueeze(%a0: tensor<2x3xf32>) -> tensor<2x1x3xf32> {
  %r = "mpt.unsqueeze"(%a0) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
  return %r : tensor<2x1x3xf32>
}

// -----

// Tests that mpt.cast becomes mptrt.cast.
// CHECK-LABEL: func.func @cast(
// CHECK-NEXT: %{{.*}} = mptrt.cast %arg0 {saturate = true} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
func.func @cast(%a0: tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN> {
  %r = "mpt.cast"(%a0) : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
  return %r : tensor<2x3xf8E4M3FN>
}

// -----

// Tests that mpt.quantize becomes mptrt.quantize.
// CHECK-LABEL: func.func @quantize(
// CHECK-NEXT: %{{.*}} = mptrt.quantize %arg0, %arg1 : (tensor<2x3xbf16>, tensor<f32>) -> tensor<2x3xf8E4M3FN>
func.func @quantize(%a0: tensor<2x3xbf16>, %a1: tensor<f32>) -> tensor<2x3xf8E4M3FN> {
  %r = "mpt.quantize"(%a0, %a1) : (tensor<2x3xbf16>, tensor<f32>) -> tensor<2x3xf8E4M3FN>
  return %r : tensor<2x3xf8E4M3FN>
}

// -----

// Tests that mpt.dropout becomes mptrt.dropout.
// CHECK-LABEL: func.func @dropout(
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.dropout %arg0, %arg1, %arg2 {ratio = 1.000000e-01 : f32, stream = 3 : i64, training = true} : (tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
func.func @dropout(%a0: tensor<2x3xf32>, %a1: tensor<i64>, %a2: tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %r:2 = "mpt.dropout"(%a0, %a1, %a2) {ratio = 1.000000e-01 : f32, stream = 3 : i64, training = true} : (tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// Tests that mpt.transpose becomes mptrt.transpose.
// CHECK-LABEL: func.func @transpose(
// CHECK-NEXT: %{{.*}} = mptrt.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
func.func @transpose(%a0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = "mpt.transpose"(%a0) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that mpt.concat becomes mptrt.concat.
// CHECK-LABEL: func.func @concat(
// CHECK-NEXT: %{{.*}} = mptrt.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
func.func @concat(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = "mpt.concat"(%a0, %a1) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that mpt.split becomes mptrt.split.
// CHECK-LABEL: func.func @split(
// CHECK-NEXT: %{{.*}} = mptrt.split %arg0 {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
func.func @split(%a0: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:2 = "mpt.split"(%a0) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests that mpt.slice becomes mptrt.slice.
// CHECK-LABEL: func.func @slice(
// CHECK-NEXT: %{{.*}} = mptrt.slice %arg0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
func.func @slice(%a0: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.slice"(%a0) {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.gather becomes mptrt.gather.
// CHECK-LABEL: func.func @gather(
// CHECK-NEXT: %{{.*}} = mptrt.gather %arg0, %arg1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
func.func @gather(%a0: tensor<5x3xf32>, %a1: tensor<2xi64>) -> tensor<2x3xf32> {
  %r = "mpt.gather"(%a0, %a1) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.expand becomes mptrt.expand.
// CHECK-LABEL: func.func @expand(
// CHECK-NEXT: %{{.*}} = mptrt.expand %arg0 : (tensor<1x3xf32>) -> tensor<2x3xf32>
func.func @expand(%a0: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.expand"(%a0) : (tensor<1x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.trilu becomes mptrt.trilu.
// CHECK-LABEL: func.func @trilu(
// CHECK-NEXT: %{{.*}} = mptrt.trilu %arg0 {k = 0 : i64, upper = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
func.func @trilu(%a0: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = "mpt.trilu"(%a0) {k = 0 : i64, upper = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}

// -----

// Tests that mpt.constant_of_shape becomes mptrt.constant_of_shape.
// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-NEXT: %{{.*}} = mptrt.constant_of_shape {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
func.func @constant_of_shape() -> tensor<2x3xf32> {
  %r = "mpt.constant_of_shape"() {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.unary_grad becomes mptrt.unary_grad.
// CHECK-LABEL: func.func @unary_grad(
// CHECK-NEXT: %{{.*}} = mptrt.unary_grad %arg0, %arg1 {alpha = 0.00999999977 : f32, kind = #mptrt.unary_grad_kind<leaky_relu>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @unary_grad(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.unary_grad"(%a0, %a1) {kind = #mpt.unary_grad_kind<leaky_relu>, alpha = 0.00999999977 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.softmax_grad becomes mptrt.softmax_grad.
// CHECK-LABEL: func.func @softmax_grad(
// CHECK-NEXT: %{{.*}} = mptrt.softmax_grad %arg0, %arg1 {axis = 1 : i64, log = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @softmax_grad(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "mpt.softmax_grad"(%a0, %a1) {axis = 1 : i64, log = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.layer_norm_grad becomes mptrt.layer_norm_grad.
// CHECK-LABEL: func.func @layer_norm_grad(
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.layer_norm_grad %arg0, %arg1, %arg2, %arg3, %arg4 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @layer_norm_grad(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>, %a2: tensor<2x1xf32>, %a3: tensor<2x1xf32>, %a4: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = "mpt.layer_norm_grad"(%a0, %a1, %a2, %a3, %a4) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that mpt.softmax_cross_entropy_loss_grad becomes mptrt.softmax_cross_entropy_loss_grad.
// CHECK-LABEL: func.func @softmax_cross_entropy_loss_grad(
// CHECK-NEXT: %{{.*}} = mptrt.softmax_cross_entropy_loss_grad %arg0, %arg1, %arg2 {reduction = #mptrt.reduction<none>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
func.func @softmax_cross_entropy_loss_grad(%a0: tensor<2x5xf32>, %a1: tensor<2xi64>, %a2: tensor<f32>) -> tensor<2x5xf32> {
  %r = "mpt.softmax_cross_entropy_loss_grad"(%a0, %a1, %a2) {reduction = #mpt.reduction<none>} : (tensor<2x5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// Tests that mpt.nll_loss_grad becomes mptrt.nll_loss_grad.
// CHECK-LABEL: func.func @nll_loss_grad(
// CHECK-NEXT: %{{.*}} = mptrt.nll_loss_grad %arg0, %arg1 {ignore_index = 0 : i64, reduction = #mptrt.reduction<mean>} : (tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
func.func @nll_loss_grad(%a0: tensor<2xi64>, %a1: tensor<f32>) -> tensor<2x5xf32> {
  %r = "mpt.nll_loss_grad"(%a0, %a1) {ignore_index = 0 : i64} : (tensor<2xi64>, tensor<f32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// Tests that mpt.gather_grad becomes mptrt.gather_grad.
// CHECK-LABEL: func.func @gather_grad(
// CHECK-NEXT: %{{.*}} = mptrt.gather_grad %arg0, %arg1 {axis = 0 : i64} : (tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
func.func @gather_grad(%a0: tensor<2xi64>, %a1: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %r = "mpt.gather_grad"(%a0, %a1) {axis = 0 : i64} : (tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

// Tests that mpt.slice_grad becomes mptrt.slice_grad.
// CHECK-LABEL: func.func @slice_grad(
// CHECK-NEXT: %{{.*}} = mptrt.slice_grad %arg0 {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
func.func @slice_grad(%a0: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = "mpt.slice_grad"(%a0) {ends = array<i64: 4, 3>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that mpt.max_pool_grad becomes mptrt.max_pool_grad.
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK-NEXT: %{{.*}} = mptrt.max_pool_grad %arg0, %arg1 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
func.func @max_pool_grad(%a0: tensor<1x3x8x8xf32>, %a1: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %r = "mpt.max_pool_grad"(%a0, %a1) {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}

// -----

// Tests that mpt.average_pool_grad becomes mptrt.average_pool_grad.
// CHECK-LABEL: func.func @average_pool_grad(
// CHECK-NEXT: %{{.*}} = mptrt.average_pool_grad %arg0 {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
func.func @average_pool_grad(%a0: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %r = "mpt.average_pool_grad"(%a0) {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}

// -----

// Tests that mpt.conv_grad_input becomes mptrt.conv_grad_input.
// CHECK-LABEL: func.func @conv_grad_input(
// CHECK-NEXT: %{{.*}} = mptrt.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
func.func @conv_grad_input(%a0: tensor<1x4x8x8xf32>, %a1: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %r = "mpt.conv_grad_input"(%a0, %a1) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}

// -----

// Tests that mpt.conv_grad_weight becomes mptrt.conv_grad_weight.
// CHECK-LABEL: func.func @conv_grad_weight(
// CHECK-NEXT: %{{.*}} = mptrt.conv_grad_weight %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
func.func @conv_grad_weight(%a0: tensor<1x3x8x8xf32>, %a1: tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32> {
  %r = "mpt.conv_grad_weight"(%a0, %a1) {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  return %r : tensor<4x3x3x3xf32>
}

// -----

// Tests that mpt.batch_norm_grad becomes mptrt.batch_norm_grad.
// CHECK-LABEL: func.func @batch_norm_grad(
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.batch_norm_grad %arg0, %arg1, %arg2 {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @batch_norm_grad(%a0: tensor<2x3x4x4xf32>, %a1: tensor<3xf32>, %a2: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %r:3 = "mpt.batch_norm_grad"(%a0, %a1, %a2) {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that mpt.scale_loss becomes mptrt.scale_loss.
// CHECK-LABEL: func.func @scale_loss(
// CHECK-NEXT: %{{.*}} = mptrt.scale_loss %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
func.func @scale_loss(%a0: tensor<f32>, %a1: tensor<f32>) -> tensor<f32> {
  %r = "mpt.scale_loss"(%a0, %a1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that mpt.unscale becomes mptrt.unscale.
// CHECK-LABEL: func.func @unscale(
// CHECK-NEXT: %{{.*}} = mptrt.unscale %arg0, %arg1 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
func.func @unscale(%a0: tensor<2x3xf32>, %a1: tensor<f32>) -> tensor<2x3xf32> {
  %r = "mpt.unscale"(%a0, %a1) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.all_finite becomes mptrt.all_finite.
// CHECK-LABEL: func.func @all_finite(
// CHECK-NEXT: %{{.*}} = mptrt.all_finite %arg0, %arg1 {over_ranks = false} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<i1>
func.func @all_finite(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<i1> {
  %r = "mpt.all_finite"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<i1>
  return %r : tensor<i1>
}

// -----

// Tests that mpt.all_reduce becomes mptrt.all_reduce, its attribute kept.
// CHECK-LABEL: func.func @all_reduce(
// CHECK-NEXT: %{{.*}}:2 = mptrt.all_reduce %arg0, %arg1 {reduce_in_f32 = true, sum = false} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
func.func @all_reduce(%a0: tensor<2x3xf32>, %a1: tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>) {
  %r:2 = "mpt.all_reduce"(%a0, %a1) {reduce_in_f32 = true} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<3xbf16>
}

// -----

// Tests that mpt.global_norm becomes mptrt.global_norm.
// CHECK-LABEL: func.func @global_norm(
// CHECK-NEXT: %{{.*}} = mptrt.global_norm %arg0, %arg1 {over_ranks = false} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<f32>
func.func @global_norm(%a0: tensor<2x3xf32>, %a1: tensor<3xf32>) -> tensor<f32> {
  %r = "mpt.global_norm"(%a0, %a1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that mpt.clip_by_norm becomes mptrt.clip_by_norm.
// CHECK-LABEL: func.func @clip_by_norm(
// CHECK-NEXT: %{{.*}} = mptrt.clip_by_norm %arg0, %arg1 {max_norm = 1.000000e+00 : f64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
func.func @clip_by_norm(%a0: tensor<2x3xf32>, %a1: tensor<f32>) -> tensor<2x3xf32> {
  %r = "mpt.clip_by_norm"(%a0, %a1) {max_norm = 1.000000e+00 : f64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that mpt.sgd_update becomes mptrt.sgd_update.
// CHECK-LABEL: func.func @sgd_update(
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.sgd_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
func.func @sgd_update(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>, %a3: tensor<i64>, %a4: tensor<f32>, %a5: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:2 = "mpt.sgd_update"(%a0, %a1, %a2, %a3, %a4, %a5) {dampening = 0.000000e+00 : f64, momentum = 0.90000000000000002 : f64, nesterov = true, weight_decay = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests that mpt.adamw_update becomes mptrt.adamw_update.
// CHECK-LABEL: func.func @adamw_update(
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = mptrt.adamw_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, sharded = false, stochastic_rounding = false, weight_decay = 1.000000e-02 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
func.func @adamw_update(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>, %a3: tensor<2x3xf32>, %a4: tensor<i64>, %a5: tensor<f32>, %a6: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %r:3 = "mpt.adamw_update"(%a0, %a1, %a2, %a3, %a4, %a5, %a6) {beta1 = 0.90000000000000002 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.01 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests that mpt.update_loss_scale becomes mptrt.update_loss_scale.
// CHECK-LABEL: func.func @update_loss_scale(
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.update_loss_scale %arg0, %arg1, %arg2 {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>)
func.func @update_loss_scale(%a0: tensor<f32>, %a1: tensor<i64>, %a2: tensor<i1>) -> (tensor<f32>, tensor<i64>) {
  %r:2 = "mpt.update_loss_scale"(%a0, %a1, %a2) {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>)
  return %r#0, %r#1 : tensor<f32>, tensor<i64>
}

// -----

// Tests that mpt.lr_schedule becomes mptrt.lr_schedule.
// CHECK-LABEL: func.func @lr_schedule(
// CHECK-NEXT: %{{.*}} = mptrt.lr_schedule %arg0 {lr = 1.000000e-01 : f64, min_lr = 0.000000e+00 : f64, schedule = #mptrt.lr_schedule<warmup_cosine>, total_steps = 100 : i64, warmup_steps = 10 : i64} : (tensor<i64>) -> tensor<f32>
func.func @lr_schedule(%a0: tensor<i64>) -> tensor<f32> {
  %r = "mpt.lr_schedule"(%a0) {lr = 1.000000e-01 : f64, min_lr = 0.000000e+00 : f64, schedule = #mpt.lr_schedule<warmup_cosine>, total_steps = 100 : i64, warmup_steps = 10 : i64} : (tensor<i64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that mpt.advance_step becomes mptrt.advance_step.
// CHECK-LABEL: func.func @advance_step(
// CHECK-NEXT: %{{.*}} = mptrt.advance_step %arg0, %arg1 : (tensor<i64>, tensor<i1>) -> tensor<i64>
func.func @advance_step(%a0: tensor<i64>, %a1: tensor<i1>) -> tensor<i64> {
  %r = "mpt.advance_step"(%a0, %a1) : (tensor<i64>, tensor<i1>) -> tensor<i64>
  return %r : tensor<i64>
}

// -----

// Tests that mpt.amax becomes mptrt.amax.
// CHECK-LABEL: func.func @amax(
// CHECK-NEXT: %{{.*}} = mptrt.amax %arg0 : (tensor<2x3xf32>) -> tensor<f32>
func.func @amax(%a0: tensor<2x3xf32>) -> tensor<f32> {
  %r = "mpt.amax"(%a0) : (tensor<2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that mpt.update_fp8_scale becomes mptrt.update_fp8_scale.
// CHECK-LABEL: func.func @update_fp8_scale(
// CHECK-NEXT: %{{.*}}, %{{.*}} = mptrt.update_fp8_scale %arg0, %arg1, %arg2 {amax_compute_algo = #mptrt.amax_compute_algo<max>, fp8_max = 4.480000e+02 : f64, margin = 0 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
func.func @update_fp8_scale(%a0: tensor<16xf32>, %a1: tensor<f32>, %a2: tensor<f32>) -> (tensor<16xf32>, tensor<f32>) {
  %r:2 = "mpt.update_fp8_scale"(%a0, %a1, %a2) {fp8_max = 4.480000e+02 : f64, margin = 0 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
  return %r#0, %r#1 : tensor<16xf32>, tensor<f32>
}

// -----

// Tests that mpt.constant becomes mptrt.constant and that a cast into a
// wider float type does not saturate.
// CHECK-LABEL: func.func @constant_and_cast
// CHECK-NEXT: %[[C:.*]] = mptrt.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: mptrt.cast %[[C]] : (tensor<4xf32>) -> tensor<4xbf16>
func.func @constant_and_cast() -> tensor<4xbf16> {
  %c = mpt.constant dense<2.0> : tensor<4xf32>
  %r = mpt.cast %c : tensor<4xf32> to tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// Tests that an op without a kernel is an error at the op, naming the ONNX
// node it came from (the importer's locations are `loc("node"("file":0:0))`;
// here the node name alone, so the diagnostic has no file position).
func.func @range(%n: tensor<i64>) -> tensor<4xi64> {
  %z = mpt.constant dense<0> : tensor<i64>
  %o = mpt.constant dense<1> : tensor<i64>
  // expected-error @unknown {{'mpt.range' op has no runtime kernel (ONNX node 'Range_7'): it must fold to a constant before lowering}}
  %r = mpt.range %z, %n, %o : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64> loc("Range_7")
  return %r : tensor<4xi64>
}

// -----

// Tests that a matmul and a gemm with FP8 scales become scaled_matmul and
// scaled_gemm, the scales after the operands (E5M2 x E4M3 as the backward
// pass has them).
// CHECK-LABEL: func.func @scaled(
// CHECK-NEXT: %[[Y:.*]] = mptrt.scaled_matmul %arg0, %arg1, %arg2, %arg3 : (tensor<2x4xf8E5M2>, tensor<4x3xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[Z:.*]] = mptrt.scaled_gemm %arg0, %arg1, %arg4, %arg2, %arg3 {alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, trans_a = false, trans_b = false} : (tensor<2x4xf8E5M2>, tensor<4x3xf8E4M3FN>, tensor<3xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x3xbf16>
func.func @scaled(%a: tensor<2x4xf8E5M2>, %b: tensor<4x3xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %c: tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<2x3xbf16>) {
  %y = mpt.matmul %a, %b scales(%sa, %sb) : (tensor<2x4xf8E5M2>, tensor<4x3xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  %z = mpt.gemm %a, %b, %c scales(%sa, %sb) {alpha = 0.5 : f32} : (tensor<2x4xf8E5M2>, tensor<4x3xf8E4M3FN>, tensor<3xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x3xbf16>
  return %y, %z : tensor<2x3xf32>, tensor<2x3xbf16>
}

// -----

// Tests that a conv with FP8 scales has no kernel yet.
func.func @scaled_conv(%x: tensor<1x2x4x4xf8E4M3FN>, %w: tensor<3x2x1x1xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<1x3x4x4xbf16> {
  // expected-error @+1 {{'mpt.conv' op has no runtime kernel: it has FP8 scale operands, and the runtime has no scaled convolution kernel yet}}
  %y = mpt.conv %x, %w scales(%sa, %sb) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf8E4M3FN>, tensor<3x2x1x1xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xbf16>
  return %y : tensor<1x3x4x4xbf16>
}

// -----

// Tests that a training-mode dropout needs its (seed, step) operands.
func.func @dropout(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @unknown {{'mpt.dropout' op has no runtime kernel (ONNX node 'Dropout_0'): a training-mode dropout needs the (seed, step) operands}}
  %y, %m = mpt.dropout %x {ratio = 5.000000e-01 : f32, training = true} : tensor<4xf32> -> tensor<4xf32>, tensor<4xi1> loc("Dropout_0")
  return %y : tensor<4xf32>
}

// -----

// Tests that mpt.attention and mpt.attention_grad become the mptrt kernels
// of the same names, the mask and the scale kept.
// CHECK-LABEL: func.func @attention(
// CHECK: mptrt.attention %arg0, %arg1, %arg2, %arg3 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>, tensor<1x5xf32>) -> (tensor<2x4x6xbf16>, tensor<2x4xf32>)
// CHECK: mptrt.attention_grad %arg0, %arg1, %arg2, %{{.*}}, %{{.*}}, %arg4, %arg3 {scale = 2.500000e-01 : f32}
func.func @attention(%q: tensor<2x4x8xbf16>, %k: tensor<2x5x8xbf16>, %v: tensor<2x5x6xbf16>, %m: tensor<1x5xf32>, %g: tensor<2x4x6xbf16>) -> (tensor<2x4x6xbf16>, tensor<2x4x8xbf16>) {
  %o, %lse = mpt.attention %q, %k, %v, %m {scale = 0.25 : f32} : (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>, tensor<1x5xf32>) -> (tensor<2x4x6xbf16>, tensor<2x4xf32>)
  %dq, %dk, %dv = mpt.attention_grad %q, %k, %v, %o, %lse, %g, %m {scale = 0.25 : f32} : (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>, tensor<2x4x6xbf16>, tensor<2x4xf32>, tensor<2x4x6xbf16>, tensor<1x5xf32>) -> (tensor<2x4x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x6xbf16>)
  return %o, %dq : tensor<2x4x6xbf16>, tensor<2x4x8xbf16>
}

// -----

// Tests that the sharded state's ops become kernels of the same names,
// their attributes kept.
// CHECK-LABEL: func.func @sharding(
// CHECK-NEXT: %[[S:.*]]:2 = mptrt.reduce_scatter %arg0, %arg1 {reduce_in_f32 = false, world_size = 2 : i64} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<3xf32>, tensor<2xbf16>)
// CHECK-NEXT: mptrt.all_gather %[[S]]#0, %[[S]]#1 {world_size = 2 : i64} : (tensor<3xf32>, tensor<2xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
// CHECK-NEXT: mptrt.shard %arg0 {world_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: mptrt.all_finite %{{.*}} {over_ranks = true}
func.func @sharding(%a0: tensor<2x3xf32>, %a1: tensor<3xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>, tensor<3xf32>, tensor<i1>) {
  %s:2 = "mpt.reduce_scatter"(%a0, %a1) {world_size = 2 : i64} : (tensor<2x3xf32>, tensor<3xbf16>) -> (tensor<3xf32>, tensor<2xbf16>)
  %g:2 = "mpt.all_gather"(%s#0, %s#1) {world_size = 2 : i64} : (tensor<3xf32>, tensor<2xbf16>) -> (tensor<2x3xf32>, tensor<3xbf16>)
  %h = "mpt.shard"(%a0) {world_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  %f = "mpt.all_finite"(%h) {over_ranks = true} : (tensor<3xf32>) -> tensor<i1>
  return %g#0, %g#1, %h, %f : tensor<2x3xf32>, tensor<3xbf16>, tensor<3xf32>, tensor<i1>
}
