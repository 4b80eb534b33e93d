// RUN: mpt-opt %s -split-input-file | mpt-opt -split-input-file | FileCheck %s

// Tests that contractions, norms and losses round-trip.
// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>,
                        %img: tensor<1x3x8x8xbf16>, %k: tensor<6x1x3x3xbf16>) -> (tensor<2x4xf32>, tensor<1x6x4x4xbf16>) {
  // CHECK: mpt.gemm %{{.*}} {trans_b = true}
  %0 = mpt.gemm %x, %w, %b {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: mpt.gemm %{{.*}} {activation = #mpt.activation<gelu_tanh>, trans_b = true}
  %g = mpt.gemm %x, %w, %b {activation = #mpt.activation<gelu_tanh>, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: mpt.conv
  %1 = mpt.conv %img, %k {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x3x8x8xbf16>, tensor<6x1x3x3xbf16>) -> tensor<1x6x4x4xbf16>
  return %0, %1 : tensor<2x4xf32>, tensor<1x6x4x4xbf16>
}

// -----

// Tests that layer_norm returns f32 statistics and the loss a scalar.
// CHECK-LABEL: func.func @norm_and_loss
func.func @norm_and_loss(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  // CHECK: mpt.layer_norm {{.*}} -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %y, %mean, %inv = mpt.layer_norm %x, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %loss, %lp = mpt.softmax_cross_entropy_loss %y, %labels {ignore_index = -100 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x8xf32>)
  return %loss : tensor<f32>
}

// -----

// Tests the low-precision element types and casts between them.
// CHECK-LABEL: func.func @types
func.func @types(%x: tensor<4xf32>) -> tensor<4xf8E5M2> {
  // CHECK: mpt.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %0 = mpt.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = mpt.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf16>
  %2 = mpt.cast %1 : tensor<4xf16> to tensor<4xf8E5M2>
  return %2 : tensor<4xf8E5M2>
}

// -----

// Tests FP8 quantize, contractions with scales, and contractions whose
// result type is wider than their operands.
// CHECK-LABEL: func.func @fp8_and_wide_results
func.func @fp8_and_wide_results(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32>, %sx: tensor<f32>, %sw: tensor<f32>,
                                %b: tensor<8xbf16>, %img: tensor<1x4x6x6xf8E4M3FN>, %k: tensor<8x4x3x3xf8E4M3FN>)
    -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<4x8xf32>) {
  // CHECK: mpt.quantize %{{.*}}, %{{.*}} {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
  %qx = mpt.quantize %x, %sx {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
  %qw = mpt.quantize %w, %sw : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf8E4M3FN>
  // CHECK: mpt.matmul %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  %0 = mpt.matmul %qx, %qw scales(%sx, %sw) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: mpt.gemm %{{.*}}, %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) {trans_b = true}
  %1 = mpt.gemm %qx, %qw, %b scales(%sx, %sw) {trans_b = true} : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<8xbf16>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
  // CHECK: mpt.conv %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) {dilations
  %2 = mpt.conv %img, %k scales(%sx, %sw) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E4M3FN>, tensor<8x4x3x3xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<1x8x4x4xbf16>
  // CHECK: mpt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
  %wl = mpt.cast %w : tensor<8x8xf32> to tensor<8x8xbf16>
  %3 = mpt.matmul %x, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<4x8xf32>
}

// -----

// Tests that the elementwise ops without a case above round-trip: neg, abs,
// sqrt, leaky_relu, clip, trilu, sub, max, min, and the comparisons.
// CHECK-LABEL: func.func @elementwise_rest
func.func @elementwise_rest(%x: tensor<4x4xf32>, %y: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi1>, tensor<4x4xi1>) {
  // CHECK: mpt.neg %{{.*}} : tensor<4x4xf32>
  %0 = mpt.neg %x : tensor<4x4xf32>
  // CHECK: mpt.abs
  %1 = mpt.abs %0 : tensor<4x4xf32>
  // CHECK: mpt.sqrt
  %2 = mpt.sqrt %1 : tensor<4x4xf32>
  // CHECK: mpt.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32}
  %3 = mpt.leaky_relu %2 {alpha = 0.2 : f32} : tensor<4x4xf32>
  // CHECK: mpt.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %4 = mpt.clip %3 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x4xf32>
  // CHECK: mpt.trilu %{{.*}} {k = 1 : i64, upper = false}
  %5 = mpt.trilu %4 {upper = false, k = 1 : i64} : tensor<4x4xf32>
  // CHECK: mpt.sub %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %6 = mpt.sub %5, %y : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  // CHECK: mpt.max %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %7 = mpt.max %6, %y : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  // CHECK: mpt.min
  %8 = mpt.min %7, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: mpt.equal %{{.*}} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xi1>
  %9 = mpt.equal %8, %y : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xi1>
  // CHECK: mpt.less %{{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %10 = mpt.less %8, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  return %8, %9, %10 : tensor<4x4xf32>, tensor<4x4xi1>, tensor<4x4xi1>
}

// -----

// Tests that slice, split, average_pool and reduce_max round-trip.
// CHECK-LABEL: func.func @movement_and_pooling
func.func @movement_and_pooling(%x: tensor<1x4x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) {
  // CHECK: mpt.slice %{{.*}} {ends = array<i64: 1, 4, 8, 8>, starts = array<i64: 0, 2, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x2x8x8xf32>
  %0 = mpt.slice %x {starts = array<i64: 0, 2, 0, 0>, ends = array<i64: 1, 4, 8, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x2x8x8xf32>
  // CHECK: mpt.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 1, 3>} : (tensor<1x4x8x8xf32>) -> (tensor<1x1x8x8xf32>, tensor<1x3x8x8xf32>)
  %1:2 = mpt.split %x {axis = 1 : i64, sizes = array<i64: 1, 3>} : (tensor<1x4x8x8xf32>) -> (tensor<1x1x8x8xf32>, tensor<1x3x8x8xf32>)
  // CHECK: mpt.average_pool %{{.*}} {count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %2 = mpt.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: mpt.reduce_max %{{.*}} {axes = array<i64: 2, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  %3 = mpt.reduce_max %x {axes = array<i64: 2, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  return %0, %1#0, %1#1, %2, %3 : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>
}

// -----

// Tests that the backward ops of convolution, pooling, batch norm, slicing,
// gathering and the losses round-trip.
// CHECK-LABEL: func.func @backward_ops
func.func @backward_ops(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<2x4x8x8xf32>,
                        %dp: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %dx: tensor<2x3x8x8xf32>,
                        %idx: tensor<5xi64>, %demb: tensor<5x6xf32>, %lp: tensor<5x7xf32>, %labels: tensor<5xi64>,
                        %dl: tensor<f32>)
    -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x8x8xf32>, tensor<9x6xf32>, tensor<5x7xf32>, tensor<5x7xf32>) {
  // CHECK: mpt.conv_grad_input %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32>
  %0 = mpt.conv_grad_input %dy, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: mpt.conv_grad_weight %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  %1 = mpt.conv_grad_weight %x, %dy {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  // CHECK: mpt.max_pool_grad %{{.*}}, %{{.*}} {{.*}} : (tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  %2 = mpt.max_pool_grad %x, %dp {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: mpt.average_pool_grad %{{.*}} {{.*}} : (tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  %3 = mpt.average_pool_grad %dp {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: mpt.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>)
  %4:3 = mpt.batch_norm_grad %x, %s, %dx {epsilon = 1.0e-3 : f32} : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: mpt.slice_grad %{{.*}} {{.*}} : (tensor<1x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %sl = mpt.slice %dx {starts = array<i64: 1, 0, 0, 0>, ends = array<i64: 2, 3, 8, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %5 = mpt.slice_grad %sl {starts = array<i64: 1, 0, 0, 0>, ends = array<i64: 2, 3, 8, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: mpt.gather_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<5xi64>, tensor<5x6xf32>) -> tensor<9x6xf32>
  %6 = mpt.gather_grad %idx, %demb {axis = 0 : i64} : (tensor<5xi64>, tensor<5x6xf32>) -> tensor<9x6xf32>
  // CHECK: mpt.softmax_cross_entropy_loss_grad %{{.*}}, %{{.*}}, %{{.*}} {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<5x7xf32>, tensor<5xi64>, tensor<f32>) -> tensor<5x7xf32>
  %7 = mpt.softmax_cross_entropy_loss_grad %lp, %labels, %dl {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<5x7xf32>, tensor<5xi64>, tensor<f32>) -> tensor<5x7xf32>
  // CHECK: mpt.nll_loss_grad %{{.*}}, %{{.*}} {operandSegmentSizes = array<i32: 1, 0, 1>, reduction = #mpt.reduction<sum>} : (tensor<5xi64>, tensor<f32>) -> tensor<5x7xf32>
  %8 = mpt.nll_loss_grad %labels, %dl {operandSegmentSizes = array<i32: 1, 0, 1>, reduction = #mpt.reduction<sum>} : (tensor<5xi64>, tensor<f32>) -> tensor<5x7xf32>
  return %0, %1, %2, %3, %4#0, %4#1, %4#2, %sl, %6, %7, %8 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x8x8xf32>, tensor<9x6xf32>, tensor<5x7xf32>, tensor<5x7xf32>
}

// -----

// Tests that the FP8 delayed-scaling ops round-trip.
// CHECK-LABEL: func.func @fp8_scaling
func.func @fp8_scaling(%x: tensor<4x4xbf16>, %hist: tensor<16xf32>, %scale: tensor<f32>) -> (tensor<16xf32>, tensor<f32>) {
  // CHECK: mpt.amax %{{.*}} : (tensor<4x4xbf16>) -> tensor<f32>
  %a = mpt.amax %x : (tensor<4x4xbf16>) -> tensor<f32>
  // CHECK: mpt.update_fp8_scale %{{.*}}, %{{.*}}, %{{.*}} {fp8_max = 5.734400e+04 : f64, margin = 1 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
  %h, %s = mpt.update_fp8_scale %hist, %scale, %a {fp8_max = 57344.0 : f64, margin = 1 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>)
  return %h, %s : tensor<16xf32>, tensor<f32>
}

// -----

// Tests that dropout round-trips imported (training, no seed) and seeded
// (the seed and step operands, a stream id).
// CHECK-LABEL: func.func @dropouts
func.func @dropouts(%x: tensor<2x3xbf16>, %seed: tensor<i64>, %step: tensor<i64>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>) {
  // CHECK: mpt.dropout %{{[^,]*}} {ratio = 1.000000e-01 : f32, training = true} : tensor<2x3xbf16> -> tensor<2x3xbf16>, tensor<2x3xi1>
  %0, %m0 = mpt.dropout %x {ratio = 0.1 : f32, training = true} : tensor<2x3xbf16> -> tensor<2x3xbf16>, tensor<2x3xi1>
  // CHECK: mpt.dropout %{{.*}}, %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f32, stream = 7 : i64, training = true} : tensor<2x3xbf16>, tensor<i64>, tensor<i64> -> tensor<2x3xbf16>, tensor<2x3xi1>
  %1, %m1 = mpt.dropout %x, %seed, %step {ratio = 0.1 : f32, training = true, stream = 7 : i64} : tensor<2x3xbf16>, tensor<i64>, tensor<i64> -> tensor<2x3xbf16>, tensor<2x3xi1>
  return %0, %1 : tensor<2x3xbf16>, tensor<2x3xbf16>
}

// -----

// Tests that attention and attention_grad round-trip, with and without a
// mask, and that attention infers its FP32 log-sum-exp.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x6x16xbf16>, %v: tensor<2x4x6x32xbf16>, %m: tensor<1x1x8x6xf32>, %g: tensor<2x4x8x32xbf16>) -> (tensor<2x4x8x32xbf16>, tensor<2x4x8x16xbf16>) {
  // CHECK: mpt.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32} : {{.*}} -> (tensor<2x4x8x32xbf16>, tensor<2x4x8xf32>)
  %o, %lse = mpt.attention %q, %k, %v, %m {scale = 0.25 : f32} : (tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x32xbf16>, tensor<1x1x8x6xf32>) -> (tensor<2x4x8x32xbf16>, tensor<2x4x8xf32>)
  // CHECK: mpt.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f32}
  %o2, %lse2 = mpt.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x32xbf16>) -> (tensor<2x4x8x32xbf16>, tensor<2x4x8xf32>)
  // CHECK: mpt.attention_grad
  %dq, %dk, %dv = mpt.attention_grad %q, %k, %v, %o, %lse, %g, %m {scale = 0.25 : f32} : (tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x32xbf16>, tensor<2x4x8x32xbf16>, tensor<2x4x8xf32>, tensor<2x4x8x32xbf16>, tensor<1x1x8x6xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x32xbf16>)
  return %o2, %dq : tensor<2x4x8x32xbf16>, tensor<2x4x8x16xbf16>
}

// -----

// Tests that all_reduce round-trips: a bucket of gradients of mixed types,
// with and without reduce_in_f32.
// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%a: tensor<4x4xf32>, %b: tensor<4xbf16>) -> (tensor<4x4xf32>, tensor<4xbf16>, tensor<4x4xf32>) {
  // CHECK: %{{.*}}:2 = mpt.all_reduce %{{.*}}, %{{.*}} {reduce_in_f32 = true} : (tensor<4x4xf32>, tensor<4xbf16>) -> (tensor<4x4xf32>, tensor<4xbf16>)
  %0:2 = mpt.all_reduce %a, %b {reduce_in_f32 = true} : (tensor<4x4xf32>, tensor<4xbf16>) -> (tensor<4x4xf32>, tensor<4xbf16>)
  // CHECK: mpt.all_reduce %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = mpt.all_reduce %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0#0, %0#1, %1 : tensor<4x4xf32>, tensor<4xbf16>, tensor<4x4xf32>
}

// -----

// Tests that the sharded state's ops round-trip: a bucket of two gradients
// scattered over 2 ranks (12 -> 6 and 3 -> 2 elements, the last padded),
// a shard, and the gather back; the finite check and the norm over ranks.
// CHECK-LABEL: func.func @sharding
func.func @sharding(%w: tensor<4x3xf32>, %b: tensor<3xbf16>) -> (tensor<4x3xf32>, tensor<3xbf16>, tensor<6xf32>, tensor<i1>, tensor<f32>) {
  // CHECK: %{{.*}}:2 = mpt.reduce_scatter %{{.*}}, %{{.*}} {reduce_in_f32 = true, world_size = 2 : i64} : (tensor<4x3xf32>, tensor<3xbf16>) -> (tensor<6xf32>, tensor<2xbf16>)
  %0:2 = mpt.reduce_scatter %w, %b {world_size = 2 : i64, reduce_in_f32 = true} : (tensor<4x3xf32>, tensor<3xbf16>) -> (tensor<6xf32>, tensor<2xbf16>)
  // CHECK: %{{.*}}:2 = mpt.all_gather %{{.*}}, %{{.*}} {world_size = 2 : i64} : (tensor<6xf32>, tensor<2xbf16>) -> (tensor<4x3xf32>, tensor<3xbf16>)
  %1:2 = mpt.all_gather %0#0, %0#1 {world_size = 2 : i64} : (tensor<6xf32>, tensor<2xbf16>) -> (tensor<4x3xf32>, tensor<3xbf16>)
  // CHECK: mpt.shard %{{.*}} {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
  %2 = mpt.shard %w {world_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<6xf32>
  // CHECK: mpt.all_finite %{{.*}} {over_ranks = true}
  %3 = mpt.all_finite %2 {over_ranks = true} : (tensor<6xf32>) -> tensor<i1>
  // CHECK: mpt.global_norm %{{.*}} {over_ranks = true}
  %4 = mpt.global_norm %2 {over_ranks = true} : (tensor<6xf32>) -> tensor<f32>
  return %1#0, %1#1, %2, %3, %4 : tensor<4x3xf32>, tensor<3xbf16>, tensor<6xf32>, tensor<i1>, tensor<f32>
}
