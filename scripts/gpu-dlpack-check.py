#!/usr/bin/env python3
"""The Python package's CUDA tensors on a GPU host (scripts/gpu-check.sh's
python-dlpack phase; issue 28): a training plan compiled elsewhere, loaded
with mpt.Plan on the CUDA backend, trains the same steps from PyTorch CUDA
tensors (bound on the GPU through DLPack, mptrt_bind_input_device) and
from NumPy arrays (bound from the host); the losses must agree bit for bit
(the same kernels on the same device) and the logits read into a CUDA
tensor (Plan.read_output_into) must equal those read to the host.

    python3 scripts/gpu-dlpack-check.py PLAN FIXTURE_DIR [STEPS]

FIXTURE_DIR holds input_x.npy and labels.npy (test/fixtures/parity/*).
Without a usable GPU (torch's or MPT's) it says so and exits 0 after a CPU
smoke run of the same comparison (NumPy arrays against CPU torch tensors).
"""
import os
import sys

import numpy as np

import mpt


def train(plan_path, backend, feeds, steps):
    plan = mpt.Plan.load(plan_path, backend=backend)
    losses = [plan.train_step(**feeds).loss for _ in range(steps)]
    return plan, losses


def main():
    plan_path, fixture = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    import torch

    x = np.load(os.path.join(fixture, "input_x.npy"))
    y = np.load(os.path.join(fixture, "labels.npy")).astype(np.int64)
    gpu = torch.cuda.is_available() and "cuda" in mpt.backends()
    backend = "cuda" if gpu else "cpu"
    if not gpu:
        print("gpu-dlpack-check: no usable GPU (torch: %s, MPT backends: %s): CPU smoke run"
              % (torch.cuda.is_available(), mpt.backends()))
    device = "cuda" if gpu else "cpu"
    host_plan, host_losses = train(plan_path, backend, {"x": x, "labels": y}, steps)
    tx, ty = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    if gpu:
        torch.cuda.synchronize()
    dev_plan, dev_losses = train(plan_path, backend, {"x": tx, "labels": ty}, steps)
    print("gpu-dlpack-check: %s losses, host-bound %s" % (backend, host_losses))
    print("gpu-dlpack-check: %s losses, DLPack-bound %s" % (backend, dev_losses))
    if host_losses != dev_losses:
        print("gpu-dlpack-check: FAIL: the losses differ")
        return 1
    eval_entry = [e for e in dev_plan.entries if e != mpt.TRAIN_ENTRY][0]
    host_out = host_plan.call(eval_entry, x=x, labels=y)
    dev_plan.call(eval_entry, x=tx, labels=ty)
    name = [n for n in host_out if np.asarray(host_out[n]).ndim > 0][0]
    out = torch.empty(host_out[name].shape, dtype=torch.float32, device=device)
    dev_plan.read_output_into(name, out)
    if not np.array_equal(out.cpu().numpy(), host_out[name]):
        print("gpu-dlpack-check: FAIL: '%s' read into a %s tensor differs" % (name, device))
        return 1
    print("gpu-dlpack-check: PASS (%d steps on %s, '%s' read into a %s tensor)"
          % (steps, backend, name, device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
