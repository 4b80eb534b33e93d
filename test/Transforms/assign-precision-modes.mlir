// fp16 (with the range rule), fp8, fp32 and auto for each target.
// RUN: mpt-opt %s -split-input-file --assign-precision=fp16 | FileCheck %s --check-prefix=FP16
// RUN: mpt-opt %s -split-input-file --assign-precision=fp8 --verify-precision | FileCheck %s --check-prefix=FP8
// RUN: mpt-opt %s -split-input-file --assign-precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: mpt-opt %s -split-input-file --assign-precision="auto target=sm_90" | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --assign-precision="auto target=sm_80" | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --assign-precision="auto target=sm_100a" | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --assign-precision="auto target=sm_75" | FileCheck %s --check-prefix=FP16
// RUN: mpt-opt %s -split-input-file --assign-precision="mode=auto target=sm_70" | FileCheck %s --check-prefix=FP16
// RUN: mpt-opt %s -split-input-file --assign-precision="auto target=cpu" | FileCheck %s --check-prefix=FP32
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 target=cpu" | FileCheck %s --check-prefix=BF16
// RUN: mpt-opt %s -split-input-file --assign-precision=fp8 | mpt-opt -split-input-file --assign-precision=bf16 --verify-precision | FileCheck %s --check-prefix=REBF16

// Tests the compute type each mode (or target) gives a small layer: the
// contractions' and the exact op's operands, and no casts in FP32.
// BF16-LABEL: func.func @layer
// BF16: mpt.matmul {{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// BF16: mpt.relu %{{.*}} : tensor<4x8xbf16>
// BF16: mpt.matmul {{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xf32>
// FP16-LABEL: func.func @layer
// FP16: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// FP16: mpt.relu %{{.*}} : tensor<4x8xf16>
// FP16: mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
// FP32-LABEL: func.func @layer
// FP32-NOT: mpt.cast
// FP32: mpt.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// FP32-NOT: mpt.cast
// FP32: return
// FP8-LABEL: func.func @layer
// FP8: mpt.matmul {{.*}} : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
func.func @layer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.relu %0 : tensor<4x8xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Tests the fp16 range rule: a constant beyond 65504 keeps the ops that read
// it, and the contraction after them, in FP32; an attention-style mask of
// -1e9 does too; the plain relu path stays f16.
// FP16-LABEL: func.func @fp16_range
// FP16: %[[M:.*]] = mpt.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
// FP16-NEXT: %[[C:.*]] = mpt.cast %[[M]] {inserted} : tensor<4x8xf32> to tensor<4x8xf16>
// FP16-NEXT: %[[BIG:.*]] = mpt.mul %[[M]], %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// FP16-NEXT: %[[R:.*]] = mpt.relu %[[C]] : tensor<4x8xf16>
// FP16-NEXT: mpt.matmul %[[BIG]], %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// FP16-NEXT: mpt.matmul %[[R]], %{{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf32>
// FP16-NEXT: mpt.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// BF16-LABEL: func.func @fp16_range
// BF16: mpt.mul {{.*}} : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
func.func @fp16_range(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %big = mpt.constant dense<1.0e5> : tensor<f32>
  %mask = mpt.constant dense<-1.0e9> : tensor<4x8xf32>
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.mul %0, %big : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = mpt.relu %0 : tensor<4x8xf32>
  %3 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = mpt.matmul %2, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %5 = mpt.matmul %mask, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %6 = mpt.add %3, %4 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = mpt.add %6, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}

// -----

// Tests fp8 quantize placement: every contraction input (activation or
// weight) is quantized to f8E4M3FN once per producer, with a per-tensor
// scale that is a new function input named after the tensor; the
// contraction takes the same scales, produces bf16 (f32 before softmax), and
// the gemm bias follows its result type. The rest follows the bf16 policy.
// FP8-LABEL: func.func @fp8_placement
// FP8-SAME: %[[X:[^:]*]]: tensor<4x8xf32> {mpt.input = "x"}, %[[W:[^:]*]]: tensor<8x8xf32> {mpt.param = "fc.weight"}, %[[B:[^:]*]]: tensor<8xf32> {mpt.param = "fc.bias"},
// FP8-SAME: %[[SX:[^:]*]]: tensor<f32> {mpt.fp8_scale = "x"}, %[[SW:[^:]*]]: tensor<f32> {mpt.fp8_scale = "fc.weight"}, %[[SR:[^:]*]]: tensor<f32> {mpt.fp8_scale = "/relu/Relu"},
// FP8-SAME: %{{[^:]*}}: tensor<f32> {mpt.fp8_scale = "img"}, %{{[^:]*}}: tensor<f32> {mpt.fp8_scale = "conv.weight"})
// FP8-DAG: %[[QX:.*]] = mpt.quantize %[[X]], %[[SX]] {inserted} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// FP8-DAG: %[[QW:.*]] = mpt.quantize %[[W]], %[[SW]] {inserted} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf8E4M3FN>
// FP8-DAG: %[[BL:.*]] = mpt.cast %[[B]] {inserted} : tensor<8xf32> to tensor<8xbf16>
// FP8: %[[G:.*]] = mpt.gemm %[[QX]], %[[QW]], %[[BL]] scales(%[[SX]], %[[SW]]) {trans_b = true} : ({{.*}}) -> tensor<4x8xbf16>
// FP8-NEXT: %[[R:.*]] = mpt.relu %[[G]] : tensor<4x8xbf16>
// FP8-NEXT: %[[QR:.*]] = mpt.quantize %[[R]], %[[SR]] {inserted} : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// FP8-NEXT: %[[M:.*]] = mpt.matmul %[[QR]], %[[QW]] scales(%[[SR]], %[[SW]]) : ({{.*}}) -> tensor<4x8xf32>
// FP8-NEXT: mpt.softmax %[[M]]
// FP8: mpt.conv {{.*}} scales({{.*}}) {{.*}} -> tensor<1x8x4x4xf32>
// REBF16-LABEL: func.func @fp8_placement
// REBF16-NOT: mpt.fp8_scale
// REBF16: mpt.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b = true} : (tensor<4x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// REBF16-NOT: mpt.quantize
// REBF16: return
func.func @fp8_placement(%x: tensor<4x8xf32> {mpt.input = "x"}, %w: tensor<8x8xf32> {mpt.param = "fc.weight"}, %b: tensor<8xf32> {mpt.param = "fc.bias"},
                         %k: tensor<8x4x3x3xf32> {mpt.param = "conv.weight"}, %img: tensor<1x4x6x6xf32> {mpt.input = "img"})
    -> (tensor<4x8xf32>, tensor<1x8x4x4xf32>) {
  %0 = mpt.gemm %x, %w, %b {trans_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("/fc1/Gemm")
  %1 = mpt.relu %0 : tensor<4x8xf32> loc("/relu/Relu")
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("/fc2/MatMul")
  %3 = mpt.softmax %2 {axis = 1 : i64} : tensor<4x8xf32>
  %4 = mpt.conv %img, %k {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %3, %4 : tensor<4x8xf32>, tensor<1x8x4x4xf32>
}

// -----

// Tests that in fp8 a weight transposed on its way to a contraction is
// quantized from FP32 after the transpose (one rounding), not through bf16.
// FP8-LABEL: func.func @fp8_weight_transpose
// FP8: %[[T:.*]] = mpt.transpose %arg1 {{.*}} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// FP8-NEXT: mpt.quantize %[[T]], %{{.*}} : (tensor<16x8xf32>, tensor<f32>) -> tensor<16x8xf8E4M3FN>
// FP8-NOT: mpt.cast
// FP8: return
func.func @fp8_weight_transpose(%x: tensor<4x16xf32>, %w: tensor<8x16xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %t = mpt.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %0 = mpt.matmul %x, %t : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a contraction the user quantized (its own quantize ops and
// scales) is kept as written in every mode.
// BF16-LABEL: func.func @user_fp8
// BF16: mpt.matmul %{{.*}}, %{{.*}} scales(%arg2, %arg3) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
// FP8-LABEL: func.func @user_fp8
// FP8-NOT: mpt.fp8_scale
// FP8: mpt.matmul %{{.*}}, %{{.*}} scales(%arg2, %arg3) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
func.func @user_fp8(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}, %sx: tensor<f32>, %sw: tensor<f32>) -> tensor<4x8xf32> {
  %qx = mpt.quantize %x, %sx : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
  %qw = mpt.quantize %w, %sw : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf8E4M3FN>
  %0 = mpt.matmul %qx, %qw scales(%sx, %sw) : (tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
  %1 = mpt.gelu %0 : tensor<4x8xbf16>
  %2 = mpt.cast %1 : tensor<4x8xbf16> to tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
