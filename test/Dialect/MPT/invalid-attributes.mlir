// RUN: mpt-opt %s -split-input-file -verify-diagnostics

// Tests that a non-string mpt.param is an error, not a weight silently
// demoted to an input.
// expected-error @+1 {{'mpt.param' must be a non-empty string naming the parameter, got 7 : i64}}
func.func @param_not_a_string(%w: tensor<4xf32> {mpt.param = 7}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Tests that an empty parameter name is rejected.
// expected-error @+1 {{'mpt.param' must be a non-empty string naming the parameter, got ""}}
func.func @param_empty(%w: tensor<4xf32> {mpt.param = ""}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Tests that an argument cannot be both a parameter and a graph input.
// expected-error @+1 {{argument 0: is both 'mpt.param' and 'mpt.input'}}
func.func @param_and_input(%w: tensor<4xf32> {mpt.param = "w", mpt.input = "w"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Tests that a non-string mpt.input is rejected.
// expected-error @+1 {{'mpt.input' must be a non-empty string naming the graph input, got 1.000000e+00 : f32}}
func.func @input_not_a_string(%x: tensor<4xf32> {mpt.input = 1.0 : f32}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Tests that an initial value must have the argument's type.
// expected-error @+1 {{argument 0: 'mpt.initial_value' has type 'tensor<2xf32>' but the argument is 'tensor<4xf32>'}}
func.func @initial_value_type(%w: tensor<4xf32> {mpt.param = "w", mpt.initial_value = dense<1.0> : tensor<2xf32>}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Tests that an initial value belongs to a parameter.
// expected-error @+1 {{argument 0: 'mpt.initial_value' needs 'mpt.param' on the same argument}}
func.func @initial_value_not_param(%x: tensor<4xf32> {mpt.input = "x", mpt.initial_value = dense<1.0> : tensor<4xf32>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Tests that a misspelt mpt argument attribute is caught.
// expected-error @+1 {{argument 0: unknown argument attribute 'mpt.parm' of the mpt dialect}}
func.func @unknown_arg_attr(%w: tensor<4xf32> {mpt.parm = "w"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Tests that mpt.output must name the output.
// expected-error @+1 {{'mpt.output' must be a non-empty string naming the graph output, got unit}}
func.func @output_not_a_string(%x: tensor<4xf32> {mpt.input = "x"}) -> (tensor<4xf32> {mpt.output}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that mpt.output_role must be an output role.
// expected-error @+1 {{result 0: 'mpt.output_role' must be an #mpt.output_role, got "loss"}}
func.func @output_role_not_a_role(%x: tensor<f32> {mpt.input = "x"}) -> (tensor<f32> {mpt.output = "loss", mpt.output_role = "loss"}) {
  return %x : tensor<f32>
}

// -----

// Tests that an output role needs the output's name beside it.
// expected-error @+1 {{result 0: 'mpt.output_role' needs 'mpt.output' on the same result}}
func.func @output_role_without_output(%x: tensor<f32> {mpt.input = "x"}) -> (tensor<f32> {mpt.output_role = #mpt.output_role<Loss>}) {
  return %x : tensor<f32>
}

// -----

// Tests that mpt.output_role belongs on a function result.
func.func @output_role_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mpt.output_role' belongs on a function argument or result, not on an op}}
  %0 = mpt.relu %x {mpt.output_role = #mpt.output_role<Lr>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that mpt.updates must name a parameter of the function.
// expected-error @+1 {{result 0: 'mpt.updates' names 'v', which is no parameter of this function}}
func.func @updates_unknown(%w: tensor<4xf32> {mpt.param = "w"}) -> (tensor<4xf32> {mpt.updates = "v"}) {
  return %w : tensor<4xf32>
}

// -----

// Tests that an update has the parameter's type.
// expected-error @+1 {{result 0: updates parameter 'w' of type 'tensor<4xf32>' with a value of type 'tensor<2xf32>'}}
func.func @updates_type(%w: tensor<4xf32> {mpt.param = "w"}, %v: tensor<2xf32> {mpt.input = "v"}) -> (tensor<2xf32> {mpt.updates = "w"}) {
  return %v : tensor<2xf32>
}

// -----

// Tests that mpt.precision takes only "f32" or "low".
func.func @precision_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mpt.precision must be "f32" or "low", got 3 : i64}}
  %0 = mpt.relu %x {mpt.precision = 3} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that argument attributes on an op are rejected.
func.func @param_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mpt.param' belongs on a function argument or result, not on an op}}
  %0 = mpt.relu %x {mpt.param = "w"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a misspelt mpt op attribute is caught.
func.func @unknown_op_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown attribute 'mpt.precison' of the mpt dialect}}
  %0 = mpt.relu %x {mpt.precison = "f32"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the backward mark is a unit attribute.
func.func @backward_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mpt.backward must be a unit attribute, got 1 : i64}}
  %0 = mpt.relu %x {mpt.backward = 1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
