# Trains a small, randomly initialised Hugging Face GPT-2 (transformers'
# GPT2LMHeadModel from a config: 2 layers, width 64, its default SDPA
# attention) on the characters of a text file through mpt.torch.Trainer
# (bf16 mixed precision, AdamW), in an ordinary loop over a torch
# DataLoader, beside the same loop in plain PyTorch (FP32 and CPU bf16
# autocast) from the same initial weights and batches, and prints the three
# loss curves. Then writes the trained weights back into the model,
# compares its loss in PyTorch with MPT's eval step, saves it with
# save_pretrained, loads it again with from_pretrained and checks that the
# loaded model gives the synced model's logits.
#   python python/examples/hf_causal_lm.py [STEPS] [TEXT_FILE]
# Needs torch, onnx and transformers.
import copy
import sys
import tempfile
import time
import warnings

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

import mpt.torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
path = sys.argv[2] if len(sys.argv) > 2 else "test/fixtures/training/charlm/text.txt"
BLOCK, BATCH, LR = 32, 16, 3e-3


class CausalLM(torch.nn.Module):
    """The logits of a Hugging Face causal LM, with the all-ones attention
    mask given explicitly: without one, transformers looks for packed
    sequences with torch.diff, which the TorchScript exporter cannot write."""

    def __init__(self, hf):
        super().__init__()
        self.hf = hf

    def forward(self, idx):
        return self.hf(input_ids=idx, attention_mask=torch.ones_like(idx)).logits


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def median(xs):
    return sorted(xs)[len(xs) // 2]


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
config = GPT2Config(vocab_size=len(chars), n_positions=BLOCK, n_embd=64, n_layer=2,
                    n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                    bos_token_id=0, eos_token_id=0)
model = CausalLM(GPT2LMHeadModel(config))
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
print("median ms per step: MPT %.1f, PyTorch fp32 %.1f, autocast %.1f"
      % (1e3 * mpt_time, 1e3 * fp32_time, 1e3 * amp_time))

trainer.sync_to_module()  # the trained weights are the Hugging Face model's now
model.eval()
x, y = batches[0]
with torch.no_grad():
    synced = lm_loss(model(x), y).item()
print("loss of the first batch: MPT eval_step %.4f, the synced model in PyTorch %.4f"
      % (trainer.eval_step(x, y).item(), synced))
with tempfile.TemporaryDirectory() as saved:
    model.hf.save_pretrained(saved)
    loaded = CausalLM(GPT2LMHeadModel.from_pretrained(saved)).eval()
    with torch.no_grad():
        diff = (loaded(x) - model(x)).abs().max().item()
print("save_pretrained / from_pretrained round trip: max |logits difference| %.3g" % diff)
