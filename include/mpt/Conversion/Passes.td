//===- Passes.td - the lowering of mpt IR to a runtime plan -*- tablegen -*-===//
//
// The passes of `--lower-to-runtime`. Kernel selection (epilogue fusion)
// works on mpt; the conversion then turns every mpt op into its mptrt
// kernel, and the bindings and the memory plan act on that execution IR,
// which the plan emitter (`mpt-translate --mlir-to-plan`) serialises.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_CONVERSION_PASSES
#define MPT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def MPTFuseEpilogues : Pass<"mpt-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Kernel selection: fold bias adds and activations into GEMMs";
  let description = [{
    Rewrites contractions into the runtime's `gemm` kernel with its fused
    epilogue:

    - `matmul` whose right operand is 2-D becomes `gemm`; a left operand of
      rank above 2 is reshaped to 2-D and the result reshaped back (reshapes
      of intermediates are free: the memory planner makes them views);
    - a 2-D `transpose` feeding either side of a `gemm` becomes its
      `trans_a`/`trans_b` flag, so weights stored as ONNX/PyTorch `[N, K]`
      are never transposed at run time;
    - `add(gemm(a, b), bias)` with a bias that broadcasts along the rows
      becomes `gemm(a, b, bias)`, also through a reshape;
    - the erf form of GELU as exporters write it,
      `(x * (erf(x / sqrt(2)) + 1)) * 0.5`, becomes one `gelu`;
    - `relu` and `gelu` (both forms) of a single-use `gemm` become its
      `activation` epilogue, also through a reshape.

    Element types never change: a bf16 `gemm` absorbs only a bf16 bias.
  }];
  let dependentDialects = ["mpt::MPTDialect"];
}

def MPTConvertToMPTRT : Pass<"mpt-convert-to-mptrt", "mlir::ModuleOp"> {
  let summary = "Dialect conversion of mpt ops into mptrt kernels";
  let description = [{
    Every `mpt` op becomes the `mptrt` kernel of the same name with the same
    operands, result types and attributes; an enum attribute becomes the
    `mptrt` one over the same enum of mpt/IR/MPTEnums.td
    (`#mpt.activation<relu>` -> `#mptrt.activation<relu>`), casts into FP8 get
    `saturate = true`, and `mpt.constant` becomes `mptrt.constant`. The
    `mpt` dialect is illegal afterwards; the patterns live one file per op
    family (`*Patterns.cpp`).

    ```mlir
    %y = mpt.gemm %x, %w {activation = #mpt.activation<relu>, trans_b = true} : ...
    // becomes
    %y = mptrt.gemm %x, %w {activation = #mptrt.activation<relu>, trans_b = true} : ...
    ```

    An op without a kernel (`mpt.range` or `mpt.shape` that did not fold, a
    contraction with FP8 scales, a training-mode dropout without its rng
    operands) is an error at the op, naming its ONNX node.
  }];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

def MPTFuseBatchNorm : Pass<"mpt-fuse-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold ReLU and the residual add into batch norm kernels, forward and backward";
  let description = [{
    Runs on mptrt IR (after `mpt-convert-to-mptrt`, before memory planning)
    and gives the batch norm kernels their fused epilogue, so that a CNN's
    `batch_norm -> relu` and `batch_norm -> add -> relu` are one pass over
    memory each way instead of two or three:

    - `relu(batch_norm(x))`, `batch_norm` or `batch_norm_train`, becomes the
      batch norm with `activation = relu`, when the batch norm's output has
      no other use than that relu and the backward's relu `unary_grad`s of
      it (which then read the relu'd output: `y > 0` where `x > 0`);
    - `relu(add(batch_norm(x), s))` becomes the batch norm with `residual =
      s` and `activation = relu`, when `s` is defined before the batch norm
      (of the two batch norms of a ResNet block's downsampling add, the
      later one takes the other's output), the add's operands and result
      have one type, and the add's and the batch norm's outputs have no
      other use than the relu (and its `unary_grad`s);
    - `batch_norm_grad(x, scale, unary_grad<relu>(y, dy))`, where the
      `unary_grad` has no other use and `dy`'s type, becomes
      `batch_norm_grad(x, scale, dy, y)` with `activation = relu`.

    The kernels compute what the unfused ones do, in their order (the
    batch norm's rounding, the add's, then relu; relu's mask), so the bits
    are the same (runtime/test's BatchNormFusion tests). Element types never
    change. The `fuse-epilogues` pipeline option turns it off with the
    gemm epilogues.
  }];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

def MPTFuseConvRelu : Pass<"mpt-fuse-conv-relu", "mlir::func::FuncOp"> {
  let summary = "Fold ReLU into conv kernels (after their bias)";
  let description = [{
    Runs on mptrt IR (after `mpt-convert-to-mptrt`, before memory planning):
    `relu(conv(x, w, b))` becomes the conv with `activation = relu`, when
    the conv's output has no other use than that relu and the backward's
    relu `unary_grad`s of it (which then read the relu'd output: `y > 0`
    where `x > 0`), so a conv + bias + ReLU layer (SqueezeNet's, VGG's) is
    one pass over its output. The kernel applies the relu to the rounded
    result (the unfused conv's rounding, then relu's), so the bits are the
    same (runtime/test's ConvRelu tests). Element types never change. The
    `fuse-epilogues` pipeline option turns it off with the other fusions.
  }];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

def MPTChannelsLast : Pass<"mpt-channels-last", "mlir::ModuleOp"> {
  let summary = "Store convolution chains' activations channels last (NHWC)";
  let description = [{
    Runs on mptrt IR (after `mpt-fuse-batch-norm`, before memory planning),
    for targets whose convolutions prefer channels-last activations (cuDNN's
    tensor-core engines). A chain is what connects 2-D convolutions through
    activations: the activations of `conv`, `conv_grad_input`,
    `conv_grad_weight`, `batch_norm`, `batch_norm_train`,
    `batch_norm_grad`, the 2-D pooling kinds (`max_pool`, `average_pool`,
    `global_average_pool`) and their gradients (not their weights, scales or
    statistics), the elementwise kernels (relu, clip, add, mul,
    `unary_grad`, cast, ...) whose operands and results all have one 4-D
    shape, and an `expand` from a 4-D tensor to a 4-D shape its type states
    (a broadcast: the global average pool's gradient). Every value of a
    chain becomes [N, H, W, C], its layout-aware kernels get `layout =
    nhwc`, and a `transpose` is inserted only where a value enters the chain
    from elsewhere (a function argument or a reshape) or leaves it: the
    chain is maximal, so those are the fewest transposes that keep every
    other kernel as it is. Where only unit axes move (a pooled [N, C, 1, 1]
    head), the same bytes serve both layouts and a `reshape`, which the
    memory planner makes a view, replaces the transpose. A kernel with `layout = nhwc` means what
    its NCHW form means (docs/runtime.md, "Channels-last kernels"), so a
    plan computes the same values either way. Chains without a convolution
    are left alone.

    With `report`, the pass adds what it decided to that JSON file (the
    precision report `--assign-precision` wrote, or a new file): each
    reported op of a chain gets `"layout": "nhwc"`, and a `layout` section
    lists per function the kernels it stored channels last and the
    transposes and reshapes it inserted, with the ONNX nodes they belong to
    (docs/precision.md shows the format); a module without a chain leaves
    the file as it is.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Add the layout decisions to this JSON report (the precision "
           "report, or a new file)">,
  ];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

def MPTAssignBindings : Pass<"mpt-assign-bindings", "mlir::func::FuncOp"> {
  let summary = "Give every argument and result a binding name and a writer";
  let description = [{
    Every argument becomes an input (`mpt.input`) or a parameter
    (`mpt.param`), every result an output (`mpt.output`); missing names
    become `input<i>` / `output<i>`, and a name used twice within a kind is
    an error. A result that no kernel writes (a function argument, a
    constant, or a value returned twice) gets an explicit `mptrt.identity`
    copy, because the runtime writes every output through a kernel. Runs on
    mptrt IR (after `mpt-convert-to-mptrt`).
  }];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

def MPTPlanMemory : Pass<"mpt-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Static memory planning: liveness-based arena offsets";
  let description = [{
    Places every intermediate value (not an argument, constant or returned
    value) in one arena per function, at a 64-byte aligned offset. Two
    values share bytes only when their live ranges (definition to last use,
    in program order) do not overlap. Placement is greedy by size: largest
    first, each at the lowest offset free for its whole live range.

    Runs on mptrt IR. Shape-only kernels (`reshape`, `flatten`, `squeeze`,
    `unsqueeze`, `identity`) whose operand is itself in the arena become
    `mptrt.view`s: they take their operand's offset, extend its live range,
    and run no kernel.

    ```mlir
    %h = mptrt.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %r = mptrt.reshape %h : (tensor<2x8xf32>) -> tensor<16xf32>
    // becomes
    %h = mptrt.exp %x {offsets = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %r = mptrt.view %h[0] : tensor<2x8xf32> -> tensor<16xf32>
    ```

    Sets each kernel's `offsets` (one entry per result; -1 = not in the
    arena) and puts an `mptrt.arena size(peak)` op first in the function.
    With `report-peak`, also emits a remark per function with the peak and
    what the same values would take without reuse.
  }];
  let options = [
    Option<"reportPeak", "report-peak", "bool", /*default=*/"false",
           "Emit a remark with each function's arena peak">,
  ];
  let dependentDialects = ["mpt::rt::MPTRTDialect"];
}

#endif // MPT_CONVERSION_PASSES
