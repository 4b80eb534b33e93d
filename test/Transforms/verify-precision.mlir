// RUN: mpt-opt %s -split-input-file --verify-precision -verify-diagnostics -o /dev/null

// Tests that softmax below FP32 is rejected at the op.
func.func @softmax_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'mpt.softmax' op must run in FP32, but operand #0 is 'tensor<4x8xbf16>'}}
  %0 = mpt.softmax %x {axis = 1 : i64} : tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Tests that a norm below FP32 is rejected.
func.func @layer_norm_f16(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'mpt.layer_norm' op must run in FP32, but operand #0 is 'tensor<4x8xf16>'}}
  %y, %m, %r = mpt.layer_norm %x, %g {axis = 1 : i64} : (tensor<4x8xf16>, tensor<8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x8xf16>
}

// -----

// Tests that a loss below FP32 is rejected.
func.func @loss_bf16(%s: tensor<4x8xbf16>, %l: tensor<4xi64>) -> tensor<bf16> {
  // expected-error @+1 {{'mpt.softmax_cross_entropy_loss' op must run in FP32, but operand #0 is 'tensor<4x8xbf16>'}}
  %loss, %lp = mpt.softmax_cross_entropy_loss %s, %l : (tensor<4x8xbf16>, tensor<4xi64>) -> (tensor<bf16>, tensor<4x8xbf16>)
  return %loss : tensor<bf16>
}

// -----

// Tests that batch normalisation keeps its statistics FP32 even when its
// data path is low.
func.func @batch_norm_stats(%x: tensor<1x4x2x2xbf16>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                            %m: tensor<4xbf16>, %v: tensor<4xf32>) -> tensor<1x4x2x2xbf16> {
  // expected-error @+1 {{'mpt.batch_norm' op keeps operand #3 in FP32, but it is 'tensor<4xbf16>'}}
  %0 = mpt.batch_norm %x, %s, %b, %m, %v : (tensor<1x4x2x2xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) -> tensor<1x4x2x2xbf16>
  return %0 : tensor<1x4x2x2xbf16>
}

// -----

// Tests that a parameter must stay an FP32 master.
// expected-error @+1 {{parameter 'fc.weight' is 'tensor<8x8xbf16>'; parameters must stay FP32 masters}}
func.func @param_bf16(%x: tensor<4x8xbf16>, %w: tensor<8x8xbf16> {mpt.param = "fc.weight"}) -> tensor<4x8xbf16> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Tests that a reduction accumulating in FP16 is rejected, even where the
// user forced it low on purpose (which exempts it from running in FP32).
func.func @reduce_f16(%x: tensor<4x8xf16>) -> tensor<4x1xf16> {
  // expected-error @+1 {{'mpt.reduce_sum' op accumulates in 'f16'; reductions must accumulate in FP32}}
  %0 = mpt.reduce_sum %x {axes = array<i64: 1>, mpt.precision = "low"} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// Tests that a softmax the user forced low passes (it accumulates in FP32).
func.func @forced_softmax(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = mpt.softmax %x {axis = 1 : i64, mpt.precision = "low"} : tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Tests one inserted conversion per producer and type.
func.func @duplicate_casts(%x: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  // expected-note @+1 {{first one here}}
  %0 = mpt.cast %x {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
  // expected-error @+1 {{second inserted conversion of one producer to 'tensor<4x8xbf16>'}}
  %1 = mpt.cast %x {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
  return %0, %1 : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// -----

// Tests that an inserted cast of an inserted cast is rejected; casts the
// user wrote may chain.
func.func @cast_chain(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mpt.cast %x {inserted} : tensor<4x8xf32> to tensor<4x8xbf16>
  // expected-error @+1 {{inserted conversion of an inserted cast}}
  %1 = mpt.cast %0 {inserted} : tensor<4x8xbf16> to tensor<4x8xf32>
  %2 = mpt.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %3 = mpt.cast %2 : tensor<4x8xbf16> to tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
