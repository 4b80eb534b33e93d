"""What the GPU training benchmarks share (bench/gpt2_train, bench/resnet_train):
a .safetensors writer for `mpt-train --params` and a GPU memory sampler for
runs in another process (mpt-train), where torch.cuda's counters see nothing.
"""
import json
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
