// RUN: mlir-opt %s --load-dialect-plugin=%mpt_plugin --load-pass-plugin=%mpt_plugin --pass-pipeline="builtin.module(assign-precision{mode=bf16})" | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%mpt_plugin --load-pass-plugin=%mpt_plugin --pass-pipeline="builtin.module(assign-precision{mode=bf16},lower-to-runtime)" | FileCheck %s --check-prefix=LOWER
// Tests that upstream mlir-opt (Debian's mlir-opt-22, the shared libMLIR)
// loads the mpt dialect and MPT's passes from MPTPlugin.so: the matmul goes
// to bf16 with FP32 accumulation while softmax stays FP32, and the runtime
// lowering converts to the mptrt execution dialect and places the values
// in the arena. Passes loaded from a plugin are
// named in --pass-pipeline: mlir-opt builds its pass flags before it loads
// plugins, as upstream's standalone example shows.

// CHECK-LABEL: func.func @mlp
// CHECK: mpt.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: mpt.cast %{{.*}} : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK: mpt.matmul {{.*}} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xf32>
// CHECK: mpt.softmax {{.*}} : tensor<4x16xf32>
// LOWER: mptrt.gemm {{.*}}offsets = array<i64:
// LOWER: mptrt.softmax
func.func @mlp(%x: tensor<4x8xf32> {mpt.input = "x"}, %w: tensor<8x16xf32> {mpt.param = "w"}) -> (tensor<4x16xf32> {mpt.output = "y"}) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}
