#!/usr/bin/env python3
"""Writes runtime/test/data/fp8_gemm_torch.bin: one FP8 scaled GEMM step
emulated with PyTorch's float8 dtypes, which ContractionKernelTest checks the
CPU quantize + scaled_matmul kernels against.

  qa = (a * sa).clamp(-448, 448).to(torch.float8_e4m3fn)   # saturating cast
  qb = (b * sb).clamp(-448, 448).to(torch.float8_e4m3fn)
  y  = (qa.float() @ qb.float()) * ((1 / sa) * (1 / sb))   # f32 throughout

PyTorch's cast into float8 rounds to nearest even and does not saturate, so
the clamp first gives the saturating conversion. a has outliers beyond the
scaled range so that saturation is exercised.

Layout (little-endian, no header): M, K, N as int32; sa, sb as float32;
a [M, K], b [K, N], y [M, N] as float32, row-major.

Run with: /root/torchenv/bin/python scripts/gen_fp8_gemm_reference.py
"""
import os

import numpy as np
import torch

M, K, N = 16, 96, 24
g = torch.Generator().manual_seed(14)
a = torch.randn(M, K, generator=g, dtype=torch.float32) * 3
a[0, :4] = torch.tensor([90.0, -120.0, 1e-4, -3e-3])  # saturate / subnormal
b = torch.randn(K, N, generator=g, dtype=torch.float32) * 0.05
sa = torch.tensor(448.0, dtype=torch.float32) / a[1:].abs().max()  # row 0 saturates
sb = torch.tensor(448.0, dtype=torch.float32) / b.abs().max()
qa = (a * sa).clamp(-448, 448).to(torch.float8_e4m3fn)
qb = (b * sb).clamp(-448, 448).to(torch.float8_e4m3fn)
factor = (torch.tensor(1.0) / sa) * (torch.tensor(1.0) / sb)
y = (qa.float() @ qb.float()) * factor

path = os.path.join(os.path.dirname(__file__), "..", "runtime", "test", "data",
                    "fp8_gemm_torch.bin")
with open(path, "wb") as f:
    f.write(np.array([M, K, N], dtype="<i4").tobytes())
    f.write(np.array([sa.item(), sb.item()], dtype="<f4").tobytes())
    for t in (a, b, y):
        f.write(t.numpy().astype("<f4").tobytes())
print(f"wrote {path} (torch {torch.__version__})")
