// RUN: mpt-translate --mlir-to-plan %s -split-input-file -verify-diagnostics -o /dev/null

// Tests that IR which did not go through --lower-to-runtime is refused.
// expected-error @+1 {{has no memory plan; run --lower-to-runtime before emitting a plan}}
func.func @not_lowered(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) {
  %y = mpt.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an op the runtime has no kernel for is named.
func.func @range(%n: tensor<i64> {mpt.input = "n"}) -> (tensor<4xi64> {mpt.output = "r"}) attributes {mpt.arena_bytes = 0 : i64} {
  %z = mpt.constant dense<0> : tensor<i64>
  %o = mpt.constant dense<1> : tensor<i64>
  // expected-error @+1 {{'mpt.range' op has no runtime kernel: it must fold to a constant before lowering}}
  %r = mpt.range %z, %n, %o {mpt.arena_offsets = array<i64: -1>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// Tests that an op from another dialect is refused.
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
func.func @call(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) attributes {mpt.arena_bytes = 0 : i64} {
  // expected-error @+1 {{'func.call' op has no runtime kernel; only mpt ops lower to a plan}}
  %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an initial value must match its parameter (the dialect's
// attribute verifier catches it before the emitter does).
// expected-error @+1 {{argument 0: 'mpt.initial_value' has type 'tensor<3xf32>' but the argument is 'tensor<2xf32>'}}
func.func @bad_init(
    %w: tensor<2xf32> {mpt.param = "w", mpt.initial_value = dense<1.0> : tensor<3xf32>})
    -> (tensor<2xf32> {mpt.output = "y"}) attributes {mpt.arena_bytes = 0 : i64} {
  %y = mpt.relu %w {mpt.arena_offsets = array<i64: -1>} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Tests that one name cannot be two different parameters across entry points.
func.func @first(%w: tensor<2xf32> {mpt.param = "w"}) -> (tensor<2xf32> {mpt.output = "a"}) attributes {mpt.arena_bytes = 0 : i64} {
  %y = mpt.relu %w {mpt.arena_offsets = array<i64: -1>} : tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error @+1 {{parameter 'w' is 'tensor<3xf32>' here but has another type in an earlier entry point}}
func.func @second(%w: tensor<3xf32> {mpt.param = "w"}) -> (tensor<3xf32> {mpt.output = "b"}) attributes {mpt.arena_bytes = 0 : i64} {
  %y = mpt.relu %w {mpt.arena_offsets = array<i64: -1>} : tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Tests that FP8 scaled contractions are refused until the runtime has them.
func.func @scaled(%a: tensor<2x4xf8E4M3FN> {mpt.input = "a"}, %b: tensor<4x3xf8E4M3FN> {mpt.input = "b"},
                  %sa: tensor<f32> {mpt.input = "sa"}, %sb: tensor<f32> {mpt.input = "sb"})
    -> (tensor<2x3xbf16> {mpt.output = "y"}) attributes {mpt.arena_bytes = 0 : i64} {
  // expected-error @+1 {{has FP8 scale operands; the runtime has no scaled contraction kernels yet}}
  %y = mpt.matmul %a, %b scales(%sa, %sb) {mpt.arena_offsets = array<i64: -1>} : (tensor<2x4xf8E4M3FN>, tensor<4x3xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
