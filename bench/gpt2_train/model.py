"""GPT-2 for the training benchmark (bench/gpt2_train/README.md).

One definition serves both sides: prepare.py exports it to ONNX here (the
weights zeroed, so the plan stores none), and bench.py builds it again on
the GPU host from the same seed, writes its weights to a .safetensors file
for `mpt-train --params`, and trains it with PyTorch.

GPT-2 124M: 12 layers, 12 heads, d 768, T 1024, vocabulary 50257 padded to
50304, tied token embedding and LM head, GELU (tanh), pre-LayerNorm, the
mean cross-entropy inside the graph. Attention is written out (matmul,
scale, causal mask, softmax, matmul) as most exported models have it;
`attention="sdpa"` uses torch's scaled_dot_product_attention instead (the
PyTorch baselines only). Works with torch 1.13 (Debian's, for the export
and the CPU smoke) and torch 2.x.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    n_layer: int = 12
    n_head: int = 12
    d_model: int = 768
    block_size: int = 1024  # T
    vocab_size: int = 50304  # 50257 padded to a multiple of 64
    data_vocab: int = 50257  # token ids are drawn from [0, data_vocab)


GPT2_124M = Config()
SMOKE = Config(n_layer=2, n_head=4, d_model=128, block_size=128, vocab_size=512, data_vocab=500)


class Attention(nn.Module):
    def __init__(self, cfg: Config, attention: str):
        super().__init__()
        self.cfg, self.attention = cfg, attention
        self.c_attn = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.c_proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x, mask):
        # Static shapes from the config (the tracer would turn x.size() into
        # Shape/Gather chains); the batch axis is Reshape's -1.
        t, c, nh = self.cfg.block_size, self.cfg.d_model, self.cfg.n_head
        hd = c // nh
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(-1, t, nh, hd).transpose(1, 2)
        k = k.view(-1, t, nh, hd).transpose(1, 2)
        v = v.view(-1, t, nh, hd).transpose(1, 2)
        if self.attention == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            scores = scores.masked_fill(mask, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(-1, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, cfg: Config, attention: str):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg, attention)
        self.ln_2 = nn.LayerNorm(cfg.d_model)
        self.c_fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.c_proj = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.c_proj(h)


class GPT(nn.Module):
    def __init__(self, cfg: Config, attention: str = "manual"):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.block_size, cfg.d_model)
        self.h = nn.ModuleList(Block(cfg, attention) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def init_weights(self, seed: int):
        """GPT-2's initialisation from a CPU generator: the same values on
        every host and device."""
        gen = torch.Generator().manual_seed(seed)
        std = 0.02
        with torch.no_grad():
            for name, p in self.named_parameters():  # the tied weight once
                if name.endswith("c_proj.weight"):  # residual projections
                    p.copy_(torch.randn(p.shape, generator=gen) * (std / math.sqrt(2 * self.cfg.n_layer)))
                elif name.endswith(".weight") and p.dim() == 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
                elif name.startswith("ln") or ".ln_" in name:
                    p.fill_(1.0 if name.endswith("weight") else 0.0)
                else:
                    p.zero_()

    def forward(self, idx, targets):
        t, v = self.cfg.block_size, self.cfg.vocab_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        # One causal mask for every layer, computed in the graph: True above
        # the diagonal (masked).
        mask = pos.view(1, t) > pos.view(t, 1)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x, mask)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, v).float(), targets.view(-1))


def parameter_count(cfg: Config) -> int:
    d, L = cfg.d_model, cfg.n_layer
    per_layer = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return cfg.vocab_size * d + cfg.block_size * d + L * per_layer + 2 * d


def flops_per_token(cfg: Config) -> int:
    """The issue's count: 6N + 6 L d T."""
    return 6 * parameter_count(cfg) + 6 * cfg.n_layer * cfg.d_model * cfg.block_size


def batches(cfg: Config, batch: int, count: int, seed: int):
    """`count` batches of (idx, targets), i64 [batch, T], uniform token ids."""
    gen = torch.Generator().manual_seed(seed + 1)
    tokens = torch.randint(0, cfg.data_vocab, (count * batch, cfg.block_size + 1), generator=gen)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def config_dict(cfg: Config) -> dict:
    return asdict(cfg)
