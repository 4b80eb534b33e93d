# Trains a small character-level GPT written in PyTorch through
# mpt.torch.Trainer (bf16 mixed precision, AdamW), in an ordinary loop over
# a torch DataLoader, beside the same loop in plain PyTorch (FP32 and CPU
# bf16 autocast) from the same initial weights and batches, and prints the
# three loss curves. Then writes the trained weights back into the module
# and samples from it with plain PyTorch.
#   python python/examples/torch_charlm.py [STEPS] [TEXT_FILE]
import copy
import math
import sys
import time
import warnings

import torch
import torch.nn.functional as F

import mpt.torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
path = sys.argv[2] if len(sys.argv) > 2 else "test/fixtures/training/charlm/text.txt"
BLOCK, BATCH, LR = 32, 16, 3e-3


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc = torch.nn.Linear(dim, 4 * dim)
        self.out = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        y = att.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class CharGPT(torch.nn.Module):
    def __init__(self, vocab, dim=64, heads=4, layers=2):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, dim)
        self.wpe = torch.nn.Embedding(BLOCK, dim)
        self.blocks = torch.nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.lnf = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe.weight[: idx.shape[1]]
        return self.head(self.lnf(self.blocks(x)))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


text = open(path, encoding="utf-8").read()
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text], dtype=torch.int64)
starts = torch.arange(0, len(data) - BLOCK - 1, BLOCK)
windows = torch.utils.data.TensorDataset(
    torch.stack([data[s:s + BLOCK] for s in starts]),
    torch.stack([data[s + 1:s + BLOCK + 1] for s in starts]))
loader = torch.utils.data.DataLoader(windows, batch_size=BATCH, shuffle=True,
                                     generator=torch.Generator().manual_seed(0))
batches = []
while len(batches) < steps:  # the same batches for every run
    batches += list(loader)
batches = batches[:steps]

torch.manual_seed(0)
model = CharGPT(len(chars))
initial = copy.deepcopy(model)


def pytorch_run(autocast):
    m = copy.deepcopy(initial)
    opt = torch.optim.AdamW(m.parameters(), lr=LR, weight_decay=0.0)
    losses, times = [], []
    for x, y in batches:
        start = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = lm_loss(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - start)
    return losses, median(times)


def median(xs):
    return sorted(xs)[len(xs) // 2]


start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the exporter's tracing warnings
    trainer = mpt.torch.Trainer(model, batches[0], lm_loss, optimizer="adamw", lr=LR,
                                weight_decay=0.0, precision="bf16")
    print("exported and compiled in %.2f s" % (time.perf_counter() - start))
    mpt_losses, times = [], []
    for x, y in batches:  # a short last batch compiles once more, cached
        start = time.perf_counter()
        mpt_losses.append(trainer.step(x, y).item())
        times.append(time.perf_counter() - start)
    mpt_time = median(times)
fp32, fp32_time = pytorch_run(False)
amp, amp_time = pytorch_run(True)

print("step   MPT bf16  PyTorch fp32  PyTorch bf16 autocast")
for s in list(range(0, steps, max(1, steps // 10))) + [steps - 1]:
    print("%4d   %8.4f  %12.4f  %12.4f" % (s + 1, mpt_losses[s], fp32[s], amp[s]))
tail = max(1, steps // 10)
mean = lambda xs: sum(xs[-tail:]) / tail  # noqa: E731
print("mean of the last %d: MPT bf16 %.4f, PyTorch fp32 %.4f, bf16 autocast %.4f"
      % (tail, mean(mpt_losses), mean(fp32), mean(amp)))
print("median ms per step: MPT %.1f, PyTorch fp32 %.1f, autocast %.1f; MPT compiled "
      "plans for the batch shapes %s"
      % (1e3 * mpt_time, 1e3 * fp32_time, 1e3 * amp_time, trainer.compiled))

trainer.sync_to_module()  # the trained weights are the module's now
model.eval()
idx = torch.tensor([[chars.index(c) for c in text[:BLOCK]]])
with torch.no_grad():
    for _ in range(80):
        logits = model(idx[:, -BLOCK:])[:, -1]
        idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
print("sampled by PyTorch from the synced module:",
      repr("".join(chars[i] for i in idx[0, BLOCK:].tolist())))
