// RUN: mpt-opt %s --lower-to-runtime | FileCheck %s
// RUN: mpt-opt %s --lower-to-runtime="fuse-epilogues=0" | FileCheck %s --check-prefix=NOFUSE
// RUN: mpt-opt %s --lower-to-runtime | FileCheck %s --check-prefix=ONLY

// Tests the whole pipeline on an MLP: shape chains fold, the dense layers
// become mptrt.gemm kernels with their epilogues (an enum), bindings are
// named and every intermediate value has an arena offset.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: {mpt.input = "x"}
// CHECK-SAME: {mpt.output = "output0"}
// CHECK-NEXT: mptrt.arena size(1024)
// CHECK-NEXT: %[[H:.*]] = mptrt.gemm %arg0, %arg1, %arg2 {activation = #mptrt.activation<relu>, {{.*}}offsets = array<i64: 0>, {{.*}}trans_b = true}
// CHECK-NEXT: %[[Y:.*]] = mptrt.gemm %[[H]], %arg3, %arg4 {{{.*}}offsets = array<i64: -1>, {{.*}}trans_b = true}
// CHECK-NEXT: return %[[Y]]
// NOFUSE: mptrt.matmul
// NOFUSE: mptrt.relu
// Nothing of the mpt dialect is left, only mptrt, func and builtin ops.
// ONLY-NOT: mpt.{{[a-z_]+}} %
// ONLY-NOT: = mpt.
func.func @mlp(%x: tensor<8x16xf32> {mpt.input = "x"}, %w1: tensor<32x16xf32> {mpt.param = "w1"},
               %b1: tensor<32xf32> {mpt.param = "b1"}, %w2: tensor<4x32xf32> {mpt.param = "w2"},
               %b2: tensor<4xf32> {mpt.param = "b2"}) -> tensor<8x4xf32> {
  %shape = mpt.constant dense<[8, 16]> : tensor<2xi64>
  %xr = mpt.reshape %x, %shape : (tensor<8x16xf32>, tensor<2xi64>) -> tensor<8x16xf32>
  %w1t = mpt.transpose %w1 {perm = array<i64: 1, 0>} : (tensor<32x16xf32>) -> tensor<16x32xf32>
  %m1 = mpt.matmul %xr, %w1t : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a1 = mpt.add %m1, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %h = mpt.relu %a1 : tensor<8x32xf32>
  %y = mpt.gemm %h, %w2, %b2 {trans_b = true} : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
