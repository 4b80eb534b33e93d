#!/usr/bin/env python3
"""Generate the training fixtures: PyTorch reference values that MPT's
``train_step`` (docs/training.md) is checked against.

Developer tool only, like scripts/gen_fixtures.py: the tests read the
generated files and never run this script.

Writes, under ``--out`` (default ``test/fixtures/training``)::

    mlp_step/    Linear(12,16)-ReLU-Linear(16,5) without its loss, one batch,
                 and the cross-entropy loss, gradients and parameters after
                 SGD (1 step), SGD+momentum+weight decay (2 steps) and AdamW
                 (2 steps, with the optimizer state)
    charlm/      character-level language modelling on Genesis 1-20 of the
                 King James Bible (Debian package bible-kjv-text): text,
                 vocabulary, [N,32] int32 train/val windows, a 2-layer GPT with
                 its cross-entropy loss, and the FP32 AdamW loss curve for 300
                 steps
    smallgrad/   a 4-layer tanh MLP regression with targets of magnitude 1e-3,
                 whose gradients underflow in FP16 unless the loss is scaled;
                 the data, the loss curves of FP32, FP16 without loss scaling
                 and FP16 with a dynamic loss scale, and the fraction of exactly
                 zero weight-gradient elements per step
    bn_step/     Conv-BatchNorm-ReLU-Linear exported in training mode: three
                 SGD steps' losses, parameters and BatchNorm running
                 statistics, and the model.eval() loss on a held-out batch

Every fixture directory also gets a README.md (generated, with the measured
numbers) and a meta.json (names, shapes, hyperparameters, versions).

File naming: per-parameter files keep the PyTorch/ONNX parameter name as is,
dots included: ``grad_fc1.weight.npy`` is d loss / d ``fc1.weight``. Strip the
prefix and the ``.npy`` suffix to get the initializer name back (names may
contain both '.' and '_', so replacing one by the other would not be
reversible).

All computations are seeded, single-threaded and run with
``torch.use_deterministic_algorithms(True)`` on the CPU in float32 (the FP16
runs of smallgrad use CPU autocast). The charlm text is regenerated from the
Debian packages (``apt-get download``; needs network) unless ``--text FILE``
gives the text to use (e.g. the committed ``charlm/text.txt``).

Usage (from the repository root)::

    python3 scripts/gen_training_fixtures.py [--out DIR] [--only NAME ...]
        [--text FILE] [--mpt-translate BIN]

``--mpt-translate BIN`` additionally runs ``BIN --import-onnx`` on every
exported model and fails if it does not accept it.

See docs/fixtures.md ("Training fixtures").
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (model classes, npy writer, checks)

ort = gf.ort
SEED = 1234
TOLERANCE = 1e-4  # max |torch - onnxruntime| on the forward pass


class FixtureError(RuntimeError):
    pass


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def seed_everything(seed: int = SEED) -> torch.Generator:
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    return torch.Generator().manual_seed(seed)


def export_onnx(model: nn.Module, inputs: dict, output_names: list, *,
                constant_folding: bool, opset: int = 17) -> bytes:
    # Exported in train mode (none of the models has dropout or batch norm, so
    # the graph is the same): in eval mode the exporter deduplicates
    # initializers *by value*, which turns all-zero biases and the LayerNorm
    # 1/0 affine parameters into Identity nodes reading one shared
    # initializer; in train mode it only merges tensors that share storage.
    was_training = model.training
    model.train()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(
            model, tuple(inputs.values()), buf,
            dynamo=False, export_params=True, opset_version=opset,
            input_names=list(inputs.keys()), output_names=output_names,
            dynamic_axes=None,
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=constant_folding,
            keep_initializers_as_inputs=False,
        )
    model.train(was_training)
    return buf.getvalue()


def check_export(name: str, raw: bytes, model: nn.Module, inputs: dict,
                 output_names: list, buffers_ok=()) -> onnx.ModelProto:
    """Structural checks, initializers == PyTorch parameters (bit for bit),
    onnxruntime == PyTorch forward. Returns the parsed model."""
    def fail(msg):
        raise FixtureError(f"{name}: {msg}")

    proto = onnx.load_from_string(raw)
    onnx.checker.check_model(proto, full_check=True)
    if [i.name for i in proto.graph.input] != list(inputs):
        fail(f"inputs {[i.name for i in proto.graph.input]}, wanted {list(inputs)}")
    if [o.name for o in proto.graph.output] != output_names:
        fail(f"outputs {[o.name for o in proto.graph.output]}, wanted {output_names}")
    for vi in list(proto.graph.input) + list(proto.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                fail(f"{vi.name} has a non-static dim")
    hist = gf.op_histogram(proto)
    leaked = sorted(gf.FORBIDDEN_OPS & hist.keys())
    if leaked:
        fail(f"graph contains {leaked}")
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(inits))
    if missing:
        fail(f"parameters without an initializer of the same name: {missing} "
             f"(initializers: {sorted(inits)})")
    extra = sorted(set(inits) - set(params) - set(buffers_ok))
    if extra:
        fail(f"unexpected initializers {extra}")
    for pname, p in params.items():
        a = p.detach().numpy()
        if inits[pname].dtype != a.dtype or inits[pname].shape != a.shape \
                or inits[pname].tobytes() != a.tobytes():
            fail(f"initializer {pname} differs from the PyTorch parameter")

    with torch.no_grad():
        ref = gf.as_tuple(model(*inputs.values()))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(raw, so, providers=["CPUExecutionProvider"])
    outs = sess.run(output_names, {k: v.numpy() for k, v in inputs.items()})
    worst = 0.0
    for oname, t, o in zip(output_names, ref, outs):
        t = t.numpy()
        if t.shape != o.shape or t.dtype != o.dtype:
            fail(f"output {oname}: ort {o.dtype}{o.shape} vs torch {t.dtype}{t.shape}")
        d = float(np.max(np.abs(t.astype(np.float64) - o.astype(np.float64))))
        if not d <= TOLERANCE:
            fail(f"output {oname} differs from torch by {d:.3e}")
        worst = max(worst, d)
    print(f"[{name}] model.onnx: opset {proto.opset_import[0].version}, "
          f"{len(proto.graph.node)} nodes, {len(proto.graph.initializer)} initializers, "
          f"max |torch - ort| = {worst:.2e}")
    print("    ops: " + ", ".join(f"{op}={n}" for op, n in sorted(hist.items())))
    return proto


def check_mpt_translate(binary: str | None, path: str) -> None:
    if not binary:
        return
    r = subprocess.run([binary, "--import-onnx", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise FixtureError(f"{binary} --import-onnx {path} failed:\n{r.stderr[-2000:]}")
    print(f"    {os.path.basename(binary)} --import-onnx: ok")


class Writer:
    """Writes files into one fixture directory and remembers them."""

    def __init__(self, out_dir: str):
        self.dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.written: list[tuple[str, int]] = []

    def clear(self, patterns):
        for pat in patterns:
            for f in glob.glob(os.path.join(self.dir, pat)):
                os.remove(f)

    def bytes(self, fname: str, data: bytes):
        path = os.path.join(self.dir, fname)
        with open(path, "wb") as fh:
            fh.write(data)
        self.written.append((path, len(data)))

    def text(self, fname: str, s: str):
        self.bytes(fname, s.encode("utf-8"))

    def npy(self, fname: str, arr, dtype):
        arr = np.asarray(arr)
        if arr.dtype != np.dtype(dtype):
            raise FixtureError(f"{fname}: dtype {arr.dtype}, wanted {np.dtype(dtype)}")
        self.bytes(fname, gf.npy_bytes(arr))
        back = np.load(os.path.join(self.dir, fname))
        if back.shape != arr.shape or back.dtype != arr.dtype or not np.array_equal(back, arr):
            raise FixtureError(f"{fname} does not round-trip")

    def json(self, fname: str, obj):
        self.text(fname, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def versions() -> dict:
    return {"torch": torch.__version__, "onnx": onnx.__version__,
            "onnxruntime": ort.__version__, "numpy": np.__version__,
            "python": sys.version.split()[0]}


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def fmt(x: float) -> str:
    return f"{x:.6g}"


# --------------------------------------------------------------------------
# 1. mlp_step: one batch, exact optimizer steps
# --------------------------------------------------------------------------

MLP_SHAPE = (12, 16, 5)  # d_in, hidden, classes
MLP_BATCH = 8
SGD_HP = {"lr": 0.1, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0,
          "nesterov": False, "steps": 1}
MOMENTUM_HP = {"lr": 0.05, "momentum": 0.9, "dampening": 0.0, "weight_decay": 1e-4,
               "nesterov": False, "steps": 2}
ADAMW_HP = {"lr": 1e-2, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01,
            "amsgrad": False, "steps": 2}


def gen_mlp_step(out_root: str, mpt_translate: str | None) -> list:
    gen = seed_everything()
    d_in, d_hid, d_out = MLP_SHAPE
    model = gf.MLP(d_in, d_hid, d_out).eval()
    x = torch.randn(MLP_BATCH, d_in, generator=gen)
    labels = torch.randint(0, d_out, (MLP_BATCH,), generator=gen, dtype=torch.long)
    init_state = {k: v.detach().clone() for k, v in model.named_parameters()}
    names = list(init_state)

    raw = export_onnx(model, {"x": x}, ["logits"], constant_folding=True)
    proto = check_export("mlp_step", raw, model, {"x": x}, ["logits"])
    init_names = [i.name for i in proto.graph.initializer]
    gemms = [n for n in proto.graph.node if n.op_type == "Gemm"]
    if len(gemms) != 2 or any({a.name: a.i for a in n.attribute}.get("transB") != 1 for n in gemms):
        raise FixtureError("mlp_step: expected 2 Gemm nodes with transB=1")

    def fresh():
        m = gf.MLP(d_in, d_hid, d_out)
        with torch.no_grad():
            for k, p in m.named_parameters():
                p.copy_(init_state[k])
        return m

    def loss_of(m):
        return F.cross_entropy(m(x), labels, reduction="mean")

    # Loss and gradients at the initial parameters.
    m = fresh()
    loss0 = loss_of(m)
    loss0.backward()
    grads = {k: p.grad.detach().clone() for k, p in m.named_parameters()}

    def run(opt_fn, steps):
        m = fresh()
        opt = opt_fn(m.parameters())
        losses = []
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = loss_of(m)
            losses.append(loss.item())
            loss.backward()
            opt.step()
        return m, opt, losses

    m_sgd, _, sgd_losses = run(lambda p: torch.optim.SGD(
        p, lr=SGD_HP["lr"], momentum=0.0, weight_decay=0.0, foreach=False), 1)
    m_mom, _, mom_losses = run(lambda p: torch.optim.SGD(
        p, lr=MOMENTUM_HP["lr"], momentum=MOMENTUM_HP["momentum"],
        weight_decay=MOMENTUM_HP["weight_decay"], foreach=False), 2)
    m_adam, opt_adam, adam_losses = run(lambda p: torch.optim.AdamW(
        p, lr=ADAMW_HP["lr"], betas=tuple(ADAMW_HP["betas"]), eps=ADAMW_HP["eps"],
        weight_decay=ADAMW_HP["weight_decay"], foreach=False), 2)
    if sgd_losses[0] != loss0.item() or mom_losses[0] != loss0.item():
        raise FixtureError("mlp_step: first-step losses disagree")

    w = Writer(os.path.join(out_root, "mlp_step"))
    w.clear(["*.npy", "model.onnx", "meta.json", "README.md"])
    w.bytes("model.onnx", raw)
    check_mpt_translate(mpt_translate, os.path.join(w.dir, "model.onnx"))
    w.npy("x.npy", x.numpy(), np.float32)
    w.npy("labels.npy", labels.numpy(), np.int64)
    w.npy("loss.npy", f32(loss0.item()), np.float32)
    for k in names:
        w.npy(f"grad_{k}.npy", grads[k].numpy(), np.float32)
    for k, p in m_sgd.named_parameters():
        w.npy(f"sgd_{k}.npy", p.detach().numpy(), np.float32)
    w.npy("sgd_loss.npy", f32(sgd_losses), np.float32)
    for k, p in m_mom.named_parameters():
        w.npy(f"momentum_{k}.npy", p.detach().numpy(), np.float32)
    w.npy("momentum_loss.npy", f32(mom_losses), np.float32)
    for k, p in m_adam.named_parameters():
        st = opt_adam.state[p]
        w.npy(f"adamw_{k}.npy", p.detach().numpy(), np.float32)
        w.npy(f"adamw_exp_avg_{k}.npy", st["exp_avg"].numpy(), np.float32)
        w.npy(f"adamw_exp_avg_sq_{k}.npy", st["exp_avg_sq"].numpy(), np.float32)
        if float(st["step"]) != 2.0:
            raise FixtureError("mlp_step: AdamW did not take 2 steps")
    w.npy("adamw_loss.npy", f32(adam_losses), np.float32)

    meta = {
        "fixture": "mlp_step",
        "model": f"Linear({d_in},{d_hid}) -> ReLU -> Linear({d_hid},{d_out}); "
                 "PyTorch default init, seed 1234",
        "onnx": {"opset": 17, "inputs": {"x": ["float32", [MLP_BATCH, d_in]]},
                 "outputs": {"logits": ["float32", [MLP_BATCH, d_out]]},
                 "initializers": init_names,
                 "export": "torch.onnx.export(dynamo=False, do_constant_folding=True, "
                           "training=PRESERVE, module in train mode)"},
        "parameters": {k: list(v.shape) for k, v in init_state.items()},
        "loss": "cross_entropy(logits, labels), reduction mean (added by the compiler)",
        "labels": {"dtype": "int64", "shape": [MLP_BATCH], "classes": d_out},
        "file_naming": "<prefix>_<parameter name>.npy, the parameter name kept verbatim "
                       "(dots included)",
        "sgd": SGD_HP,
        "momentum": MOMENTUM_HP,
        "adamw": {**ADAMW_HP, "foreach": False},
        "same_batch_every_step": True,
        "values": {"loss": loss0.item(), "sgd_loss": sgd_losses,
                   "momentum_loss": mom_losses, "adamw_loss": adam_losses},
        "versions": versions(),
    }
    w.json("meta.json", meta)
    rows = "\n".join(f"| `{k}` | {list(v.shape)} |" for k, v in init_state.items())
    w.text("README.md", f"""# mlp_step

Generated by `scripts/gen_training_fixtures.py`; do not edit. PyTorch
{torch.__version__}, float32, CPU, 1 thread, deterministic algorithms.

`model.onnx` (opset 17, no loss): `x` f32[{MLP_BATCH},{d_in}] -> Gemm(transB=1) -> Relu ->
Gemm(transB=1) -> `logits` f32[{MLP_BATCH},{d_out}]. The initializers are the PyTorch
parameters under their PyTorch names, bit for bit equal to the initial values:

| initializer | shape |
|---|---|
{rows}

Loss (added by the compiler): `cross_entropy(logits, labels)`, mean over the batch.
`labels.npy` is int64 [{MLP_BATCH}] in 0..{d_out - 1}. Every step uses the same batch
(`x.npy`, `labels.npy`).

| file | what |
|---|---|
| `loss.npy` | 0-d f32, loss at the initial parameters ({fmt(loss0.item())}) |
| `grad_<p>.npy` | d loss / d p at the initial parameters |
| `sgd_<p>.npy`, `sgd_loss.npy` [1] | after 1 step of `SGD(lr=0.1)` |
| `momentum_<p>.npy`, `momentum_loss.npy` [2] | after 2 steps of `SGD(lr=0.05, momentum=0.9, weight_decay=1e-4)`; losses {fmt(mom_losses[0])}, {fmt(mom_losses[1])} |
| `adamw_<p>.npy`, `adamw_exp_avg_<p>.npy`, `adamw_exp_avg_sq_<p>.npy`, `adamw_loss.npy` [2] | after 2 steps of `AdamW(lr=1e-2, betas=(0.9,0.999), eps=1e-8, weight_decay=0.01, foreach=False)`, with the optimizer state after step 2; losses {fmt(adam_losses[0])}, {fmt(adam_losses[1])} |

`<p>` is the parameter name verbatim, dots included (`grad_fc1.weight.npy`).
The `*_loss.npy` files hold the loss of each step's forward pass, before
that step's update (the `loss` output of `train_step`).
""")
    return w.written


# --------------------------------------------------------------------------
# 2. charlm: character-level LM on the King James Bible (Debian package)
# --------------------------------------------------------------------------

KJV_PACKAGES = ("bible-kjv-text", "bible-kjv")
KJV_RANGE = "Gen1:1-Gen20:18"  # Genesis 1-20, the last verse of chapter 20
KJV_LAST_REF = "Ge20:18"
CHARLM_T = 32
CHARLM_B = 16
CHARLM_N_TRAIN = 1024
CHARLM_N_VAL = 128
CHARLM_TRAIN_FRACTION = 0.85
CHARLM_CFG = dict(block_size=CHARLM_T, n_layer=2, n_head=4, d_model=64)
CHARLM_INIT_STD = 0.02
CHARLM_STEPS = 300
CHARLM_ADAMW = {"lr": 3e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_kjv_text() -> tuple[str, dict]:
    """apt-get download the two Debian packages into a temporary directory,
    unpack them with dpkg-deb -x (nothing is installed) and run the unpacked
    `bible` program on the unpacked data file."""
    tmp = tempfile.mkdtemp(prefix="kjv-")
    try:
        r = subprocess.run(["apt-get", "download", *KJV_PACKAGES], cwd=tmp,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise FixtureError("apt-get download failed (no network or no apt?); "
                               "pass --text test/fixtures/training/charlm/text.txt to "
                               f"reuse the committed text.\n{r.stderr[-1000:]}")
        info = {"packages": {}}
        root = os.path.join(tmp, "root")
        for deb in sorted(glob.glob(os.path.join(tmp, "*.deb"))):
            pkg = subprocess.run(["dpkg-deb", "-f", deb, "Package"], capture_output=True,
                                 text=True, check=True).stdout.strip()
            ver = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True,
                                 text=True, check=True).stdout.strip()
            info["packages"][pkg] = {"version": ver, "deb": os.path.basename(deb),
                                     "sha256": sha256_file(deb)}
            subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        data = os.path.join(root, "usr", "lib", "bible.data")
        prog = os.path.join(root, "usr", "bin", "bible")
        info["bible.data sha256"] = sha256_file(data)
        # -f turns pretty-printing off: one verse per line, "Ge1:1 text".
        r = subprocess.run([prog, "-f", "-p", os.path.dirname(data), KJV_RANGE],
                           capture_output=True, text=True, check=True)
        lines = r.stdout.splitlines()
        refs = [ln.split(" ", 1)[0] for ln in lines]
        if refs[0] != "Ge1:1" or refs[-1] != KJV_LAST_REF:
            raise FixtureError(f"unexpected bible output: first {refs[0]}, last {refs[-1]}")
        info["verses"] = len(lines)
        text = "\n".join(ln.split(" ", 1)[1] for ln in lines) + "\n"
        return text, info
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class CharGPT(nn.Module):
    """GPT-style decoder in the style of gen_fixtures.GPT (same blocks), but
    with int32 inputs, an untied LM head and GPT-2 style init."""

    def __init__(self, cfg: gf.GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(gf.DecoderBlock(cfg) for _ in range(cfg.n_layer))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def init_weights(self, gen: torch.Generator, std: float):
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, std, generator=gen)
                    if getattr(m, "bias", None) is not None:
                        m.bias.zero_()
                elif isinstance(m, nn.LayerNorm):
                    m.weight.fill_(1.0)
                    m.bias.zero_()

    def forward(self, idx: torch.Tensor, targets: torch.Tensor):
        t, v = self.cfg.block_size, self.cfg.vocab_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_final(x))
        loss = F.cross_entropy(logits.view(-1, v), targets.view(-1).long())
        return logits, loss


def windows(ids: np.ndarray, start: int, stop: int, n: int, t: int):
    """n evenly spaced windows of t+1 characters inside ids[start:stop]."""
    stride = (stop - start - (t + 1)) // (n - 1)
    if stride < 1:
        raise FixtureError("text too short for the requested windows")
    starts = start + stride * np.arange(n)
    w = np.stack([ids[s:s + t + 1] for s in starts]).astype(np.int32)
    return w[:, :-1].copy(), w[:, 1:].copy(), stride


def gen_charlm(out_root: str, mpt_translate: str | None, text_file: str | None) -> list:
    out_dir = os.path.join(out_root, "charlm")
    if text_file:
        with open(text_file, encoding="utf-8") as fh:
            text = fh.read()
        src = None
        print(f"[charlm] text from {text_file} ({len(text.encode())} bytes)")
    else:
        text, src = fetch_kjv_text()
        pkgs = ", ".join(f"{k} {v['version']}" for k, v in src["packages"].items())
        print(f"[charlm] text from Debian {pkgs}: "
              f"{src['verses']} verses, {len(text.encode())} bytes")
    if len(text.encode("utf-8")) > 100 * 1024:
        raise FixtureError("charlm text is over 100 KB")

    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.int32)
    split = int(len(ids) * CHARLM_TRAIN_FRACTION)
    tx, ty, tstride = windows(ids, 0, split, CHARLM_N_TRAIN, CHARLM_T)
    vx, vy, vstride = windows(ids, split, len(ids), CHARLM_N_VAL, CHARLM_T)
    V = len(chars)

    gen = seed_everything()
    cfg = gf.GPTConfig(vocab_size=V, **CHARLM_CFG)
    model = CharGPT(cfg)
    model.init_weights(gen, CHARLM_INIT_STD)
    model.eval()  # no dropout / batch norm: eval and train modes compute the same
    init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    n_params = sum(p.numel() for p in model.parameters())

    ex = {"idx": torch.from_numpy(tx[:CHARLM_B]), "targets": torch.from_numpy(ty[:CHARLM_B])}
    raw = export_onnx(model, ex, ["logits", "loss"], constant_folding=False)
    buffers = [k for k, _ in model.named_buffers()]
    proto = check_export("charlm", raw, model, ex, ["logits", "loss"], buffers_ok=buffers)
    init_names = [(i.name, list(i.dims)) for i in proto.graph.initializer]

    def batch(arr_x, arr_y, s):
        i = (s * CHARLM_B) % len(arr_x)
        return torch.from_numpy(arr_x[i:i + CHARLM_B]), torch.from_numpy(arr_y[i:i + CHARLM_B])

    def val_loss(m):
        with torch.no_grad():
            ls = [m(*batch(vx, vy, s))[1].item() for s in range(len(vx) // CHARLM_B)]
        return float(np.mean(ls))

    val0 = val_loss(model)
    opt = torch.optim.AdamW(model.parameters(), lr=CHARLM_ADAMW["lr"],
                            betas=tuple(CHARLM_ADAMW["betas"]), eps=CHARLM_ADAMW["eps"],
                            weight_decay=CHARLM_ADAMW["weight_decay"], foreach=False)
    model.train()
    losses = []
    t0 = time.perf_counter()
    for s in range(CHARLM_STEPS):
        xb, yb = batch(tx, ty, s)
        opt.zero_grad(set_to_none=True)
        _, loss = model(xb, yb)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    elapsed = time.perf_counter() - t0
    model.eval()
    val1 = val_loss(model)
    losses = f32(losses)
    tail = float(losses[-32:].mean())
    print(f"    training: loss step 1 {losses[0]:.4f}, step {CHARLM_STEPS} {losses[-1]:.4f} "
          f"(mean of last 32: {tail:.4f}); val {val0:.4f} -> {val1:.4f}; "
          f"{CHARLM_STEPS} steps took {elapsed:.2f} s in PyTorch "
          f"({1000 * elapsed / CHARLM_STEPS:.1f} ms/step, 1 thread)")
    if not tail < 0.6 * losses[0]:
        raise FixtureError("charlm: the reference run did not learn")

    w = Writer(out_dir)
    w.clear(["*.npy", "model.onnx", "meta.json", "README.md", "vocab.json"]
            + ([] if text_file else ["text.txt", "SOURCE.md"]))
    if not text_file or os.path.abspath(text_file) != os.path.abspath(os.path.join(w.dir, "text.txt")):
        w.text("text.txt", text)
    w.text("vocab.json", json.dumps({"vocab_size": V, "chars": chars}, indent=1) + "\n")
    w.npy("train_x.npy", tx, np.int32)
    w.npy("train_y.npy", ty, np.int32)
    w.npy("val_x.npy", vx, np.int32)
    w.npy("val_y.npy", vy, np.int32)
    w.bytes("model.onnx", raw)
    check_mpt_translate(mpt_translate, os.path.join(w.dir, "model.onnx"))
    w.npy("reference_loss_fp32.npy", losses, np.float32)
    if src is not None:
        pk = src["packages"]
        w.text("SOURCE.md", f"""# Source of text.txt

Genesis chapters 1-20 of the King James Version of the Bible (1611),
{src['verses']} verses, one verse per line, without verse references. The
text is in the public domain (the package's copyright file: "The copyright
for the King James Version text of the Bible is expired since the translation
was done in 1611").

Taken from the Debian 12 (bookworm) packages:

| package | version | file | sha256 |
|---|---|---|---|
""" + "".join(f"| `{k}` | {v['version']} | `{v['deb']}` | `{v['sha256']}` |\n"
              for k, v in pk.items()) + f"""
`bible-kjv-text` holds the compressed text `/usr/lib/bible.data`
(sha256 `{src['bible.data sha256']}`); `bible-kjv` holds the `bible` program
that decodes it. Extraction, as done by `scripts/gen_training_fixtures.py`
(nothing is installed system-wide):

```sh
apt-get download bible-kjv-text bible-kjv      # into a temporary directory
dpkg-deb -x bible-kjv-text_*.deb root
dpkg-deb -x bible-kjv_*.deb root
root/usr/bin/bible -f -p "$PWD/root/usr/lib" {KJV_RANGE}
#   -f: no pretty-printing, one verse per line as "Ge1:1 In the beginning ..."
# then drop the leading "Ge<c>:<v> " reference of each line; lines end in "\\n"
```

{len(text.encode())} bytes, sha256 `{hashlib.sha256(text.encode()).hexdigest()}`.
""")
    meta = {
        "fixture": "charlm",
        "text": {"file": "text.txt", "bytes": len(text.encode()),
                 "sha256": hashlib.sha256(text.encode()).hexdigest(), "chars": len(ids)},
        "vocab_size": V,
        "windows": {"T": CHARLM_T, "train": [CHARLM_N_TRAIN, CHARLM_T], "val": [CHARLM_N_VAL, CHARLM_T],
                    "dtype": "int32", "split_char": split,
                    "train_starts": f"{tstride} * i for i in 0..{CHARLM_N_TRAIN - 1}",
                    "val_starts": f"{split} + {vstride} * j for j in 0..{CHARLM_N_VAL - 1}",
                    "y": "x shifted by one character (y[n, t] = text[start_n + t + 1])"},
        "model": {"kind": "GPT (pre-LN, causal self-attention, exact-erf GELU MLP 4x, final LN, "
                          "untied LM head without bias), no dropout",
                  **CHARLM_CFG, "vocab_size": V, "parameters": n_params,
                  "init": f"Linear/Embedding weights N(0, {CHARLM_INIT_STD}), biases 0, LayerNorm 1/0, seed {SEED}"},
        "onnx": {"opset": 17,
                 "inputs": {"idx": ["int32", [CHARLM_B, CHARLM_T]], "targets": ["int32", [CHARLM_B, CHARLM_T]]},
                 "outputs": {"logits": ["float32", [CHARLM_B, CHARLM_T, V]], "loss": ["float32", []]},
                 "initializers": init_names,
                 "trainable": [k for k, _ in model.named_parameters()],
                 "buffers": buffers,
                 "export": "torch.onnx.export(dynamo=False, do_constant_folding=False, training=PRESERVE, module in train mode)"},
        "training": {"optimizer": "AdamW", **CHARLM_ADAMW, "foreach": False, "batch": CHARLM_B,
                     "steps": CHARLM_STEPS, "schedule": "constant",
                     "batches": "step s (0-based) uses train windows [s*B, (s+1)*B) mod N, no shuffling",
                     "loss_first": float(losses[0]), "loss_last": float(losses[-1]),
                     "loss_last32_mean": tail, "val_loss_initial": val0, "val_loss_final": val1},
        "versions": versions(),
    }
    w.json("meta.json", meta)
    hist = gf.op_histogram(proto)
    w.text("README.md", f"""# charlm

Generated by `scripts/gen_training_fixtures.py`; do not edit (except that
`text.txt`/`SOURCE.md` come from the Debian package, see SOURCE.md).

Character-level language modelling on Genesis 1-20 (King James Version,
public domain, from Debian's `bible-kjv-text`): `text.txt`, {len(text.encode())} bytes,
{len(ids)} characters, vocabulary of {V} characters (`vocab.json`: `chars[i]` is
token `i`, sorted by code point, `\\n` included).

* `train_x.npy`, `train_y.npy`: int32 [{CHARLM_N_TRAIN},{CHARLM_T}], windows of the first {split}
  characters starting at `{tstride} * i`; `y` is `x` shifted by one character.
* `val_x.npy`, `val_y.npy`: int32 [{CHARLM_N_VAL},{CHARLM_T}] from the rest of the text
  (starts `{split} + {vstride} * j`), disjoint from the training part.
* `model.onnx` (opset 17): `idx` i32[{CHARLM_B},{CHARLM_T}], `targets` i32[{CHARLM_B},{CHARLM_T}] ->
  `logits` f32[{CHARLM_B},{CHARLM_T},{V}], `loss` f32[] (mean cross-entropy,
  `SoftmaxCrossEntropyLoss`). GPT: token + learned position embeddings, 2 pre-LN
  blocks (4 heads, d_model 64, causal mask, exact GELU MLP 4x), final LN, untied
  LM head without bias; {n_params:,} parameters; init N(0, 0.02) for Linear and
  Embedding weights, zero biases, LayerNorm 1/0 (seed {SEED}). Initializers: the
  {len(list(model.parameters()))} parameters under their PyTorch names (listed in `meta.json`), plus
  the causal masks {" and ".join(f"`{b}`" for b in buffers)}, float 0/1
  [1,1,{CHARLM_T},{CHARLM_T}] buffers (not trainable; used through `Equal` + `Where`).
  `idx` feeds `Gather(tok_emb.weight, idx)` directly; `targets` goes through a
  `Cast` to int64 before the loss.
  Ops: {", ".join(f"{op} {n}" for op, n in sorted(hist.items()))}.
* `reference_loss_fp32.npy`: f32 [{CHARLM_STEPS}], the loss of each step (forward pass
  before the update) of PyTorch FP32 training on the CPU: AdamW(lr={CHARLM_ADAMW['lr']},
  betas=(0.9,0.999), eps=1e-8, weight_decay=0, foreach=False), constant LR, batch
  {CHARLM_B}, step s (0-based) on train windows [16 s, 16 s + 16) mod {CHARLM_N_TRAIN}, no shuffling.

Reference run: loss at step 1 = {losses[0]:.4f} (ln {V} = {math.log(V):.4f}), at step
{CHARLM_STEPS} = {losses[-1]:.4f} (mean of the last 32 steps {tail:.4f}). Validation loss
(all {CHARLM_N_VAL} windows) {val0:.4f} before training, {val1:.4f} after.
""")
    return w.written


# --------------------------------------------------------------------------
# 3. smallgrad: gradients that underflow in FP16 without loss scaling
# --------------------------------------------------------------------------

SG_D, SG_H, SG_K = 32, 64, 4
SG_N, SG_B = 512, 64
SG_STEPS = 200
SG_OUT_SCALE = 3e-3   # fixed output scale: y = 3e-3 * fc4(h)
SG_TARGET_STD = 1e-3
SG_ADAMW = {"lr": 3e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}
SG_INIT_SCALE = 2.0 ** 16


class SmallGradMLP(nn.Module):
    """x -> tanh(fc1) -> tanh(fc2) -> tanh(fc3) -> fc4 -> * out_scale."""

    def __init__(self, d=SG_D, h=SG_H, k=SG_K, out_scale=SG_OUT_SCALE):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, h)
        self.fc3 = nn.Linear(h, h)
        self.fc4 = nn.Linear(h, k)
        self.out_scale = out_scale

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = torch.tanh(self.fc2(h))
        h = torch.tanh(self.fc3(h))
        return self.fc4(h) * self.out_scale


def smallgrad_data():
    """x ~ N(0,1) [N,32]; t = teacher(x) scaled to std 1e-3, where the teacher
    is a fixed random tanh network 32 -> 16 -> 4."""
    g = torch.Generator().manual_seed(SEED + 1)
    x = torch.randn(SG_N, SG_D, generator=g)
    w1 = torch.randn(SG_D, 16, generator=g) * (2.0 / math.sqrt(SG_D))
    w2 = torch.randn(16, SG_K, generator=g) / 4.0
    t = torch.tanh(x @ w1) @ w2
    t = (t * (SG_TARGET_STD / t.std())).float()
    return x, t


def smallgrad_train(init_state, x, t, mode):
    """mode: fp32 | fp16 (autocast, no loss scaling) | fp16_scaled (autocast +
    GradScaler). Returns losses [steps], zero fractions [steps, 4] of the
    fc1..fc4 weight gradients (unscaled, as the optimizer sees them), the
    trained model, and the loss-scale history."""
    torch.manual_seed(SEED)
    m = SmallGradMLP()
    m.load_state_dict(init_state)
    opt = torch.optim.AdamW(m.parameters(), lr=SG_ADAMW["lr"], betas=tuple(SG_ADAMW["betas"]),
                            eps=SG_ADAMW["eps"], weight_decay=SG_ADAMW["weight_decay"],
                            foreach=False)
    scaler = torch.amp.GradScaler("cpu", init_scale=SG_INIT_SCALE) if mode == "fp16_scaled" else None
    weights = [m.fc1.weight, m.fc2.weight, m.fc3.weight, m.fc4.weight]
    losses, zeros, scales, skipped = [], [], [], 0
    for s in range(SG_STEPS):
        i = (s * SG_B) % SG_N
        xb, tb = x[i:i + SG_B], t[i:i + SG_B]
        opt.zero_grad(set_to_none=True)
        if mode == "fp32":
            loss = F.mse_loss(m(xb), tb)
        else:
            with torch.autocast("cpu", dtype=torch.float16):
                y = m(xb)
            if y.dtype != torch.float16:
                raise FixtureError("autocast did not run the model in float16")
            loss = F.mse_loss(y.float(), tb)  # loss in float32
        losses.append(loss.item())
        if scaler is None:
            loss.backward()
            zeros.append([(p.grad == 0).float().mean().item() for p in weights])
            opt.step()
        else:
            scales.append(scaler.get_scale())
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            zeros.append([(p.grad == 0).float().mean().item() for p in weights])
            before = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < before
    return f32(losses), f32(zeros), m, scales, skipped


def gen_smallgrad(out_root: str, mpt_translate: str | None) -> list:
    seed_everything()
    x, t = smallgrad_data()
    torch.manual_seed(SEED)
    model = SmallGradMLP().eval()
    init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    ex = {"x": x[:SG_B]}
    raw = export_onnx(model, ex, ["y"], constant_folding=False)
    proto = check_export("smallgrad", raw, model, ex, ["y"])
    init_names = [(i.name, list(i.dims)) for i in proto.graph.initializer]

    with torch.no_grad():
        full0 = F.mse_loss(model(x), t).item()
    runs = {}
    for mode in ("fp32", "fp16", "fp16_scaled"):
        losses, zeros, m, scales, skipped = smallgrad_train(init_state, x, t, mode)
        with torch.no_grad():
            full = F.mse_loss(m(x), t).item()  # FP32 evaluation on all N rows
        runs[mode] = dict(losses=losses, zeros=zeros, full=full, scales=scales, skipped=skipped,
                          first8=float(losses[:8].mean()), last8=float(losses[-8:].mean()))
        z = zeros
        print(f"    {mode:11s}: loss (mean of 8 steps) {runs[mode]['first8']:.4e} -> "
              f"{runs[mode]['last8']:.4e}, full-data loss {full0:.4e} -> {full:.4e}; "
              f"zero grad fraction fc1..fc4 step 1 {[round(float(v), 4) for v in z[0]]}, "
              f"mean {[round(float(v), 4) for v in z.mean(0)]}, max {[round(float(v), 4) for v in z.max(0)]}"
              + (f"; loss scale {scales[0]:g} -> {scales[-1]:g}, {skipped} skipped" if scales else ""))

    r32, r16, r16s = runs["fp32"], runs["fp16"], runs["fp16_scaled"]
    # (a) FP32 learns, (b) FP16 without scaling loses its early-layer
    # gradients and ends clearly worse, (c) FP16 with a dynamic scale tracks FP32.
    checks = {
        "a: fp32 last8 < 0.2 * fp32 first8": r32["last8"] < 0.2 * r32["first8"],
        "b: fp16 fc1..fc3 zero fraction at step 1 > 0.5": bool(np.all(r16["zeros"][0, :3] > 0.5)),
        "b: fp16 fc1..fc3 mean zero fraction > 0.9": bool(np.all(r16["zeros"][:, :3].mean(0) > 0.9)),
        "b: fp16 last8 > 2 * fp32 last8": r16["last8"] > 2 * r32["last8"],
        "c: fp16_scaled last8 within 5% of fp32": abs(r16s["last8"] / r32["last8"] - 1) < 0.05,
        "c: fp16_scaled fc1..fc3 zero fraction < 0.01 at every step":
            bool(np.all(r16s["zeros"][:, :3] < 0.01)),
        "fp32 has no zero fc1..fc3 gradient elements at step 1": bool(np.all(r32["zeros"][0, :3] == 0)),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise FixtureError(f"smallgrad: checks failed: {bad}")

    w = Writer(os.path.join(out_root, "smallgrad"))
    w.clear(["*.npy", "model.onnx", "meta.json", "README.md"])
    w.bytes("model.onnx", raw)
    check_mpt_translate(mpt_translate, os.path.join(w.dir, "model.onnx"))
    w.npy("x.npy", x.numpy(), np.float32)
    w.npy("t.npy", t.numpy(), np.float32)
    w.npy("reference_loss_fp32.npy", r32["losses"], np.float32)
    w.npy("reference_loss_fp16_noscale.npy", r16["losses"], np.float32)
    w.npy("reference_loss_fp16_dynamic_scale.npy", r16s["losses"], np.float32)
    w.npy("zero_grad_fraction_fp16_noscale.npy", r16["zeros"], np.float32)
    hist = gf.op_histogram(proto)

    def z(run, step=None):
        a = run["zeros"][step] if step is not None else run["zeros"].mean(0)
        return ", ".join(f"{v:.4f}" for v in a)

    meta = {
        "fixture": "smallgrad",
        "model": f"y = {SG_OUT_SCALE} * fc4(tanh(fc3(tanh(fc2(tanh(fc1(x)))))))); "
                 f"Linear {SG_D}->{SG_H}->{SG_H}->{SG_H}->{SG_K}, PyTorch default init, seed {SEED}",
        "onnx": {"opset": 17, "inputs": {"x": ["float32", [SG_B, SG_D]]},
                 "outputs": {"y": ["float32", [SG_B, SG_K]]}, "initializers": init_names,
                 "export": "torch.onnx.export(dynamo=False, do_constant_folding=False, training=PRESERVE, module in train mode)"},
        "data": {"x": [SG_N, SG_D], "t": [SG_N, SG_K],
                 "x_distribution": "N(0,1)",
                 "t": "tanh(x @ W1) @ W2 (W1 [32,16] ~ N(0, (2/sqrt(32))^2), W2 [16,4] ~ N(0, 1/16), "
                      f"generator seed {SEED + 1}), rescaled to std {SG_TARGET_STD}"},
        "loss": "mse_loss(y, t), reduction mean over all B*K elements (added by the compiler)",
        "training": {"optimizer": "AdamW", **SG_ADAMW, "foreach": False, "batch": SG_B,
                     "steps": SG_STEPS, "schedule": "constant",
                     "batches": f"step s (0-based) uses rows [s*{SG_B}, (s+1)*{SG_B}) mod {SG_N}, no shuffling",
                     "dynamic_loss_scale": {"init_scale": SG_INIT_SCALE, "growth_factor": 2.0,
                                            "backoff_factor": 0.5, "growth_interval": 2000}},
        "fp16_simulation": "torch.autocast('cpu', dtype=torch.float16) around the forward pass: "
                           "each Linear runs in float16 on float16 copies of the float32 master "
                           "weights, tanh and the output scale run in float16 on the float16 "
                           "activations; the MSE loss in float32; backward through the float16 "
                           "ops in float16; gradients arrive at the master weights in float32",
        "measured": {
            mode: {"loss_first8_mean": r["first8"], "loss_last8_mean": r["last8"],
                   "loss_step1": float(r["losses"][0]), "loss_last": float(r["losses"][-1]),
                   "full_data_loss_final": r["full"],
                   "zero_grad_fraction_step1": r["zeros"][0].tolist(),
                   "zero_grad_fraction_mean": r["zeros"].mean(0).tolist()}
            for mode, r in runs.items()},
        "full_data_loss_initial": full0,
        "checks": list(checks),
        "versions": versions(),
    }
    meta["measured"]["fp16_scaled"]["loss_scale"] = [r16s["scales"][0], r16s["scales"][-1]]
    meta["measured"]["fp16_scaled"]["skipped_steps"] = int(r16s["skipped"])
    w.json("meta.json", meta)
    w.text("README.md", f"""# smallgrad

Generated by `scripts/gen_training_fixtures.py`; do not edit.

A regression task whose gradients are too small for FP16: without loss
scaling most gradient elements of the early layers round to exactly zero.

* Data: `x.npy` f32 [{SG_N},{SG_D}] ~ N(0,1); `t.npy` f32 [{SG_N},{SG_K}] = a fixed random tanh
  network of x (32 -> 16 -> 4), rescaled to std {SG_TARGET_STD:g} (|t| up to {float(t.abs().max()):.2g}).
* `model.onnx` (opset 17, no loss): `x` f32[{SG_B},{SG_D}] -> `y` f32[{SG_B},{SG_K}],
  `y = {SG_OUT_SCALE:g} * fc4(tanh(fc3(tanh(fc2(tanh(fc1(x)))))))` with Linear layers
  {SG_D}->{SG_H}->{SG_H}->{SG_H}->{SG_K} (PyTorch default init, seed {SEED}). The fixed output
  scale makes the network's natural O(1) output match the 1e-3 targets.
  Initializers: {", ".join(f"`{n}` {d}" for n, d in init_names)}.
  Ops: {", ".join(f"{op} {n}" for op, n in sorted(hist.items()))} (Gemm with transB=1;
  the output scale is `Mul(fc4 output, Constant {SG_OUT_SCALE:g})`).
* Loss (added by the compiler): `mse_loss(y, t)`, mean over all {SG_B}x{SG_K} elements.
* Training: AdamW(lr={SG_ADAMW['lr']:g}, betas=(0.9,0.999), eps=1e-8, weight_decay=0,
  foreach=False), constant LR, batch {SG_B}, {SG_STEPS} steps, step s (0-based) on rows
  [64 s, 64 s + 64) mod {SG_N}, no shuffling. Dynamic loss scale: init 2^16,
  growth 2, backoff 0.5, interval 2000 (GradScaler defaults).
* `reference_loss_fp32.npy`, `reference_loss_fp16_noscale.npy`,
  `reference_loss_fp16_dynamic_scale.npy`: f32 [{SG_STEPS}], per-step losses (forward
  pass before the update). `zero_grad_fraction_fp16_noscale.npy`: f32 [{SG_STEPS},4], the
  fraction of exactly-zero elements of the fc1..fc4 weight gradients per step, FP16
  without loss scaling.

FP16 was simulated with `torch.autocast("cpu", dtype=torch.float16)` around the
forward pass (Linear, tanh and the output scale in float16 with float32 master
weights; MSE in float32; backward through the float16 ops in float16).

Measured (PyTorch {torch.__version__}, CPU, 1 thread). Losses are means over 8
consecutive steps (one pass over the data); full-data loss initially {full0:.3e}.

| run | loss steps 1-8 | loss steps {SG_STEPS - 7}-{SG_STEPS} | final full-data loss | zero fraction fc1, fc2, fc3, fc4 at step 1 | mean over the {SG_STEPS} steps |
|---|---|---|---|---|---|
| FP32 | {r32['first8']:.3e} | {r32['last8']:.3e} | {r32['full']:.3e} | {z(r32, 0)} | {z(r32)} |
| FP16, no loss scaling | {r16['first8']:.3e} | {r16['last8']:.3e} | {r16['full']:.3e} | {z(r16, 0)} | {z(r16)} |
| FP16, dynamic loss scale | {r16s['first8']:.3e} | {r16s['last8']:.3e} | {r16s['full']:.3e} | {z(r16s, 0)} | {z(r16s)} |

FP32 reduces the loss {r32['first8'] / r32['last8']:.1f}x; FP16 without scaling ends
{r16['last8'] / r32['last8']:.1f}x above FP32 (its fc1..fc3 gradients are all or nearly all
zero, so only fc4 and the fc4 bias learn); FP16 with the dynamic loss scale ends within
{100 * abs(r16s['last8'] / r32['last8'] - 1):.2f}% of FP32 (scale stayed {r16s['scales'][-1]:g},
{r16s['skipped']} skipped steps).
""")
    return w.written


# --------------------------------------------------------------------------
# 4. bn_step: batch-norm running statistics and the eval_step entry
# --------------------------------------------------------------------------

BN_SHAPE = (3, 4, 5, 3)  # in channels, conv channels, spatial size, classes
BN_BATCH = 8
BN_STEPS = 3
BN_SGD = {"lr": 0.1, "momentum": 0.0, "weight_decay": 0.0}


class BNNet(nn.Module):
    """Conv2d(3,4,3,pad 1) -> BatchNorm2d(4) -> ReLU -> flatten -> Linear(100,3)."""

    def __init__(self):
        super().__init__()
        c_in, c, hw, k = BN_SHAPE
        self.conv = nn.Conv2d(c_in, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c * hw * hw, k)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.bn(self.conv(x))), 1))


def gen_bn_step(out_root: str, mpt_translate: str | None) -> list:
    import copy
    gen = seed_everything()
    c_in, c, hw, k = BN_SHAPE
    model = BNNet()
    x_train = torch.randn(BN_STEPS * BN_BATCH, c_in, hw, hw, generator=gen)
    y_train = torch.randint(0, k, (BN_STEPS * BN_BATCH,), generator=gen, dtype=torch.long)
    x_val = torch.randn(BN_BATCH, c_in, hw, hw, generator=gen) * 1.5 + 0.25
    y_val = torch.randint(0, k, (BN_BATCH,), generator=gen, dtype=torch.long)
    buffers = ("bn.running_mean", "bn.running_var")

    # Exported in training mode (BatchNormalization training_mode=1). The
    # exporter's trace runs one forward pass in training mode, which updates
    # the running statistics before it writes them as initializers, so it
    # works on a copy, and the reference starts from the initializers it
    # wrote (the parameters are untouched by a forward pass).
    exported = copy.deepcopy(model)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(
            exported, (x_train[:BN_BATCH],), buf,
            dynamo=False, export_params=True, opset_version=17,
            input_names=["x"], output_names=["logits"], dynamic_axes=None,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False, keep_initializers_as_inputs=False)
    raw = buf.getvalue()
    proto = onnx.load_from_string(raw)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    with torch.no_grad():
        for name in buffers:
            dict(model.named_buffers())[name].copy_(torch.from_numpy(inits[name].copy()))
    bns = [n for n in proto.graph.node if n.op_type == "BatchNormalization"]
    if len(bns) != 1 or {a.name: a.i for a in bns[0].attribute}.get("training_mode") != 1:
        raise FixtureError("bn_step: expected one BatchNormalization with training_mode=1")
    momentum = {a.name: a.f for a in bns[0].attribute}["momentum"]
    if abs(momentum - (1 - model.bn.momentum)) > 1e-7:
        raise FixtureError(f"bn_step: ONNX momentum {momentum}, PyTorch {model.bn.momentum}")
    # The forward check runs the model in training mode too: on a copy.
    check_export("bn_step", raw, copy.deepcopy(model), {"x": x_train[:BN_BATCH]}, ["logits"],
                 buffers_ok=buffers)
    init_names = [i.name for i in proto.graph.initializer]

    def eval_loss(m):
        m.eval()
        with torch.no_grad():
            logits = m(x_val)
            loss = F.cross_entropy(logits, y_val, reduction="mean")
        m.train()
        return loss.item(), logits

    eval0, _ = eval_loss(model)
    opt = torch.optim.SGD(model.parameters(), lr=BN_SGD["lr"], foreach=False)
    losses = []
    for s in range(BN_STEPS):
        rows = slice(s * BN_BATCH, (s + 1) * BN_BATCH)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x_train[rows]), y_train[rows], reduction="mean")
        losses.append(loss.item())
        loss.backward()
        opt.step()
    eval3, logits3 = eval_loss(model)
    if int(model.bn.num_batches_tracked) != BN_STEPS:
        raise FixtureError("bn_step: BatchNorm did not track every step")

    w = Writer(os.path.join(out_root, "bn_step"))
    w.clear(["*.npy", "model.onnx", "meta.json", "README.md"])
    w.bytes("model.onnx", raw)
    check_mpt_translate(mpt_translate, os.path.join(w.dir, "model.onnx"))
    w.npy("x_train.npy", x_train.numpy(), np.float32)
    w.npy("labels_train.npy", y_train.numpy(), np.int64)
    w.npy("x_val.npy", x_val.numpy(), np.float32)
    w.npy("labels_val.npy", y_val.numpy(), np.int64)
    w.npy("sgd_loss.npy", f32(losses), np.float32)
    state = dict(model.named_parameters())
    state.update({n: b for n, b in model.named_buffers() if n in buffers})
    for name in init_names:
        w.npy(f"sgd_{name}.npy", state[name].detach().numpy(), np.float32)
    w.npy("eval_loss_initial.npy", f32(eval0), np.float32)
    w.npy("eval_loss.npy", f32(eval3), np.float32)
    w.npy("eval_logits.npy", logits3.numpy(), np.float32)

    meta = {
        "fixture": "bn_step",
        "model": BNNet.__doc__ + f" PyTorch default init, seed {SEED}",
        "onnx": {"opset": 17, "inputs": {"x": ["float32", [BN_BATCH, c_in, hw, hw]]},
                 "outputs": {"logits": ["float32", [BN_BATCH, k]]},
                 "initializers": init_names,
                 "export": "torch.onnx.export(dynamo=False, do_constant_folding=False, "
                           "training=TRAINING)"},
        "batch_norm": {"onnx_momentum": momentum, "torch_momentum": model.bn.momentum,
                       "eps": model.bn.eps},
        "loss": "cross_entropy(logits, labels), reduction mean (added by the compiler)",
        "sgd": {**BN_SGD, "steps": BN_STEPS, "foreach": False},
        "values": {"sgd_loss": losses, "eval_loss_initial": eval0, "eval_loss": eval3},
        "versions": versions(),
    }
    w.json("meta.json", meta)
    w.text("README.md", f"""# bn_step

Generated by `scripts/gen_training_fixtures.py`; do not edit. PyTorch
{torch.__version__}, float32, CPU, 1 thread, deterministic algorithms.

`model.onnx` (opset 17, exported with `training=TrainingMode.TRAINING`, no
constant folding): `x` f32[{BN_BATCH},{c_in},{hw},{hw}] -> Conv(3x3, pad 1, {c} channels) ->
BatchNormalization(training_mode=1, momentum {momentum:.7g}, i.e. PyTorch's 0.1) ->
Relu -> Flatten -> Gemm(transB=1) -> `logits` f32[{BN_BATCH},{k}]. Initializers:
{", ".join(f"`{n}`" for n in init_names)}. The exporter's trace ran one forward
pass in training mode, so `bn.running_mean` / `bn.running_var` hold the
statistics after that pass; the PyTorch reference starts from exactly those
values (the parameters are PyTorch's initial ones).

Loss (added by the compiler): `cross_entropy(logits, labels)`, mean.

| file | what |
|---|---|
| `x_train.npy`, `labels_train.npy` | f32 [{BN_STEPS * BN_BATCH},{c_in},{hw},{hw}], i64 [{BN_STEPS * BN_BATCH}]: step s (0-based) trains on rows [{BN_BATCH}s, {BN_BATCH}s+{BN_BATCH}) |
| `x_val.npy`, `labels_val.npy` | a held-out batch (f32 [{BN_BATCH},{c_in},{hw},{hw}], scaled by 1.5 and shifted by 0.25 so that its statistics differ from the running ones) |
| `sgd_loss.npy` [{BN_STEPS}] | the training loss of each step (forward pass before the update) |
| `sgd_<p>.npy` | every initializer after {BN_STEPS} steps of `SGD(lr={BN_SGD['lr']})`: parameters, and the running mean and variance as PyTorch's BatchNorm updated them (unbiased batch variance) |
| `eval_loss_initial.npy`, `eval_loss.npy`, `eval_logits.npy` | `model.eval()` loss on the held-out batch before training ({fmt(eval0)}) and after the {BN_STEPS} steps ({fmt(eval3)}), and the logits after |
""")
    return w.written

# --------------------------------------------------------------------------


FIXTURES = ("mlp_step", "charlm", "smallgrad", "bn_step")


def main(argv=None) -> int:
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(repo_root, "test", "fixtures", "training"))
    ap.add_argument("--only", nargs="+", choices=FIXTURES)
    ap.add_argument("--text", help="use this file as the charlm text instead of fetching it "
                                   "from the Debian packages")
    ap.add_argument("--mpt-translate", help="check every model.onnx with BIN --import-onnx")
    args = ap.parse_args(argv)
    if ort is None:
        print("error: needs onnxruntime", file=sys.stderr)
        return 1
    print(", ".join(f"{k} {v}" for k, v in versions().items()))
    written = []
    try:
        for name in FIXTURES:
            if args.only and name not in args.only:
                continue
            if name == "mlp_step":
                written += gen_mlp_step(args.out, args.mpt_translate)
            elif name == "charlm":
                written += gen_charlm(args.out, args.mpt_translate, args.text)
            elif name == "bn_step":
                written += gen_bn_step(args.out, args.mpt_translate)
            else:
                written += gen_smallgrad(args.out, args.mpt_translate)
    except FixtureError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("\nwrote:")
    total = 0
    for path, size in written:
        total += size
        print(f"  {size:>10,d}  {os.path.relpath(path)}")
    print(f"  {total:>10,d}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
