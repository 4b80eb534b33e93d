// RUN: rm -f %t.new.json
// RUN: mpt-opt %s --mpt-channels-last="report=%t.new.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=NEW < %t.new.json
// RUN: echo "not json" > %t.bad.json
// RUN: not mpt-opt %s --mpt-channels-last="report=%t.bad.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mpt-opt %s --mpt-channels-last="report=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STDOUT
// RUN: printf '{"kept": 1}' > %t.kept.json
// RUN: mpt-opt %S/Inputs/no-conv.mlir --mpt-channels-last="report=%t.kept.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=KEPT --match-full-lines < %t.kept.json

// Tests mpt-channels-last's report: without a precision report at the path
// it writes a new file with the layout section alone (an argument without
// a binding named by its position); a file there that is not a JSON object
// is an error naming it, and so is `-` (the section is added to a file).
// A layout change that moves only unit axes (@head's pooled [N, 1, 1, C])
// is listed under reshapes, not transposes. A module without a chain
// leaves the report as it was (no layout section, its keys unsorted).
// NEW: "layout": {
// NEW-NEXT: "activations": "nhwc",
// NEW: "kind": "conv",
// NEW-NEXT: "node": "c1"
// NEW: "name": "chain",
// NEW-NEXT: "nhwc_kernels": 2,
// NEW: "into": "nchw",
// NEW-NEXT: "node": "c2"
// NEW: "into": "nhwc",
// NEW-NEXT: "node": "argument 0"
// NEW: "transposes_inserted": 2
// NEW: "name": "head",
// NEW-NEXT: "nhwc_kernels": 2,
// NEW-NEXT: "reshapes": [
// NEW-NEXT: {
// NEW-NEXT: "into": "nchw",
// NEW-NEXT: "node": "g"
// NEW: "reshapes_inserted": 1,
// NEW: "transposes_inserted": 1
// NEW-NOT: "functions"
// BAD: error: mpt-channels-last: report '{{.*}}bad.json' is not a JSON object: {{.*}}
// KEPT: {"kept": 1}
// STDOUT: error: mpt-channels-last: report must be a file (the layout is added to the JSON report there), not '-'
func.func @chain(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x3x3xf32>, %w2: tensor<5x4x1x1xf32>) -> tensor<2x5x8x8xf32> {
  %c1 = mptrt.conv %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("c1")
  %c2 = mptrt.conv %c1, %w2 : (tensor<2x4x8x8xf32>, tensor<5x4x1x1xf32>) -> tensor<2x5x8x8xf32> loc("c2")
  return %c2 : tensor<2x5x8x8xf32>
}

func.func @head(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x3x3xf32>) -> tensor<2x4x1x1xf32> {
  %c1 = mptrt.conv %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("c1")
  %g = mptrt.global_average_pool %c1 : (tensor<2x4x8x8xf32>) -> tensor<2x4x1x1xf32> loc("g")
  return %g : tensor<2x4x1x1xf32>
}
