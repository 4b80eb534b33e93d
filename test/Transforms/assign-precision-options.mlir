// The four overrides, the option spellings, keep-io-types, unknown ops.
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 keep-fp32=gelu" | FileCheck %s --check-prefix=TYPE
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 force-low=Softmax" | FileCheck %s --check-prefix=LOW
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 keep-fp32-nodes=/blocks.0/*" | FileCheck %s --check-prefix=NODES
// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 force-low-nodes=/blocks.1/attn/*" | FileCheck %s --check-prefix=LOWNODES
// RUN: mpt-opt %s -split-input-file --assign-precision=bf16 | FileCheck %s --check-prefix=ATTR
// RUN: mpt-opt %s -split-input-file --assign-precision="mode=bf16" | FileCheck %s --check-prefix=ATTR
// RUN: mpt-opt %s -split-input-file --pass-pipeline="builtin.module(assign-precision{bf16})" | FileCheck %s --check-prefix=ATTR

// Tests each override on one block of ops named like ONNX nodes.
// TYPE-LABEL: func.func @overrides
// TYPE: mpt.matmul {{.*}} -> tensor<8x8xf32>
// TYPE-NEXT: mpt.gelu %{{.*}} : tensor<8x8xf32>
// TYPE: mpt.softmax %{{.*}} : tensor<8x8xf32>
// LOW-LABEL: func.func @overrides
// LOW: mpt.gelu %{{.*}} : tensor<8x8xbf16>
// LOW: mpt.matmul {{.*}} -> tensor<8x8xbf16>
// LOW-NEXT: mpt.softmax %{{.*}} : tensor<8x8xbf16>
// NODES-LABEL: func.func @overrides
// NODES: mpt.matmul %arg0, %arg1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// NODES-NEXT: mpt.gelu %{{.*}} : tensor<8x8xf32>
// NODES-NEXT: mpt.matmul %{{.*}}, %arg1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// NODES: mpt.matmul {{.*}} : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xf32>
// LOWNODES-LABEL: func.func @overrides
// LOWNODES: mpt.softmax %{{.*}} : tensor<8x8xbf16>
// ATTR-LABEL: func.func @overrides
// ATTR: mpt.gelu %{{.*}} : tensor<8x8xbf16>
// ATTR: mpt.softmax %{{.*}} : tensor<8x8xf32>
// ATTR: mpt.matmul {{.*}} -> tensor<8x8xf32>
// ATTR-NEXT: mpt.tanh %{{.*}} {mpt.precision = "f32"} : tensor<8x8xf32>
// ATTR: mpt.sigmoid %{{.*}} {mpt.precision = "low"} : tensor<8x8xbf16>
func.func @overrides(%x: tensor<8x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<8x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/blocks.0/fc1/MatMul")
  %1 = mpt.gelu %0 : tensor<8x8xf32> loc("/blocks.0/act/Gelu")
  %2 = mpt.matmul %1, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/blocks.0/fc2/MatMul")
  %3 = mpt.softmax %2 {axis = 1 : i64} : tensor<8x8xf32> loc("/blocks.1/attn/Softmax")
  %4 = mpt.matmul %3, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/blocks.1/fc/MatMul")
  %5 = mpt.tanh %4 {mpt.precision = "f32"} : tensor<8x8xf32> loc("/blocks.1/act/Tanh")
  %6 = mpt.matmul %5, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/head/MatMul")
  %7 = mpt.sigmoid %6 {mpt.precision = "low"} : tensor<8x8xf32> loc("/head/Sigmoid")
  %8 = mpt.matmul %7, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/out/MatMul")
  return %8 : tensor<8x8xf32>
}

// -----

// RUN: mpt-opt %s -split-input-file --assign-precision="bf16 keep-io-types=false" | FileCheck %s --check-prefix=IO

// Tests that keep-io-types=false lets a graph input read only in bf16 and
// outputs produced in bf16 change type; parameters stay FP32.
// IO-LABEL: func.func @io_types
// IO-SAME: (%[[X:.*]]: tensor<4x8xbf16> {mpt.input = "x"}, %[[W:.*]]: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xbf16>, tensor<4x8xbf16>)
// IO-NEXT: %[[WL:.*]] = mpt.cast %[[W]] {inserted}
// IO-NEXT: %[[M:.*]] = mpt.matmul %[[X]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// IO-NEXT: %[[R:.*]] = mpt.relu %[[M]] : tensor<4x8xbf16>
// IO-NEXT: %[[M2:.*]] = mpt.matmul %[[R]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// IO-NEXT: return %[[R]], %[[M2]] : tensor<4x8xbf16>, tensor<4x8xbf16>
// TYPE-LABEL: func.func @io_types
// TYPE-SAME: (%{{.*}}: tensor<4x8xf32> {mpt.input = "x"}, %{{.*}}: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>)
func.func @io_types(%x: tensor<4x8xf32> {mpt.input = "x"}, %w: tensor<8x8xf32> {mpt.param = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.relu %0 : tensor<4x8xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}
