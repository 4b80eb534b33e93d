// RUN: mpt-opt %s -split-input-file -verify-diagnostics

// Tests that a kernel has one arena offset per result.
func.func @offsets_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 2 arena offsets for 1 results}}
  %0 = mptrt.relu %x {offsets = array<i64: 0, 64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that arena offsets are 64-byte aligned.
func.func @offsets_alignment(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has arena offset 32; offsets are multiples of 64, or -1 for a value outside the arena}}
  %0 = mptrt.relu %x {offsets = array<i64: 32>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a view keeps the byte size.
func.func @view_size(%x: tensor<4xf32>) -> tensor<8xf32> {
  %0 = mptrt.exp %x {offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{views 'tensor<4xf32>' as 'tensor<8xf32>', which has another byte size}}
  %1 = mptrt.view %0[0] : tensor<4xf32> -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Tests that a view's offset is an arena offset.
func.func @view_offset(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %0 = mptrt.exp %x {offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{has offset 8; arena offsets are non-negative multiples of 64}}
  %1 = mptrt.view %0[8] : tensor<4xf32> -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// Tests that a training dropout has both rng operands and a stream.
func.func @dropout_rng(%x: tensor<4xf32>, %seed: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{takes either no rng operands or (seed, step)}}
  %y, %m = mptrt.dropout %x, %seed {stream = 0 : i64, training = true} : (tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  return %y : tensor<4xf32>
}

// -----

// Tests that a dropout stream comes with the rng operands.
func.func @dropout_stream(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has a stream exactly when it has (seed, step)}}
  %y, %m = mptrt.dropout %x {stream = 0 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %y : tensor<4xf32>
}

// -----

// Tests that all_finite needs an operand.
func.func @all_finite_empty() -> tensor<i1> {
  // expected-error @+1 {{has 0 operands; the kernel takes 1 or more}}
  %0 = mptrt.all_finite : () -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// Tests that an enum attribute takes only its cases.
func.func @activation_case(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{expected ::mpt::Activation to be one of: none, relu, gelu, gelu_tanh}}
  // expected-error @+1 {{failed to parse MPTRT_ActivationAttr parameter 'value'}}
  %0 = mptrt.gemm %a, %a {activation = #mptrt.activation<silu>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Tests that a required kernel attribute is required.
func.func @slice_starts(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{requires attribute 'starts'}}
  %0 = mptrt.slice %x {ends = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that a kernel attribute has its declared type.
func.func @gemm_alpha(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{attribute 'alpha' failed to satisfy constraint: 32-bit float attribute}}
  %0 = mptrt.gemm %a, %a {alpha = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Tests that the arena is declared first in a function.
func.func @arena_not_first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mptrt.relu %x {offsets = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{must be the first op of a function body}}
  mptrt.arena size(64)
  return %0 : tensor<4xf32>
}

// -----

// Tests that a function has one arena.
func.func @two_arenas(%x: tensor<4xf32>) -> tensor<4xf32> {
  mptrt.arena size(64)
  // expected-error @+1 {{must be the first op of a function body}}
  mptrt.arena size(128)
  return %x : tensor<4xf32>
}

// -----

// Tests that the arena size is not negative.
func.func @arena_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  mptrt.arena size(-64)
  return %x : tensor<4xf32>
}

// -----

// Tests that every placed kernel result fits in the arena: 64 + 16 > 64.
func.func @kernel_past_arena(%x: tensor<4xf32>) -> tensor<4xf32> {
  mptrt.arena size(64)
  %0 = mptrt.exp %x {offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{places 16 bytes at arena offset 64, past the end of the 64-byte arena}}
  %1 = mptrt.exp %0 {offsets = array<i64: 64>} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mptrt.add %0, %1 {offsets = array<i64: -1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Tests that every view fits in the arena.
func.func @view_past_arena(%x: tensor<32xf32>) -> tensor<4x8xf32> {
  mptrt.arena size(128)
  %0 = mptrt.exp %x {offsets = array<i64: 0>} : (tensor<32xf32>) -> tensor<32xf32>
  // expected-error @+1 {{places 128 bytes at arena offset 64, past the end of the 128-byte arena}}
  %1 = mptrt.view %0[64] : tensor<32xf32> -> tensor<4x8xf32>
  %2 = mptrt.relu %1 {offsets = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
