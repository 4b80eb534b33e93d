# Trains torchvision's ResNet-18 (10 classes) on random 32x32 images (each
# class a random pattern under twice its amplitude of noise) through
# mpt.torch.Trainer in bf16 mixed precision with SGD and momentum, in an
# ordinary loop over a torch DataLoader, beside the same loop in plain
# PyTorch (FP32 and CPU bf16 autocast) from the same weights and batches;
# prints the three loss curves, then evaluates the synced module on
# held-out images with plain PyTorch.
#   python python/examples/torch_resnet.py [STEPS]
import copy
import sys
import time
import warnings

import torch
import torch.nn.functional as F
import torchvision

import mpt.torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
BATCH, LR, MOMENTUM = 16, 0.01, 0.9

torch.manual_seed(0)
patterns = torch.randn(10, 3, 32, 32)
labels = torch.randint(0, 10, (320,))
images = patterns[labels] + 2 * torch.randn(320, 3, 32, 32)
test_labels = torch.randint(0, 10, (160,))
test_images = patterns[test_labels] + 2 * torch.randn(160, 3, 32, 32)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels),
                                     batch_size=BATCH, shuffle=True,
                                     generator=torch.Generator().manual_seed(0))
batches = []
while len(batches) < steps:  # the same batches for every run
    batches += list(loader)
batches = batches[:steps]

model = torchvision.models.resnet18(num_classes=10)
initial = copy.deepcopy(model)


def median(xs):
    return sorted(xs)[len(xs) // 2]


def pytorch_run(autocast):
    m = copy.deepcopy(initial)
    opt = torch.optim.SGD(m.parameters(), lr=LR, momentum=MOMENTUM)
    losses, times = [], []
    for x, y in batches:
        start = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - start)
    return losses, median(times)


start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the exporter's warnings
    trainer = mpt.torch.Trainer(model, batches[0], "cross_entropy", optimizer="sgd", lr=LR,
                                momentum=MOMENTUM, precision="bf16")
print("exported and compiled in %.2f s" % (time.perf_counter() - start))
mpt_losses, times = [], []
for x, y in batches:
    start = time.perf_counter()
    mpt_losses.append(trainer.step(x, y).item())
    times.append(time.perf_counter() - start)
fp32, fp32_time = pytorch_run(False)
amp, amp_time = pytorch_run(True)

print("step   MPT bf16  PyTorch fp32  PyTorch bf16 autocast")
for s in list(range(0, steps, max(1, steps // 10))) + [steps - 1]:
    print("%4d   %8.4f  %12.4f  %12.4f" % (s + 1, mpt_losses[s], fp32[s], amp[s]))
tail = max(1, steps // 10)
print("mean of the last %d: MPT bf16 %.4f, PyTorch fp32 %.4f, bf16 autocast %.4f" % (
    tail, *(sum(xs[-tail:]) / tail for xs in (mpt_losses, fp32, amp))))
print("median ms per step: MPT %.1f, PyTorch fp32 %.1f, autocast %.1f"
      % (1e3 * median(times), 1e3 * fp32_time, 1e3 * amp_time))

trainer.sync_to_module()  # weights and batch-norm statistics into `model`
model.eval()
with torch.no_grad():
    accuracy = (model(test_images).argmax(-1) == test_labels).float().mean().item()
print("PyTorch eval of the synced module: held-out accuracy %.2f (chance 0.10)" % accuracy)
