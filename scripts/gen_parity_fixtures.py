#!/usr/bin/env python3
"""Generate the model-zoo training-parity fixtures: float64 PyTorch references
for one training step (and short trajectories) of small real models, and the
tolerances they are checked with, derived from measured spreads.

Developer tool only, like scripts/gen_fixtures.py and
scripts/gen_training_fixtures.py: the tests (test/Training/ZooParityTest.cpp,
test/Training/SmoothCnnAccuracyTest.cpp) read the generated files and never
run this script.

Writes, under ``--out`` (default ``test/fixtures/parity``), one directory per
model:

    smooth_cnn   conv stem + BN + GELU, a residual block with a stride-2
                 downsampling conv + BN, GELU, AvgPool, GlobalAveragePool, fc
    resnet18     torchvision-style ResNet-18 (BasicBlocks [2,2,2,2]), small widths
    mobilenetv2  MobileNetV2 (inverted residuals, depthwise convs, ReLU6), small
                 width multiplier
    gpt2         GPT-2-style decoder: tied token embedding / LM head, causal
                 attention, LayerNorm, erf GELU, dropout modules with p = 0
    vit          ViT-style encoder: patch-embedding conv, learned position
                 embedding, pre-LN blocks, erf GELU, mean pooling, head
    vit_dynamo   the vit module and weights, exported by the dynamo exporter
                 (torch.export + onnxscript, optimize=True) at opset 18; it
                 folds each Linear weight's transpose into a new initializer
                 val_N, so those references are stored transposed under that
                 name (meta.json: transposed_parameters)
    mlp_dynamo   an MLP exported by the dynamo exporter at opset 18
    llama        transformers' LlamaForCausalLM, tiny random config: grouped-
                 query attention (4 query heads, 2 key/value heads), rotary
                 embeddings, RMSNorm, SiLU-gated MLP, eager attention
    qwen2        transformers' Qwen2ForCausalLM at the llama sizes: q/k/v
                 biases, LM head tied to the token embedding
    vit_hf       transformers' ViTForImageClassification, tiny: class token,
                 exact GELU, classifier on the class token
    mobilenetv3  torchvision's mobilenet_v3_small, width multiplier 0.15,
                 reduced tail: HardSwish, squeeze-excitation with HardSigmoid
    t5           transformers' T5ForConditionalGeneration, tiny; its labels are
                 a model input (decoder_labels), shifted right into the
                 decoder by the graph (ScatterND), and the loss's labels
    bert         transformers' BertForMaskedLM, tiny: post-LN, tied MLM head
    distilbert   transformers' DistilBertForSequenceClassification, tiny
    mistral      transformers' MistralForCausalLM at the llama sizes with one
                 key/value head, no sliding window
    efficientnet torchvision's EfficientNet, efficientnet_b0's stages at width
                 0.1, depth 0.25: SiLU, squeeze-excitation with Sigmoid
    convnext     torchvision's ConvNeXt, two stages of one CNBlock
    squeezenet   torchvision's SqueezeNet 1.1 at 1/8 of its widths

The library models (llama and everything after it above) are the
libraries' own modules: only their forward is wrapped, to take the token
ids or images and return the logits (the causal LMs get no attention mask: the causal mask
only; while exporting, transformers' search for packed sequences, a
torch.diff the TorchScript exporter cannot export, is answered "none", as
eager mode answers it for these positions: no_packed_sequences), and their
weights are drawn from this script's generator (torchvision's
initialisation, seeded, for mobilenetv3).
Hugging Face modules cast to float32 explicitly (RMSNorm, RoPE's angles,
eager attention's softmax: their guard for fp16/bf16); in the float64 runs
those casts are redirected to float64 (Float64Casts), so the reference is
float64 throughout. They need transformers (5.x) and torchvision, imported
by their builders only.

Each model is exported from PyTorch in TRAINING mode
(``torch.onnx.export(..., dynamo=False, training=TrainingMode.TRAINING,
do_constant_folding=False)``, the TorchScript exporter) without its loss; the
compiler adds ``cross_entropy(logits, labels)`` (``mpt-compile --train
--loss-kind=cross_entropy``). Batch norm is exported in training mode
(``training_mode=1``: batch statistics), dropout as ``Dropout(ratio=0,
training_mode=1)``.

Per model (file names keep the ONNX initializer / PyTorch parameter name
verbatim, dots included; ``<p>`` below):

    model.onnx                    the exported graph, weights inline
    input_<name>.npy              the batch (f32 images or i64 token ids)
    labels.npy                    i64 class labels (the shape of logits minus
                                  its last axis)
    loss.npy                      '<f8' 0-d: the float64 loss at the initial weights
    grad_<p>.npy                  '<f8': float64 d loss / d p
    sgd_<p>.npy                   '<f8': float64 p after one SGD(lr) step
    grad32_<p>.npy, loss32.npy    PyTorch float32's gradients and loss on the
                                  same weights and batch (smooth_cnn only)
    momentum_loss.npy             '<f8'[5]: loss of each of 5 SGD+momentum
                                  steps on the same batch (before the update)
    momentum_loss_fp32.npy        '<f4'[5]: the same in PyTorch float32
    adamw_loss.npy, adamw_loss_fp32.npy   the same for AdamW
    adamw_loss_bf16_autocast.npy, adamw_loss_fp16_autocast.npy   '<f4'[5]:
                                  PyTorch CPU autocast (fp16 with a
                                  GradScaler) on the same AdamW steps; the
                                  losses of the applied steps
    bn_step1_<buffer>.npy, bn_step5_<buffer>.npy   '<f8': the BN running
                                  mean / var after 1 and after 5 momentum
                                  steps of the float64 run, which starts
                                  from the running statistics the ONNX file
                                  holds (the exporter's own training-mode
                                  forward pass has already updated them once)
    meta.json, README.md          hyperparameters, measured spreads, tolerances
    tolerances.txt                the tolerances again, one per line
                                  ("kind name tolerance spread_fp32
                                  spread_perturbed"), the optimizer
                                  hyperparameters ("hyper name value"),
                                  "denominator grad|sgd name value" for
                                  gradients that are zero in exact
                                  arithmetic, "constant name 0" for constant
                                  initializers, and "autocast_adamw_trajectory
                                  bf16|fp16 error skipped", for the C++ tests

The float64 reference runs the same module in float64 (``module.double()``)
starting from the float32 initial weights (exactly representable), on the
same batch. All runs are seeded, single-threaded and deterministic.

Tolerances. Every comparison uses a scale-free per-tensor metric:

    gradient of p:        ||g - g64||_2 / ||g64||_2          (relative L2)
    p after one SGD step: ||p1 - p1_64||_2 / ||p1_64 - p0||_2 (relative L2 of
                          the update: the parameter itself would hide it)
    (a gradient that is zero in exact arithmetic, e.g. the bias of a BN whose
    output reaches the loss only through another training-mode BN, is
    measured against the global gradient norm ||G64|| and lr * ||G64||)
    loss:                 |l - l64| / |l64|
    10-step trajectory:   max over steps of |l_i - l64_i| / |l64_i|
    BN running statistics after step 1 (bn_stats_step1) and 10 (bn_stats_step10)
                          of the momentum run: max over buffers of
                          ||b - b64||_2 / ||b64||_2 (0 for a model without BN)

The *spread* of a quantity is PyTorch float32's value of the metric against
the float64 reference. For models with kinks (ReLU, ReLU6, max-pool) an
float32 run can land a near-zero pre-activation on either side of the kink,
and a single fp32 run may or may not show that, so the spread there is the
larger of the fp32 spread and the largest metric over PERTURB_RUNS float64
runs whose weights and inputs were multiplied by (1 + 2^-24 r), r uniform in
[-1, 1] (an fp32-rounding-level perturbation). The tolerance written into
meta.json is ``max(10 * spread, 1e-5)``.

Sizes. ``--size small`` (the default) writes the committed CI fixtures
above (each model directory under 1.5 MB, 1 PyTorch thread). ``--size large``
writes realistic sizes under the same model names, for
scripts/parity-large.sh; they are never committed (``--out`` is required and
may not lie under test/fixtures), have no size limit (tens of MB per model:
the float64 gradients and SGD references) and use 2 PyTorch threads:

    resnet18     widths 64/128/256/512 (torchvision's), batch 8 at 32x32,
                 11.2M parameters
    mobilenetv2  width multiplier 0.5, last conv 1280 channels, batch 8 at
                 64x64
    gpt2         vocab 1024, T 64, 4 layers, 4 heads, d_model 256, batch 4
    vit          Conv4x4/4 patches of 32x32 images (64 tokens), width 192,
                 4 blocks, 3 heads, batch 4
    vit_dynamo   that vit, dynamo exporter
    mlp_dynamo   Linear(256,1024)-GELU-Linear(1024,1024)-GELU-Linear(1024,10),
                 batch 64
    (smooth_cnn and the library models have no large size.)

Same seeds, learning rates, tolerance rule and file layout as the small
fixtures (about 400 MB in all, 224 MB of it resnet18). Generating one large
model took 49 s (mlp_dynamo) to 6.6 minutes (gpt2, mobilenetv2) on a shared
2-core machine, about 22 minutes for all six. The small models' learning
rates overfit some large ones within the steps (resnet18 and mlp_dynamo
reach losses of 1e-3 and 3e-5), which loosens their trajectory tolerances
(docs/parity.md, "Larger sizes").

Usage (from the repository root)::

    /root/torchenv/bin/python scripts/gen_parity_fixtures.py [--out DIR]
        [--only NAME ...] [--mpt-translate BIN]
    /root/torchenv/bin/python scripts/gen_parity_fixtures.py --size large
        --out build/parity-large [--only NAME ...] [--threads N]

See docs/fixtures.md ("Parity fixtures") and docs/parity.md.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (ResNet18, MobileNetV2, npy writer)

SEED = 1234
STEPS = 10  # trajectory length
PERTURB_RUNS = 6  # float64 runs with fp32-rounding-level perturbations
PERTURB_REL = 2.0 ** -24  # fp32 unit roundoff
TOL_FACTOR = 10.0
TOL_FLOOR = 1e-5
ZERO_GRAD_REL = 1e-9  # a float64 gradient this small (of the global norm) is exact zero
MAX_DIR_BYTES = 1536 * 1024
FORWARD_TOL = 1e-4  # onnx.reference forward vs PyTorch float64, max abs (at least)


class FixtureError(RuntimeError):
    pass


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------


class SmoothCNN(nn.Module):
    """Conv stem + BN + GELU; one residual block whose main path starts with a
    stride-2 conv and whose shortcut is a stride-2 1x1 conv + BN; GELU after
    the add; AvgPool(2); GlobalAveragePool; fc. No kinks anywhere."""

    def __init__(self, c0=8, c1=16, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, c0, 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(c0)
        self.conv1 = nn.Conv2d(c0, c1, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c1)
        self.conv2 = nn.Conv2d(c1, c1, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c1)
        self.down = nn.Conv2d(c0, c1, 1, stride=2, bias=False)
        self.down_bn = nn.BatchNorm2d(c1)
        self.act = nn.GELU()
        self.pool = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c1, classes)

    def forward(self, x):
        x = self.act(self.stem_bn(self.stem(x)))
        y = self.act(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        x = self.act(y + self.down_bn(self.down(x)))
        x = self.gap(self.pool(x))
        return self.fc(torch.flatten(x, 1))


class GPT2(nn.Module):
    """GPT-2-style decoder returning logits [B, T, V]: token + position
    embedding, dropout (p = 0), pre-LN blocks (causal attention, erf-GELU
    MLP, residual dropout p = 0), final LN, LM head tied to the token
    embedding. Uses gen_fixtures' DecoderBlock for the blocks."""

    def __init__(self, cfg: gf.GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        self.drop = nn.Dropout(0.0)
        self.blocks = nn.ModuleList(gf.DecoderBlock(cfg) for _ in range(cfg.n_layer))
        self.resid_drop = nn.Dropout(0.0)
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight

    def init_weights(self, gen, std=0.02):
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, std, generator=gen)
                    if getattr(m, "bias", None) is not None:
                        m.bias.normal_(0.0, std, generator=gen)

    def forward(self, idx):
        t = self.cfg.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = self.resid_drop(block(x))
        return self.lm_head(self.ln_final(x))


class EncoderBlock(nn.Module):
    """Pre-LN transformer encoder block (bidirectional attention, erf GELU)."""

    def __init__(self, d, heads, tokens):
        super().__init__()
        self.d, self.h, self.t = d, heads, tokens
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        t, d, h = self.t, self.d, self.h
        hd = d // h
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(-1, t, h, hd).transpose(1, 2)
        k = k.reshape(-1, t, h, hd).transpose(1, 2)
        v = v.reshape(-1, t, h, hd).transpose(1, 2)
        a = F.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)), dim=-1)
        y = (a @ v).transpose(1, 2).reshape(-1, t, d)
        x = x + self.proj(y)
        return x + self.down(self.act(self.up(self.ln2(x))))


class ViT(nn.Module):
    """ViT-style encoder: Conv(k = stride = patch) patch embedding, learned
    position embedding, pre-LN encoder blocks, final LN, mean over tokens, head."""

    def __init__(self, image=16, patch=4, d=32, heads=2, layers=2, classes=10):
        super().__init__()
        self.tokens = (image // patch) ** 2
        self.d = d
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.pos = nn.Parameter(torch.zeros(1, self.tokens, d))
        self.blocks = nn.ModuleList(EncoderBlock(d, heads, self.tokens) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).reshape(-1, self.d, self.tokens).transpose(1, 2) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x).mean(dim=1))


class MLP3(nn.Module):
    def __init__(self, d_in=16, hidden=32, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(F.gelu(self.fc1(x)))))


# Hugging Face and torchvision models. transformers and torchvision are
# imported by their builders only, so the other fixtures need neither.


class Float64Casts(TorchFunctionMode):
    """Inside a float64 run: every cast to float32 becomes a cast to float64.

    Hugging Face modules pin some computations to float32 (LlamaRMSNorm
    upcasts with ``.to(torch.float32)``, RoPE computes its angles with
    ``.float()``, eager attention's softmax takes ``dtype=torch.float32``):
    their guard for fp16/bf16 training. In a float64 module those casts would
    round the reference to float32 in the middle of the computation, so the
    float64 runs redirect them (``Tensor.float``, a float32 positional or
    ``dtype=`` argument). Float32 runs and the export do not use it: there
    the casts are no-ops (the exported graph keeps them as Cast(to=FLOAT))."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.float:
            func = torch.Tensor.double
        if kwargs.get("dtype") is torch.float32:
            kwargs["dtype"] = torch.float64
        args = tuple(torch.float64 if a is torch.float32 else a for a in args)
        return func(*args, **kwargs)


def float64_casts(weight):
    """Float64Casts when `weight` (a parameter of the module) is float64."""
    return Float64Casts() if weight.dtype == torch.float64 else contextlib.nullcontext()


def init_normal(model, gen, std=0.02):
    """Every Linear, Conv2d and Embedding weight (and bias) ~ N(0, std^2)
    from `gen`, instead of the library's initialisation (which draws from
    the global generator and may change between versions)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d, nn.Embedding)):
                m.weight.normal_(0.0, std, generator=gen)
                if getattr(m, "bias", None) is not None:
                    m.bias.normal_(0.0, std, generator=gen)


def randomize_rms_norms(model, gen):
    """Weight ~ 1 + 0.1 N(0,1) for every RMSNorm (a module with a 1-d
    `weight` and a `variance_epsilon`, as Hugging Face writes them)."""
    with torch.no_grad():
        for m in model.modules():
            if hasattr(m, "variance_epsilon") and getattr(m, "weight", None) is not None:
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))


def hf_causal_lm(base, config_cls, **config):
    """A `base` (e.g. transformers' LlamaForCausalLM) whose forward takes the
    token ids and returns the logits [B, T, V]: eager attention, no cache, no
    attention mask (the causal mask only; see no_packed_sequences for the
    export), and float64 runs kept in float64 (Float64Casts)."""

    class CausalLMLogits(base):
        def forward(self, idx):
            with float64_casts(self.lm_head.weight):
                return super().forward(input_ids=idx, use_cache=False).logits

    cfg = config_cls(attn_implementation="eager", use_cache=False, **config)
    return CausalLMLogits(cfg)


@contextlib.contextmanager
def no_packed_sequences():
    """While exporting: transformers' find_packed_sequence_indices answers
    None (no packed sequences), as it does in eager mode for the positions
    0..T-1 every batch row has here. Without an attention mask transformers
    5 looks for packed sequences in the position ids with torch.diff, which
    the TorchScript exporter cannot export at opset 17; passing an all-ones
    mask instead exports a padding mask whose And nodes MPT's importer does
    not support (docs/parity.md). Does nothing when transformers is not
    loaded."""
    mu = sys.modules.get("transformers.masking_utils")
    if mu is None:
        yield
        return
    saved = mu.find_packed_sequence_indices
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        mu.find_packed_sequence_indices = saved


def hf_image_classifier(**config):
    """transformers' ViTForImageClassification whose forward takes the
    images and returns the logits [B, classes] (eager attention; float64
    runs kept in float64)."""
    from transformers import ViTConfig, ViTForImageClassification

    class ViTLogits(ViTForImageClassification):
        def forward(self, x):
            with float64_casts(self.classifier.weight):
                return super().forward(pixel_values=x).logits

    return ViTLogits(ViTConfig(attn_implementation="eager", **config))


def randomize_affine(model, gen):
    """Gamma ~ 1 + 0.1 N(0,1), beta ~ 0.1 N(0,1) for every BN and LayerNorm,
    so the affine parameters' gradients are not those of the trivial init."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


# --------------------------------------------------------------------------
# Model table
# --------------------------------------------------------------------------


class Spec:
    def __init__(self, name, what, build, inputs, classes, *, kinked, lr_sgd,
                 lr_momentum, lr_adamw, exporter="torchscript", opset=17,
                 keep_grad32=False, label_input=None):
        self.name, self.what, self.build, self.inputs = name, what, build, inputs
        self.classes, self.kinked = classes, kinked
        self.lr_sgd, self.lr_momentum, self.lr_adamw = lr_sgd, lr_momentum, lr_adamw
        self.exporter, self.opset, self.keep_grad32 = exporter, opset, keep_grad32
        # The model input that also holds the loss's labels (t5), or None
        # (random labels, drawn after the inputs).
        self.label_input = label_input


def images(n, hw):
    return lambda gen: {"x": torch.randn(n, 3, hw, hw, generator=gen)}


def build_smooth_cnn(gen):
    m = SmoothCNN()
    randomize_affine(m, gen)
    return m


def build_resnet18(gen):
    m = gf.ResNet18(widths=(4, 8, 16, 32), num_classes=10)
    randomize_affine(m, gen)
    return m


def build_mobilenetv2(gen):
    m = gf.MobileNetV2(width_mult=0.1, num_classes=10, last_channels=64)
    randomize_affine(m, gen)
    return m


GPT_CFG = gf.GPTConfig(vocab_size=48, block_size=16, n_layer=2, n_head=2, d_model=32)


def build_gpt2(gen):
    m = GPT2(GPT_CFG)
    m.init_weights(gen)
    return m  # LayerNorms keep the GPT-2 init (weight 1, bias 0)


def gpt2_inputs(gen):
    return {"idx": torch.randint(0, GPT_CFG.vocab_size, (4, GPT_CFG.block_size),
                                 generator=gen, dtype=torch.long)}


def build_vit(gen):
    m = ViT()
    with torch.no_grad():
        m.pos.normal_(0.0, 0.02, generator=gen)
    randomize_affine(m, gen)
    return m


LLAMA_CFG = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                 max_position_embeddings=16)
LLAMA_T = 16


def build_llama(gen):
    from transformers import LlamaConfig, LlamaForCausalLM
    m = hf_causal_lm(LlamaForCausalLM, LlamaConfig, **LLAMA_CFG)
    init_normal(m, gen)
    randomize_rms_norms(m, gen)
    return m


def llama_inputs(gen):
    return {"idx": torch.randint(0, LLAMA_CFG["vocab_size"], (4, LLAMA_T), generator=gen,
                                 dtype=torch.long)}


def build_qwen2(gen):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    m = hf_causal_lm(Qwen2ForCausalLM, Qwen2Config, tie_word_embeddings=True, **LLAMA_CFG)
    init_normal(m, gen)
    randomize_rms_norms(m, gen)
    return m


def build_vit_hf(gen):
    m = hf_image_classifier(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                            num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=128, num_labels=10)
    init_normal(m, gen)
    with torch.no_grad():
        m.vit.embeddings.cls_token.normal_(0.0, 0.02, generator=gen)
        m.vit.embeddings.position_embeddings.normal_(0.0, 0.02, generator=gen)
    randomize_affine(m, gen)
    return m


def build_mobilenetv3(gen):
    import torchvision
    m = torchvision.models.mobilenet_v3_small(width_mult=0.15, reduced_tail=True,
                                              num_classes=10, dropout=0.0)
    randomize_affine(m, gen)  # torchvision's init for the rest (seeded)
    return m



T5_CFG = dict(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
              num_heads=4)
T5_T_ENC, T5_T_DEC = 16, 12


def build_t5(gen):
    """transformers' T5ForConditionalGeneration whose forward takes the
    encoder tokens and the decoder's labels and returns the logits
    [B, T_dec, V]. The labels are the model's own input: T5 shifts them
    right into the decoder's input (`_shift_right`, a ScatterND whose
    indices fold from shapes, and a Where for the -100 padding), so that
    shift is in the exported graph. The loss transformers computes from
    them too is not returned (the exporter drops it)."""
    from transformers import T5Config, T5ForConditionalGeneration

    class T5Logits(T5ForConditionalGeneration):
        def forward(self, input_ids, decoder_labels):
            with float64_casts(self.lm_head.weight):
                return super().forward(input_ids=input_ids, labels=decoder_labels,
                                       use_cache=False).logits

    m = T5Logits(T5Config(attn_implementation="eager", use_cache=False, dropout_rate=0.0,
                          decoder_start_token_id=0, pad_token_id=0, **T5_CFG))
    init_normal(m, gen, std=0.1)
    randomize_rms_norms(m, gen)
    return m


def t5_inputs(gen):
    v = T5_CFG["vocab_size"]
    return {"input_ids": torch.randint(0, v, (4, T5_T_ENC), generator=gen, dtype=torch.long),
            "decoder_labels": torch.randint(0, v, (4, T5_T_DEC), generator=gen,
                                            dtype=torch.long)}


BERT_CFG = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=16, hidden_dropout_prob=0.0,
                attention_probs_dropout_prob=0.0)


def hf_logits(base, config, call):
    """A transformers `base` model class whose forward takes the token ids
    and returns `call(super().forward, idx).logits` (eager attention, no
    attention mask; float64 runs kept in float64)."""

    class Logits(base):
        def forward(self, idx):
            w = next(self.parameters())
            with float64_casts(w):
                return call(super().forward, idx).logits

    return Logits(config)


def build_bert(gen):
    from transformers import BertConfig, BertForMaskedLM
    m = hf_logits(BertForMaskedLM, BertConfig(attn_implementation="eager", type_vocab_size=2,
                                               **BERT_CFG),
                  lambda fwd, idx: fwd(input_ids=idx))
    init_normal(m, gen)
    randomize_affine(m, gen)
    return m


def build_distilbert(gen):
    from transformers import DistilBertConfig, DistilBertForSequenceClassification
    cfg = DistilBertConfig(attn_implementation="eager", vocab_size=64, dim=32, n_layers=2,
                           n_heads=4, hidden_dim=64, max_position_embeddings=16, dropout=0.0,
                           attention_dropout=0.0, seq_classif_dropout=0.0, num_labels=10)
    m = hf_logits(DistilBertForSequenceClassification, cfg,
                  lambda fwd, idx: fwd(input_ids=idx))
    init_normal(m, gen)
    randomize_affine(m, gen)
    return m


def build_mistral(gen):
    """The llama sizes but one key/value head (multi-query attention; at
    llama's 4/2 heads the graph would be llama's, node for node) and no
    sliding window (as Mistral 7B v0.2 and later configure it): at T = 16
    the library's default window of 4096 masks nothing more than the causal
    mask, but its mask is combined with the causal one by two And nodes,
    which MPT's importer does not support (docs/parity.md)."""
    from transformers import MistralConfig, MistralForCausalLM
    m = hf_causal_lm(MistralForCausalLM, MistralConfig, sliding_window=None,
                     **{**LLAMA_CFG, "num_key_value_heads": 1})
    init_normal(m, gen)
    randomize_rms_norms(m, gen)
    return m


def build_efficientnet(gen):
    """torchvision's EfficientNet class with efficientnet_b0's stage table at
    width 0.1 and depth 0.25 (torchvision's own scaling: one MBConv per
    stage), stochastic depth and dropout 0."""
    from torchvision.models import efficientnet as e
    setting, last = e._efficientnet_conf("efficientnet_b0", width_mult=0.1, depth_mult=0.25)
    m = e.EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0, num_classes=10,
                       last_channel=last)
    randomize_affine(m, gen)
    return m


def build_convnext(gen):
    """torchvision's ConvNeXt class, two stages (16 and 32 channels, one
    CNBlock each), layer scale 0.1 (the library's 1e-6 would leave the
    blocks' weights without effect on 5 steps), stochastic depth 0."""
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    m = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)],
                 stochastic_depth_prob=0.0, layer_scale=0.1, num_classes=10)
    randomize_affine(m, gen)
    return m


def build_squeezenet(gen):
    """torchvision's SqueezeNet 1.1 at 1/8 of its widths: the library's
    class and Fire modules in its layer order (Conv3x3/2, ReLU, ceil-mode
    MaxPools, eight Fire modules, 1x1 classifier conv, ReLU, global average
    pool), dropout 0."""
    from torchvision.models.squeezenet import Fire, SqueezeNet
    m = SqueezeNet(version="1_1", num_classes=10, dropout=0.0)
    m.features = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, stride=2), nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        Fire(8, 2, 8, 8), Fire(16, 2, 8, 8),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        Fire(16, 4, 16, 16), Fire(32, 4, 16, 16),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        Fire(32, 6, 24, 24), Fire(48, 6, 24, 24), Fire(48, 8, 32, 32), Fire(64, 8, 32, 32))
    final = nn.Conv2d(64, 10, kernel_size=1)
    m.classifier[1] = final
    with torch.no_grad():  # torchvision's init, from this script's generator
        for c in m.modules():
            if isinstance(c, nn.Conv2d):
                if c is final:
                    c.weight.normal_(0.0, 0.01, generator=gen)
                else:
                    bound = math.sqrt(6.0 / (c.weight[0].numel()))
                    c.weight.uniform_(-bound, bound, generator=gen)
                c.bias.zero_()
    return m


SPECS = [
    Spec("smooth_cnn", "Conv3x3(3->8)+BN+GELU; block: Conv3x3/2(8->16)+BN+GELU, "
         "Conv3x3(16->16)+BN, shortcut Conv1x1/2(8->16)+BN, add, GELU; AvgPool 2x2; "
         "GlobalAveragePool; Linear(16,10); x f32[8,3,16,16]",
         build_smooth_cnn, images(8, 16), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2, keep_grad32=True),
    Spec("resnet18", "ResNet-18: stem Conv7x7/2+BN+ReLU+MaxPool3x3/2, BasicBlocks "
         "[2,2,2,2] widths 4/8/16/32, GlobalAveragePool, Linear(32,10); x f32[8,3,32,32]",
         build_resnet18, images(8, 32), 10, kinked=True, lr_sgd=0.1,
         lr_momentum=0.01, lr_adamw=1e-3),
    Spec("gpt2", "GPT-2-style decoder: vocab 48, T 16, 2 layers, 2 heads, d_model 32, "
         "pre-LN, causal attention, erf GELU, dropout p=0, LM head tied to the token "
         "embedding; idx i64[4,16]",
         build_gpt2, gpt2_inputs, GPT_CFG.vocab_size, kinked=False, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("mobilenetv2", "MobileNetV2 (ImageNet stage table), width multiplier 0.1, "
         "last conv 64 channels, ReLU6, depthwise convs; x f32[8,3,48,48] (the last "
         "feature map is 2x2; the global gradient norm at init is ~100, so small lrs)",
         build_mobilenetv2, images(8, 48), 10, kinked=True, lr_sgd=0.1,
         lr_momentum=1e-4, lr_adamw=2e-4),
    Spec("vit", "ViT-style encoder: Conv4x4/4 patch embedding (3->32), learned "
         "position embedding [1,16,32], 2 pre-LN blocks (2 heads, erf GELU MLP 4x), "
         "final LN, mean over tokens, Linear(32,10); x f32[4,3,16,16]",
         build_vit, images(4, 16), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2),
    Spec("vit_dynamo", "the vit model and weights, exported by the dynamo exporter "
         "(torch.export + onnxscript, optimize=True) at opset 18; x f32[4,3,16,16]",
         build_vit, images(4, 16), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2, exporter="dynamo", opset=18),
    Spec("mlp_dynamo", "Linear(16,32)+GELU+Linear(32,32)+GELU+Linear(32,10), "
         "exported by the dynamo exporter (torch.export + onnxscript) at opset 18; "
         "x f32[8,16]",
         lambda gen: MLP3(), lambda gen: {"x": torch.randn(8, 16, generator=gen)}, 10,
         kinked=False, lr_sgd=0.1, lr_momentum=0.05, lr_adamw=1e-2,
         exporter="dynamo", opset=18),
    Spec("llama", "transformers LlamaForCausalLM (eager attention): vocab 64, T 16, "
         "2 layers, hidden 32, 4 query heads and 2 key/value heads (grouped-query "
         "attention) of dim 8, rotary embeddings, RMSNorm, SiLU-gated MLP 64, untied "
         "LM head, all-ones attention mask; idx i64[4,16]",
         build_llama, llama_inputs, LLAMA_CFG["vocab_size"], kinked=False, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("qwen2", "transformers Qwen2ForCausalLM (eager attention), the llama sizes: "
         "vocab 64, T 16, 2 layers, hidden 32, 4 query and 2 key/value heads of dim 8, "
         "rotary embeddings, RMSNorm, SiLU-gated MLP 64; biases on the q/k/v "
         "projections, LM head tied to the token embedding; idx i64[4,16]",
         build_qwen2, llama_inputs, LLAMA_CFG["vocab_size"], kinked=False, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("vit_hf", "transformers ViTForImageClassification (eager attention): 16x16 "
         "images, 4x4 patches, class token, hidden 32, 2 layers, 2 heads, GELU MLP 128, "
         "LayerNorm eps 1e-12, classifier on the class token; x f32[4,3,16,16]",
         build_vit_hf, images(4, 16), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2),
    Spec("mobilenetv3", "torchvision mobilenet_v3_small, width multiplier 0.15, "
         "reduced tail, dropout 0: BN, ReLU, HardSwish, squeeze-excitation with "
         "HardSigmoid, depthwise convs; x f32[8,3,48,48] (the last feature map is 2x2)",
         build_mobilenetv3, images(8, 48), 10, kinked=True, lr_sgd=1.0,
         lr_momentum=0.05, lr_adamw=2e-3),
    Spec("t5", "transformers T5ForConditionalGeneration (eager attention): vocab 64, "
         "d_model 32, 2 encoder and 2 decoder layers, 4 heads of d_kv 8, ReLU FFN 64, "
         "relative position buckets, RMS LayerNorm, LM head tied to the shared embedding "
         "(output scaled by d_model^-1/2); the decoder's input is the labels shifted "
         "right inside the graph (ScatterND); input_ids i64[4,16], decoder_labels "
         "i64[4,12] (also the loss's labels)",
         build_t5, t5_inputs, T5_CFG["vocab_size"], kinked=True, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2, label_input="decoder_labels"),
    Spec("bert", "transformers BertForMaskedLM (eager attention): vocab 64, T 16, "
         "2 layers, hidden 32, 4 heads, GELU MLP 64, learned positions, token types "
         "(all 0), post-LN, MLM head (dense + GELU + LayerNorm, decoder tied to the "
         "word embedding); idx i64[4,16]",
         build_bert, llama_inputs, BERT_CFG["vocab_size"], kinked=False, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("distilbert", "transformers DistilBertForSequenceClassification (eager "
         "attention): vocab 64, T 16, 2 layers, dim 32, 4 heads, GELU FFN 64, learned "
         "positions; classifier on the first token (pre-classifier + ReLU), 10 classes; "
         "idx i64[4,16]",
         build_distilbert, llama_inputs, 10, kinked=True, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("mistral", "transformers MistralForCausalLM (eager attention): vocab 64, "
         "T 16, 2 layers, hidden 32, 4 query heads and 1 key/value head (multi-query "
         "attention) of dim 8, rotary embeddings, RMSNorm, SiLU-gated MLP 64, no sliding window "
         "(sliding_window=None); idx i64[4,16]",
         build_mistral, llama_inputs, LLAMA_CFG["vocab_size"], kinked=False, lr_sgd=1.0,
         lr_momentum=0.1, lr_adamw=1e-2),
    Spec("efficientnet", "torchvision EfficientNet, efficientnet_b0's stage table at "
         "width 0.1 and depth 0.25 (one MBConv per stage), dropout and stochastic depth "
         "0: BN, SiLU, squeeze-excitation with Sigmoid, depthwise 3x3 and 5x5 convs; "
         "x f32[8,3,48,48] (the last feature map is 2x2)",
         build_efficientnet, images(8, 48), 10, kinked=False, lr_sgd=1.0,
         lr_momentum=0.05, lr_adamw=2e-3),
    Spec("convnext", "torchvision ConvNeXt, two stages of one CNBlock (16 and 32 "
         "channels), layer scale 0.1, stochastic depth 0: Conv4x4/4 stem + "
         "LayerNorm2d, depthwise 7x7, channels-last LayerNorm and Linear layers, "
         "GELU, LayerNorm2d + Conv2x2/2 downsampling; x f32[8,3,32,32]",
         build_convnext, images(8, 32), 10, kinked=False, lr_sgd=1.0,
         lr_momentum=0.05, lr_adamw=2e-3),
    Spec("squeezenet", "torchvision SqueezeNet 1.1 (the library's class and Fire "
         "modules) at 1/8 of its widths: Conv3x3/2(3->8), ReLU, ceil-mode MaxPool3x3/2, "
         "eight Fire modules (squeeze 2-8, expand 8-32 + 8-32), 1x1 classifier conv, "
         "ReLU, global average pool, dropout 0; x f32[8,3,64,64]",
         build_squeezenet, images(8, 64), 10, kinked=True, lr_sgd=1.0,
         lr_momentum=0.05, lr_adamw=2e-3),
]

MOMENTUM = 0.9
ADAMW_WD = 0.01


# --size large: realistic widths, feasible on a 2-core CPU in minutes. Never
# written into the repository (the tests' fixture root is chosen with
# MPT_PARITY_FIXTURES; scripts/parity-large.sh). The names are those of the
# small models, so the same ZooParityTest cases run on them. smooth_cnn has
# no large size. The learning rates are the small models'.

LARGE_GPT_CFG = gf.GPTConfig(vocab_size=1024, block_size=64, n_layer=4, n_head=4,
                             d_model=256)


def build_resnet18_large(gen):
    m = gf.ResNet18(widths=(64, 128, 256, 512), num_classes=10)
    randomize_affine(m, gen)
    return m


def build_mobilenetv2_large(gen):
    m = gf.MobileNetV2(width_mult=0.5, num_classes=10, last_channels=1280)
    randomize_affine(m, gen)
    return m


def build_gpt2_large(gen):
    m = GPT2(LARGE_GPT_CFG)
    m.init_weights(gen)
    return m


def gpt2_large_inputs(gen):
    return {"idx": torch.randint(0, LARGE_GPT_CFG.vocab_size, (4, LARGE_GPT_CFG.block_size),
                                 generator=gen, dtype=torch.long)}


def build_vit_large(gen):
    m = ViT(image=32, patch=4, d=192, heads=3, layers=4)
    with torch.no_grad():
        m.pos.normal_(0.0, 0.02, generator=gen)
    randomize_affine(m, gen)
    return m


LARGE_SPECS = [
    Spec("resnet18", "ResNet-18 at the torchvision widths: stem Conv7x7/2+BN+ReLU+"
         "MaxPool3x3/2, BasicBlocks [2,2,2,2] widths 64/128/256/512, GlobalAveragePool, "
         "Linear(512,10); x f32[8,3,32,32]",
         build_resnet18_large, images(8, 32), 10, kinked=True, lr_sgd=0.1,
         lr_momentum=0.01, lr_adamw=1e-3),
    Spec("gpt2", "GPT-2-style decoder: vocab 1024, T 64, 4 layers, 4 heads, d_model 256, "
         "pre-LN, causal attention, erf GELU, dropout p=0, LM head tied to the token "
         "embedding; idx i64[4,64]",
         build_gpt2_large, gpt2_large_inputs, LARGE_GPT_CFG.vocab_size, kinked=False,
         lr_sgd=1.0, lr_momentum=0.1, lr_adamw=1e-2),
    Spec("mobilenetv2", "MobileNetV2 (ImageNet stage table), width multiplier 0.5, "
         "last conv 1280 channels, ReLU6, depthwise convs; x f32[8,3,64,64]",
         build_mobilenetv2_large, images(8, 64), 10, kinked=True, lr_sgd=0.1,
         lr_momentum=1e-4, lr_adamw=2e-4),
    Spec("vit", "ViT-style encoder: Conv4x4/4 patch embedding (3->192), learned "
         "position embedding [1,64,192], 4 pre-LN blocks (3 heads, erf GELU MLP 4x), "
         "final LN, mean over tokens, Linear(192,10); x f32[4,3,32,32]",
         build_vit_large, images(4, 32), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2),
    Spec("vit_dynamo", "the large vit model and weights, exported by the dynamo exporter "
         "(torch.export + onnxscript, optimize=True) at opset 18; x f32[4,3,32,32]",
         build_vit_large, images(4, 32), 10, kinked=False, lr_sgd=0.1,
         lr_momentum=0.05, lr_adamw=1e-2, exporter="dynamo", opset=18),
    Spec("mlp_dynamo", "Linear(256,1024)+GELU+Linear(1024,1024)+GELU+Linear(1024,10), "
         "exported by the dynamo exporter (torch.export + onnxscript) at opset 18; "
         "x f32[64,256]",
         lambda gen: MLP3(256, 1024), lambda gen: {"x": torch.randn(64, 256, generator=gen)},
         10, kinked=False, lr_sgd=0.1, lr_momentum=0.05, lr_adamw=1e-2,
         exporter="dynamo", opset=18),
]


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------


def export(spec, model, inputs) -> bytes:
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spec.exporter == "dynamo":
            prog = torch.onnx.export(model, tuple(inputs.values()), dynamo=True,
                                     opset_version=spec.opset,
                                     input_names=list(inputs), output_names=["logits"],
                                     external_data=False, optimize=True)
            proto = prog.model_proto
            # Each node carries its Python stack trace (absolute paths and
            # line numbers of this script) in metadata_props: dropped, so the
            # file is reproducible and a third smaller.
            for node in proto.graph.node:
                del node.metadata_props[:]
            return proto.SerializeToString()
        buf = io.BytesIO()
        with no_packed_sequences():
            torch.onnx.export(model, tuple(inputs.values()), buf, dynamo=False,
                              opset_version=spec.opset, input_names=list(inputs),
                              output_names=["logits"], export_params=True,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False, keep_initializers_as_inputs=False)
        return buf.getvalue()


def check_export(spec, raw, model, inputs):
    proto = onnx.load_from_string(raw)
    onnx.checker.check_model(proto, full_check=True)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    for pname, p in model.named_parameters():
        a = p.detach().numpy()
        if pname in inits:
            if inits[pname].shape != a.shape or inits[pname].tobytes() != a.tobytes():
                raise FixtureError(f"{spec.name}: initializer {pname} differs from PyTorch")
        elif not any(v.shape == a.T.shape and v.tobytes() == np.ascontiguousarray(a.T).tobytes()
                     for v in inits.values()):
            raise FixtureError(f"{spec.name}: parameter {pname} has no initializer "
                               f"of that name or holding its transpose "
                               f"(initializers: {sorted(inits)})")
    if [i.name for i in proto.graph.input] != list(inputs):
        raise FixtureError(f"{spec.name}: graph inputs {[i.name for i in proto.graph.input]}")
    # Forward check with ONNX's reference evaluator (training-mode BN and
    # Dropout(ratio 0) included, in float32) against PyTorch in train mode:
    # both against the float64 forward, the evaluator allowed 10x PyTorch
    # fp32's own deviation (models with batch norm over few values amplify
    # rounding) or FORWARD_TOL, whichever is larger.
    from onnx.reference import ReferenceEvaluator
    with torch.no_grad():
        want32 = copy.deepcopy(model).train()(*inputs.values()).numpy().astype(np.float64)
        want = as_dtype(model, torch.float64)(
            *cast_inputs(inputs, torch.float64).values()).numpy()
    got = ReferenceEvaluator(proto).run(None, {k: v.numpy() for k, v in inputs.items()})[0]
    d = float(np.max(np.abs(got.astype(np.float64) - want)))
    d32 = float(np.max(np.abs(want32 - want)))
    if not d <= max(10 * d32, FORWARD_TOL):
        raise FixtureError(f"{spec.name}: onnx.reference forward differs from float64 torch "
                           f"by {d:.3e} (PyTorch fp32: {d32:.3e})")
    hist = {}
    for n in proto.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    opset = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")][0]
    print(f"[{spec.name}] model.onnx: {len(raw)} bytes, opset {opset}, "
          f"{len(proto.graph.node)} nodes, {len(inits)} initializers, "
          f"max |onnx.reference - torch64| = {d:.2e} (torch32: {d32:.2e})")
    print("    ops: " + ", ".join(f"{k}={v}" for k, v in sorted(hist.items())))
    return proto, hist, opset, d


# --------------------------------------------------------------------------
# Reference computations
# --------------------------------------------------------------------------


def onnx_names(spec, proto, model):
    """PyTorch parameter name -> (ONNX initializer name, transposed). The
    TorchScript exporter keeps every parameter under its own name; the
    dynamo exporter with optimize=True folds a Linear weight's transpose into
    a new initializer (`val_N`, the weight transposed), which is then the
    trainable tensor."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    out = {}
    for pname, p in model.named_parameters():
        a = p.detach().numpy()
        if pname in inits:
            out[pname] = (pname, False)
            continue
        t = np.ascontiguousarray(a.T)
        hits = [n for n, v in inits.items() if v.shape == t.shape and v.tobytes() == t.tobytes()]
        if len(hits) != 1:
            raise FixtureError(f"{spec.name}: {pname} matches initializers {hits}")
        out[pname] = (hits[0], True)
    return out


def cross_entropy(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def as_dtype(model, dtype):
    m = copy.deepcopy(model).to(dtype)
    m.train()
    return m


def cast_inputs(inputs, dtype):
    return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in inputs.items()}


def perturb(model, inputs, gen):
    """Multiply every float weight and input element by 1 + 2^-24 r."""
    with torch.no_grad():
        for p in model.parameters():
            r = torch.rand(p.shape, generator=gen, dtype=torch.float64) * 2 - 1
            p.mul_(1 + PERTURB_REL * r)
    out = {}
    for k, v in inputs.items():
        if v.is_floating_point():
            r = torch.rand(v.shape, generator=gen, dtype=torch.float64) * 2 - 1
            v = v * (1 + PERTURB_REL * r)
        out[k] = v
    return out


def grads_of(model, inputs, labels):
    model.zero_grad(set_to_none=True)
    loss = cross_entropy(model(*inputs.values()), labels)
    loss.backward()
    return loss.item(), {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def sgd_step(model, inputs, labels, lr):
    opt = torch.optim.SGD(model.parameters(), lr=lr, foreach=False)
    opt.zero_grad(set_to_none=True)
    cross_entropy(model(*inputs.values()), labels).backward()
    opt.step()
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def trajectory(model, inputs, labels, opt_name, lr, bn_names=()):
    if opt_name == "momentum":
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM, foreach=False)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=ADAMW_WD,
                                foreach=False)
    losses, bn = [], {}
    buffers = dict(model.named_buffers())
    for s in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss = cross_entropy(model(*inputs.values()), labels)
        losses.append(loss.item())
        loss.backward()
        opt.step()
        if s in (0, STEPS - 1):
            for b in bn_names:
                bn[(s + 1, b)] = buffers[b].detach().clone()
    return losses, bn


def amp_trajectory(model32, inputs, labels, dtype, lr):
    """PyTorch's own mixed precision on the same AdamW steps: CPU autocast to
    `dtype`, with a GradScaler (init 2^16, dynamic) for float16. Returns the
    losses of the applied steps (a step the scaler skips changes nothing, so
    those are the reference's first steps) and the number of skipped steps."""
    m = as_dtype(model32, torch.float32)
    opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=ADAMW_WD, foreach=False)
    scaler = torch.amp.GradScaler("cpu", enabled=dtype == torch.float16)
    losses, skipped = [], 0
    while len(losses) < STEPS and skipped < 16:
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=dtype):
            loss = cross_entropy(m(*inputs.values()).float(), labels)
        scaler.scale(loss).backward()
        before = scaler.get_scale() if scaler.is_enabled() else 1.0
        scaler.step(opt)
        scaler.update()
        if scaler.is_enabled() and scaler.get_scale() < before:
            skipped += 1
        else:
            losses.append(loss.item())
    return losses, skipped


def rel_l2(a, ref, denom):
    """||a - ref||_2 / denom."""
    d = np.linalg.norm(np.asarray(a, np.float64) - np.asarray(ref, np.float64))
    return float(d / denom) if denom > 0 else float(d)


def traj_err(a, ref):
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    return float(np.max(np.abs(a - ref) / np.abs(ref)))


class Run:
    """Everything one precision (or one perturbed float64 run) gives."""

    def __init__(self, spec, model32, inputs, labels, dtype, gen=None):
        m = as_dtype(model32, dtype)
        x = cast_inputs(inputs, dtype)
        if gen is not None:
            x = perturb(m, x, gen)
        self.p0 = {n: p.detach().clone() for n, p in m.named_parameters()}
        init = copy.deepcopy(m)
        self.loss, self.grads = grads_of(m, x, labels)
        self.sgd = sgd_step(copy.deepcopy(init), x, labels, spec.lr_sgd)
        bn_names = [n for n, _ in init.named_buffers()
                    if n.endswith("running_mean") or n.endswith("running_var")]
        self.momentum, self.bn = trajectory(copy.deepcopy(init), x, labels, "momentum",
                                            spec.lr_momentum, bn_names)
        self.adamw, _ = trajectory(copy.deepcopy(init), x, labels, "adamw", spec.lr_adamw)

    def errors(self, ref):
        """Every metric of this run against the float64 reference run."""
        e = {"loss": abs(self.loss - ref.loss) / abs(ref.loss),
             "momentum_trajectory": traj_err(self.momentum, ref.momentum),
             "adamw_trajectory": traj_err(self.adamw, ref.adamw),
             "grad": {}, "sgd": {}}
        for step in (1, STEPS):
            e[f"bn_stats_step{step}"] = max(
                [rel_l2(v.double(), ref.bn[k], denom=float(ref.bn[k].norm()))
                 for k, v in self.bn.items() if k[0] == step], default=0.0)
        for n in ref.grads:
            gd, sd = ref.denominators[n]
            e["grad"][n] = rel_l2(self.grads[n].double(), ref.grads[n], denom=gd)
            # The update's error: a perturbed run starts from its own
            # (perturbed) p0, which must not count as an update error.
            e["sgd"][n] = rel_l2(self.sgd[n].double() - self.p0[n].double(),
                                 ref.sgd[n] - ref.p0[n], denom=sd)
        return e

    def set_denominators(self, lr):
        """The metrics' denominators: ||g64|| and ||p1_64 - p0|| per tensor,
        except for a gradient that is zero in exact arithmetic (float64 gives
        it as rounding noise under ZERO_GRAD_REL of the global gradient norm,
        e.g. the bias of a BN whose output only reaches the loss through
        another training-mode BN, which subtracts it again): there the
        denominators are the global norm ||G64|| and lr * ||G64||."""
        gnorm = math.sqrt(sum(float(g.double().norm()) ** 2 for g in self.grads.values()))
        self.global_norm = gnorm
        self.denominators, self.zero_grads = {}, []
        for n, g in self.grads.items():
            if float(g.double().norm()) <= ZERO_GRAD_REL * gnorm:
                self.zero_grads.append(n)
                self.denominators[n] = (gnorm, lr * gnorm)
            else:
                self.denominators[n] = (float(g.norm()), float((self.sgd[n] - self.p0[n]).norm()))


def combine(a, b):
    """Elementwise max of two error dicts."""
    if isinstance(a, dict):
        return {k: combine(a[k], b[k]) for k in a}
    return max(a, b)


def tolerance_tree(spread):
    if isinstance(spread, dict):
        return {k: tolerance_tree(v) for k, v in spread.items()}
    return max(TOL_FACTOR * spread, TOL_FLOOR)


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


class Writer:
    def __init__(self, d):
        self.dir = d
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.endswith((".npy", ".onnx", ".json", ".md", ".txt")):
                os.remove(os.path.join(d, f))
        self.total = 0

    def bytes(self, fname, data):
        with open(os.path.join(self.dir, fname), "wb") as fh:
            fh.write(data)
        self.total += len(data)

    def npy(self, fname, arr, dtype):
        arr = np.asarray(arr)
        if arr.dtype != np.dtype(dtype):
            raise FixtureError(f"{fname}: dtype {arr.dtype}, wanted {np.dtype(dtype)}")
        self.bytes(fname, gf.npy_bytes(arr))

    def text(self, fname, s):
        self.bytes(fname, s.encode())


def threads_text():
    n = torch.get_num_threads()
    return f"{n} thread" + ("" if n == 1 else "s")


def fmt(x):
    return f"{x:.3g}"


def generate(spec, out_root, mpt_translate, max_bytes=MAX_DIR_BYTES):
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = spec.build(gen)
    model.train()
    inputs = spec.inputs(gen)
    with torch.no_grad():
        logits = copy.deepcopy(model)(*inputs.values())
    if spec.label_input:
        labels = inputs[spec.label_input]
        if tuple(labels.shape) != tuple(logits.shape[:-1]):
            raise FixtureError(f"{spec.name}: {spec.label_input} {list(labels.shape)} is not "
                               f"the shape of the logits {list(logits.shape)} minus the classes")
    else:
        labels = torch.randint(0, spec.classes, tuple(logits.shape[:-1]), generator=gen,
                               dtype=torch.long)

    raw = export(spec, copy.deepcopy(model), inputs)
    proto, hist, opset, fwd = check_export(spec, raw, model, inputs)
    # The exporter traced a training-mode forward pass, which updated the
    # BN running statistics it then wrote: every reference run starts from
    # those (training-mode losses and gradients do not read them).
    exported = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    with torch.no_grad():
        for n, b in model.named_buffers():
            if n.endswith(("running_mean", "running_var")) and n in exported:
                b.copy_(torch.from_numpy(exported[n].copy()))
    # Initializers that are neither parameters nor BN buffers: constants the
    # exporter stored as initializers (the dynamo exporter does so for the
    # erf-GELU's sqrt(2), 1 and 0.5). The importer treats scalar float
    # initializers as constants; the tests check these never become
    # parameters.
    buffers = {n for n, _ in model.named_buffers()}
    onnx_name = onnx_names(spec, proto, model)
    params_set = {n for n, _ in onnx_name.values()}
    frozen = [i.name for i in proto.graph.initializer
              if i.name not in params_set and i.name not in buffers]
    w = Writer(os.path.join(out_root, spec.name))
    w.bytes("model.onnx", raw)
    if mpt_translate:
        r = subprocess.run([mpt_translate, "--import-onnx", os.path.join(w.dir, "model.onnx")],
                           capture_output=True, text=True)
        print(f"    mpt-translate --import-onnx: {'ok' if r.returncode == 0 else 'FAILED'}")
        if r.returncode != 0:
            print(r.stderr[-1500:])

    ref = Run(spec, model, inputs, labels, torch.float64)
    ref.set_denominators(spec.lr_sgd)
    r32 = Run(spec, model, inputs, labels, torch.float32)
    spread32 = r32.errors(ref)
    pgen = torch.Generator().manual_seed(SEED + 1)
    spread_pert = None
    for _ in range(PERTURB_RUNS):
        e = Run(spec, model, inputs, labels, torch.float64, gen=pgen).errors(ref)
        spread_pert = e if spread_pert is None else combine(spread_pert, e)
    spread = combine(spread32, spread_pert) if spec.kinked else spread32
    amp = {}
    for pname, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        losses, skipped = amp_trajectory(model, inputs, labels, dt, spec.lr_adamw)
        amp[pname] = {"losses": losses, "skipped": skipped,
                      "error": traj_err(losses, ref.adamw) if len(losses) == STEPS
                      else float("inf")}
    tol = tolerance_tree(spread)
    if any(t for _, t in onnx_name.values()):
        # Key everything by ONNX initializer name, transposing the arrays of
        # parameters the exporter stored transposed (the metrics are
        # invariant under transposition).
        def key(d):
            return {onnx_name[k][0]: v for k, v in d.items()}

        def arr(d):
            return {onnx_name[k][0]: (v.t().contiguous() if onnx_name[k][1] else v)
                    for k, v in d.items()}
        for tree in (spread32, spread_pert, tol):
            tree["grad"], tree["sgd"] = key(tree["grad"]), key(tree["sgd"])
        ref.grads, ref.sgd = arr(ref.grads), arr(ref.sgd)
        r32.grads = arr(r32.grads)
        ref.denominators = key(ref.denominators)
        ref.zero_grads = [onnx_name[k][0] for k in ref.zero_grads]

    for k, v in inputs.items():
        w.npy(f"input_{k}.npy", v.numpy(), v.numpy().dtype)
    w.npy("labels.npy", labels.numpy(), np.int64)
    w.npy("loss.npy", np.float64(ref.loss), np.float64)
    params = list(ref.grads)
    for n in params:
        w.npy(f"grad_{n}.npy", ref.grads[n].numpy(), np.float64)
        w.npy(f"sgd_{n}.npy", ref.sgd[n].numpy(), np.float64)
        if spec.keep_grad32:
            w.npy(f"grad32_{n}.npy", r32.grads[n].numpy(), np.float32)
    if spec.keep_grad32:
        w.npy("loss32.npy", np.float32(r32.loss), np.float32)
    w.npy("momentum_loss.npy", np.array(ref.momentum, np.float64), np.float64)
    w.npy("momentum_loss_fp32.npy", np.array(r32.momentum, np.float32), np.float32)
    w.npy("adamw_loss.npy", np.array(ref.adamw, np.float64), np.float64)
    w.npy("adamw_loss_fp32.npy", np.array(r32.adamw, np.float32), np.float32)
    for pname, a in amp.items():
        w.npy(f"adamw_loss_{pname}_autocast.npy", np.array(a["losses"], np.float32), np.float32)
    for (step, b), v in sorted(ref.bn.items()):
        w.npy(f"bn_step{step}_{b}.npy", v.numpy(), np.float64)

    inputs_meta = {k: [str(v.numpy().dtype), list(v.shape)] for k, v in inputs.items()}
    meta = {
        "fixture": spec.name,
        "model": spec.what,
        "onnx": {"opset": opset, "exporter": spec.exporter,
                 "export": ("torch.onnx.export(dynamo=True, opset_version=18, optimize=True); "
                            "module in train mode") if spec.exporter == "dynamo" else
                           ("torch.onnx.export(dynamo=False, training=TrainingMode.TRAINING, "
                            "do_constant_folding=False)"),
                 "inputs": inputs_meta, "outputs": {"logits": ["float32", list(logits.shape)]},
                 "ops": dict(sorted(hist.items())),
                 "forward_check_max_abs": fwd,
                 "constant_initializers": frozen,
                 "transposed_parameters": {k: v[0] for k, v in onnx_name.items() if v[1]}},
        "parameters": {n: list(t.shape) for n, t in ref.grads.items()},
        "labels": {"dtype": "int64", "shape": list(labels.shape), "classes": spec.classes},
        "loss": "cross_entropy(logits, labels) over the last axis, mean (added by the "
                "compiler: --loss-kind=cross_entropy --loss-output=logits --label-input=labels)",
        "sgd": {"lr": spec.lr_sgd, "steps": 1},
        "momentum": {"lr": spec.lr_momentum, "momentum": MOMENTUM, "steps": STEPS},
        "adamw": {"lr": spec.lr_adamw, "betas": [0.9, 0.999], "eps": 1e-8,
                  "weight_decay": ADAMW_WD, "steps": STEPS},
        "same_batch_every_step": True,
        "kinked": spec.kinked,
        "metrics": {
            "loss": "|l - l64| / |l64|",
            "grad": "||g - g64||_2 / ||g64||_2 per parameter (see zero_gradients)",
            "sgd": "||p1 - p1_64||_2 / ||p1_64 - p0||_2 per parameter (the update's "
                   "relative error; see zero_gradients)",
            "momentum_trajectory": f"max over the {STEPS} steps of |l - l64| / |l64|",
            "adamw_trajectory": f"max over the {STEPS} steps of |l - l64| / |l64|",
        },
        "tolerance_rule": (
            f"tolerance = max({TOL_FACTOR:g} * spread, {TOL_FLOOR:g}); spread = " +
            ("max(PyTorch fp32 vs float64, the largest of "
             f"{PERTURB_RUNS} float64 runs with weights and inputs multiplied by "
             "(1 + 2^-24 r), r ~ U[-1,1], vs float64): the model has kinks "
             "(ReLU/ReLU6/max-pool)" if spec.kinked else
             "PyTorch fp32 vs float64 on the same weights and batch (smooth model)")),
        "zero_gradients": {
            "rule": f"||g64|| <= {ZERO_GRAD_REL:g} * ||G64|| (global norm): the gradient is "
                    "zero in exact arithmetic; its metrics divide by ||G64|| (grad) and "
                    "lr * ||G64|| (sgd) instead of its own norms",
            "global_grad_norm": ref.global_norm, "parameters": ref.zero_grads},
        "autocast_adamw": {
            "what": "PyTorch CPU autocast (bf16; fp16 with GradScaler init 2^16) on the "
                    "same AdamW steps; error = max over the applied steps of "
                    "|l - l64| / |l64| against adamw_loss.npy",
            **amp},
        "spread_fp32": spread32,
        "spread_perturbed_fp64": spread_pert,
        "tolerance": tol,
        "values": {"loss": ref.loss, "momentum_loss": ref.momentum,
                   "adamw_loss": ref.adamw, "momentum_loss_fp32": r32.momentum,
                   "adamw_loss_fp32": r32.adamw},
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__,
                     "numpy": np.__version__, "python": sys.version.split()[0]},
    }
    w.text("meta.json", json.dumps(meta, indent=1) + "\n")
    # The same tolerances in a form a C++ test reads without a JSON parser.
    lines = ["# kind name tolerance spread_fp32 spread_perturbed_fp64 "
             "(generated from meta.json; see its tolerance_rule)"]
    for k in ("loss", "momentum_trajectory", "adamw_trajectory", "bn_stats_step1",
              f"bn_stats_step{STEPS}"):
        lines.append(f"{k} - {tol[k]:.6e} {spread32[k]:.6e} {spread_pert[k]:.6e}")
    lines += [f"hyper sgd.lr {spec.lr_sgd!r}", f"hyper momentum.lr {spec.lr_momentum!r}",
              f"hyper momentum.momentum {MOMENTUM!r}", f"hyper adamw.lr {spec.lr_adamw!r}",
              f"hyper adamw.weight_decay {ADAMW_WD!r}"]
    for n in frozen:
        lines.append(f"constant {n} 0")
    for pname, a in amp.items():
        lines.append(f"autocast_adamw_trajectory {pname} {a['error']:.6e} {a['skipped']}")
    for n in ref.zero_grads:
        gd, sd = ref.denominators[n]
        lines.append(f"denominator grad {n} {gd!r}")
        lines.append(f"denominator sgd {n} {sd!r}")
    for k in ("grad", "sgd"):
        for n in params:
            lines.append(f"{k} {n} {tol[k][n]:.6e} {spread32[k][n]:.6e} "
                         f"{spread_pert[k][n]:.6e}")
    w.text("tolerances.txt", "\n".join(lines) + "\n")

    rows = []
    for n in params:
        rows.append(f"| `{n}` | {list(ref.grads[n].shape)} | {fmt(spread32['grad'][n])} | "
                    f"{fmt(spread_pert['grad'][n])} | {fmt(tol['grad'][n])} | "
                    f"{fmt(spread32['sgd'][n])} | {fmt(tol['sgd'][n])} |")
    scal = []
    for k in ("loss", "momentum_trajectory", "adamw_trajectory", "bn_stats_step1",
              f"bn_stats_step{STEPS}"):
        scal.append(f"| {k} | {fmt(spread32[k])} | {fmt(spread_pert[k])} | {fmt(tol[k])} |")
    zero_note = "" if not ref.zero_grads else (
        f"\n{len(ref.zero_grads)} parameters have a gradient that is zero in exact arithmetic "
        f"(float64 norm under {ZERO_GRAD_REL:g} of the global norm {ref.global_norm:.4g}): "
        f"{', '.join('`' + n + '`' for n in ref.zero_grads)}. Their errors are measured "
        "against the global norm (grad) and lr times it (SGD update) instead of their own "
        "norms.\n")
    files = "grad32_<p>.npy, loss32.npy (PyTorch fp32), " if spec.keep_grad32 else ""
    w.text("README.md", f"""# {spec.name}

Generated by `scripts/gen_parity_fixtures.py`; do not edit. PyTorch
{torch.__version__}, CPU, {threads_text()}, deterministic algorithms.

{spec.what}.

`model.onnx`: opset {opset}, exported by the {spec.exporter} exporter from the module
in training mode, without its loss; {len(proto.graph.node)} nodes
({", ".join(f"{k} {v}" for k, v in sorted(hist.items()))}).
The compiler adds `cross_entropy(logits, labels)` (mean). Inputs:
{", ".join(f"`{k}` {v[0]}{v[1]}" for k, v in inputs_meta.items())}; `labels.npy` i64{list(labels.shape)}.

{"" if not frozen else "Constant initializers (not parameters; the tests check the importer keeps them constants): " + ", ".join("`" + n + "`" for n in frozen) + "." + chr(10) + chr(10)}Reference (float64, the same module in double from the float32 initial weights):
`loss.npy` ({ref.loss:.10g}), `grad_<p>.npy`, `sgd_<p>.npy` (after one
`SGD(lr={spec.lr_sgd})` step), {files}`momentum_loss.npy` / `momentum_loss_fp32.npy`
({STEPS} steps of `SGD(lr={spec.lr_momentum}, momentum={MOMENTUM})`), `adamw_loss.npy` /
`adamw_loss_fp32.npy` ({STEPS} steps of `AdamW(lr={spec.lr_adamw}, weight_decay={ADAMW_WD})`),
`bn_step1_*` / `bn_step{STEPS}_*` (BN running statistics after 1 and {STEPS} momentum steps,
float64). Every step uses the same batch.

Tolerances: {meta["tolerance_rule"]}.

PyTorch's own mixed precision on the same 5 AdamW steps (CPU autocast; fp16 with a
GradScaler), against the float64 trajectory: bf16 {fmt(amp["bf16"]["error"])},
fp16 {fmt(amp["fp16"]["error"])} ({amp["fp16"]["skipped"]} steps skipped by the scaler)
(`adamw_loss_bf16_autocast.npy`, `adamw_loss_fp16_autocast.npy`).
{zero_note}
| quantity | spread fp32 | spread perturbed fp64 | tolerance |
|---|---|---|---|
{chr(10).join(scal)}

| parameter | shape | grad spread fp32 | grad spread perturbed | grad tolerance | SGD-update spread fp32 | SGD-update tolerance |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}
""")
    if max_bytes is not None and w.total > max_bytes:
        raise FixtureError(f"{spec.name}: {w.total} bytes, over {max_bytes}")
    worst_g = max(spread32["grad"].values())
    print(f"    {w.total} bytes; loss {ref.loss:.6f}; fp32 spread: loss {spread32['loss']:.2e}, "
          f"worst grad {worst_g:.2e}, momentum traj {spread32['momentum_trajectory']:.2e}, "
          f"adamw traj {spread32['adamw_trajectory']:.2e}; perturbed worst grad "
          f"{max(spread_pert['grad'].values()):.2e}")
    return w.total


def main(argv=None):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=("small", "large"), default="small",
                    help="small: the committed CI fixtures (default); large: realistic "
                         "widths (see the module docstring), written outside the "
                         "repository, --out required")
    ap.add_argument("--out", default=None,
                    help="fixture root (default for --size small: test/fixtures/parity)")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--mpt-translate", default=None)
    ap.add_argument("--threads", type=int, default=None,
                    help="PyTorch CPU threads (default 1 for small, 2 for large)")
    a = ap.parse_args(argv)
    if a.size == "small":
        specs, max_bytes = SPECS, MAX_DIR_BYTES
        out = a.out or os.path.join(repo, "test", "fixtures", "parity")
    else:
        specs, max_bytes = LARGE_SPECS, None
        if not a.out:
            ap.error("--size large needs --out DIR (outside test/fixtures: large "
                     "fixtures are never committed)")
        out = a.out
        committed = os.path.realpath(os.path.join(repo, "test", "fixtures"))
        if os.path.realpath(out).startswith(committed + os.sep) or \
                os.path.realpath(out) == committed:
            ap.error(f"--size large: --out {out} is under test/fixtures")
    if a.only:
        unknown = sorted(set(a.only) - {s.name for s in specs})
        if unknown:
            ap.error(f"--only: no {a.size} model named {', '.join(unknown)} "
                     f"(have {', '.join(s.name for s in specs)})")
    torch.set_num_threads(a.threads or (1 if a.size == "small" else 2))
    torch.use_deterministic_algorithms(True)
    total = 0
    for spec in specs:
        if a.only and spec.name not in a.only:
            continue
        total += generate(spec, out, a.mpt_translate, max_bytes)
    print(f"total {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
