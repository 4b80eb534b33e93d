// RUN: not mpt-opt %s --mpt-training-pipeline="precision=bf16 learning-rate=3e-4" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mpt-opt %s --mpt-inference-pipeline="lr=3e-4" 2>&1 | FileCheck %s --check-prefix=TRAINONLY
// RUN: not mpt-opt %s --mpt-training-pipeline="lr=fast" 2>&1 | FileCheck %s --check-prefix=BADVALUE
// RUN: not mpt-opt %s --mpt-inference-pipeline="precision=bf32" 2>&1 | FileCheck %s --check-prefix=BADMODE

// Tests that a pipeline option the pipeline does not have, or a malformed
// value, is an error naming the pipeline and the option, and nothing runs.
// UNKNOWN: error: mpt-training-pipeline: no such option learning-rate
// UNKNOWN-NOT: func.func
// The training options are not the inference pipeline's.
// TRAINONLY: error: mpt-inference-pipeline: no such option lr
// BADVALUE: for the --lr option: 'fast' value invalid for floating point argument
// BADVALUE: error: mpt-training-pipeline: invalid options 'lr=fast'
// BADMODE: for the --precision option: must be none, bf16, fp16, fp8, fp32 or auto; got 'bf32'
func.func @forward(%x: tensor<8x16xf32> {mpt.input = "x"}) -> (tensor<8x16xf32> {mpt.output = "y"}) {
  %y = mpt.relu %x : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
