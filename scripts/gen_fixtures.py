#!/usr/bin/env python3
"""Generate the small real-model ONNX fixtures used by MPT's importer and
end-to-end tests.

Developer tool only: the test suite reads the generated files and never runs
this script (tests must not need Python, PyTorch or onnxruntime).

For every model below this script writes, under ``--out`` (default
``test/fixtures/models``)::

    <name>/model.onnx           the exported graph, all weights inline
    <name>/input_<in>.npy       one file per graph input (ONNX input name)
    <name>/output_<out>.npy     one file per graph output (ONNX output name)

Models (all architectures are written out in this file; no torchvision):

    mlp           Linear(16,32)-ReLU-Linear(32,4), x[8,16] -> logits[8,4], opset 13
    mlp_opset18   the same module, exported at opset 18
    mlp_dynamic   the same module at opset 17, batch axis of x/logits is the
                  dim_param "batch"; reference data at batch 8
    gpt           GPT-2-style decoder (V=65, T=16, B=2, 2 layers, 2 heads,
                  d_model 32, tied LM head) with its cross-entropy loss,
                  (idx[2,16] i64, targets[2,16] i64) -> (logits[2,16,65], loss[]),
                  opset 17
    gpt_b1        the same GPT (same weights) at B=1, for the data-parallel test
    resnet18      ResNet-18 ([2,2,2,2] BasicBlocks), widths 8/16/32/64,
                  10 classes, x[1,3,64,64] -> logits[1,10], opset 17
    mobilenetv2   MobileNetV2, width multiplier 0.35, 10 classes,
                  x[1,3,64,64] -> logits[1,10], opset 17

The CNNs use 64x64 inputs so that, after the 32x total downsampling, their
last feature map is 2x2 rather than 1x1 (GlobalAveragePool then really
averages, and the last 3x3 convs see real pixels, not just padding).

Reference outputs are computed by onnxruntime (CPU, graph optimizations
disabled) on the exported model, and the script fails loudly unless they
agree with the PyTorch forward pass to within 1e-4 (max abs difference).

Export path: the legacy TorchScript-based exporter (``dynamo=False``; the
dynamo exporter would additionally need onnxscript) with the modules in eval
mode, ``training=TrainingMode.PRESERVE`` and ``do_constant_folding=False``.
That combination keeps the graph close to the module structure:

  * BatchNormalization nodes stay in the graph (the exporter's Conv+BN fusion
    only runs for TrainingMode.EVAL with constant folding on); checked below.
  * Parameters keep their PyTorch names (``blocks.0.attn.qkv.weight``...)
    instead of being replaced by pre-transposed ``onnx::MatMul_NNN`` copies,
    and the GPT LM head stays tied to ``tok_emb.weight`` (it is read through a
    Transpose node rather than folded into a second, untied initializer).

Without folding, anything derived from ``x.size()`` would be traced into
Shape/Gather/Unsqueeze/Concat chains, so the GPT code takes T, C and the
vocabulary size from its config and leaves the batch axis to Reshape's -1.

Everything is seeded (torch, numpy, a fixed number of CPU threads); running
the script twice with the same package versions writes byte-identical files.

Usage (from the repository root)::

    python3 scripts/gen_fixtures.py [--out DIR] [--only NAME ...]

See docs/fixtures.md for the package versions used and the op inventory.
"""

from __future__ import annotations

import argparse
import collections
import io
import math
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import onnxruntime as ort
except ImportError:
    # Generation needs onnxruntime (main() says so); importing this file for
    # its model classes (bench/forward_cpu.py does) does not.
    ort = None

SEED = 1234
IMAGE_SIZE = 64  # H = W of the CNN fixtures' input (and of BN calibration)
MAX_MODEL_BYTES = 2 * 1024 * 1024  # every model.onnx must stay below 2 MB
TOLERANCE = 1e-4  # max |torch - onnxruntime| allowed for every output
# Ops that would mean shape computations leaked into a static-shape fixture
# (or that a training-only op was exported); none of the fixtures may use them.
FORBIDDEN_OPS = {"Shape", "Size", "ConstantOfShape", "Range", "Expand", "CastLike", "Dropout"}


class FixtureError(RuntimeError):
    """Raised when a generated fixture fails one of the checks."""


# --------------------------------------------------------------------------
# Model definitions
# --------------------------------------------------------------------------


class MLP(nn.Module):
    """Two-layer perceptron: Linear(16,32) -> ReLU -> Linear(32,4)."""

    def __init__(self, d_in: int = 16, d_hidden: int = 32, d_out: int = 4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


# ---- GPT ------------------------------------------------------------------


@dataclass
class GPTConfig:
    vocab_size: int = 65
    block_size: int = 16  # context length T
    n_layer: int = 2
    n_head: int = 2
    d_model: int = 32


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with a lower-triangular (causal) mask."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.d_model % cfg.n_head == 0
        self.n_head = cfg.n_head
        self.head_dim = cfg.d_model // cfg.n_head
        self.d_model = cfg.d_model
        self.block_size = cfg.block_size
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        t = cfg.block_size
        causal = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        self.register_buffer("causal", causal)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Shapes come from the (static) config, not from x.size(): under the
        # TorchScript tracer x.size() becomes Shape/Gather/Unsqueeze/Concat
        # chains, which we do not want in a static-shape fixture.  The batch
        # axis is left to Reshape's -1.
        t, c, nh, hd = self.block_size, self.d_model, self.n_head, self.head_dim
        q, k, v = self.qkv(x).split(c, dim=2)
        # [B, T, C] -> [B, nh, T, hd]
        q = q.view(-1, t, nh, hd).transpose(1, 2)
        k = k.view(-1, t, nh, hd).transpose(1, 2)
        v = v.view(-1, t, nh, hd).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        scores = scores.masked_fill(self.causal == 0, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        y = probs @ v  # [B, nh, T, hd]
        y = y.transpose(1, 2).contiguous().view(-1, t, c)
        return self.proj(y)


class FeedForward(nn.Module):
    """Position-wise MLP with a 4x expansion and exact (erf) GELU."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


class DecoderBlock(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln_mlp = nn.LayerNorm(cfg.d_model)
        self.mlp = FeedForward(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_attn(x))
        x = x + self.mlp(self.ln_mlp(x))
        return x


class GPT(nn.Module):
    """GPT-2-style decoder that returns (logits, mean cross-entropy loss)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(DecoderBlock(cfg) for _ in range(cfg.n_layer))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # weight tying

    def forward(self, idx: torch.Tensor, targets: torch.Tensor):
        # The fixture always uses the full context (T == block_size); see the
        # note in CausalSelfAttention.forward about avoiding idx.size().
        t, v = self.cfg.block_size, self.cfg.vocab_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        x = self.ln_final(x)
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, v), targets.view(-1))
        return logits, loss


# ---- ResNet-18 --------------------------------------------------------------


def conv_bn(c_in: int, c_out: int, k: int, stride: int, groups: int = 1):
    """Bias-free Conv2d ('same'-style padding k//2) followed by BatchNorm2d."""
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(c_out),
    )


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 conv-BN, identity or 1x1 projection skip."""

    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.branch1 = conv_bn(c_in, c_out, 3, stride)
        self.branch2 = conv_bn(c_out, c_out, 3, 1)
        self.relu = nn.ReLU()
        if stride != 1 or c_in != c_out:
            self.shortcut = conv_bn(c_in, c_out, 1, stride)
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.branch1(x))
        y = self.branch2(y)
        return self.relu(y + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 layout ([2, 2, 2, 2] basic blocks) with configurable widths."""

    def __init__(self, widths=(8, 16, 32, 64), num_classes: int = 10, in_ch: int = 3):
        super().__init__()
        self.stem = nn.Sequential(
            conv_bn(in_ch, widths[0], 7, 2),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        stages = []
        c_in = widths[0]
        for i, c_out in enumerate(widths):
            stride = 1 if i == 0 else 2
            stages.append(BasicBlock(c_in, c_out, stride))
            stages.append(BasicBlock(c_out, c_out, 1))
            c_in = c_out
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_in, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


# ---- MobileNetV2 ------------------------------------------------------------


def round_channels(c: float, divisor: int = 8) -> int:
    """Round a scaled channel count to a multiple of `divisor`, never dropping
    more than 10% below the unrounded value (the usual MobileNet rule)."""
    r = max(divisor, int(c + divisor / 2) // divisor * divisor)
    if r < 0.9 * c:
        r += divisor
    return r


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand (ReLU6) -> 3x3 depthwise (ReLU6) ->
    1x1 linear projection; residual add when shapes match."""

    def __init__(self, c_in: int, c_out: int, stride: int, expand: int):
        super().__init__()
        hidden = c_in * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [conv_bn(c_in, hidden, 1, 1), nn.ReLU6()]
        layers += [
            conv_bn(hidden, hidden, 3, stride, groups=hidden),  # depthwise
            nn.ReLU6(),
            conv_bn(hidden, c_out, 1, 1),  # linear bottleneck, no activation
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """MobileNetV2 (ImageNet stage layout and strides) with a width multiplier."""

    # (expansion t, output channels c, repeats n, first stride s)
    STAGES = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]

    def __init__(self, width_mult: float = 0.35, num_classes: int = 10,
                 last_channels: int = 1280, in_ch: int = 3):
        super().__init__()
        c_in = round_channels(32 * width_mult)
        last = round_channels(last_channels * max(1.0, width_mult))
        layers: list[nn.Module] = [conv_bn(in_ch, c_in, 3, 2), nn.ReLU6()]
        for t, c, n, s in self.STAGES:
            c_out = round_channels(c * width_mult)
            for i in range(n):
                layers.append(InvertedResidual(c_in, c_out, s if i == 0 else 1, t))
                c_in = c_out
        layers += [conv_bn(c_in, last, 1, 1), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


# --------------------------------------------------------------------------
# Weight preparation
# --------------------------------------------------------------------------


def randomize_norm_affine(model: nn.Module, gen: torch.Generator) -> None:
    """Default init leaves LayerNorm/BatchNorm at gamma=1, beta=0; perturb them
    so the reference data actually exercises the affine part."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.LayerNorm, nn.BatchNorm2d)):
                m.weight.copy_(torch.empty_like(m.weight).uniform_(0.5, 1.5, generator=gen))
                m.bias.copy_(torch.empty_like(m.bias).normal_(0.0, 0.1, generator=gen))


def calibrate_batchnorm(model: nn.Module, shape, gen: torch.Generator, steps: int = 8) -> None:
    """Run a few train-mode forward passes on random data (shifted/scaled so
    the statistics are not ~N(0,1)) to give BatchNorm non-trivial running
    mean/var, then switch back to eval mode."""
    model.train()
    with torch.no_grad():
        for _ in range(steps):
            x = torch.randn(*shape, generator=gen) * 1.5 + 0.25
            model(x)
    model.eval()


# --------------------------------------------------------------------------
# Fixture specifications
# --------------------------------------------------------------------------


@dataclass
class Fixture:
    name: str
    opset: int
    build: Callable[[torch.Generator], nn.Module]
    # ONNX input name -> example tensor (in forward() argument order)
    make_inputs: Callable[[torch.Generator], dict]
    output_names: list
    dynamic_axes: dict | None = None
    # op types that must appear with exactly this count (sanity checks)
    expect_ops: dict = field(default_factory=dict)
    # optional extra structural check: fn(model_proto) -> error string or None
    extra_check: Callable[[onnx.ModelProto], str | None] | None = None


def build_mlp(gen: torch.Generator) -> nn.Module:
    return MLP().eval()


def mlp_inputs(gen: torch.Generator) -> dict:
    return {"x": torch.randn(8, 16, generator=gen)}


def build_gpt(gen: torch.Generator) -> nn.Module:
    model = GPT(GPTConfig())
    randomize_norm_affine(model, gen)
    # nn.Embedding's default N(0, 1) init makes the tied LM head produce
    # logits with std ~7 and a loss of ~24; N(0, 0.2) gives a loss in the
    # usual few-nats range (still well away from the uniform log(65)).
    with torch.no_grad():
        model.tok_emb.weight.normal_(0.0, 0.2, generator=gen)
        model.pos_emb.weight.normal_(0.0, 0.2, generator=gen)
    return model.eval()


def gpt_inputs(gen: torch.Generator, batch: int = 2) -> dict:
    cfg = GPTConfig()
    shape = (batch, cfg.block_size)
    return {
        "idx": torch.randint(0, cfg.vocab_size, shape, generator=gen, dtype=torch.long),
        "targets": torch.randint(0, cfg.vocab_size, shape, generator=gen, dtype=torch.long),
    }


def build_resnet18(gen: torch.Generator) -> nn.Module:
    model = ResNet18()
    randomize_norm_affine(model, gen)
    calibrate_batchnorm(model, (8, 3, IMAGE_SIZE, IMAGE_SIZE), gen)
    return model.eval()


def build_mobilenetv2(gen: torch.Generator) -> nn.Module:
    model = MobileNetV2()
    randomize_norm_affine(model, gen)
    calibrate_batchnorm(model, (8, 3, IMAGE_SIZE, IMAGE_SIZE), gen)
    return model.eval()


def image_inputs(gen: torch.Generator) -> dict:
    return {"x": torch.randn(1, 3, IMAGE_SIZE, IMAGE_SIZE, generator=gen)}


def check_gpt_tied_head(model: onnx.ModelProto) -> str | None:
    """The LM head must read tok_emb.weight (through a Transpose) rather than a
    second copy of the embedding matrix."""
    cfg = GPTConfig()
    emb_shapes = ([cfg.vocab_size, cfg.d_model], [cfg.d_model, cfg.vocab_size])
    copies = [i.name for i in model.graph.initializer if list(i.dims) in emb_shapes]
    if copies != ["tok_emb.weight"]:
        return f"embedding-shaped initializers {copies}, expected only tok_emb.weight"
    users = sorted(n.op_type for n in model.graph.node if "tok_emb.weight" in n.input)
    if users != ["Gather", "Transpose"]:
        return f"tok_emb.weight is used by {users}, expected Gather (embedding) + Transpose (LM head)"
    return None


FIXTURES = [
    Fixture("mlp", 13, build_mlp, mlp_inputs, ["logits"],
            expect_ops={"Gemm": 2, "Relu": 1}),
    Fixture("mlp_opset18", 18, build_mlp, mlp_inputs, ["logits"],
            expect_ops={"Gemm": 2, "Relu": 1}),
    Fixture("mlp_dynamic", 17, build_mlp, mlp_inputs, ["logits"],
            dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
            expect_ops={"Gemm": 2, "Relu": 1}),
    Fixture("gpt", 17, build_gpt, gpt_inputs, ["logits", "loss"],
            expect_ops={"LayerNormalization": 2 * 2 + 1, "SoftmaxCrossEntropyLoss": 1},
            extra_check=check_gpt_tied_head),
    # The same GPT (the same seed, so the same weights) at batch 1: with
    # `gpt`, the data-parallel test's 2 ranks x 1 against one process x 2.
    Fixture("gpt_b1", 17, build_gpt, lambda gen: gpt_inputs(gen, batch=1), ["logits", "loss"],
            expect_ops={"LayerNormalization": 2 * 2 + 1, "SoftmaxCrossEntropyLoss": 1},
            extra_check=check_gpt_tied_head),
    Fixture("resnet18", 17, build_resnet18, image_inputs, ["logits"],
            expect_ops={"BatchNormalization": 20, "Conv": 20}),
    Fixture("mobilenetv2", 17, build_mobilenetv2, image_inputs, ["logits"],
            expect_ops={"BatchNormalization": 52, "Conv": 52}),
]


# --------------------------------------------------------------------------
# Export, checks and reference data
# --------------------------------------------------------------------------


def seed_everything(seed: int) -> torch.Generator:
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    return torch.Generator().manual_seed(seed)


def export_onnx(model: nn.Module, inputs: dict, fx: Fixture) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated in favour of dynamo; we use
        # it on purpose (see module docstring), so keep the output readable.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(
            model,
            tuple(inputs.values()),
            buf,
            dynamo=False,
            export_params=True,
            opset_version=fx.opset,
            input_names=list(inputs.keys()),
            output_names=fx.output_names,
            dynamic_axes=fx.dynamic_axes,
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=False,
            keep_initializers_as_inputs=False,
        )
    return buf.getvalue()


def op_histogram(model: onnx.ModelProto) -> collections.Counter:
    """Count op types in the main graph (the exported graphs have no subgraphs;
    this is asserted in check_model_proto)."""
    return collections.Counter(n.op_type for n in model.graph.node)


def check_model_proto(model: onnx.ModelProto, raw: bytes, fx: Fixture,
                      inputs: dict) -> None:
    def fail(msg: str):
        raise FixtureError(f"{fx.name}: {msg}")

    onnx.checker.check_model(model, full_check=True)
    if len(raw) >= MAX_MODEL_BYTES:
        fail(f"model.onnx is {len(raw)} bytes, limit is {MAX_MODEL_BYTES}")
    opsets = {o.domain: o.version for o in model.opset_import}
    if opsets.get("", opsets.get("ai.onnx")) != fx.opset or len(opsets) != 1:
        fail(f"unexpected opset_import {opsets}, wanted only ai.onnx {fx.opset}")
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL or init.external_data:
            fail(f"initializer {init.name} uses external data")
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            fail(f"node {node.name} is in custom domain {node.domain!r}")
        for attr in node.attribute:
            if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                fail(f"node {node.name} has a subgraph; op_histogram would miss it")

    got_in = [i.name for i in model.graph.input]
    got_out = [o.name for o in model.graph.output]
    if got_in != list(inputs.keys()):
        fail(f"graph inputs {got_in}, wanted {list(inputs.keys())}")
    if got_out != fx.output_names:
        fail(f"graph outputs {got_out}, wanted {fx.output_names}")

    # Shapes: fully static, except the dim_params requested in dynamic_axes.
    for vi in list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        wanted_dyn = (fx.dynamic_axes or {}).get(vi.name, {})
        for axis, d in enumerate(dims):
            if axis in wanted_dyn:
                if d.dim_param != wanted_dyn[axis]:
                    fail(f"{vi.name} dim {axis} should be dim_param {wanted_dyn[axis]!r}, is {d}")
            elif not d.HasField("dim_value"):
                fail(f"{vi.name} dim {axis} is not static: {d}")

    hist = op_histogram(model)
    for op, n in fx.expect_ops.items():
        if hist.get(op, 0) != n:
            fail(f"expected {n} x {op}, graph has {hist.get(op, 0)} (histogram: {dict(hist)})")
    leaked = sorted(FORBIDDEN_OPS & hist.keys())
    if leaked:
        fail(f"graph contains {leaked}; see FORBIDDEN_OPS")
    if fx.extra_check is not None:
        err = fx.extra_check(model)
        if err:
            fail(err)


def run_onnxruntime(raw: bytes, feeds: dict, output_names: list) -> list:
    so = ort.SessionOptions()
    # Evaluate the graph as written (no fusions) on one thread.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(raw, so, providers=["CPUExecutionProvider"])
    return sess.run(output_names, feeds)


def compare(fx: Fixture, what: str, ref_torch, got_ort) -> float:
    worst = 0.0
    for name, t, o in zip(fx.output_names, ref_torch, got_ort):
        t = t.detach().cpu().numpy()
        if t.shape != o.shape or t.dtype != o.dtype:
            raise FixtureError(f"{fx.name} ({what}): output {name} is {o.dtype}{list(o.shape)} "
                               f"in onnxruntime but {t.dtype}{list(t.shape)} in torch")
        if not np.all(np.isfinite(o)):
            raise FixtureError(f"{fx.name} ({what}): output {name} has non-finite values")
        diff = float(np.max(np.abs(t.astype(np.float64) - o.astype(np.float64)))) if o.size else 0.0
        if not diff <= TOLERANCE:
            raise FixtureError(f"{fx.name} ({what}): output {name} differs from torch by "
                               f"{diff:.3e} > {TOLERANCE:.0e}")
        worst = max(worst, diff)
    return worst


def as_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def generate(fx: Fixture, out_root: str) -> list:
    """Build, export, check and write one fixture; return [(path, bytes)]."""
    gen = seed_everything(SEED)
    model = fx.build(gen)
    inputs = fx.make_inputs(gen)

    with torch.no_grad():
        ref = as_tuple(model(*inputs.values()))
    if len(ref) != len(fx.output_names):
        raise FixtureError(f"{fx.name}: forward returned {len(ref)} outputs, "
                           f"expected {fx.output_names}")

    raw = export_onnx(model, inputs, fx)
    proto = onnx.load_from_string(raw)
    check_model_proto(proto, raw, fx, inputs)

    feeds = {k: v.numpy() for k, v in inputs.items()}
    outs = run_onnxruntime(raw, feeds, fx.output_names)
    worst = compare(fx, "reference inputs", ref, outs)

    if fx.dynamic_axes:
        # Make sure the dynamic axis really is dynamic: run a different batch.
        alt = {k: torch.randn(3, *v.shape[1:], generator=gen) for k, v in inputs.items()}
        with torch.no_grad():
            alt_ref = as_tuple(model(*alt.values()))
        alt_outs = run_onnxruntime(raw, {k: v.numpy() for k, v in alt.items()}, fx.output_names)
        worst = max(worst, compare(fx, "batch 3", alt_ref, alt_outs))

    out_dir = os.path.join(out_root, fx.name)
    os.makedirs(out_dir, exist_ok=True)
    # Drop stale files from an earlier run (e.g. renamed inputs/outputs).
    for f in os.listdir(out_dir):
        if f == "model.onnx" or (f.endswith(".npy") and f.startswith(("input_", "output_"))):
            os.remove(os.path.join(out_dir, f))

    written = []

    def write(fname: str, data: bytes):
        path = os.path.join(out_dir, fname)
        with open(path, "wb") as fh:
            fh.write(data)
        written.append((path, len(data)))

    write("model.onnx", raw)
    for name, arr in feeds.items():
        write(f"input_{name}.npy", npy_bytes(arr))
    for name, arr in zip(fx.output_names, outs):
        write(f"output_{name}.npy", npy_bytes(arr))
    for path, _ in written[1:]:
        arr = np.load(path)
        key = os.path.basename(path)[:-4].split("_", 1)[1]
        want = feeds[key] if os.path.basename(path).startswith("input_") \
            else outs[fx.output_names.index(key)]
        if arr.shape != want.shape or arr.dtype != want.dtype:
            raise FixtureError(f"{fx.name}: {path} round-trips as {arr.dtype}{arr.shape}, "
                               f"expected {want.dtype}{want.shape}")

    hist = op_histogram(proto)
    print(f"[{fx.name}] opset {fx.opset}, IR v{proto.ir_version}, "
          f"{len(proto.graph.node)} nodes, {len(proto.graph.initializer)} initializers, "
          f"max |torch - ort| = {worst:.2e}")
    print("    ops: " + ", ".join(f"{op}={n}" for op, n in sorted(hist.items())))
    return written


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    # (np.ascontiguousarray would turn the 0-d loss into shape (1,).)
    np.save(buf, np.asarray(arr, order="C"), allow_pickle=False)
    return buf.getvalue()


def main(argv=None) -> int:
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(repo_root, "test", "fixtures", "models"),
                    help="output directory (default: <repo>/test/fixtures/models)")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    choices=[f.name for f in FIXTURES],
                    help="generate only these fixtures")
    args = ap.parse_args(argv)
    if ort is None:
        print("error: generating fixtures needs onnxruntime (pip install onnxruntime)",
              file=sys.stderr)
        return 1

    print(f"torch {torch.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    written = []
    try:
        for fx in FIXTURES:
            if args.only and fx.name not in args.only:
                continue
            written += generate(fx, args.out)
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
