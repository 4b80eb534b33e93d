// RUN: mpt-opt %s --lower-to-runtime | mpt-translate --mlir-to-plan -o %t.mptp
// RUN: mpt-run %t.mptp --list | FileCheck %s --check-prefix=LIST
// RUN: mpt-run %t.mptp --entry forward --output-dir %t.out --print | FileCheck %s --check-prefix=FWD
// RUN: mpt-run %t.mptp --entry lowp --output-dir %t.out --print | FileCheck %s --check-prefix=LOWP

// Tests a plan end to end: two entry points share the parameter "w" by name,
// the parameter's initial value and the constants travel in the plan, a
// returned parameter is copied into its output, and the values come out as
// the IR says. No input files are needed: everything is in the plan.

// LIST: entry point 'forward': arena 0 bytes
// LIST-NEXT: param  w: f32 [2, 3]
// LIST-NEXT: output y: f32 [2, 2]
// LIST-NEXT: output w_copy: f32 [2, 3]
// LIST: entry point 'lowp': arena {{[0-9]+}} bytes
// LIST-NEXT: param  w: f32 [2, 3]
// LIST-NEXT: output q: bf16 [2, 3]
// LIST-NEXT: output s: f8E4M3FN [2, 3]
// LIST-NEXT: output qz: f8E4M3FN [2, 3]

// y = relu(w @ w^T - 20): w w^T = [[14, 32], [32, 77]]. The whole thing is
// one gemm (trans_b, bias, relu) writing the output: the arena is empty.
// FWD: output y: f32 [2, 2]
// FWD-NEXT: [0, 12, 12, 57]
// FWD: output w_copy: f32 [2, 3]
// FWD-NEXT: [1, 2, 3, 4, 5, 6]
func.func @forward(%w: tensor<2x3xf32> {mpt.param = "w", mpt.initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>})
    -> (tensor<2x2xf32> {mpt.output = "y"}, tensor<2x3xf32> {mpt.output = "w_copy"}) {
  %wt = mpt.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %m = mpt.matmul %w, %wt : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %c = mpt.constant dense<-20.0> : tensor<2xf32>
  %a = mpt.add %m, %c : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %y = mpt.relu %a : tensor<2x2xf32>
  return %y, %w : tensor<2x2xf32>, tensor<2x3xf32>
}

// bf16 rounds 1.1 * w to nearest even. FP8 E4M3FN rounds 100 * w to nearest
// even too (100, 200 and 400 are ties: 96, 192, 384) and saturates at 448.
// LOWP: output q: bf16 [2, 3]
// LOWP-NEXT: [1.1015625, 2.203125, 3.296875, 4.40625, 5.5, 6.59375]
// LOWP: output s: f8E4M3FN [2, 3]
// LOWP-NEXT: [96, 192, 288, 384, 448, 448]
// quantize(w, 100) is the same conversion with the scale applied in FP32.
// LOWP: output qz: f8E4M3FN [2, 3]
// LOWP-NEXT: [96, 192, 288, 384, 448, 448]
func.func @lowp(%w: tensor<2x3xf32> {mpt.param = "w"})
    -> (tensor<2x3xbf16> {mpt.output = "q"}, tensor<2x3xf8E4M3FN> {mpt.output = "s"}, tensor<2x3xf8E4M3FN> {mpt.output = "qz"}) {
  %k = mpt.constant dense<1.1> : tensor<f32>
  %m = mpt.mul %w, %k : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %q = mpt.cast %m : tensor<2x3xf32> to tensor<2x3xbf16>
  %big = mpt.constant dense<100.0> : tensor<f32>
  %b = mpt.mul %w, %big : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %s = mpt.cast %b : tensor<2x3xf32> to tensor<2x3xf8E4M3FN>
  %qz = mpt.quantize %w, %big {inserted} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf8E4M3FN>
  return %q, %s, %qz : tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E4M3FN>
}
