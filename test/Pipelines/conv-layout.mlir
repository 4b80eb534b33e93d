// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=sm_90" | FileCheck %s --check-prefix=NHWC
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=sm_90 conv-layout=nchw" | FileCheck %s --check-prefix=NCHW
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=cpu" | FileCheck %s --check-prefix=NHWC
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=sm_60" | FileCheck %s --check-prefix=NCHW
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16" | FileCheck %s --check-prefix=NHWC
// RUN: mpt-opt %s --mpt-inference-pipeline="target=cpu conv-layout=nchw" | FileCheck %s --check-prefix=NCHW
// RUN: mpt-opt %s --mpt-inference-pipeline="conv-layout=nchw" | FileCheck %s --check-prefix=NCHW
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=sm_80 precision-report=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: mpt-opt %s --mpt-inference-pipeline="precision=bf16 target=sm_80 precision-report=-" | FileCheck %s --check-prefix=STDOUT

// Tests conv-layout: auto stores convolution chains NHWC for sm_70 and
// newer (cuDNN's tensor-core engines read NHWC), for the CPU (its default
// fast numerics run oneDNN on NHWC) and without a target, NCHW for older
// GPUs; nchw and nhwc override it, and a target without precision still
// chooses the layout. The precision report shows
// the decision: the chain's ops get "layout": "nhwc", and the layout
// section lists the kernels stored NHWC and the transposes inserted, with
// their ONNX nodes.
// NHWC-LABEL: func.func @forward
// NHWC: mptrt.transpose {{.*}}perm = array<i64: 0, 2, 3, 1>
// NHWC: mptrt.conv {{.*}}layout = #mptrt.layout<nhwc>
// NHWC: mptrt.batch_norm {{.*}}layout = #mptrt.layout<nhwc>
// NHWC: mptrt.conv {{.*}}layout = #mptrt.layout<nhwc>
// NHWC: mptrt.transpose {{.*}}perm = array<i64: 0, 3, 1, 2>
// A report printed to stdout comes without the layout section (the
// lowering runs after it is printed), and the compile succeeds.
// STDOUT: "mode": "bf16"
// STDOUT-NOT: "layout"
// STDOUT: func.func @forward
// STDOUT: layout = #mptrt.layout<nhwc>

// NCHW-LABEL: func.func @forward
// NCHW-NOT: nhwc
// NCHW-NOT: mptrt.transpose
// NCHW: return

// REPORT: "layout": "nhwc",
// REPORT-NEXT: "node": "conv1",
// REPORT: "layout": "nhwc",
// REPORT-NEXT: "node": "bn1",
// REPORT: "layout": "nhwc",
// REPORT-NEXT: "node": "conv2",
// REPORT: "layout": {
// REPORT-NEXT: "activations": "nhwc",
// REPORT-NEXT: "functions": [
// REPORT: "kind": "conv",
// REPORT-NEXT: "node": "conv1"
// REPORT: "kind": "batch_norm",
// REPORT-NEXT: "node": "bn1"
// REPORT: "layout_free_kernels": 1,
// REPORT-NEXT: "name": "forward",
// REPORT-NEXT: "nhwc_kernels": 4,
// REPORT-NEXT: "reshapes": [],
// REPORT-NEXT: "reshapes_inserted": 0,
// REPORT-NEXT: "transposes": [
// REPORT-NEXT: {
// REPORT-NEXT: "into": "nchw",
// REPORT-NEXT: "node": "conv2"
// REPORT: "into": "nhwc",
// REPORT-NEXT: "node": "input x"
// REPORT: "transposes_inserted": 2
// REPORT: "pass": "mpt-channels-last"
// REPORT: "mode": "bf16",
// REPORT-NEXT: "target": "sm_80",
func.func @forward(%x: tensor<2x3x8x8xf32> {mpt.input = "x"},
                   %w1: tensor<4x3x3x3xf32> {mpt.param = "w1"},
                   %s: tensor<4xf32> {mpt.param = "s"},
                   %b: tensor<4xf32> {mpt.param = "b"},
                   %m: tensor<4xf32> {mpt.param = "m"},
                   %v: tensor<4xf32> {mpt.param = "v"},
                   %w2: tensor<5x4x1x1xf32> {mpt.param = "w2"})
    -> (tensor<2x5x8x8xf32> {mpt.output = "y"}) {
  %c1 = mpt.conv %x, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("conv1")
  %n = mpt.batch_norm %c1, %s, %b, %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32> loc("bn1")
  %r = mpt.relu %n : tensor<2x4x8x8xf32> loc("relu1")
  %c2 = mpt.conv %r, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<5x4x1x1xf32>) -> tensor<2x5x8x8xf32> loc("conv2")
  return %c2 : tensor<2x5x8x8xf32>
}
