// Option and override errors.
// RUN: mpt-opt %s -split-input-file --assign-precision=bf16 -verify-diagnostics -o /dev/null
// RUN: echo "module {}" | not mpt-opt --assign-precision=auto 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: echo "module {}" | not mpt-opt --assign-precision="auto target=gfx90a" 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: echo "module {}" | not mpt-opt --assign-precision=bf17 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: echo "module {}" | not mpt-opt --assign-precision="bf16 keep-fp32=softmaxx" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: echo "module {}" | mpt-opt --assign-precision="fp8 target=sm_80" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: echo "module {}" | not mpt-opt --assign-precision="fp16 profile=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=NOPROFILE
// RUN: echo "{ not json" > %t.bad.json
// RUN: echo "module {}" | not mpt-opt --assign-precision="fp16 profile=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BADJSON
// RUN: echo '{"version": 1, "results": [{"node": "a"}]}' > %t.short.json
// RUN: echo "module {}" | not mpt-opt --assign-precision="fp16 profile=%t.short.json" 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: echo '{"plan": "x"}' > %t.other.json
// RUN: echo "module {}" | not mpt-opt --assign-precision="fp16 profile=%t.other.json" 2>&1 | FileCheck %s --check-prefix=OTHER

// NOTARGET: error: assign-precision: mode=auto needs target=<sm_XY|cpu>; the compiler does not detect hardware
// BADTARGET: error: assign-precision: unknown target 'gfx90a'; expected sm_XY (e.g. sm_80, sm_90) or cpu
// BADMODE: for the --mode option: must be bf16, fp16, fp8, fp32 or auto; got 'bf17'
// BADTYPE: error: assign-precision: 'softmaxx' in keep-fp32 names no mpt op
// SLOW: warning: assign-precision: mode fp8 is forced on sm_80, which has no fast fp8 arithmetic
// NOPROFILE: error: assign-precision: cannot read the precision profile '{{.*}}.missing.json': No such file or directory
// BADJSON: error: assign-precision: precision profile '{{.*}}.bad.json' is not JSON:
// SHORT: error: assign-precision: precision profile '{{.*}}.short.json': result 0 lacks node, phase or count
// OTHER: error: assign-precision: precision profile '{{.*}}.other.json' is not a version-1 ranges file of mpt-train --collect-ranges (no "results")

// Tests that mpt.precision takes only "f32" or "low".
func.func @bad_attribute(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mpt.precision must be "f32" or "low", got "fp8"}}
  %0 = mpt.relu %x {mpt.precision = "fp8"} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
