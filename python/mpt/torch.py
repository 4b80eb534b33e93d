"""PyTorch models through MPT (torch is imported only when used).

    import mpt, mpt.torch
    trainer = mpt.torch.Trainer(model, (x, y), "cross_entropy", optimizer="adamw",
                                lr=1e-3, precision="bf16")
    for x, y in loader:
        loss = trainer.step(x, y)            # a 0-d tensor
    trainer.sync_to_module()                 # the trained weights into `model`

or, a step below, export and compile by hand:

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
from collections.abc import Mapping

import numpy as np

from . import _dtypes
from ._mpt import EVAL_ENTRY, PARAMETER as _PARAMETER, TRAIN_ENTRY


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


class ExportError(RuntimeError):
    """torch.onnx.export refused the module: the message names the module,
    the batch shapes and torch's own message."""


# torch.optim names -> MPT's pipeline options (docs/training.md).
_ADAM_KEYS = ("lr", "betas", "eps", "weight_decay")
_SGD_KEYS = ("lr", "momentum", "dampening", "nesterov", "weight_decay")


def _optimizer_options(torch, optimizer, options):
    """MPT's optimizer options for `optimizer` (a name, or a torch.optim
    SGD, Adam or AdamW instance) and the torch.optim-named keywords taken
    out of `options`."""
    given = {}
    if isinstance(optimizer, torch.optim.Optimizer):
        groups = optimizer.param_groups
        kind = type(optimizer).__name__.lower()
        keys = _SGD_KEYS if kind == "sgd" else _ADAM_KEYS
        for key in keys + ("amsgrad", "maximize"):
            values = {repr(g.get(key)) for g in groups}
            if len(values) > 1:
                raise ValueError("optimizer: its parameter groups differ in %s; the Trainer "
                                 "takes one setting for all parameters" % key)
            if key in groups[0] and groups[0][key] is not None:
                given[key] = groups[0][key]
        for key in ("amsgrad", "maximize"):
            if given.pop(key, False):
                raise ValueError("optimizer: %s=True is not supported" % key)
        if isinstance(given.get("lr"), torch.Tensor):
            given["lr"] = float(given["lr"])
    elif isinstance(optimizer, str):
        kind = optimizer.lower()
    else:
        raise TypeError("optimizer must be 'adamw', 'adam', 'sgd' or a torch.optim "
                        "SGD/Adam/AdamW instance, not %r" % (optimizer,))
    if kind not in ("adamw", "adam", "sgd"):
        raise ValueError("optimizer=%r: the Trainer supports AdamW, Adam (without weight "
                         "decay) and SGD (with or without momentum)" % (optimizer,))
    keys = _SGD_KEYS if kind == "sgd" else _ADAM_KEYS
    for key in _ADAM_KEYS + _SGD_KEYS:
        if key in options:
            if key not in keys:
                raise ValueError("%s=: torch.optim.%s has no such option" % (
                    key, {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW"}[kind]))
            given[key] = options.pop(key)
    mpt = {"lr": float(given.get("lr", 1e-3))}
    if kind == "sgd":
        momentum = float(given.get("momentum", 0.0))
        mpt["weight_decay"] = float(given.get("weight_decay", 0.0))
        if momentum:
            mpt.update(optimizer="momentum", momentum=momentum,
                       dampening=float(given.get("dampening", 0.0)),
                       nesterov=bool(given.get("nesterov", False)))
        else:
            if given.get("nesterov") or given.get("dampening"):
                raise ValueError("optimizer: nesterov and dampening need momentum > 0 "
                                 "(as torch.optim.SGD says)")
            mpt["optimizer"] = "sgd"
    else:
        betas = given.get("betas", (0.9, 0.999))
        mpt.update(optimizer="adamw", beta1=float(betas[0]), beta2=float(betas[1]),
                   eps=float(given.get("eps", 1e-8)))
        if kind == "adam":
            if float(given.get("weight_decay", 0.0)) != 0.0:
                raise ValueError("optimizer: Adam's weight_decay is an L2 penalty in the "
                                 "gradient, which MPT does not have; use AdamW (decoupled)")
            mpt["weight_decay"] = 0.0
        else:
            mpt["weight_decay"] = float(given.get("weight_decay", 0.01))
    return mpt


def _mapping_keys(batch, loss_fn, targets):
    """(input keys, target keys) of a mapping batch (a dict or a Hugging
    Face BatchEncoding), in its order: the targets are `targets`, by default
    none when the model returns its loss (the model gets every key, labels
    included, as Hugging Face models compute their loss) and "labels" with a
    loss_fn."""
    keys = list(batch.keys())
    if targets is None:
        if loss_fn is None:
            targets = ()
        elif "labels" in keys:
            targets = ("labels",)
        else:
            raise ValueError("loss_fn=%r needs to know which keys of the batch are targets: "
                             "pass targets=('...',) (the batch has %s)"
                             % (loss_fn, ", ".join(map(repr, keys))))
    elif isinstance(targets, str):
        targets = (targets,)
    targets = tuple(targets)
    unknown = [t for t in targets if t not in keys]
    if unknown:
        raise ValueError("targets %s are not keys of the batch (it has %s)"
                         % (", ".join(map(repr, unknown)), ", ".join(map(repr, keys))))
    inputs = tuple(k for k in keys if k not in targets)
    if not inputs:
        raise ValueError("the batch has no input left once the targets %s are taken out"
                         % ", ".join(map(repr, targets)))
    return inputs, targets


def _pick(output, name):
    """`name` ("loss" or "logits") of a model's output: a tensor is itself; a
    mapping (a dict, a Hugging Face ModelOutput) gives its entry, or for
    "logits" its first; a tuple its first element."""
    if isinstance(output, Mapping):
        if name in output:
            return output[name]
        if name == "loss":
            raise ValueError("the model's output has no 'loss' (it has %s): put the labels "
                             "in the batch, or give a loss_fn"
                             % ", ".join(map(repr, output.keys())))
        return next(iter(output.values()))
    if isinstance(output, (tuple, list)):
        return output[0]
    return output


def _keyword_call(torch, model, keys, returns_loss):
    """`model` called with a mapping batch's inputs as keywords: a module of
    positional inputs, as export_for_training takes, holding `model` as
    `inner` (its parameters are inner.<name>)."""

    class _KeywordCall(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *values):
            return _pick(self.inner(**dict(zip(keys, values))),
                         "loss" if returns_loss else "logits")

    return _KeywordCall(model)


# The plan's input dtypes as torch's names (those with a DLPack code).
_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
                 "i32": "int32", "i1": "bool"}


def _backend(device):
    if device is None:
        return None
    kind = getattr(device, "type", None) or str(device).split(":")[0]
    if kind not in ("cpu", "cuda"):
        raise ValueError("device=%r: MPT runs on 'cpu' or 'cuda'" % (device,))
    return kind


def _shapes(tensors):
    return ", ".join("%s %s" % (list(t.shape), str(t.dtype).replace("torch.", ""))
                     for t in tensors)


class Trainer:
    """Trains `model` (a torch.nn.Module) through MPT inside a PyTorch loop.

        trainer = mpt.torch.Trainer(model, (x, y), "cross_entropy",
                                    optimizer="adamw", lr=1e-3, precision="bf16")
        for x, y in loader:
            loss = trainer.step(x, y)          # a 0-d torch tensor
        trainer.sync_to_module()               # the trained weights into `model`

    example_batch: a tensor or a tuple of tensors, as the loop's batches
    come: the model's inputs, then `num_targets` targets (default 1 with a
    loss_fn, 0 without). Or a mapping of tensors (a dict, a Hugging Face
    BatchEncoding): the model is called with its inputs as keywords, and
    `targets` names the keys that go to the loss_fn instead (default:
    "labels" with a loss_fn; none without, so that a Hugging Face model gets
    its labels and returns its loss); the model's output may be a tensor, a
    mapping (its "loss", or "logits" for a loss_fn) or a tuple (its first).
    Then step, eval_step and __call__ take such mappings too. loss_fn: "cross_entropy", "mse", "nll" (the
    compiler's losses, on the model's first output), a callable
    loss_fn(output, *targets) exported with the model, or None (the model
    returns its loss). optimizer: "adamw", "adam", "sgd" or a torch.optim
    SGD/Adam/AdamW instance; its options are torch.optim's names (lr,
    betas, eps, weight_decay, momentum, dampening, nesterov) as keywords.
    precision: "fp32", "bf16", "fp16", "fp8", "auto". device: None (the
    best backend here), "cpu" or "cuda". Every other keyword is an
    mpt.compile pipeline option (clip_norm, loss_scale, lr_schedule,
    master_weights, ...).

    The module is exported (torch.onnx.export) and compiled once per batch
    signature (the shapes and dtypes of the batch's tensors) and the plans
    are cached; a batch with a new signature is compiled when
    recompile=True (the default), else it raises ValueError naming both
    shapes. The training state lives in the plan: sync_to_module() writes
    the weights back into the module."""

    def __init__(self, model, example_batch, loss_fn, optimizer="adamw", precision="bf16",
                 device=None, num_targets=None, recompile=True, targets=None, **options):
        torch = _torch()
        self._torch = torch
        if not isinstance(model, torch.nn.Module):
            raise TypeError("model must be a torch.nn.Module, not %s" % type(model).__name__)
        self._keys = None  # a mapping batch's keys: inputs, then targets
        self._module = model  # what is exported: the model, or _KeywordCall of it
        if isinstance(example_batch, Mapping):
            if num_targets is not None:
                raise ValueError("a mapping batch names its targets with targets=(keys), "
                                 "not num_targets")
            self._keys = _mapping_keys(example_batch, loss_fn, targets)
            num_targets = len(self._keys[1])
            self._module = _keyword_call(torch, model, self._keys[0], loss_fn is None)
            example_batch = self._from_mapping(example_batch, "example_batch")
        elif targets is not None:
            raise ValueError("targets=(keys) is for a mapping batch (a dict or a Hugging Face "
                             "BatchEncoding); a tuple batch counts them with num_targets")
        batch = self._as_batch(example_batch, "example_batch")
        if num_targets is None:
            num_targets = 0 if loss_fn is None else 1
        if not 0 <= num_targets < len(batch) + (loss_fn is None):
            raise ValueError("example_batch has %d tensors: it cannot hold %d targets and "
                             "an input" % (len(batch), num_targets))
        if isinstance(loss_fn, str) and num_targets != 1:
            raise ValueError("loss_fn=%r takes one target, not %d" % (loss_fn, num_targets))
        self.model = model
        self.loss_fn = loss_fn
        self.num_targets = num_targets
        self.precision = precision
        self.recompile = recompile
        self._backend = _backend(device)
        self._options = _optimizer_options(torch, optimizer, options)
        self._lr = self._options.pop("lr")
        self._eval_entry = options.get("eval_entry", None)
        self._options.update(options)
        from . import check_options

        check_options(precision=precision, lr=self._lr, **self._options)
        # The plans multiply their schedule by the state optimizer.lr_scale
        # (settable-lr), which `lr` sets: a new rate needs no recompiling. A
        # constant rate compiles as 1 and the scale is the rate itself, so
        # the step reads f32(lr) exactly; a schedule compiles with the first
        # rate and the scale is the ratio.
        constant = self._options.get("lr_schedule", "constant") == "constant"
        self._compiled_lr = 1.0 if constant else self._lr
        self._names = self._input_names(len(batch))
        self._dir = tempfile.TemporaryDirectory(prefix="mpt-trainer-")
        self._exports = {}  # signature -> ExportedModel
        self._plans = {}  # signature -> Plan
        self._plan = None  # the plan holding the training state
        self._signature = None
        self._example = batch
        self.skipped = None
        self.grad_norm = None
        self.loss_scale = None
        self.outputs = {}
        self._plan_for(batch)

    def __repr__(self):
        return "Trainer(%s, precision=%s, %s, lr=%g, steps=%d, compiled for %s)" % (
            type(self.model).__name__, self.precision, self._options.get("optimizer"),
            self._lr, self.steps, self.compiled)

    # --- batches and plans -------------------------------------------------

    def _from_mapping(self, batch, what, inputs_only=False):
        """A mapping batch as the tuple the plans take: the input keys, then
        the target keys, in the example batch's order (the input keys alone
        with inputs_only, other keys then ignored)."""
        keys = list(self._keys[0]) + ([] if inputs_only else list(self._keys[1]))
        missing = [k for k in keys if k not in batch]
        extra = [] if inputs_only else [k for k in batch if k not in keys]
        if missing or extra:
            raise ValueError("%s has keys %s; the Trainer was built for %s%s" % (
                what, ", ".join(map(repr, batch)), ", ".join(map(repr, keys)),
                " (missing %s)" % ", ".join(map(repr, missing)) if missing else ""))
        for k in keys:
            if not isinstance(batch[k], self._torch.Tensor):
                raise TypeError("%s[%r] is %s, not a torch.Tensor" % (
                    what, k, type(batch[k]).__name__))
        return tuple(batch[k] for k in keys)

    def _as_batch(self, batch, what):
        torch = self._torch
        if self._keys is not None and len(batch) == 1 and isinstance(batch[0], Mapping):
            batch = self._from_mapping(batch[0], what)
        if isinstance(batch, torch.Tensor):
            batch = (batch,)
        if not isinstance(batch, (tuple, list)) or not batch:
            raise TypeError("%s must be a tensor or a non-empty tuple of tensors" % what)
        for i, t in enumerate(batch):
            if not isinstance(t, torch.Tensor):
                raise TypeError("%s[%d] is %s, not a torch.Tensor" % (what, i, type(t).__name__))
        return tuple(batch)

    def _input_names(self, count):
        """ONNX names: forward()'s argument names for the inputs, then
        target (or target0, target1, ...)."""
        import inspect

        if self._keys is not None:  # a mapping batch: its keys
            return list(self._keys[0]) + list(self._keys[1])
        inputs = count - self.num_targets
        try:
            params = [p for p in inspect.signature(self.model.forward).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            names = [p.name for p in params[:inputs]]
        except (TypeError, ValueError):
            names = []
        if len(names) != inputs:
            names = ["input"] if inputs == 1 else ["input%d" % i for i in range(inputs)]
        if self.num_targets == 1:
            targets = ["target"]
        else:
            targets = ["target%d" % i for i in range(self.num_targets)]
        names += [t if t not in names else "_" + t for t in targets]
        return names

    def _key(self, batch):
        return tuple((tuple(t.shape), t.dtype) for t in batch)

    def _plan_for(self, batch):
        """The plan for `batch`'s signature, compiled if new; the training
        state moves into it from the plan that held it."""
        if len(batch) != len(self._names):
            raise ValueError("the batch has %d tensors; the Trainer was built for %d (%s)"
                             % (len(batch), len(self._names), ", ".join(self._names)))
        key = self._key(batch)
        cached = self._plans.get(key)
        if cached is not None:
            plan = cached
        else:
            if cached is None and self._plan is not None and not self.recompile:
                compiled = [t for t, _ in self._signature]
                raise ValueError(
                    "the batch has shapes %s; the plan was compiled for %s: pass "
                    "recompile=True to the Trainer to compile (once, cached) for each new "
                    "shape, or give the DataLoader drop_last=True"
                    % (_shapes(batch), ", ".join("%s" % list(s) for s in compiled)))
            plan = self._compile(key, batch)
            self._plans[key] = plan
        if plan is not self._plan:
            if self._plan is not None:
                _move_state(self._plan, plan)
            self._plan = plan
            self._signature = key
        return plan

    def _export(self, key, batch):
        exported = self._exports.get(key)
        if exported is not None:
            return exported
        torch = self._torch
        count = len(batch) - self.num_targets
        inputs = dict(zip(self._names[:count], batch[:count]))
        targets = dict(zip(self._names[count:], batch[count:])) or None
        path = os.path.join(self._dir.name, "model%d.onnx" % len(self._exports))
        # Tracing runs the module in training mode: keep its buffers (batch
        # norm statistics) and the RNG (dropout) as they were.
        saved = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        rng = torch.get_rng_state()
        try:
            exported = export_for_training(self._module, inputs, self.loss_fn,
                                           targets=targets, path=path)
        except (ValueError, TypeError) as e:
            raise type(e)("mpt.torch.Trainer: %s" % e) from e
        except Exception as e:
            raise ExportError("cannot export %s for batch shapes %s with torch.onnx.export: "
                              "%s: %s" % (type(self.model).__name__, _shapes(batch),
                                          type(e).__name__, e)) from e
        finally:
            torch.set_rng_state(rng)
            with torch.no_grad():
                for k, v in self.model.state_dict().items():
                    v.copy_(saved[k])
        self._exports[key] = exported
        return exported

    def _compile(self, key, batch):
        from . import CompileError

        exported = self._export(key, batch)
        try:
            plan = exported.compile(precision=self.precision, backend=self._backend,
                                    lr=self._compiled_lr, settable_lr=True, **self._options)
        except CompileError as e:
            raise CompileError("cannot compile %s for batch shapes %s:\n%s%s" % (
                type(self.model).__name__, _shapes(batch), e.message,
                self._node_modules(e.message)), e.status) from None
        if self._plan is None:
            self._tensors = self._module_tensors(plan)
            # The module's own values (exact, whatever the exporter wrote).
            state = self.model.state_dict()
            for key_, name in self._tensors.items():
                plan.set_parameter(name, self._to_numpy(state[key_]))
            self._set_lr_scale(plan)
        return plan

    def _node_modules(self, message):
        """Lines naming the submodule each ONNX node of `message` comes from
        (the exporter names a node /path/to/module/Op)."""
        import re

        lines = []
        wrappers = callable(self.loss_fn) + (self._keys is not None)
        for node in sorted(set(re.findall(r"node '(/[^']+)'", message))):
            path = node.strip("/").split("/")[:-1]
            for _ in range(wrappers):  # WithLoss's and _KeywordCall's `inner`
                if path and path[0] == "inner":
                    path = path[1:]
            try:
                module = self.model.get_submodule(".".join(path))
            except AttributeError:
                continue
            lines.append("\nnode '%s' comes from module '%s' (%s)" % (
                node, ".".join(path) or "(the model itself)", type(module).__name__))
        return "".join(lines)

    def _module_tensors(self, plan):
        """{module state_dict key: plan parameter} for every module tensor
        the plan holds (parameters and buffers, found by name)."""
        names = set(plan.parameter_names())
        found = {}
        for key in self.model.state_dict():
            # The wrappers' names: WithLoss (a callable loss) and
            # _KeywordCall (a mapping batch) each hold the model as `inner`.
            for name in (key, "inner." + key, "inner.inner." + key):
                if name in names:
                    found[key] = name
                    break
        # Trainable parameters the plan does not hold under their name (the
        # exporter renamed or dropped them): sync_to_module leaves them.
        # A tied parameter counts as held when any of its names is.
        state = self.model.state_dict(keep_vars=True)
        held = {id(state[key]) for key in found}
        self.unmapped = [n for n, p in self.model.named_parameters() if p.requires_grad
                         and id(p) not in held]
        if not found:
            raise ExportError("none of %s's parameters is a parameter of the compiled "
                              "plan (it has %s)" % (type(self.model).__name__,
                                                    ", ".join(sorted(names))))
        return found

    def _to_numpy(self, t):
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()  # a copy: the runtime binds host memory
        if t.dtype in (self._torch.bfloat16, self._torch.float16):
            t = t.float()
        return t.numpy()

    def _feeds(self, plan, batch, entry):
        names = set(plan.inputs(entry))
        on_gpu = plan.backend == "cuda"
        feeds = {n: self._device_feed(plan, n, t) if on_gpu and t.is_cuda else self._to_numpy(t)
                 for n, t in zip(self._names, batch) if n in names}
        # The CUDA tensors finished on PyTorch's streams (the runtime copies
        # on its own), once per device.
        for device in {v.device for v in feeds.values() if isinstance(v, self._torch.Tensor)}:
            self._torch.cuda.current_stream(device).synchronize()
        return feeds

    def _device_feed(self, plan, name, t):
        """A CUDA tensor as the plan binds it on the GPU (through DLPack,
        never through the host): the plan's dtype, contiguous."""
        torch = self._torch
        dtype = _TORCH_DTYPES.get(plan.input_dtype(name))
        if dtype is None:
            return self._to_numpy(t)  # an fp8 input: no DLPack code
        want = getattr(torch, dtype)
        t = t.detach()
        if t.dtype != want:
            t = t.to(want)
        return t.contiguous()

    def _tensor(self, value, like):
        torch = self._torch
        value = np.asarray(value)
        t = torch.from_numpy(value.copy() if value.ndim == 0 or not value.flags.writeable
                             else np.ascontiguousarray(value))
        return t.to(like.device) if like.device.type != "cpu" else t

    # --- training ---------------------------------------------------------

    @property
    def plan(self):
        """The mpt.Plan holding the training state now (the last batch
        signature's)."""
        return self._plan

    @property
    def lr(self):
        return self._lr

    @lr.setter
    def lr(self, value):
        """The learning rate of the next steps (with an lr_schedule, the
        schedule's peak): it sets the plan's optimizer.lr_scale, so no plan
        is compiled again (docs/python.md)."""
        self._lr = float(value)
        if self._plan is not None:
            self._set_lr_scale(self._plan)

    def _set_lr_scale(self, plan):
        plan.set_parameter(_LR_SCALE, np.asarray(self._lr / self._compiled_lr, np.float32))

    @property
    def steps(self):
        """Steps run (counting those before a load_state_dict)."""
        return self._plan.steps

    @property
    def compiled(self):
        """The batch shapes compiled so far, one tuple of shapes per plan."""
        return [tuple(shape for shape, _ in key) for key in self._plans]

    @property
    def module_tensors(self):
        """{module state_dict key: plan parameter} for the module's tensors
        the plan trains or updates (sync_to_module writes these)."""
        return dict(self._tensors)

    def step(self, *batch):
        """One training step (forward, backward, optimizer) on `batch`,
        torch tensors as example_batch has them; returns the loss as a 0-d
        float32 tensor. Sets skipped, grad_norm, loss_scale (None where the
        plan has no such output) and outputs (every output, NumPy)."""
        batch = self._as_batch(batch, "the batch")
        plan = self._plan_for(batch)
        result = plan.train_step(**self._feeds(plan, batch, TRAIN_ENTRY))
        self.skipped, self.grad_norm, self.loss_scale = (result.skipped, result.grad_norm,
                                                         result.scale)
        self.outputs = result.outputs
        return self._tensor(np.float32(result.loss), batch[0])

    def eval_step(self, *batch):
        """The loss of `batch` through the plan's eval entry (the forward
        pass in inference mode, no update); a 0-d float32 tensor. `outputs`
        holds every output of the entry."""
        batch = self._as_batch(batch, "the batch")
        plan = self._plan_for(batch)
        entry = self._eval()
        outputs = plan.call(entry, **self._feeds(plan, batch, entry))
        self.outputs = outputs
        loss = [n for n, r in plan.output_roles(entry).items() if r == "loss"]
        return self._tensor(np.float32(outputs[loss[0]]).reshape(()), batch[0])

    def __call__(self, *inputs):
        """The model's outputs on `inputs` (no targets) through the eval
        entry, in inference mode: a tensor, or a tuple for several. The
        targets the entry needs are zeros shaped as example_batch's, with
        the first dimension the inputs'."""
        if self._keys is not None and len(inputs) == 1 and isinstance(inputs[0], Mapping):
            inputs = self._from_mapping(inputs[0], "the inputs", inputs_only=True)
        else:
            inputs = self._as_batch(inputs, "the inputs")
        count = len(self._names) - self.num_targets
        if len(inputs) != count:
            raise ValueError("the model takes %d inputs (%s), got %d" % (
                count, ", ".join(self._names[:count]), len(inputs)))
        targets = []
        for t in self._example[count:]:
            shape = list(t.shape)
            if shape and shape[0] == self._example[0].shape[0] and inputs[0].dim():
                shape[0] = inputs[0].shape[0]
            targets.append(self._torch.zeros(shape, dtype=t.dtype))
        self.eval_step(*inputs, *targets)
        roles = self._plan.output_roles(self._eval())
        results = tuple(self._tensor(v, inputs[0]) for n, v in self.outputs.items()
                        if roles.get(n) == "none")
        return results[0] if len(results) == 1 else results

    def _eval(self):
        entry = self._eval_entry if self._eval_entry is not None else EVAL_ENTRY
        if entry not in self._plan.entries:
            raise ValueError("the plan has no evaluation entry (eval_entry=%r)" % entry)
        return entry

    # --- weights and checkpoints --------------------------------------------

    def sync_to_module(self):
        """Writes the plan's weights (the master copies) and buffers (batch
        norm statistics) into the module's tensors, in place, bit for bit."""
        torch = self._torch
        state = self.model.state_dict()
        with torch.no_grad():
            for key, name in self._tensors.items():
                value = self._raw(name)
                target = state[key]
                target.copy_(value.to(target.dtype) if value.dtype != target.dtype else value)
        return self.model

    def sync_from_module(self):
        """The other way: sets the plan's weights and buffers from the
        module's tensors (after the module was changed outside the Trainer,
        e.g. by model.load_state_dict). Optimizer state is kept."""
        state = self.model.state_dict()
        for key, name in self._tensors.items():
            self._plan.set_parameter(name, self._to_numpy(state[key]))

    def _raw(self, name):
        """A plan parameter as a torch tensor of its own dtype (bf16 and fp8
        as torch's, bit for bit)."""
        torch = self._torch
        model = self._plan._model
        dtype, shape = model.info(_PARAMETER, name)
        array = np.frombuffer(model.read(_PARAMETER, name), _dtypes.STORAGE[dtype])
        array = array.reshape(shape).copy()
        if dtype == _dtypes.BF16:
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        if dtype == _dtypes.F8E4M3FN:
            return torch.from_numpy(array).view(torch.float8_e4m3fn)
        if dtype == _dtypes.F8E5M2:
            return torch.from_numpy(array).view(torch.float8_e5m2)
        if dtype == _dtypes.I1:
            return torch.from_numpy(array != 0)
        return torch.from_numpy(array)

    def state_dict(self):
        """The plan's whole training state, as torch tensors of the plan's
        dtypes: every parameter of train_step (weights, optimizer moments,
        loss scale, step counters) under "plan", the step count and the
        learning rate. Syncs the module first (sync_to_module)."""
        self.sync_to_module()
        return {"format": "mpt.torch.Trainer/1", "steps": self._plan.steps, "lr": self._lr,
                "plan": {n: self._raw(n) for n in self._plan.parameter_names()}}

    def load_state_dict(self, state_dict):
        """Restores a state_dict() of a Trainer of the same model and
        options: the plan's state bit for bit, the step count and the
        learning rate; then syncs the module. Raises ValueError naming the
        tensors that are missing, unexpected or of another dtype or shape,
        and changes nothing then."""
        torch = self._torch
        if not isinstance(state_dict, dict) or state_dict.get("format") != \
                "mpt.torch.Trainer/1":
            raise ValueError("load_state_dict: not a state_dict() of mpt.torch.Trainer")
        tensors = state_dict["plan"]
        model = self._plan._model
        names = self._plan.parameter_names()
        missing = [n for n in names if n not in tensors]
        unexpected = [n for n in tensors if n not in set(names)]
        problems = []
        if missing:
            problems.append("missing: %s" % ", ".join(missing))
        if unexpected:
            problems.append("unexpected: %s" % ", ".join(unexpected))
        raw = {}
        for name in names:
            if name not in tensors:
                continue
            dtype, shape = model.info(_PARAMETER, name)
            t = tensors[name]
            want = _TORCH_DTYPES[dtype](torch)
            if t.dtype != want or list(t.shape) != list(shape):
                problems.append("'%s' is %s %s, the plan's is %s %s" % (
                    name, str(t.dtype).replace("torch.", ""), list(t.shape),
                    str(want).replace("torch.", ""), list(shape)))
                continue
            t = t.detach().cpu().contiguous()
            if dtype == _dtypes.BF16:
                t = t.view(torch.int16)
            elif dtype in (_dtypes.F8E4M3FN, _dtypes.F8E5M2, _dtypes.I1):
                t = t.view(torch.uint8)
            raw[name] = (dtype, shape, t.numpy())
        if problems:
            raise ValueError("load_state_dict: the state does not fit the plan: %s"
                             % "; ".join(problems))
        for name, (dtype, shape, array) in raw.items():
            model.bind(_PARAMETER, name, dtype, shape, array)
        self._plan.steps = int(state_dict["steps"])
        self._lr = float(state_dict["lr"])
        self.sync_to_module()


# The plans' learning-rate multiplier (mptrt/TrainStepAbi.h kLrScale).
_LR_SCALE = "optimizer.lr_scale"


def _move_state(source, target):
    """Copies every train_step parameter of plan `source` into `target`
    (another compilation of the same model), bit for bit."""
    for name in target.parameter_names():
        dtype, shape = source._model.info(_PARAMETER, name)
        data = np.frombuffer(source._model.read(_PARAMETER, name), _dtypes.STORAGE[dtype])
        target._model.bind(_PARAMETER, name, dtype, shape, data.reshape(shape))
    target.steps = source.steps


# torch's dtype for each plan dtype (bf16 and fp8 as torch's, bit for bit).
_TORCH_DTYPES = {
    _dtypes.F32: lambda torch: torch.float32, _dtypes.F16: lambda torch: torch.float16,
    _dtypes.BF16: lambda torch: torch.bfloat16,
    _dtypes.F8E4M3FN: lambda torch: torch.float8_e4m3fn,
    _dtypes.F8E5M2: lambda torch: torch.float8_e5m2, _dtypes.I64: lambda torch: torch.int64,
    _dtypes.I32: lambda torch: torch.int32, _dtypes.I1: lambda torch: torch.bool}
