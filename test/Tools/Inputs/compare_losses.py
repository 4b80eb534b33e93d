#!/usr/bin/env python3
"""compare_losses.py REFERENCE.jsonl RUN.jsonl TOLERANCE

Compares two mpt-train metrics files of the same length: the mean loss over
all steps (the area under the curve, so early and late steps both count) of
RUN against REFERENCE. Prints one line; exits 1 when RUN has a non-finite
loss, the lengths differ, or the relative difference exceeds TOLERANCE.
"""
import json
import math
import sys


def losses(path):
    return [float(json.loads(line)["loss"]) for line in open(path)]


ref, run, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if len(ref) != len(run) or not ref:
    print(f"steps differ: {len(ref)} against {len(run)}")
    sys.exit(1)
if not all(math.isfinite(v) for v in run):
    print("run has non-finite losses")
    sys.exit(1)
mean_ref, mean_run = sum(ref) / len(ref), sum(run) / len(run)
rel = abs(mean_run - mean_ref) / mean_ref
print(f"mean loss over {len(ref)} steps: reference {mean_ref:.4f}, run {mean_run:.4f}, "
      f"relative difference {rel:.3f} (tolerance {tol})")
sys.exit(0 if rel <= tol else 1)
