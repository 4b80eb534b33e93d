"""MPT from Python: compile an ONNX model, train and run it, with NumPy.

    import mpt
    plan = mpt.compile("model.onnx", precision="bf16", optimizer="adamw",
                       lr=3e-3, loss_kind="cross_entropy",
                       loss_output="logits", label_input="labels")
    step = plan.train_step(x=x, labels=y)    # step.loss, step.skipped, ...
    logits = plan.run(x=x)["logits"]          # eval_step (or forward)
    plan.save_checkpoint("ckpt")              # mpt-train's format
    plan.load_checkpoint("ckpt")

    trainer = mpt.Trainer(plan, {"x": xs, "labels": ys})   # mpt-train's loop
    for _ in range(100):
        m = trainer.step()                    # m.loss, m.json (its metrics line)

See docs/python.md.
"""
import os

import numpy as np

from . import _dtypes
from ._mpt import (ABI_OUTPUTS, CHECK_FINITE, EVAL_ENTRY, INPUT, OUTPUT, PARAMETER,
                   TRAIN_ENTRY, Model as _Model, Trainer as _Trainer, backends, check_options as _check,
                   compile_onnx)


def __getattr__(name):
    # mpt.torch on first use: importing mpt never imports torch.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'mpt' has no attribute %r" % name)


__all__ = ["compile", "Plan", "StepResult", "Trainer", "TrainerStep", "CompileError",
           "CheckpointError", "backends"]

# The roles of train_step's one-value outputs, in mptrt/TrainStepAbi.h's
# OutputRole order; the plan gives each output its role.
_LOSS, _SKIPPED, _GRAD_NORM, _LOSS_SCALE, _LR = ABI_OUTPUTS


class CompileError(Exception):
    """The compiler refused a model or an option. `message` holds every
    diagnostic, each naming its file and ONNX node where known; `status` is
    1 (broken input or options) or 2 (unsupported features)."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.message = message
        self.status = status


class CheckpointError(Exception):
    """A checkpoint that cannot be read, is corrupt, or does not fit the
    plan (the runtime's message names the file and what is wrong)."""


def _option_value(name, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    text = repr(value) if isinstance(value, float) else str(value)
    if not text or any(c.isspace() for c in text) or any(c in text for c in "{}'\""):
        raise ValueError("option %s=%r: values may not be empty or hold spaces, "
                         "quotes or braces" % (name, value))
    return text


def pipeline_options(**options):
    """The pipeline options string for keyword options: `loss_kind="mse"`
    is `loss-kind=mse` (docs/pipelines.md lists them); None is left out."""
    parts = []
    for key, value in options.items():
        if value is None:
            continue
        name = key.replace("_", "-")
        parts.append("%s=%s" % (name, _option_value(name, value)))
    return " ".join(parts)


def check_options(train=True, **options):
    """Raises CompileError, with the compiler's message, if
    compile(..., train=train, **options) would refuse the options: a value
    an option does not take (the message lists those it does), an unknown
    option, or options that do not go together. The compiler is the only
    place the allowed values are written down."""
    message = _check(bool(train), pipeline_options(**options))
    if message:
        raise CompileError(message.rstrip("\n"), 1)


def compile(onnx_path, precision="bf16", train=True, input_shapes=None,
            backend=None, **options):
    """Compiles the ONNX model at `onnx_path` and loads it; returns a Plan.

    precision: none, fp32, bf16, fp16, fp8 or auto. train: build the
    `train_step` entry point (forward, gradients, loss scaling, optimizer)
    and `eval_step`; False compiles the forward pass only. input_shapes:
    {input name: shape} for inputs with symbolic dimensions. backend:
    the runtime backend ("cpu"; None picks the best this host has).
    Every other keyword is a pipeline option, with `_` for `-`:
    optimizer ("sgd", "momentum", "adamw"), lr, weight_decay, beta1, beta2,
    eps, momentum, loss_scale ("none", "dynamic", "static:S", "auto"),
    clip_norm, lr_schedule, warmup_steps, total_steps, min_lr,
    loss_kind ("model", "cross_entropy", "mse", "nll"), loss_output, label_input,
    loss (the output that is the loss), freeze (list of globs), ...

    Raises CompileError (with the compiler's diagnostics) when the file,
    an option or the model is bad, ValueError for a malformed argument."""
    text = pipeline_options(precision=precision, **options)
    shapes = ""
    if input_shapes:
        shapes = ";".join("%s=%s" % (name, ",".join(str(int(d)) for d in shape))
                          for name, shape in input_shapes.items())
    status, result = compile_onnx(os.fspath(onnx_path), bool(train), text, shapes)
    if status != 0:
        raise CompileError(result.rstrip("\n"), status)
    return Plan(result, backend=backend)


class StepResult:
    """What one train_step returned: loss, skipped (the step was skipped
    for a non-finite gradient), grad_norm, scale (the loss scale), lr
    (None where the plan has no such output), and every output by name in
    `outputs`. `roles` maps a role ("loss", ...) to the output that has it,
    as the plan records."""

    __slots__ = ("loss", "skipped", "grad_norm", "scale", "lr", "outputs")

    def __init__(self, outputs, roles):
        def scalar(role):
            value = outputs.get(roles.get(role))
            return None if value is None or value.size != 1 else value.reshape(()).item()

        self.outputs = outputs
        self.loss = scalar(_LOSS)
        skipped = scalar(_SKIPPED)
        self.skipped = None if skipped is None else bool(skipped)
        self.grad_norm = scalar(_GRAD_NORM)
        self.scale = scalar(_LOSS_SCALE)
        self.lr = scalar(_LR)

    def __getitem__(self, key):
        return getattr(self, key) if key in self.__slots__ else self.outputs[key]

    def as_dict(self):
        return {k: getattr(self, k) for k in ("loss", "skipped", "grad_norm", "scale", "lr")}

    def __repr__(self):
        return "StepResult(%s)" % ", ".join("%s=%r" % kv for kv in self.as_dict().items())


def _in_device_memory(value):
    """Whether `value` is a DLPack array in a device's memory (a CUDA
    tensor), not the host's (DLPack's kDLCPU and kDLCUDAHost, pinned)."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or isinstance(value, np.ndarray):
        return False
    try:
        kind = device()[0]
    except Exception:
        return False
    return int(kind) not in (1, 3)


class Plan:
    """A compiled plan, loaded on a runtime backend. Parameters (weights,
    optimizer state, loss scale, step counters) live in it and persist
    across calls; inputs are bound on each call."""

    def __init__(self, plan_bytes, backend=None):
        self._bytes = bytes(plan_bytes)
        self._model = _Model(self._bytes, backend or "")
        # Steps run since the start of training (checkpoints carry it).
        self.steps = 0

    @classmethod
    def load(cls, path, backend=None):
        """A plan file (.mptp, from mpt-compile or Plan.save)."""
        with open(path, "rb") as f:
            return cls(f.read(), backend=backend)

    def save(self, path):
        """Writes the plan (not its current parameters: see save_checkpoint)."""
        with open(path, "wb") as f:
            f.write(self._bytes)

    @property
    def backend(self):
        return self._model.backend()

    @property
    def entries(self):
        return self._model.entries()

    def inputs(self, entry=None):
        return self._model.names(self._entry(entry), INPUT)

    def outputs(self, entry=None):
        return self._model.names(self._entry(entry), OUTPUT)

    def output_roles(self, entry=None):
        """{output name: its role}, as the plan records it: one of
        ABI_OUTPUTS (train_step's one-value outputs), "gradient" or
        "none"."""
        entry = self._entry(entry)
        return dict(zip(self._model.names(entry, OUTPUT), self._model.roles(entry)))

    def parameter_names(self, entry=None):
        """The parameters of `entry` (default: train_step's, which are all
        of them: weights, optimizer and loss-scaler state, step counters)."""
        if entry is None and TRAIN_ENTRY in self.entries:
            entry = TRAIN_ENTRY
        return self._model.names(self._entry(entry), PARAMETER)

    def _entry(self, entry):
        if entry is not None:
            if entry not in self.entries:
                raise ValueError("the plan has no entry point '%s' (it has %s)"
                                 % (entry, ", ".join(self.entries)))
            return entry
        others = [e for e in self.entries if e != TRAIN_ENTRY]
        if EVAL_ENTRY in others:
            return EVAL_ENTRY
        if len(others) == 1:
            return others[0]
        if TRAIN_ENTRY in self.entries and not others:
            return TRAIN_ENTRY
        raise ValueError("the plan has several entry points (%s): name one"
                         % ", ".join(self.entries))

    def _bind_inputs(self, entry, values):
        expected = self._model.names(entry, INPUT)
        unknown = sorted(set(values) - set(expected))
        if unknown:
            raise ValueError("'%s' has no input %s (its inputs: %s)"
                             % (entry, ", ".join(repr(u) for u in unknown),
                                ", ".join(expected)))
        missing = [n for n in expected if n not in values]
        if missing:
            raise ValueError("'%s' needs input %s"
                             % (entry, ", ".join(repr(m) for m in missing)))
        for name in expected:
            dtype, shape = self._model.info(INPUT, name)
            if _in_device_memory(values[name]):
                # A CUDA array (a PyTorch CUDA tensor): copied on the GPU,
                # through DLPack, never to the host.
                self._model.bind_device(name, dtype, values[name])
                continue
            data = _dtypes.encode(dtype, values[name], shape, name)
            self._model.bind(INPUT, name, dtype, shape, data)

    def _read_outputs(self, entry):
        result = {}
        for name in self._model.names(entry, OUTPUT):
            dtype, shape = self._model.info(OUTPUT, name)
            result[name] = _dtypes.decode(dtype, self._model.read(OUTPUT, name), shape)
        return result

    def input_dtype(self, name, entry=None):
        """The plan's dtype of input `name` ("f32", "bf16", "i64", ...)."""
        if name not in self._model.names(self._entry(entry), INPUT):
            raise ValueError("'%s' has no input '%s'" % (self._entry(entry), name))
        return _dtypes.NAMES[self._model.info(INPUT, name)[0]]

    def read_output_into(self, name, out):
        """Copies output `name` of the last run into `out`, a C-contiguous
        DLPack array (a PyTorch tensor) of the plan's device and of the
        output's dtype and size: on a CUDA plan the copy stays on the GPU."""
        dtype, _ = self._model.info(OUTPUT, name)
        self._model.read_device(name, dtype, out)
        return out

    def call(self, entry, **inputs):
        """Runs entry point `entry` on `inputs` (NumPy arrays, or DLPack
        arrays of the plan's device such as PyTorch CUDA tensors, which are
        copied on the device; by input name); returns its outputs {name:
        NumPy array}."""
        entry = self._entry(entry)
        self._bind_inputs(entry, inputs)
        self._model.run(entry)
        return self._read_outputs(entry)

    def run(self, **inputs):
        """Runs the plan's forward entry point (eval_step in a training
        plan, the model's function in an inference plan) on `inputs`;
        returns {output name: NumPy array}."""
        return self.call(None, **inputs)

    def train_step(self, **batch):
        """One training step on `batch` (NumPy arrays by input name):
        forward, backward, loss scaling and the optimizer update. Returns a
        StepResult (loss, skipped, grad_norm, scale, lr, outputs)."""
        if TRAIN_ENTRY not in self.entries:
            raise ValueError("this plan has no train_step: compile with train=True")
        outputs = self.call(TRAIN_ENTRY, **batch)
        self.steps += 1
        roles = {role: name for name, role in self.output_roles(TRAIN_ENTRY).items()
                 if role in ABI_OUTPUTS}
        return StepResult(outputs, roles)

    def parameter(self, name):
        """A parameter's current value (NumPy; bf16 and fp8 as float32)."""
        dtype, shape = self._model.info(PARAMETER, name)
        return _dtypes.decode(dtype, self._model.read(PARAMETER, name), shape)

    def set_parameter(self, name, value):
        """Sets a parameter (converted to its plan dtype)."""
        dtype, shape = self._model.info(PARAMETER, name)
        data = _dtypes.encode(dtype, value, shape, name)
        self._model.bind(PARAMETER, name, dtype, shape, data)

    def parameters(self, entry=TRAIN_ENTRY):
        """{name: value} of every parameter of `entry` (by default
        train_step's: weights, master copies, optimizer and scaler state)."""
        if entry not in self.entries:
            entry = self._entry(None)
        return {n: self.parameter(n) for n in self.parameter_names(entry)}

    def _checkpoint_entry(self):
        return TRAIN_ENTRY if TRAIN_ENTRY in self.entries else self._entry(None)

    def save_checkpoint(self, path):
        """Writes every parameter of train_step and the step count, in
        mpt-train's checkpoint format (`mpt-train --resume` reads it): the
        runtime's training library writes it, atomically."""
        try:
            self._model.save_checkpoint(self._checkpoint_entry(), os.fspath(path), self.steps)
        except RuntimeError as e:
            raise CheckpointError(str(e)) from None

    def load_checkpoint(self, path):
        """Restores the parameters and the step count from a checkpoint of
        this plan (written by save_checkpoint or mpt-train --save). Raises
        CheckpointError, leaving the plan as it was, when the file is bad or
        holds other tensors."""
        try:
            self.steps = self._model.load_checkpoint(self._checkpoint_entry(), os.fspath(path))
        except RuntimeError as e:
            raise CheckpointError(str(e)) from None


class TrainerStep:
    """What one Trainer step reported, as mpt-train's metrics line has it:
    step (1-based, counting earlier runs), loss, skipped, grad_norm, scale
    (the loss scale), lr, fp8_scale_min and _max (None where the plan has
    no such output), time_ms, first_nonfinite (where a finite check found
    the first inf or NaN: (node, op, phase, output, kernel), None when it
    found none; absent without a check), val_loss after evaluate(), and
    json: the metrics line itself."""

    __slots__ = ("step", "loss", "skipped", "grad_norm", "scale", "lr", "fp8_scale_min",
                 "fp8_scale_max", "time_ms", "first_nonfinite", "checked", "val_loss", "json")

    def __init__(self, values):
        for key in self.__slots__:
            setattr(self, key, values.get(key))
        self.checked = "first_nonfinite" in values

    def __repr__(self):
        return "TrainerStep(%s)" % self.json


class Trainer:
    """mpt-train's training loop over a Plan, from the runtime's training
    library (mptrt/train.hpp): the same batching, step, finite check and
    rerun, metrics and checkpoints, so the same data gives mpt-train's loss
    curve bit for bit.

    data: {input name: array of shape [N, ...]} for every input of
    train_step (shape [B, ...]): cut into floor(N/B) batches, step s
    (0-based, counting the plan's steps so far) uses batch s mod
    floor(N/B). check_finite: "on-skip" (rerun a skipped step with a check
    after every kernel), "every-kernel" or "off". seed: seeds training
    dropout (the plan's train.seed), like mpt-train --seed. eval_data:
    {input name: array} for eval_entry, the validation set of evaluate().
    params: a .safetensors or .npz file of starting parameters, as
    mpt-train --params reads it (load_params). The plan's parameters and
    step count are the trainer's: Plan.steps, save_checkpoint and
    load_checkpoint go on from where it is."""

    def __init__(self, plan, data, check_finite="on-skip", seed=None, eval_data=None,
                 eval_entry=EVAL_ENTRY, params=None):
        if TRAIN_ENTRY not in plan.entries:
            raise ValueError("this plan has no train_step: compile with train=True")
        if check_finite not in CHECK_FINITE:
            raise ValueError("check_finite=%r: it is one of %s"
                             % (check_finite, ", ".join(CHECK_FINITE)))
        self.plan = plan
        self._trainer = _Trainer(plan._model, TRAIN_ENTRY, CHECK_FINITE.index(check_finite))
        self._set(TRAIN_ENTRY, data, eval=False)
        if seed is not None:
            self._trainer.set_seed(int(seed))
        if eval_data is not None:
            self._trainer.set_eval_entry(eval_entry)
            self._set(eval_entry, eval_data, eval=True)
        if params is not None:
            self.load_params(params)

    def load_params(self, path):
        """Binds the plan's parameters from a .safetensors or .npz file, by
        name, as mpt-train --params does: every tensor must name a parameter
        of train_step and every model parameter (not optimizer or scaler
        state) must have one, with the same shape; floats are converted to
        the parameter's dtype. Nothing is bound unless all fit; a ValueError
        names the file and tensor otherwise."""
        try:
            self._trainer.load_params(os.fspath(path))
        except RuntimeError as e:
            raise ValueError(str(e)) from None

    def _set(self, entry, data, eval):
        names = self.plan._model.names(entry, INPUT)
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError("'%s' has no input %s (its inputs: %s)"
                             % (entry, ", ".join(repr(u) for u in unknown), ", ".join(names)))
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError("'%s' needs data for input %s"
                             % (entry, ", ".join(repr(m) for m in missing)))
        for name in names:
            dtype, shape = self.plan._model.info(INPUT, name)
            array = np.asarray(data[name])
            rows = list(shape)
            if shape and array.ndim == len(shape):
                rows = list(array.shape)  # [N, ...]: the library cuts it into batches
            encoded = _dtypes.encode(dtype, array, rows, name)
            try:
                self._trainer.set_data(name, dtype, rows, encoded, eval)
            except RuntimeError as e:
                raise ValueError(str(e)) from None

    def step(self):
        """Runs train_step on the next batch; returns a TrainerStep."""
        self._trainer.set_steps(self.plan.steps)
        values = self._trainer.step()
        self.plan.steps = self._trainer.steps()
        return TrainerStep(values)

    def evaluate(self):
        """The mean loss of eval_entry over the validation set (eval_data)."""
        return self._trainer.evaluate()

    def metrics_line(self):
        """The last step's metrics line (with val_loss after evaluate())."""
        return self._trainer.metrics_json()
