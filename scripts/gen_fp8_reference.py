#!/usr/bin/env python3
"""Writes runtime/test/data/fp8_ml_dtypes.bin: float32 -> FP8 conversions by
ml_dtypes (an independent implementation), which NumericsTest checks
mptrt/Numerics.h against.

The sample is dense: every float32 whose low 16 bits are zero (all signs and
exponents, the top 7 mantissa bits: 65536 values, NaNs and infinities
included), each also one float32 ulp above and below (bits +1 and -1, with
wrap-around in the 32-bit pattern). FP8 E4M3 keeps 3 mantissa bits and E5M2
2, so the sample holds every FP8 value, every rounding tie between two of
them, and the values just either side of each tie.

Layout (no header): for i in 0..65535, for d in (0, +1, -1), the input bits
((i << 16) + d) mod 2^32, one byte f8E4M3FN then one byte f8E5M2, as
ml_dtypes' astype gives them (round to nearest even; overflow gives NaN for
E4M3FN and inf for E5M2, i.e. the non-saturating conversion). NaN outputs
are written as their bit pattern, whatever it is; the test compares NaN-ness
for them.

Run with: /root/torchenv/bin/python scripts/gen_fp8_reference.py
"""
import os

import ml_dtypes
import numpy as np

base = (np.arange(65536, dtype=np.uint64) << np.uint64(16))
rows = []
for d in (0, 1, -1):
    bits = ((base.astype(np.int64) + d) % (1 << 32)).astype(np.uint32)
    rows.append(bits)
bits = np.stack(rows, axis=1).reshape(-1)  # [65536 * 3], i-major
x = bits.view(np.float32)
with np.errstate(over="ignore", invalid="ignore"):
    e4 = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    e5 = x.astype(ml_dtypes.float8_e5m2).view(np.uint8)
out = np.stack([e4, e5], axis=1).reshape(-1)
path = os.path.join(os.path.dirname(__file__), "..", "runtime", "test", "data",
                    "fp8_ml_dtypes.bin")
out.tofile(path)
print(f"wrote {path}: {out.size} bytes (ml_dtypes {ml_dtypes.__version__})")
