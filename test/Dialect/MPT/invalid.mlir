// RUN: mpt-opt %s -split-input-file -verify-diagnostics

// Tests that broadcasting mismatches are rejected.
func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand shapes are not broadcastable}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a wrong stated result type is caught by type inference.
func.func @bad_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that a gemm epilogue must be one the runtime has.
func.func @bad_gemm_activation(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{expected ::mpt::Activation to be one of: none, relu, gelu, gelu_tanh}}
  // expected-error @+1 {{failed to parse MPT_ActivationAttr parameter 'value'}}
  %0 = mpt.gemm %a, %b {activation = #mpt.activation<swish>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that contracting dimensions must agree.
func.func @bad_matmul(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{contracting dimensions differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.matmul %a, %b : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that conv channels must match the group count.
func.func @bad_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+2 {{channels do not match}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// -----

// Tests that a reshape must keep the element count.
func.func @bad_reshape(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{cannot reshape}}
  %0 = mpt.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// Tests that a softmax axis must be in range.
func.func @bad_softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range [0, 2)}}
  %0 = mpt.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that reduction axes may not repeat.
func.func @bad_reduce(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+2 {{reduction axis 0 is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.reduce_sum %x {axes = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Tests that squeeze rejects an axis that is not of size 1.
func.func @bad_squeeze(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{cannot squeeze axis 0 of size 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.squeeze %x {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a dropout ratio must lie in [0, 1).
func.func @bad_dropout(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{ratio must be in [0, 1)}}
  %0, %m = mpt.dropout %x {ratio = 1.5 : f32} : tensor<4xf32> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that dropout's rng operands are the seed and the step, or nothing.
func.func @dropout_one_rng_operand(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{rng must be empty or (seed, step), got 1 operands}}
  %0, %m = mpt.dropout %x, %s {ratio = 0.1 : f32, training = true, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the seed and step must be 0-d i64 tensors.
func.func @dropout_f32_seed(%x: tensor<4xf32>, %s: tensor<f32>, %t: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #1 must be variadic of 0D tensor of 64-bit signless integer values}}
  %0, %m = mpt.dropout %x, %s, %t {ratio = 0.1 : f32, training = true, stream = 0 : i64} : tensor<4xf32>, tensor<f32>, tensor<i64> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the seed and step are only for training-mode dropout.
func.func @dropout_seed_in_inference(%x: tensor<4xf32>, %s: tensor<i64>, %t: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{the seed and step operands need training = true}}
  %0, %m = mpt.dropout %x, %s, %t {ratio = 0.1 : f32, stream = 0 : i64} : tensor<4xf32>, tensor<i64>, tensor<i64> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a seeded dropout needs a stream id.
func.func @dropout_no_stream(%x: tensor<4xf32>, %s: tensor<i64>, %t: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{a stream id goes with the seed and step operands}}
  %0, %m = mpt.dropout %x, %s, %t {ratio = 0.1 : f32, training = true} : tensor<4xf32>, tensor<i64>, tensor<i64> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a stream id without the seed and step is rejected.
func.func @dropout_stream_without_seed(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a stream id goes with the seed and step operands}}
  %0, %m = mpt.dropout %x {ratio = 0.1 : f32, training = true, stream = 3 : i64} : tensor<4xf32> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the stream id fits the 32-bit Philox counter word.
func.func @dropout_big_stream(%x: tensor<4xf32>, %s: tensor<i64>, %t: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{stream must be in [0, 2^32), got 4294967296}}
  %0, %m = mpt.dropout %x, %s, %t {ratio = 0.1 : f32, training = true, stream = 4294967296 : i64} : tensor<4xf32>, tensor<i64>, tensor<i64> -> tensor<4xf32>, tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

// Tests that expand only broadcasts.
func.func @bad_expand(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{cannot broadcast}}
  %0 = mpt.expand %x : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that element types outside MPT's set are rejected.
func.func @bad_type(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{must be statically shaped tensor of}}
  %0 = mpt.relu %x : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Tests that quantize produces an FP8 type.
func.func @quantize_to_bf16(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xbf16> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of f8E4M3FN type or f8E5M2 type values}}
  %0 = mpt.quantize %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Tests that a quantize scale is a 0-d f32 tensor.
func.func @quantize_scale(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{operand #1 must be 0D tensor of 32-bit float values}}
  %0 = mpt.quantize %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// Tests that a contraction takes both scales or neither.
func.func @one_scale(%a: tensor<2x3xf8E4M3FN>, %b: tensor<3x4xf8E4M3FN>, %s: tensor<f32>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{takes both FP8 scales or neither}}
  %0 = "mpt.matmul"(%a, %b, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<2x3xf8E4M3FN>, tensor<3x4xf8E4M3FN>, tensor<f32>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

// Tests that contraction operands share an element type.
func.func @mixed_matmul(%a: tensor<2x3xbf16>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{contraction operands must have one element type (or both be FP8), got 'bf16' and 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mpt.matmul %a, %b : (tensor<2x3xbf16>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that a contraction's wider result must still be a float of the
// inferred shape.
func.func @int_result(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xi32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of}}
  %0 = mpt.matmul %a, %b : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// Tests that a closed set's value is its enum attribute, not a string.
func.func @string_activation(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{attribute 'activation' failed to satisfy constraint: gemm's fused epilogue}}
  %0 = mpt.gemm %a, %b {activation = "relu"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that unary_grad names a known elementwise function.
func.func @unary_grad_kind(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mpt::UnaryGradKind to be one of: }}
  // expected-error @+1 {{failed to parse MPT_UnaryGradKindAttr parameter 'value'}}
  %0 = mpt.unary_grad %x, %dy {kind = #mpt.unary_grad_kind<no_such_kind>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that only clip's gradient takes bounds.
func.func @unary_grad_bounds(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{only kind 'clip' takes 'min' and 'max'}}
  %0 = mpt.unary_grad %x, %dy {kind = #mpt.unary_grad_kind<relu>, min = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that all_reduce returns one result of its operand's type per operand.
func.func @all_reduce_types(%a: tensor<4xf32>, %b: tensor<2xbf16>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{must return one result of its operand's type for each operand}}
  %0:2 = mpt.all_reduce %a, %b : (tensor<4xf32>, tensor<2xbf16>) -> (tensor<4xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<2xf32>
}

// -----

// Tests that all_reduce needs an operand.
func.func @all_reduce_empty() {
  // expected-error @+1 {{needs at least one operand}}
  mpt.all_reduce : () -> ()
  return
}

// -----

// Tests that sgd_update takes a momentum buffer exactly with momentum.
func.func @sgd_buffer(%p: tensor<4xf32>, %g: tensor<4xf32>, %s: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>) -> tensor<4xf32> {
  // expected-error @+1 {{takes a momentum buffer exactly when 'momentum' is nonzero}}
  %0 = mpt.sgd_update %p, %g, %s, %lr, %ok {momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that lr_schedule knows its schedules.
func.func @lr_schedule_kind(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mpt::LrSchedule to be one of: constant, warmup_cosine}}
  // expected-error @+1 {{failed to parse MPT_LrScheduleAttr parameter 'value'}}
  %0 = mpt.lr_schedule %s {schedule = #mpt.lr_schedule<linear>, lr = 0.1 : f64} : (tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that lr_schedule's step counts are not negative.
func.func @lr_schedule_steps(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{step counts must not be negative}}
  %0 = mpt.lr_schedule %s {schedule = #mpt.lr_schedule<warmup_cosine>, lr = 0.1 : f64, warmup_steps = -1 : i64} : (tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that adamw_update takes a seed exactly with stochastic rounding.
func.func @adamw_seed(%p: tensor<4xbf16>, %g: tensor<4xf32>, %s: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>) -> tensor<4xbf16> {
  // expected-error @+1 {{takes a seed exactly when 'stochastic_rounding' is set}}
  %0:3 = mpt.adamw_update %p, %g, %g, %g, %s, %lr, %ok {stochastic_rounding = true} : (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xbf16>
}

// -----

// Tests that adamw_update rounds stochastically only into a bf16 master.
func.func @adamw_sr_f32(%p: tensor<4xf32>, %g: tensor<4xf32>, %s: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>) -> tensor<4xf32> {
  // expected-error @+1 {{rounds stochastically only into a bf16 parameter, not 'tensor<4xf32>'}}
  %0:3 = mpt.adamw_update %p, %g, %g, %g, %s, %lr, %ok, %s {stochastic_rounding = true, stream = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i1>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

// Tests that adamw_update is 'sharded' (its draws offset by the rank) only
// when it rounds stochastically.
func.func @adamw_sharded_nearest(%p: tensor<4xbf16>, %g: tensor<4xf32>, %s: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>) -> tensor<4xbf16> {
  // expected-error @+1 {{is 'sharded' only with 'stochastic_rounding'}}
  %0:3 = mpt.adamw_update %p, %g, %g, %g, %s, %lr, %ok {sharded = true} : (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xbf16>
}

// -----

// Tests that an adamw_update's new parameter has the parameter's type.
func.func @adamw_master_type(%p: tensor<4xbf16>, %g: tensor<4xf32>, %s: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>) -> tensor<4xf32> {
  // expected-error @+1 {{all of {param, new_param} have same type}}
  %0:3 = mpt.adamw_update %p, %g, %g, %g, %s, %lr, %ok : (tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

// Tests that attention rejects a key whose last axis differs from the
// query's.
func.func @attention_key_width(%q: tensor<2x4x8xf32>, %k: tensor<2x5x6xf32>, %v: tensor<2x5x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+2 {{key must have the query's last axis (8)}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %lse = mpt.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8xf32>, tensor<2x5x6xf32>, tensor<2x5x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>)
  return %o : tensor<2x4x8xf32>
}

// -----

// Tests that attention rejects a mask that does not broadcast to the
// scores.
func.func @attention_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>, %m: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+2 {{mask must broadcast to the scores' shape [..., Tq, Tk]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %lse = mpt.attention %q, %k, %v, %m {scale = 1.0 : f32} : (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>)
  return %o : tensor<2x4x8xf32>
}

// -----

// Tests that a reduce_scatter result is the 1-D shard of its operand:
// ceil(12 / 5) = 3 elements.
func.func @reduce_scatter_shard(%a: tensor<4x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#0: the shard of 'tensor<4x3xf32>' over 5 ranks is 'tensor<3xf32>'; got 'tensor<2xf32>'}}
  %0 = mpt.reduce_scatter %a {world_size = 5 : i64} : (tensor<4x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that all_gather's operand is the shard of its result's type, with
// its element type.
func.func @all_gather_dtype(%a: tensor<6xbf16>) -> tensor<4x3xf32> {
  // expected-error @+1 {{#0: the shard of 'tensor<4x3xf32>' over 2 ranks is 'tensor<6xf32>'; got 'tensor<6xbf16>'}}
  %0 = mpt.all_gather %a {world_size = 2 : i64} : (tensor<6xbf16>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a shard is over at least one rank.
func.func @shard_world(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{world_size must be at least 1; got 0}}
  %0 = mpt.shard %a {world_size = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
