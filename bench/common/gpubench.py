"""What the GPU training benchmarks share (bench/gpt2_train, bench/resnet_train):
phases under one deadline, a .safetensors writer for `mpt-train --params`
and a GPU memory sampler for runs in another process (mpt-train), where
torch.cuda's counters see nothing.
"""
import json
import os
import struct
import subprocess
import threading
import time


def save_safetensors(tensors: dict, path: str):
    """A .safetensors file of f32 tensors (no dependency on the package)."""
    import torch
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        data = t.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


class MemorySampler:
    """The largest nvidia-smi memory.used while a run lasts."""

    def __init__(self):
        self.peak_mib, self.done = 0, False
        self.base = self.read()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def read(self):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=5).stdout
            return int(out.split()[0])
        except Exception:
            return 0

    def loop(self):
        while not self.done:
            self.peak_mib = max(self.peak_mib, self.read() - self.base)
            time.sleep(0.05)

    def stop(self):
        self.done = True
        self.thread.join()


class Phases:
    """Phases under one deadline (args.budget seconds from now): each starts
    only with the time it needs left, one that fails is reported and the
    rest go on, and save() (the subclass's) runs after each, so a run cut
    off at the device's limit still reports what it measured. Needs
    self.results["phases"]; logs to OUT/bench.log."""

    def __init__(self, args):
        self.args = args
        self.deadline = time.time() + args.budget
        self.log = open(os.path.join(args.out, "bench.log"), "a")

    def say(self, text):
        print(text, flush=True)
        self.log.write(text + "\n")
        self.log.flush()

    def left(self):
        return self.deadline - time.time()

    def phase(self, name, need, fn, unavailable=None):
        """Runs phase `name` if `need` seconds are left (and `unavailable`,
        the reason it cannot run here, is None)."""
        if unavailable:
            self.results["phases"][name] = f"skipped: {unavailable}"
            self.say(f"== {name}: SKIPPED ({unavailable})")
            return
        if self.left() < need:
            self.results["phases"][name] = f"skipped: {self.left():.0f} s left, needs ~{need} s"
            self.say(f"== {name}: SKIPPED ({self.results['phases'][name]})")
            return
        self.say(f"== {name} ({self.left():.0f} s left)")
        t0 = time.time()
        try:
            fn()
            self.results["phases"][name] = f"ok in {time.time() - t0:.1f} s"
        except Exception as e:  # report and go on
            self.results["phases"][name] = f"FAILED: {type(e).__name__}: {e}"
            self.say(f"   FAILED: {type(e).__name__}: {e}")
        self.save()


def step1_references(fresh, loss_of, device_type, say):
    """The step-1 references of both benchmarks: the loss and the global
    gradient norm of one forward and backward of a fresh model
    (`fresh()`; `loss_of(net)` gives the loss) in fp32 with TF32 off and
    under bf16 autocast, as {"torch_fp32": {...}, "torch_amp_bf16": {...}}.
    PyTorch's TF32 settings are restored afterwards, for the timed runs."""
    import torch
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = {}
    try:
        for name, amp in (("torch_fp32", False), ("torch_amp_bf16", True)):
            net = fresh()
            with torch.autocast(device_type, dtype=torch.bfloat16, enabled=amp):
                loss = loss_of(net)
            loss.backward()
            norm = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in net.parameters())).item()
            out[name] = {"loss": loss.item(), "grad_norm": norm}
            say(f"   step 1 {name}: loss {loss.item():.7f} grad_norm {norm:.7f}")
            del net
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    return out
