// RUN: mpt-translate --mlir-to-plan %s -split-input-file -verify-diagnostics -o /dev/null

// Tests that IR which did not go through --lower-to-runtime is refused.
// expected-error @+1 {{has no memory plan (no mptrt.arena); run --lower-to-runtime before emitting a plan}}
func.func @not_lowered(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) {
  %y = mptrt.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an mpt op (not converted to the execution dialect) is refused.
func.func @mpt_op(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) {
  mptrt.arena size(0)
  // expected-error @+1 {{'mpt.relu' op is not an mptrt kernel; only the execution dialect is serialised (run --lower-to-runtime first)}}
  %y = mpt.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an op from another dialect is refused.
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
func.func @call(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) {
  mptrt.arena size(0)
  // expected-error @+1 {{'func.call' op is not an mptrt kernel; only the execution dialect is serialised}}
  %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that a kernel without arena placement is refused.
func.func @unplaced(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output = "y"}) {
  mptrt.arena size(0)
  // expected-error @+1 {{'mptrt.relu' op has no arena placement; run --lower-to-runtime before emitting a plan}}
  %y = mptrt.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an initial value must match its parameter (the dialect's
// attribute verifier catches it before the emitter does).
// expected-error @+1 {{argument 0: 'mpt.initial_value' has type 'tensor<3xf32>' but the argument is 'tensor<2xf32>'}}
func.func @bad_init(
    %w: tensor<2xf32> {mpt.param = "w", mpt.initial_value = dense<1.0> : tensor<3xf32>})
    -> (tensor<2xf32> {mpt.output = "y"}) {
  mptrt.arena size(0)
  %y = mptrt.relu %w {offsets = array<i64: -1>} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Tests that one name cannot be two different parameters across entry points.
func.func @first(%w: tensor<2xf32> {mpt.param = "w"}) -> (tensor<2xf32> {mpt.output = "a"}) {
  mptrt.arena size(0)
  %y = mptrt.relu %w {offsets = array<i64: -1>} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error @+1 {{parameter 'w' is 'tensor<3xf32>' here but has another type in an earlier entry point}}
func.func @second(%w: tensor<3xf32> {mpt.param = "w"}) -> (tensor<3xf32> {mpt.output = "b"}) {
  mptrt.arena size(0)
  %y = mptrt.relu %w {offsets = array<i64: -1>} : (tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Tests that a view must alias an arena value.
func.func @view_of_input(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<2x2xf32> {mpt.output = "y"}) {
  mptrt.arena size(64)
  // expected-error @+1 {{views a value that is not in the arena}}
  %v = mptrt.view %x[0] : tensor<4xf32> -> tensor<2x2xf32>
  %y = mptrt.relu %v {offsets = array<i64: -1>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
