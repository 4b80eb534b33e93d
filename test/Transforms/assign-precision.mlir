// RUN: mpt-opt %s -split-input-file --assign-precision=bf16 | FileCheck %s
// RUN: mpt-opt %s -split-input-file --assign-precision=bf16 --verify-precision -o /dev/null

// Tests that a contraction computes in bf16 and a require-f32 op stays f32;
// the contraction feeding it produces f32 directly (no bf16 round trip).
// CHECK-LABEL: func.func @fused_f32_output
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32> {mpt.param = "w"}) -> tensor<8x4xf32>
// CHECK-DAG: %[[XL:.*]] = mpt.cast %[[X]] {inserted} : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK-DAG: %[[WL:.*]] = mpt.cast %[[W]] {inserted} : tensor<16x4xf32> to tensor<16x4xbf16>
// CHECK: %[[M:.*]] = mpt.matmul %[[XL]], %[[WL]] : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[S:.*]] = mpt.softmax %[[M]] {axis = 1 : i64} : tensor<8x4xf32>
// CHECK-NEXT: return %[[S]]
func.func @fused_f32_output(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {mpt.param = "w"}) -> tensor<8x4xf32> {
  %0 = mpt.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Tests that follow and clear chains between contractions become bf16
// (bias add, gelu, transpose, reshape), with weights and biases cast once.
// CHECK-LABEL: func.func @follow_and_clear_chain
// CHECK: %[[M:.*]] = mpt.matmul {{.*}} -> tensor<8x16xbf16>
// CHECK-NEXT: %[[A:.*]] = mpt.add %[[M]], %{{.*}} : (tensor<8x16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT: %[[G:.*]] = mpt.gelu %[[A]] : tensor<8x16xbf16>
// CHECK-NEXT: %[[T:.*]] = mpt.transpose %[[G]] {{.*}} -> tensor<16x8xbf16>
// CHECK-NEXT: %[[R:.*]] = mpt.reshape %[[T]] : (tensor<16x8xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT: mpt.matmul %[[R]], {{.*}} -> tensor<8x16xf32>
func.func @follow_and_clear_chain(%x: tensor<8x16xf32>, %w: tensor<16x16xf32> {mpt.param = "w"},
                                  %b: tensor<16xf32> {mpt.param = "b"}) -> tensor<8x16xf32> {
  %0 = mpt.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = mpt.add %0, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = mpt.gelu %1 : tensor<8x16xf32>
  %3 = mpt.transpose %2 {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %4 = mpt.reshape %3 : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %5 = mpt.matmul %4, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %5 : tensor<8x16xf32>
}

// -----

// Tests that FP32 spreads downstream of a require-f32 op through follow ops
// until a contraction, and that an exact (clear) op feeding only the
// contraction takes the cast before it.
// CHECK-LABEL: func.func @f32_region
// CHECK: %[[S:.*]] = mpt.softmax %{{.*}} : tensor<8x16xf32>
// CHECK-NEXT: %[[MUL:.*]] = mpt.mul %[[S]], %[[S]] : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[C:.*]] = mpt.cast %[[MUL]] {inserted} : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK-NEXT: %[[T:.*]] = mpt.transpose %[[C]] {{.*}} -> tensor<16x8xbf16>
// CHECK-NEXT: mpt.matmul %[[T]], {{.*}} : (tensor<16x8xbf16>, tensor<8x4xbf16>) -> tensor<16x4xf32>
func.func @f32_region(%x: tensor<8x16xf32>, %w: tensor<8x4xf32> {mpt.param = "w"}) -> tensor<16x4xf32> {
  %0 = mpt.softmax %x {axis = 1 : i64} : tensor<8x16xf32>
  %1 = mpt.mul %0, %0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = mpt.transpose %1 {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %3 = mpt.matmul %2, %w : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %3 : tensor<16x4xf32>
}

// -----

// Tests that every require-f32 op stays FP32 between contractions: exp, log,
// pow, sum and mean reductions, layer_norm, log_softmax.
// CHECK-LABEL: func.func @require_f32_ops
// CHECK: mpt.matmul {{.*}} -> tensor<4x8xf32>
// CHECK: mpt.exp %{{.*}} : tensor<4x8xf32>
// CHECK: mpt.log %{{.*}} : tensor<4x8xf32>
// CHECK: mpt.pow {{.*}} -> tensor<4x8xf32>
// CHECK: mpt.reduce_sum {{.*}} -> tensor<4x1xf32>
// CHECK: mpt.reduce_mean {{.*}} -> tensor<4x1xf32>
// CHECK: mpt.reduce_l2 {{.*}} -> tensor<4x1xf32>
// CHECK: mpt.layer_norm {{.*}} -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: mpt.log_softmax %{{.*}} : tensor<4x8xf32>
// CHECK: mpt.cast %{{.*}} {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: mpt.matmul {{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
func.func @require_f32_ops(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"},
                           %g: tensor<8xf32> {mpt.param = "g"})
    -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x8xf32>) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.exp %0 : tensor<4x8xf32>
  %2 = mpt.log %1 : tensor<4x8xf32>
  %3 = mpt.pow %2, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = mpt.reduce_sum %3 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %5 = mpt.reduce_mean %3 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %6 = mpt.reduce_l2 %3 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %7, %m, %r = mpt.layer_norm %3, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %8 = mpt.log_softmax %7 {axis = 1 : i64} : tensor<4x8xf32>
  %9 = mpt.matmul %8, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %4, %5, %6, %9 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// Tests that the loss subgraph stays FP32: the reshape between the logits
// and the loss is not between low ops, so the logits come out FP32.
// CHECK-LABEL: func.func @loss_subgraph
// CHECK: %[[L:.*]] = mpt.matmul {{.*}} : (tensor<2x4x8xbf16>, tensor<8x5xbf16>) -> tensor<2x4x5xf32>
// CHECK-NEXT: %[[R:.*]] = mpt.reshape %[[L]] : (tensor<2x4x5xf32>) -> tensor<8x5xf32>
// CHECK: mpt.softmax_cross_entropy_loss %[[R]], {{.*}} -> (tensor<f32>, tensor<8x5xf32>)
// CHECK: mpt.nll_loss {{.*}} : (tensor<8x5xf32>, tensor<8xi64>) -> tensor<f32>
func.func @loss_subgraph(%h: tensor<2x4x8xf32>, %w: tensor<8x5xf32> {mpt.param = "w"},
                         %labels: tensor<8xi64>) -> (tensor<f32>, tensor<f32>) {
  %0 = mpt.matmul %h, %w : (tensor<2x4x8xf32>, tensor<8x5xf32>) -> tensor<2x4x5xf32>
  %1 = mpt.reshape %0 : (tensor<2x4x5xf32>) -> tensor<8x5xf32>
  %loss, %lp = mpt.softmax_cross_entropy_loss %1, %labels : (tensor<8x5xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x5xf32>)
  %nll = mpt.nll_loss %lp, %labels : (tensor<8x5xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss, %nll : tensor<f32>, tensor<f32>
}

// -----

// Tests that a contraction with both an FP32 user and a low user produces
// FP32 once and one cast to bf16 serves the low users.
// CHECK-LABEL: func.func @mixed_users
// CHECK: %[[M:.*]] = mpt.matmul {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[C:.*]] = mpt.cast %[[M]] {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK: mpt.softmax %[[M]]
// CHECK: mpt.relu %[[C]] : tensor<8x8xbf16>
// CHECK: mpt.tanh %[[C]] : tensor<8x8xbf16>
// CHECK-NOT: mpt.cast
func.func @mixed_users(%x: tensor<8x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = mpt.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<8x8xf32>
  %2 = mpt.relu %0 : tensor<8x8xf32>
  %3 = mpt.tanh %0 : tensor<8x8xf32>
  %4 = mpt.add %2, %3 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = mpt.matmul %4, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1, %5 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Tests one cast per producer and type: a weight shared by two contractions
// and an input read by three users are each cast once; the signature and
// the FP32 master weight are unchanged.
// CHECK-LABEL: func.func @cast_sharing
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-COUNT-2: mpt.cast
// CHECK-NOT: mpt.cast
// CHECK: return
func.func @cast_sharing(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = mpt.relu %x : tensor<4x8xf32>
  %3 = mpt.matmul %2, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that casts a previous run inserted are re-derived: the pair around
// softmax disappears (softmax reads %x itself), a cast of the same producer
// is not duplicated, and a cast the user wrote stays.
// CHECK-LABEL: func.func @inserted_pairs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32> {mpt.param = "w"})
// CHECK-NEXT: %[[WL:.*]] = mpt.cast %[[W]] {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NEXT: %[[S:.*]] = mpt.softmax %[[X]]
// CHECK-NEXT: %[[U:.*]] = mpt.cast %[[S]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[M:.*]] = mpt.matmul %[[U]], %[[WL]]
// CHECK-NEXT: return %[[M]]
func.func @inserted_pairs(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %w1 = mpt.cast %w {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
  %w2 = mpt.cast %w {inserted} : tensor<8x8xf32> to tensor<8x8xbf16>
  %xl = mpt.cast %x {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
  %xh = mpt.cast %xl {inserted} : tensor<4x8xbf16> to tensor<4x8xf32>
  %0 = mpt.softmax %xh {axis = 1 : i64} : tensor<4x8xf32>
  %1 = mpt.cast %0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %2 = mpt.matmul %1, %w1 : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Tests that batch normalisation runs its data path in bf16 between convs
// while its statistics and affine parameters stay FP32, and that exact ops
// (relu, max_pool) and pooling follow.
// CHECK-LABEL: func.func @conv_block
// CHECK: %[[C:.*]] = mpt.conv {{.*}} -> tensor<1x4x8x8xbf16>
// CHECK-NEXT: %[[B:.*]] = mpt.batch_norm %[[C]], %arg2, %arg3, %arg4, %arg5 : (tensor<1x4x8x8xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT: %[[R:.*]] = mpt.relu %[[B]] : tensor<1x4x8x8xbf16>
// CHECK-NEXT: %[[P:.*]] = mpt.max_pool %[[R]] {{.*}} -> tensor<1x4x4x4xbf16>
// CHECK-NEXT: %[[G:.*]] = mpt.global_average_pool %[[P]] {{.*}} -> tensor<1x4x1x1xbf16>
// CHECK-NEXT: %[[F:.*]] = mpt.flatten %[[G]] {{.*}} -> tensor<1x4xbf16>
// CHECK-NEXT: mpt.gemm %[[F]], %{{.*}}, %arg7 {trans_b = true} : (tensor<1x4xbf16>, tensor<3x4xbf16>, tensor<3xf32>) -> tensor<1x3xf32>
func.func @conv_block(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32> {mpt.param = "k"},
                      %s: tensor<4xf32> {mpt.param = "s"}, %t: tensor<4xf32> {mpt.param = "t"},
                      %mu: tensor<4xf32> {mpt.param = "mu"}, %var: tensor<4xf32> {mpt.param = "var"},
                      %fw: tensor<3x4xf32> {mpt.param = "fw"}, %fb: tensor<3xf32> {mpt.param = "fb"}) -> tensor<1x3xf32> {
  %0 = mpt.conv %x, %k {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = mpt.batch_norm %0, %s, %t, %mu, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %2 = mpt.relu %1 : tensor<1x4x8x8xf32>
  %3 = mpt.max_pool %2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %4 = mpt.global_average_pool %3 : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32>
  %5 = mpt.flatten %4 : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  %6 = mpt.gemm %5, %fw, %fb {trans_b = true} : (tensor<1x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %6 : tensor<1x3xf32>
}

// -----

// Tests that batch_norm_train keeps its running statistics FP32.
// CHECK-LABEL: func.func @batch_norm_train
// CHECK: mpt.batch_norm_train {{.*}} -> (tensor<1x4x8x8xbf16>, tensor<4xf32>, tensor<4xf32>)
func.func @batch_norm_train(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32> {mpt.param = "k"},
                            %s: tensor<4xf32> {mpt.param = "s"}, %t: tensor<4xf32> {mpt.param = "t"},
                            %mu: tensor<4xf32> {mpt.param = "mu"}, %var: tensor<4xf32> {mpt.param = "var"},
                            %k2: tensor<4x4x3x3xf32> {mpt.param = "k2"})
    -> (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = mpt.conv %x, %k {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1:3 = mpt.batch_norm_train %0, %s, %t, %mu, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %2 = mpt.relu %1#0 : tensor<1x4x8x8xf32>
  %3 = mpt.conv %2, %k2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %3, %1#1, %1#2 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that comparisons and where between low ops take low precision,
// and that small constants they read are converted at compile time.
// CHECK-LABEL: func.func @clear_ops
// CHECK-DAG: %[[ZERO:.*]] = mpt.constant dense<0.000000e+00> : tensor<bf16>
// CHECK: %[[M:.*]] = mpt.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK: %[[CMP:.*]] = mpt.greater %[[M]], %[[ZERO]] : (tensor<4x4xbf16>, tensor<bf16>) -> tensor<4x4xi1>
// CHECK: %[[SEL:.*]] = mpt.where %[[CMP]], %[[M]], %[[ZERO]] : (tensor<4x4xi1>, tensor<4x4xbf16>, tensor<bf16>) -> tensor<4x4xbf16>
// CHECK: mpt.matmul %[[SEL]]
func.func @clear_ops(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {mpt.param = "w"}) -> tensor<4x4xf32> {
  %zero = mpt.constant dense<0.0> : tensor<f32>
  %0 = mpt.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = mpt.greater %0, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  %2 = mpt.where %1, %0, %zero : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %3 = mpt.matmul %2, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}

// -----

// Tests that follow ops with only FP32 graph inputs and weights stay FP32
// (no low input), their result cast once at the contraction.
// CHECK-LABEL: func.func @no_low_input
// CHECK: %[[N:.*]] = mpt.mul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = mpt.cast %[[N]] {inserted}
// CHECK: mpt.matmul %[[C]]
func.func @no_low_input(%x: tensor<4x8xf32>, %s: tensor<8xf32> {mpt.param = "s"}, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.mul %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = mpt.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Tests that by default an output produced in bf16 is cast back, so the
// signature keeps f32 (keep-io-types=false is in
// assign-precision-options.mlir).
// CHECK-LABEL: func.func @io_types_kept
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[R:.*]] = mpt.relu %{{.*}} : tensor<4x8xbf16>
// CHECK: %[[C:.*]] = mpt.cast %[[R]] {inserted} : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: return %[[C]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>
func.func @io_types_kept(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.relu %0 : tensor<4x8xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a user's cast from integers (a mask) is as free as a constant:
// the add between contractions stays bf16, the user's cast is kept and one
// inserted cast converts its result.
// CHECK-LABEL: func.func @integer_mask
// CHECK: %[[U:.*]] = mpt.cast %arg2 : tensor<4x8xi1> to tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = mpt.cast %[[U]] {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[M:.*]] = mpt.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK-NEXT: mpt.mul %[[M]], %[[C]] : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
func.func @integer_mask(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}, %keep: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %mask = mpt.cast %keep : tensor<4x8xi1> to tensor<4x8xf32>
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.mul %0, %mask : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
