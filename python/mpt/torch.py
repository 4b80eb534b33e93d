"""Exporting PyTorch models for MPT (torch is imported only when used).

    import mpt, mpt.torch
    exported = mpt.torch.export_for_training(model, {"x": x}, "cross_entropy",
                                             targets={"labels": y}, path="m.onnx")
    plan = exported.compile(precision="bf16", optimizer="adamw", lr=1e-3)

The model is exported with torch.onnx.export as MPT's importer wants it: in
training mode (dropout and batch norm stay training ops), static shapes
(those of the examples), parameters as initializers (not graph inputs) and
no constant folding (it would fold parameters into constants).
"""
import os
import tempfile


def _torch():
    try:
        import torch  # noqa: F401 (the real PyTorch: absolute import)
    except ImportError as e:
        raise ImportError("mpt.torch needs PyTorch (pip install torch): %s" % e) from e
    try:
        import onnx  # noqa: F401 (torch.onnx.export writes through it)
    except ImportError as e:
        raise ImportError("mpt.torch needs the onnx package for torch.onnx.export "
                          "(pip install onnx): %s" % e) from e
    return torch


class ExportedModel:
    """An exported model: `path` (the ONNX file) and `compile_options`,
    the mpt.compile keywords that name its loss."""

    def __init__(self, path, compile_options, input_names, output_names):
        self.path = path
        self.compile_options = compile_options
        self.input_names = input_names
        self.output_names = output_names

    def compile(self, **options):
        """mpt.compile(self.path, **self.compile_options, **options)."""
        from . import compile as mpt_compile

        merged = dict(self.compile_options)
        merged.update(options)
        return mpt_compile(self.path, **merged)

    def __repr__(self):
        return "ExportedModel(%r, inputs=%s, outputs=%s, %s)" % (
            self.path, self.input_names, self.output_names, self.compile_options)


def _named(values, default_prefix):
    if values is None:
        return {}
    if isinstance(values, dict):
        return dict(values)
    if not isinstance(values, (tuple, list)):
        values = (values,)
    if len(values) == 1:
        return {default_prefix: values[0]}
    return {"%s%d" % (default_prefix, i): v for i, v in enumerate(values)}


def export_for_training(model, example_inputs, loss_fn=None, targets=None, path=None,
                        output_names=None, opset_version=17):
    """Exports `model` to ONNX for `mpt.compile(..., train=True)`.

    example_inputs: the model's inputs, a tensor, a tuple of tensors (named
    input0, input1, ...; `input` for one) or a dict {name: tensor} (the
    ONNX input names). Their shapes are the plan's shapes.

    loss_fn:
      * None: the model returns its loss itself (a scalar output named
        `loss`, or name it with `loss=` at compile time);
      * "cross_entropy", "mse" or "nll": the compiler adds that loss to the
        model's (first) output; `targets` gives the label input's name and
        example ({"labels": y}; a bare tensor is named `labels`);
      * a callable loss_fn(output, *targets) -> scalar tensor: exported
        into the graph; the ONNX model then takes the inputs and the
        `targets` and returns (output, loss).

    path: where to write the .onnx file (default: a temporary file).
    Returns an ExportedModel (path, compile_options; .compile(**options))."""
    torch = _torch()
    inputs = _named(example_inputs, "input")
    if not inputs:
        raise ValueError("export_for_training: example_inputs is empty")
    labels = _named(targets, "labels")
    if path is None:
        fd, path = tempfile.mkstemp(suffix=".onnx", prefix="mpt-export-")
        os.close(fd)
    path = os.fspath(path)

    compile_options = {}
    module = model
    if loss_fn is None:
        names = list(output_names or ["loss"])
        args = tuple(inputs.values())
        input_names = list(inputs)
    elif isinstance(loss_fn, str):
        from . import CompileError, check_options

        if loss_fn == "model":
            raise ValueError("loss_fn='model': pass None for a model that returns its loss")
        try:
            check_options(loss_kind=loss_fn)
        except CompileError as e:
            raise ValueError("loss_fn=%r: it is a callable, None or a loss kind: %s"
                             % (loss_fn, e.message)) from None
        if len(labels) != 1:
            raise ValueError("loss_fn=%r needs one target (targets={'labels': y})" % loss_fn)
        names = list(output_names or ["output"])
        args = tuple(inputs.values())
        input_names = list(inputs)
        compile_options = {"loss_kind": loss_fn, "loss_output": names[0],
                           "label_input": next(iter(labels))}
    elif callable(loss_fn):
        count = len(inputs)

        class WithLoss(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, *values):
                output = self.inner(*values[:count])
                return output, loss_fn(output, *values[count:])

        module = WithLoss(model)
        names = list(output_names or ["output", "loss"])
        args = tuple(inputs.values()) + tuple(labels.values())
        input_names = list(inputs) + list(labels)
        compile_options = {"loss": names[-1]}
    else:
        raise TypeError("loss_fn must be None, a loss name or a callable")

    was_training = model.training
    module.train()
    try:
        kwargs = dict(export_params=True, opset_version=opset_version,
                      input_names=input_names, output_names=names,
                      dynamic_axes=None, do_constant_folding=False,
                      keep_initializers_as_inputs=False,
                      training=torch.onnx.TrainingMode.TRAINING)
        try:
            torch.onnx.export(module, args, path, dynamo=False, **kwargs)
        except TypeError:
            # A PyTorch without the `dynamo` argument exports this way anyway.
            torch.onnx.export(module, args, path, **kwargs)
    finally:
        model.train(was_training)
    return ExportedModel(path, compile_options, input_names, names)
