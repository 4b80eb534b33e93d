//===- MPTGradOps.td - mpt backward ops --------------------*- tablegen -*-===//
//
// Ops that only gradient rules build: the backward of forward ops whose
// gradient is not a short composition of other mpt ops. Each is also a
// runtime kernel kind of the same name; docs/training.md gives the formulas.
// Their types are their meaning, so precision assignment leaves them alone
// (`fixed`); they compute in FP32 and round once into their result types.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTGRADOPS_TD
#define MPT_DIALECT_MPT_IR_MPTGRADOPS_TD

class MPT_GradOp<string mnemonic, list<Trait> traits = []>
    : MPT_Op<mnemonic, !listconcat([Pure, PrecisionPolicy<"Fixed">], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def MPT_UnaryGradOp : MPT_GradOp<"unary_grad",
    [AllShapesMatch<["input", "grad", "output"]>, AllTypesMatch<["input", "output"]>]>,
    MPT_RuntimeKernel<"MPTRT_UnaryGradOp"> {
  let summary = "f'(input) * grad for an elementwise function f";
  let description = [{
    `kind` names f: an elementwise unary function of MPTUnaryFunctions.td
    with a gradient (docs/unary-functions.md); `leaky_relu` takes `alpha`,
    `clip` the optional `min` and `max` of the forward op, and a function
    with float parameters its `alpha`, `beta` and `gamma` (the rules
    generated from the records write every one; an absent `alpha` is 0.01,
    leaky_relu's default, and an absent `beta` or `gamma` the record's). The derivative is
    taken at the forward input, in FP32.
    ```mlir
    %dx = mpt.unary_grad %x, %dy {kind = #mpt.unary_grad_kind<relu>} : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
    ```
  }];
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$grad,
                   MPT_UnaryGradKindAttr:$kind,
                   DefaultValuedAttr<F32Attr, "0.01">:$alpha,
                   OptionalAttr<F32Attr>:$beta, OptionalAttr<F32Attr>:$gamma,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let results = (outs MPT_FloatTensor:$output);
  let hasVerifier = 1;
}

def MPT_SoftmaxGradOp : MPT_GradOp<"softmax_grad",
    [AllShapesMatch<["output", "grad", "input_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_SoftmaxGradOp"> {
  let summary = "Backward of softmax (or log_softmax with `log`) from its output";
  let arguments = (ins MPT_FloatTensor:$output, MPT_FloatTensor:$grad, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$log);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_LayerNormGradOp : MPT_GradOp<"layer_norm_grad",
    [AllShapesMatch<["input", "grad", "input_grad"]>,
     AllTypesMatch<["scale", "scale_grad", "bias_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_LayerNormGradOp"> {
  let summary = "Backward of layer_norm from the forward statistics";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   F32Tensor:$mean, F32Tensor:$inv_std_dev,
                   MPT_FloatTensor:$grad, I64Attr:$axis);
  let results = (outs MPT_FloatTensor:$input_grad, MPT_FloatTensor:$scale_grad,
                 MPT_FloatTensor:$bias_grad);
}

def MPT_AttentionGradOp : MPT_GradOp<"attention_grad",
    [AllTypesMatch<["query", "query_grad"]>, AllTypesMatch<["key", "key_grad"]>,
     AllTypesMatch<["value", "value_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_AttentionGradOp"> {
  let summary = "Backward of attention from its output and log-sum-exp";
  let description = [{
    With P = exp(scale * Q K^T + mask - logsumexp) recomputed row by row,
    dP = grad V^T and dS = P * (dP - rowsum(grad * output)):
    query_grad = scale * dS K, key_grad = scale * dS^T Q and
    value_grad = P^T grad, accumulated in FP32 in a fixed order.
  }];
  let arguments = (ins MPT_FloatTensor:$query, MPT_FloatTensor:$key,
                   MPT_FloatTensor:$value, MPT_FloatTensor:$output,
                   F32Tensor:$logsumexp, MPT_FloatTensor:$grad,
                   Optional<MPT_FloatTensor>:$mask, F32Attr:$scale);
  let results = (outs MPT_FloatTensor:$query_grad, MPT_FloatTensor:$key_grad,
                 MPT_FloatTensor:$value_grad);
}

def MPT_SoftmaxCrossEntropyLossGradOp : MPT_GradOp<"softmax_cross_entropy_loss_grad",
    [AllShapesMatch<["log_prob", "scores_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_SoftmaxCrossEntropyLossGradOp"> {
  let summary = "Backward of softmax_cross_entropy_loss from its log-probabilities";
  let arguments = (ins MPT_FloatTensor:$log_prob, MPT_IndexTensor:$labels,
                   Optional<MPT_FloatTensor>:$weights, MPT_FloatTensor:$loss_grad,
                   DefaultValuedAttr<MPT_ReductionAttr, "::mpt::Reduction::mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$scores_grad);
}

def MPT_NegativeLogLikelihoodLossGradOp : MPT_GradOp<"nll_loss_grad">,
    MPT_RuntimeKernel<"MPTRT_NegativeLogLikelihoodLossGradOp"> {
  let summary = "Backward of nll_loss; the result type is the input's";
  let arguments = (ins MPT_IndexTensor:$target, Optional<MPT_FloatTensor>:$weight,
                   MPT_FloatTensor:$loss_grad,
                   DefaultValuedAttr<MPT_ReductionAttr, "::mpt::Reduction::mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_GatherGradOp : MPT_GradOp<"gather_grad">,
    MPT_RuntimeKernel<"MPTRT_GatherGradOp"> {
  let summary = "Scatter-add of the gradient of gather into zeros of the data's type";
  let arguments = (ins MPT_IndexTensor:$indices, MPT_FloatTensor:$grad, I64Attr:$axis);
  let results = (outs MPT_FloatTensor:$data_grad);
}

def MPT_SliceGradOp : MPT_GradOp<"slice_grad">,
    MPT_RuntimeKernel<"MPTRT_SliceGradOp"> {
  let summary = "Zeros of the input's type with the gradient at the sliced positions";
  let arguments = (ins MPT_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_MaxPoolGradOp : MPT_GradOp<"max_pool_grad",
    [AllTypesMatch<["input", "input_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_MaxPoolGradOp"> {
  let summary = "Backward of max_pool: each gradient to its window's first maximum";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$grad,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_AveragePoolGradOp : MPT_GradOp<"average_pool_grad">,
    MPT_RuntimeKernel<"MPTRT_AveragePoolGradOp"> {
  let summary = "Backward of average_pool; the result type is the input's";
  let arguments = (ins MPT_FloatTensor:$grad, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_ConvGradInputOp : MPT_GradOp<"conv_grad_input">,
    MPT_RuntimeKernel<"MPTRT_ConvGradInputOp"> {
  let summary = "Gradient of conv with respect to its input (a transposed conv)";
  let arguments = (ins MPT_FloatTensor:$grad, MPT_FloatTensor:$weight,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs MPT_FloatTensor:$input_grad);
}

def MPT_ConvGradWeightOp : MPT_GradOp<"conv_grad_weight">,
    MPT_RuntimeKernel<"MPTRT_ConvGradWeightOp"> {
  let summary = "Gradient of conv with respect to its weight";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$grad,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs MPT_FloatTensor:$weight_grad);
}

def MPT_BatchNormGradOp : MPT_GradOp<"batch_norm_grad",
    [AllShapesMatch<["input", "grad", "input_grad"]>]>,
    MPT_RuntimeKernel<"MPTRT_BatchNormGradOp"> {
  let summary = "Backward of training-mode batch_norm (batch statistics)";
  let arguments = (ins MPT_FloatTensor:$input, MPT_FloatTensor:$scale,
                   MPT_FloatTensor:$grad, DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs MPT_FloatTensor:$input_grad, MPT_FloatTensor:$scale_grad,
                 MPT_FloatTensor:$bias_grad);
}

#endif // MPT_DIALECT_MPT_IR_MPTGRADOPS_TD
