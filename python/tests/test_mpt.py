"""Tests of the mpt package (no pytest, no torch): plain asserts.

    python test_mpt.py --mpt-train BUILD/bin/mpt-train --fixture DIR --work DIR

DIR is test/fixtures/parity/mlp_dynamo: an MLP exported by torch.onnx
(x f32[8,16] -> logits [8,10]) and one batch (input_x.npy, labels.npy).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import mpt

OPTIONS = dict(precision="bf16", optimizer="adamw", lr=0.01,
               loss_kind="cross_entropy", loss_output="logits",
               label_input="labels")
STEPS = 5


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def compile_plan(args):
    return mpt.compile(os.path.join(args.fixture, "model.onnx"), backend="cpu", **OPTIONS)


def mpt_train_lines(args, plan_path, steps, *extra, x_file=None, y_file=None):
    """mpt-train's metrics lines (the fixture's batch unless files given)."""
    metrics = os.path.join(args.work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.unlink(metrics)
    cmd = [args.mpt_train, plan_path, "--device", "cpu",
           "--input", "x=" + (x_file or os.path.join(args.fixture, "input_x.npy")),
           "--input", "labels=" + (y_file or os.path.join(args.fixture, "labels.npy")),
           "--steps", str(steps), "--metrics", metrics, "--quiet"] + list(extra)
    subprocess.run(cmd, check=True)
    with open(metrics) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def mpt_train(args, plan_path, steps, *extra):
    return [json.loads(line) for line in mpt_train_lines(args, plan_path, steps, *extra)]


def untimed(line):
    """A metrics line without the times (which vary from run to run)."""
    fields = json.loads(line)
    for key in ("time_ms", "eval_ms", "check_ms"):
        fields.pop(key, None)
    return fields


def test_train_matches_mpt_train(args, x, y):
    plan = compile_plan(args)
    assert plan.entries == ["train_step", "eval_step"], plan.entries
    assert plan.backend == "cpu"
    names = plan.parameter_names()
    assert "fc1.weight" in names and "fc1.weight.exp_avg" in names, names
    # The plan gives each output its role; StepResult reads them by role.
    assert plan.output_roles("train_step") == {
        "loss": "loss", "skipped": "skipped", "grad_norm": "grad_norm",
        "loss_scale": "loss_scale", "lr": "lr"}, plan.output_roles("train_step")
    assert plan.output_roles("eval_step") == {"loss": "loss", "logits": "none"}, \
        plan.output_roles("eval_step")
    steps = [plan.train_step(x=x, labels=y) for _ in range(STEPS)]
    losses = [s.loss for s in steps]
    print("python losses:", losses)
    for s in steps:
        assert s.skipped is False and s.scale == 1.0, s
        assert s.grad_norm > 0 and np.isfinite(s.grad_norm), s
        assert close(s.lr, 0.01, 1e-6), s
    for a, b in zip(losses, losses[1:]):
        assert b < a, "the loss does not decrease: %s" % losses
    # PyTorch's bf16 autocast run of the same steps (the fixture's meta.json).
    with open(os.path.join(args.fixture, "meta.json")) as f:
        reference = json.load(f)["autocast_adamw"]["bf16"]["losses"]
    for ours, theirs in zip(losses, reference):
        assert close(ours, theirs, 2e-3), (losses, reference)

    # The same plan and batch through mpt-train: the same losses.
    plan_path = os.path.join(args.work, "mlp.train.bf16.mptp")
    plan.save(plan_path)
    metrics = mpt_train(args, plan_path, STEPS)
    theirs = [m["loss"] for m in metrics]
    print("mpt-train losses:", theirs)
    assert len(theirs) == STEPS
    for step, (a, b) in enumerate(zip(losses, theirs)):
        assert close(a, b, 1e-6), "step %d: python %r, mpt-train %r" % (step + 1, a, b)
    for s, m in zip(steps, metrics):
        assert close(s.grad_norm, m["grad_norm"], 1e-6), (s, m)
    return plan_path


def test_run(args, x, y):
    plan = compile_plan(args)
    out = plan.run(x=x, labels=y)
    logits = out["logits"]
    assert logits.shape == (8, 10) and logits.dtype == np.float32, logits.shape
    # eval_step's loss is the mean cross entropy of its logits.
    shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    expected = -logp[np.arange(8), y].mean()
    assert close(float(out["loss"]), expected, 1e-5), (out["loss"], expected)
    # eval_step writes no parameter: a second run gives the same logits.
    assert np.array_equal(plan.run(x=x, labels=y)["logits"], logits)
    # After a training step the logits change.
    plan.train_step(x=x, labels=y)
    assert not np.array_equal(plan.run(x=x, labels=y)["logits"], logits)

    # The forward pass alone (no training): a plan whose only entry is the
    # model's function, returning the same logits as a fresh eval_step.
    forward = mpt.compile(os.path.join(args.fixture, "model.onnx"), precision="bf16",
                          train=False, backend="cpu")
    assert forward.entries == ["forward"], forward.entries
    assert "train_step" not in forward.entries
    logits2 = forward.run(x=x)["logits"]
    assert np.allclose(logits2, logits, rtol=1e-2, atol=1e-2), np.abs(logits2 - logits).max()
    # Parameters round-trip through NumPy.
    w = plan.parameter("fc1.weight")
    plan.set_parameter("fc1.weight", w * 0)
    assert not plan.parameter("fc1.weight").any()


class DeviceArray:
    """A DLPack array that says it is in CUDA memory (device type 2) and
    hands over a NumPy array's data: it sends Plan's binding down the
    device path (mptrt_bind_input_device), which on the CPU backend reads
    host memory, so that path runs here without a GPU."""

    def __init__(self, array):
        self.array = np.ascontiguousarray(array)
        self.exported = 0

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        self.exported += 1
        return self.array.__dlpack__()


def test_device_binding(args, x, y):
    """Inputs bound through DLPack (the path a PyTorch CUDA tensor takes)
    give the host path's bits; outputs read into a DLPack array too; a
    wrong element type or shape is refused with both named."""
    plan = compile_plan(args)
    expected = plan.run(x=x, labels=y)["logits"]
    dx, dy = DeviceArray(x), DeviceArray(y)
    got = plan.run(x=dx, labels=dy)["logits"]
    assert dx.exported and dy.exported, "the device path was not taken"
    assert np.array_equal(got, expected)
    out = np.full_like(expected, np.nan)
    assert plan.read_output_into("logits", out) is out and np.array_equal(out, expected)
    assert plan.input_dtype("x") == "f32" and plan.input_dtype("labels") == "i64"
    expect_error(TypeError, ["input 'x'", "(float64) is not the plan's f32"], plan.run,
                 x=DeviceArray(x.astype(np.float64)), labels=dy)
    expect_error(RuntimeError, ["cannot bind 'x'", "has type"], plan.run,
                 x=DeviceArray(x[:4]), labels=dy)
    expect_error(TypeError, ["output 'logits'", "not the plan's f32"], plan.read_output_into,
                 "logits", np.zeros(expected.shape, np.float64))
    print("device binding: the DLPack path gives the host path's logits bit for bit")


def test_checkpoints(args, x, y, plan_path):
    ckpt = os.path.join(args.work, "python.ckpt")
    a = compile_plan(args)
    for _ in range(3):
        a.train_step(x=x, labels=y)
    a.save_checkpoint(ckpt)
    later = [a.train_step(x=x, labels=y).loss for _ in range(2)]

    b = compile_plan(args)
    b.load_checkpoint(ckpt)
    assert b.steps == 3, b.steps
    resumed = [b.train_step(x=x, labels=y).loss for _ in range(2)]
    print("after the checkpoint:", later, "resumed:", resumed)
    assert resumed == later, (later, resumed)
    for name in a.parameter_names():
        assert np.array_equal(a.parameter(name), b.parameter(name)), name

    # mpt-train resumes from the Python checkpoint: the same two losses.
    metrics = mpt_train(args, plan_path, STEPS, "--resume", ckpt)
    theirs = [m["loss"] for m in metrics]
    assert [m["step"] for m in metrics] == [4, 5], metrics
    for mine, its in zip(later, theirs):
        assert close(mine, its, 1e-6), (later, theirs)

    # And Python loads what mpt-train saves: its parameters after 5 steps.
    saved = os.path.join(args.work, "mpt-train.ckpt")
    mpt_train(args, plan_path, STEPS, "--save", saved)
    c = compile_plan(args)
    c.load_checkpoint(saved)
    assert c.steps == STEPS, c.steps
    for name in a.parameter_names():
        assert np.array_equal(a.parameter(name), c.parameter(name)), name

    # Bad checkpoints: clear errors, the plan untouched.
    with open(ckpt, "rb") as f:
        data = bytearray(f.read())
    corrupt = os.path.join(args.work, "corrupt.ckpt")
    data[100] ^= 0xFF
    with open(corrupt, "wb") as f:
        f.write(data)
    before = c.parameter("fc1.weight")
    for path, words in ((corrupt, "checksum mismatch"),
                        (os.path.join(args.work, "missing.ckpt"), "cannot open")):
        try:
            c.load_checkpoint(path)
        except mpt.CheckpointError as e:
            assert words in str(e) and path in str(e), str(e)
        else:
            raise AssertionError("loading %s did not fail" % path)
    assert np.array_equal(before, c.parameter("fc1.weight"))
    other = mpt.compile(os.path.join(args.fixture, "model.onnx"), precision="bf16",
                        optimizer="sgd", lr=0.1, loss_kind="cross_entropy",
                        loss_output="logits", label_input="labels", backend="cpu")
    try:
        other.load_checkpoint(ckpt)
    except mpt.CheckpointError as e:
        assert "written for another plan" in str(e) and "exp_avg" in str(e), str(e)
    else:
        raise AssertionError("an AdamW checkpoint loaded into an SGD plan")


def test_trainer_matches_mpt_train(args, x, y, plan_path):
    """mpt.Trainer and mpt-train run the runtime's one training loop: on the
    same plan and data they give the same metrics lines (loss, grad_norm,
    scale, lr, skipped, val_loss: bit for bit), and the same checkpoint
    bytes, and a checkpoint either writes resumes in the other."""
    # Three different batches (the fixture's, its rows paired with other
    # labels, and scaled), so the batching is exercised too; and a
    # validation set of two batches.
    xs = np.concatenate([x, x[::-1], x * 0.5]).astype(np.float32)
    ys = np.concatenate([y, y, np.roll(y, 3)])
    x_file = os.path.join(args.work, "train_x.npy")
    y_file = os.path.join(args.work, "train_y.npy")
    np.save(x_file, xs)
    np.save(y_file, ys)
    val_x = os.path.join(args.work, "val_x.npy")
    val_y = os.path.join(args.work, "val_y.npy")
    np.save(val_x, xs[:16])
    np.save(val_y, ys[:16])
    steps = 7

    plan = compile_plan(args)
    trainer = mpt.Trainer(plan, {"x": xs, "labels": ys},
                          eval_data={"x": xs[:16], "labels": ys[:16]})
    ours = [trainer.step() for _ in range(steps)]
    val_loss = trainer.evaluate()
    lines = [s.json for s in ours[:-1]] + [trainer.metrics_line()]
    assert plan.steps == steps and ours[-1].step == steps, (plan.steps, ours[-1])
    theirs = mpt_train_lines(args, plan_path, steps, "--eval-input", "x=" + val_x,
                             "--eval-input", "labels=" + val_y, x_file=x_file, y_file=y_file)
    print("trainer losses:", [s.loss for s in ours])
    assert len(theirs) == steps, theirs
    for a, b in zip(lines, theirs):
        assert untimed(a) == untimed(b), "python %s\nmpt-train %s" % (a, b)
    for s, line in zip(ours, theirs):
        assert s.loss == float(np.float32(json.loads(line)["loss"])), (s.loss, line)
        assert s.skipped is False and not s.checked, s
    assert "val_loss" in untimed(theirs[-1])
    assert "%.9g" % val_loss == "%.9g" % json.loads(theirs[-1])["val_loss"], (val_loss, theirs)
    # The losses differ from step to step (the batches differ).
    assert len(set(s.loss for s in ours)) == steps, [s.loss for s in ours]

    # The same checkpoint bytes after the same steps.
    python_ckpt = os.path.join(args.work, "trainer.ckpt")
    plan.save_checkpoint(python_ckpt)
    cli_ckpt = os.path.join(args.work, "cli.ckpt")
    mpt_train_lines(args, plan_path, steps, "--save", cli_ckpt, x_file=x_file, y_file=y_file)
    with open(python_ckpt, "rb") as f, open(cli_ckpt, "rb") as g:
        assert f.read() == g.read(), "the checkpoints differ"

    # A Python checkpoint after 3 steps: mpt-train resumes it with Python's
    # steps 4-7; and Python resumes mpt-train's after 3 steps the same way.
    early = compile_plan(args)
    t = mpt.Trainer(early, {"x": xs, "labels": ys})
    for _ in range(3):
        t.step()
    # A checkpoint is never replaced by one of fewer steps: the 7-step one
    # stays, and the error says so.
    try:
        early.save_checkpoint(python_ckpt)
        raise AssertionError("a 3-step checkpoint replaced a 7-step one")
    except mpt.CheckpointError as e:
        assert "holds a checkpoint of 7 steps" in str(e), e
    os.remove(python_ckpt)
    os.remove(cli_ckpt)
    early.save_checkpoint(python_ckpt)
    resumed = mpt_train_lines(args, plan_path, steps, "--resume", python_ckpt,
                              x_file=x_file, y_file=y_file)
    assert [untimed(line) for line in resumed] == [untimed(s.json) for s in ours[3:]], resumed
    mpt_train_lines(args, plan_path, 3, "--save", cli_ckpt, x_file=x_file, y_file=y_file)
    late = compile_plan(args)
    late.load_checkpoint(cli_ckpt)
    assert late.steps == 3, late.steps
    t = mpt.Trainer(late, {"x": xs, "labels": ys})
    rest = [t.step() for _ in range(steps - 3)]
    assert [untimed(s.json) for s in rest] == [untimed(s.json) for s in ours[3:]]

    # Data errors come back as ValueError with the library's message.
    expect_error(ValueError, ["input 'x'", "dimension 1 differs"], mpt.Trainer, compile_plan(args),
                 {"x": xs[:, :8], "labels": ys})
    expect_error(ValueError, ["needs data for input 'labels'"], mpt.Trainer, compile_plan(args),
                 {"x": xs})
    expect_error(ValueError, ["check_finite"], mpt.Trainer, plan, {"x": xs, "labels": ys},
                 check_finite="always")


def expect_error(kind, words, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except kind as e:
        for w in words:
            assert w in str(e), "%r not in the message: %s" % (w, e)
        print("%s: %s" % (kind.__name__, str(e).splitlines()[0]))
        return e
    raise AssertionError("no %s from %s" % (kind.__name__, fn))


def test_trainer_params(args, x, y, plan_path):
    """mpt.Trainer(params=...) and mpt-train --params load the same .npz
    the same way: the same metrics lines, which differ from the plan's own
    initial weights'; a file without a model parameter is a ValueError
    naming it."""
    plan = compile_plan(args)
    # Every parameter, the float ones halved (the optimizer's moments are
    # zeros and stay so): both loaders read the same file.
    weights = {name: value * 0.5 if np.issubdtype(value.dtype, np.floating) else value
               for name, value in plan.parameters().items()}
    params_file = os.path.join(args.work, "params.npz")
    np.savez(params_file, **weights)
    t = mpt.Trainer(plan, {"x": x, "labels": y}, params=params_file)
    ours = [untimed(t.step().json) for _ in range(3)]
    theirs = [untimed(line) for line in
              mpt_train_lines(args, plan_path, 3, "--params", params_file)]
    assert ours == theirs, (ours, theirs)
    default = [untimed(line) for line in mpt_train_lines(args, plan_path, 1)]
    assert default[0]["loss"] != ours[0]["loss"], (default, ours)

    missing = dict(weights)
    gone = "fc1.weight"
    del missing[gone]
    np.savez(params_file, **missing)
    try:
        mpt.Trainer(compile_plan(args), {"x": x, "labels": y}, params=params_file)
    except ValueError as e:
        assert "params.npz" in str(e) and gone in str(e), str(e)
    else:
        raise AssertionError("a file without %r loaded" % gone)


def test_errors(args, x, y):
    model = os.path.join(args.fixture, "model.onnx")
    e = expect_error(mpt.CompileError, ["missing.onnx", "cannot read"], mpt.compile,
                     os.path.join(args.work, "missing.onnx"))
    assert e.status == 1
    expect_error(mpt.CompileError, ["no such option", "bogus-option"], mpt.compile, model,
                 bogus_option=1)
    expect_error(mpt.CompileError, ["for the --optimizer option: must be sgd, momentum or adamw",
                                    "got 'rmsprop'"],
                 mpt.compile, model, optimizer="rmsprop")
    expect_error(mpt.CompileError, ["model.onnx", "node 'main_graph'", "'nope'"], mpt.compile,
                 model, loss_kind="cross_entropy", loss_output="nope", label_input="labels")
    expect_error(mpt.CompileError, ["node 'x'", "rank 2"], mpt.compile, model,
                 input_shapes={"x": [8]})
    expect_error(mpt.CompileError, ["for the --precision option: must be", "got 'bf17'"],
                 mpt.compile, model, precision="bf17")
    expect_error(mpt.CompileError, ["for the --loss-kind option: must be model, cross_entropy",
                                    "got 'hinge'"], mpt.check_options, loss_kind="hinge")
    expect_error(mpt.CompileError, ["needs train"], mpt.check_options, train=False, lr=0.1)
    mpt.check_options(precision="fp16", loss_kind="mse")
    expect_error(ValueError, ["spaces"], mpt.compile, model, loss_kind="cross entropy")
    plan = compile_plan(args)
    expect_error(ValueError, ["'x'", "[8, 16]", "[4, 16]"], plan.train_step, x=x[:4], labels=y)
    expect_error(ValueError, ["needs input 'labels'"], plan.train_step, x=x)
    expect_error(ValueError, ["no input 'z'"], plan.train_step, x=x, labels=y, z=x)
    expect_error(ValueError, ["integers"], plan.train_step, x=x, labels=y.astype(np.float32))
    # An integer the plan's type cannot hold is refused, not wrapped: 2^63
    # for an i64 input, 2^32 + 3 (which would train as 3) for an i32 one.
    expect_error(ValueError, ["'labels'", "9223372036854775808 does not fit the plan's i64"],
                 plan.train_step, x=x, labels=np.full(y.shape, 2**63, dtype=np.uint64))
    expect_error(ValueError, ["'t'", "4294967299 does not fit the plan's i32"],
                 mpt._dtypes.encode, mpt._dtypes.I32, np.array([2**32 + 3]), [1], "t")
    expect_error(ValueError, ["no entry point 'nope'"], plan.call, "nope", x=x)
    expect_error(RuntimeError, ["cannot load the plan"], mpt.Plan, b"not a plan")


MEMORY_LIMIT_CHILD = r"""
import os, resource, sys
import mpt
wide_plan, small_plan, big_checkpoint = sys.argv[1:4]
with open(wide_plan, "rb") as f:
    wide = f.read()
small = mpt.Plan.load(small_plan, backend="cpu")
# A little above what this process has mapped: the wide plan's 1 GB is not.
with open("/proc/self/statm") as f:
    mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
resource.setrlimit(resource.RLIMIT_AS, (mapped + (512 << 20), resource.RLIM_INFINITY))
try:
    mpt.Plan(wide, backend="cpu")
except RuntimeError as e:
    print("plan refused:", e)
try:
    small.load_checkpoint(big_checkpoint)
except mpt.CheckpointError as e:
    print("checkpoint refused:", e)
"""


def test_memory_limit(args):
    """Under an address-space limit a little above what it has mapped, the
    package refuses a plan too wide for the limit and an 8 GiB checkpoint
    (sparse) with messages naming the sizes: exceptions, never a signal
    (issue 29's memory-limit test; tools/memory-limits.test has the
    tools')."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    compiler = os.path.join(os.path.dirname(args.mpt_train), "mpt-compile")
    wide = os.path.join(args.work, "wide.mptp")
    subprocess.run([compiler, os.path.join(source, "test", "fixtures", "models", "mlp_dynamic",
                                           "model.onnx"),
                    "--input-shape", "x=5000000,16", "-o", wide, "--quiet"], check=True)
    small = os.path.join(args.work, "small.mptp")
    compile_plan(args).save(small)
    big = os.path.join(args.work, "big.ck")
    with open(big, "wb") as f:
        f.truncate(8 << 30)
    try:
        proc = subprocess.run([sys.executable, "-c", MEMORY_LIMIT_CHILD, wide, small, big],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        os.remove(big)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert "plan refused:" in proc.stdout and "bytes of cpu memory" in proc.stdout, proc.stdout
    assert "checkpoint refused:" in proc.stdout and "has 8589934592 bytes, more than the" in \
        proc.stdout, proc.stdout
    print(proc.stdout, end="")


def test_example(args):
    """python/examples/train.py (the README's example) trains the charlm
    GPT: its first loss is PyTorch's (bf16 against FP32) and it falls."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    fixture = os.path.join(source, "test", "fixtures", "training", "charlm")
    proc = subprocess.run([sys.executable, os.path.join(source, "python", "examples", "train.py"),
                           "30", fixture], cwd=args.work, check=True,
                          stdout=subprocess.PIPE, text=True)
    print(proc.stdout, end="")
    losses = [float(line.split()[3]) for line in proc.stdout.splitlines()
              if line.startswith("step")]
    assert len(losses) == 4, proc.stdout
    reference = np.load(os.path.join(fixture, "reference_loss_fp32.npy"))
    assert close(losses[0], float(reference[0]), 1e-2), (losses[0], reference[0])
    assert losses[-1] < losses[0] - 1.0, losses
    assert os.path.exists(os.path.join(args.work, "charlm.ckpt"))
    assert "eval_step on batch 1" in proc.stdout


def test_torch_is_optional():
    """mpt never imports torch; without it, mpt.torch says what to install."""
    assert "torch" not in sys.modules
    import mpt.torch
    assert "torch" not in sys.modules
    try:
        import torch  # noqa: F401
    except ImportError:
        expect_error(ImportError, ["mpt.torch needs PyTorch", "pip install torch"],
                     mpt.torch.export_for_training, None, {"x": None})
    else:
        print("torch is importable here: test_torch.py covers mpt.torch")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpt-train", required=True)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    x = np.load(os.path.join(args.fixture, "input_x.npy"))
    y = np.load(os.path.join(args.fixture, "labels.npy"))
    plan_path = test_train_matches_mpt_train(args, x, y)
    test_run(args, x, y)
    test_device_binding(args, x, y)
    test_checkpoints(args, x, y, plan_path)
    test_trainer_matches_mpt_train(args, x, y, plan_path)
    test_trainer_params(args, x, y, plan_path)
    test_errors(args, x, y)
    test_memory_limit(args)
    test_example(args)
    test_torch_is_optional()
    print("mpt python tests: all passed")


if __name__ == "__main__":
    sys.exit(main())
