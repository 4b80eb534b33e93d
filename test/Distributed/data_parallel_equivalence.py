#!/usr/bin/env python3
"""Data-parallel equivalence on the CPU with MPI (docs/distributed.md).

  data_parallel_equivalence.py MPT_COMPILE MPT_TRAIN MPIEXEC WORKDIR

The MLP of test/Tools/Inputs/mlp.mlir, with a cross-entropy loss, trains for
20 steps on the same files in two ways:

  - one process, the plan compiled for a batch of 16 (no --data-parallel);
  - `mpirun -np 2`, the plan compiled for a batch of 8 with --data-parallel:
    each rank trains on its block of 8 rows of every global batch of 16.

for SGD and for AdamW, in fp32. The 20 losses (rank 0's metrics, the
all-reduced loss) and every tensor of the final checkpoints (the parameters,
the AdamW moments, the counters) must agree within 1e-6 relative: per step
for the losses, per tensor (max |a - b| / max |b|) for the checkpoints.

Then the failures that must be loud: a plan without --data-parallel under
two ranks, ranks given different plans, and data with fewer rows than one
global batch. Exits 1 with what differs; prints the largest differences.
"""
import json
import os
import random
import re
import struct
import subprocess
import sys
import zlib

STEPS = 20
TOL = 1e-6
ROWS = 160  # 10 global batches of 16

compile_tool, train_tool, mpiexec, work = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
mlp = os.path.join(here, "..", "Tools", "Inputs", "mlp.mlir")
os.makedirs(work, exist_ok=True)
failures = []


def path(name):
    return os.path.join(work, name)


def run(cmd, expect_ok=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if expect_ok and p.returncode != 0:
        print("FAILED:", " ".join(cmd))
        print(p.stdout)
        sys.exit(1)
    return p


def write_npy(name, descr, shape, values):
    fmt = {"<f4": "f", "<i8": "q"}[descr]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path(name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
    return path(name)


def read_checkpoint(file):
    """{name: [floats]} of the f32 tensors, and the i64 ones as ints."""
    data = open(file, "rb").read()
    assert data[:8] == b"MPTCKPT\0", file
    _, count, steps = struct.unpack_from("<IIQ", data, 8)
    at, tensors = 24, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + n].decode()
        at += 4 + n
        dtype, rank = struct.unpack_from("<II", data, at)
        at += 8 + 8 * rank
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        raw = data[at:at + size]
        at += size + 4
        if dtype == 1:
            tensors[name] = list(struct.unpack("<%df" % (size // 4), raw))
        elif dtype == 6:
            tensors[name] = list(struct.unpack("<%dq" % (size // 8), raw))
    return steps, tensors


def losses(file):
    return [float(json.loads(line)["loss"]) for line in open(file)]


# The model at batch 16 and at batch 8.
text = open(mlp).read()
for batch in (8, 16):
    with open(path(f"mlp{batch}.mlir"), "w") as f:
        f.write(re.sub(r"tensor<8x", f"tensor<{batch}x", text))

# Data and starting parameters (fixed seed).
rng = random.Random(26)
x = write_npy("x.npy", "<f4", (ROWS, 16), [rng.gauss(0, 1) for _ in range(ROWS * 16)])
labels = write_npy("labels.npy", "<i8", (ROWS,), [rng.randrange(4) for _ in range(ROWS)])
params = []
for name, shape in (("w1", (32, 16)), ("b1", (32,)), ("w2", (4, 32)), ("b2", (4,))):
    n = 1
    for d in shape:
        n *= d
    file = write_npy(f"{name}.npy", "<f4", shape, [rng.gauss(0, 0.3) for _ in range(n)])
    params += ["--param", f"{name}={file}"]
inputs = ["--input", f"x={x}", "--input", f"labels={labels}"]
mpirun = [mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2"]
common = ["--train", "--loss-kind=cross_entropy", "--loss-output=logits"]

for opt, flags in (("sgd", ["--optimizer=sgd", "--lr=0.1"]),
                   ("adamw", ["--optimizer=adamw", "--lr=0.01"])):
    one, two = path(f"{opt}16.mptp"), path(f"{opt}8dp.mptp")
    run([compile_tool, path("mlp16.mlir")] + common + flags + ["-o", one])
    run([compile_tool, path("mlp8.mlir")] + common + flags + ["--data-parallel", "-o", two])
    for f in (f"{opt}.1.jsonl", f"{opt}.2.jsonl", f"{opt}.1.ckpt", f"{opt}.2.ckpt"):
        if os.path.exists(path(f)):
            os.remove(path(f))
    run([train_tool, one] + inputs + params +
        ["--steps", str(STEPS), "--quiet", "--metrics", path(f"{opt}.1.jsonl"),
         "--save", path(f"{opt}.1.ckpt")])
    out = run(mpirun + [train_tool, two] + inputs + params +
              ["--steps", str(STEPS), "--metrics", path(f"{opt}.2.jsonl"),
               "--save", path(f"{opt}.2.ckpt")]).stdout
    # Rank 0 alone prints the summary.
    if out.count("mpt-train: ran") != 1 or "2 ranks" not in out:
        failures.append(f"{opt}: expected one summary line naming 2 ranks, got:\n{out}")

    ref, got = losses(path(f"{opt}.1.jsonl")), losses(path(f"{opt}.2.jsonl"))
    if len(ref) != STEPS or len(got) != STEPS:
        failures.append(f"{opt}: {len(ref)} and {len(got)} metrics lines, not {STEPS}")
        continue
    worst_loss = max(abs(a - b) / abs(a) for a, b in zip(ref, got))
    if worst_loss > TOL:
        failures.append(f"{opt}: losses differ by {worst_loss:.3g} relative: {ref} vs {got}")
    if not ref[-1] < ref[0]:
        failures.append(f"{opt}: the reference did not learn ({ref[0]} -> {ref[-1]})")

    steps1, ck1 = read_checkpoint(path(f"{opt}.1.ckpt"))
    steps2, ck2 = read_checkpoint(path(f"{opt}.2.ckpt"))
    if steps1 != STEPS or steps2 != STEPS or sorted(ck1) != sorted(ck2):
        failures.append(f"{opt}: checkpoints differ in steps or tensors: {sorted(ck1)} / {sorted(ck2)}")
        continue
    worst_param, worst_name = 0.0, ""
    for name in ck1:
        a, b = ck1[name], ck2[name]
        scale = max(abs(v) for v in a) or 1.0
        d = max(abs(p - q) for p, q in zip(a, b)) / scale
        if d > worst_param:
            worst_param, worst_name = d, name
        if d > TOL:
            failures.append(f"{opt}: checkpoint tensor '{name}' differs by {d:.3g} relative")
    moved = max(abs(p - q) for p, q in zip(ck1["w1"], struct.unpack(
        "<512f", open(path("w1.npy"), "rb").read()[-2048:])))
    if moved == 0:
        failures.append(f"{opt}: w1 did not change in training")
    print(f"{opt}: {STEPS} steps, loss {ref[0]:.6f} -> {ref[-1]:.6f}; largest relative "
          f"difference, 2 ranks x 8 vs 1 x 16: loss {worst_loss:.3g}, checkpoint "
          f"{worst_param:.3g} ('{worst_name}')")

# A plan without --data-parallel under two ranks is refused.
p = run(mpirun + [train_tool, path("sgd16.mptp")] + inputs + ["--steps", "1", "--quiet"],
        expect_ok=False)
if p.returncode == 0 or "compile the plan with mpt-compile --train --data-parallel" not in p.stdout:
    failures.append(f"a plan without all_reduce under 2 ranks: rc {p.returncode}\n{p.stdout}")

# Ranks given different plans fail, naming the plans' checksums.
p = run([mpiexec, "--oversubscribe", "--allow-run-as-root",
         "-np", "1", train_tool, path("sgd8dp.mptp")] + inputs + ["--steps", "1", "--quiet", ":",
         "-np", "1", train_tool, path("adamw8dp.mptp")] + inputs + ["--steps", "1", "--quiet"],
        expect_ok=False)
if p.returncode == 0 or "the ranks disagree on the plan" not in p.stdout:
    failures.append(f"ranks with different plans: rc {p.returncode}\n{p.stdout}")

# Data with fewer rows than one global batch (2 ranks x 8) is refused.
small_x = write_npy("x12.npy", "<f4", (12, 16), [0.5] * (12 * 16))
small_y = write_npy("y12.npy", "<i8", (12,), [1] * 12)
p = run(mpirun + [train_tool, path("sgd8dp.mptp"), "--input", f"x={small_x}", "--input",
                  f"labels={small_y}", "--steps", "1", "--quiet"], expect_ok=False)
if p.returncode == 0 or "fewer rows than one global batch of 2 ranks x 8 rows = 16" not in p.stdout:
    failures.append(f"12 rows for 2 ranks x 8: rc {p.returncode}\n{p.stdout}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
