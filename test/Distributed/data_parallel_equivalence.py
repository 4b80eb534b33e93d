#!/usr/bin/env python3
"""Data-parallel equivalence on the CPU with MPI (docs/distributed.md).

  data_parallel_equivalence.py MPT_COMPILE MPT_TRAIN MPIEXEC WORKDIR

The MLP of test/Tools/Inputs/mlp.mlir, with a cross-entropy loss, trains for
20 steps on the same files in two ways:

  - one process, the plan compiled for the global batch of 16 (no
    --data-parallel);
  - `mpirun -np R`, the plan compiled for a batch of 16 / R with
    --data-parallel: each rank trains on its block of every global batch.

Cases: fp32 SGD and AdamW on 2 ranks and AdamW on 4, whose 20 losses (rank
0's metrics, the all-reduced loss) and every tensor of the final checkpoints
(the parameters, the AdamW moments, the counters) must agree within 1e-6
relative: per step for the losses, per tensor (max |a - b| / max |b|) for
the checkpoints; bf16 SGD on 2 ranks within 1e-2 (bf16 rounds the weights
it reads); and fp16 with an overflow in rank 1's rows only, where rank 0
must skip the same steps as rank 1 and as one process.

The validation loss (--eval-input) on 2 ranks, each evaluating its share
of the batches, within 1e-6 of one process's. The char-level GPT fixture (batch 2) against gpt_b1 (its weights at batch
1) on 2 ranks, SGD and AdamW in fp32 within 1e-6 and AdamW in bf16 within
1e-2 (AdamW: the losses; its parameters are printed, see below). A model with a training-mode dropout, on 2 ranks, within 1e-6 too: each
rank draws the masks of its own rows of the global batch. A CNN with batch
norm (Inputs/cnn_bn.mlir) under --sync-batch-norm on 2 ranks, within 1e-6,
running statistics included; and without it (per-rank statistics), at
least 100 times further from one process.

The same with sharded optimizer state (--shard-optimizer-state=R, ZeRO-1):
SGD with momentum and AdamW on 2 and 4 ranks, whose checkpoints hold the
whole moments (gathered from every rank) and so compare tensor by tensor
with one process's; the fp16 overflow case, whose finite check covers every
rank's shards; and a resume at step 10 on another number of ranks: a
checkpoint saved by 4 sharded ranks after 10 steps, resumed by 2 sharded
ranks and by one process without sharding for steps 11-20, against one
process's 20 uninterrupted steps. bf16 master weights (AdamW), to nearest
even and stochastically rounded, on 2 ranks: sharded, bit for bit as
unsharded data parallelism (the stochastic rounding of rank r's shard
draws as the whole parameter's elements do), and within 1e-2 of one
process.

Then the failures that must be loud: a plan without --data-parallel under
two ranks, ranks given different plans, a plan sharded over 4 ranks under
2, a rank that hangs (the others' collective watchdog ends the job), and
data with fewer rows than one global batch. Exits 1 with what differs;
prints the largest differences.
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
TOL_BF16 = 1e-2
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
    fmt = {"<f4": "f", "<i8": "q", "<u2": "H"}[descr]
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


# The model at batch 16 and at batch 8, and with a training-mode dropout
# (ratio 0.25) after the ReLU.
text = open(mlp).read()
dropout = text.replace(
    "  %y = mpt.gemm %h, %w2",
    "  %hd, %mask = mpt.dropout %h {ratio = 0.25 : f32, training = true} : "
    "tensor<8x32xf32> -> tensor<8x32xf32>, tensor<8x32xi1>\n  %y = mpt.gemm %hd, %w2")
assert dropout != text
for batch in (4, 8, 16):
    with open(path(f"mlp{batch}.mlir"), "w") as f:
        f.write(re.sub(r"tensor<8x", f"tensor<{batch}x", text))
    with open(path(f"mlp_dropout{batch}.mlir"), "w") as f:
        f.write(re.sub(r"tensor<8x", f"tensor<{batch}x", dropout))

# Data and starting parameters (fixed seed).
rng = random.Random(26)
x = write_npy("x.npy", "<f4", (ROWS, 16), [rng.gauss(0, 1) for _ in range(ROWS * 16)])
labels = write_npy("labels.npy", "<i8", (ROWS,), [rng.randrange(4) for _ in range(ROWS)])
params, bf16_params = [], []
for name, shape in (("w1", (32, 16)), ("b1", (32,)), ("w2", (4, 32)), ("b2", (4,))):
    n = 1
    for d in shape:
        n *= d
    values = [rng.gauss(0, 0.3) for _ in range(n)]
    file = write_npy(f"{name}.npy", "<f4", shape, values)
    params += ["--param", f"{name}={file}"]
    # The same values for a bf16 master: rounded to nearest even, as the
    # compiler rounds an initial value (raw bf16 bits, '<u2').
    bits = [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]
    file = write_npy(f"{name}.bf16.npy", "<u2", shape,
                     [(b + 0x7FFF + ((b >> 16) & 1)) >> 16 for b in bits])
    bf16_params += ["--param", f"{name}={file}"]
inputs = ["--input", f"x={x}", "--input", f"labels={labels}"]
mpirun = [mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2"]
common = ["--train", "--loss-kind=cross_entropy", "--loss-output=logits"]

def train(plan, ranks, name, extra=(), data=None, steps=STEPS, resume=None, start_params=None):
    """Trains `plan` up to `steps` steps on `ranks` processes (from the
    checkpoint `resume`, if given); rank 0's metrics and checkpoint are
    NAME.jsonl and NAME.ckpt."""
    for f in (f"{name}.jsonl", f"{name}.ckpt"):
        if os.path.exists(path(f)):
            os.remove(path(f))
    launcher = [] if ranks == 1 else [mpiexec, "--oversubscribe", "--allow-run-as-root",
                                      "-np", str(ranks)]
    start = ["--resume", path(resume)] if resume else (params if start_params is None else start_params)
    out = run(launcher + [train_tool, plan] + (data or inputs) + start +
              ["--steps", str(steps), "--metrics", path(f"{name}.jsonl"),
               "--save", path(f"{name}.ckpt")] + list(extra)).stdout
    # Rank 0 alone prints the summary.
    if out.count("mpt-train: ran") != 1 or (ranks > 1 and f"{ranks} ranks" not in out):
        failures.append(f"{name}: expected one summary line naming {ranks} ranks, got:\n{out}")


def compile_plan(batch, flags, name, model="mlp"):
    run([compile_tool, path(f"{model}{batch}.mlir")] + common + flags + ["-o", path(name)])
    return path(name)


def compare(name, tol, ref_name, got_name, first=1, check_params=True):
    """Losses per step (from step `first`), checkpoint tensors per tensor
    (unless not check_params: then only printed), within `tol` relative."""
    ref = losses(path(f"{ref_name}.jsonl"))[first - 1:]
    got = losses(path(f"{got_name}.jsonl"))
    if len(ref) != STEPS - first + 1 or len(got) != len(ref):
        failures.append(f"{name}: {len(ref)} and {len(got)} metrics lines, not "
                        f"{STEPS - first + 1}")
        return
    worst_loss = max(abs(a - b) / abs(a) for a, b in zip(ref, got))
    if worst_loss > tol:
        failures.append(f"{name}: losses differ by {worst_loss:.3g} relative: {ref} vs {got}")
    # Learned: the last five losses below the first five (dropout's noise
    # moves single steps).
    if first == 1 and not sum(ref[-5:]) < sum(ref[:5]):
        failures.append(f"{name}: the reference did not learn ({ref[:5]} -> {ref[-5:]})")
    steps1, ck1 = read_checkpoint(path(f"{ref_name}.ckpt"))
    steps2, ck2 = read_checkpoint(path(f"{got_name}.ckpt"))
    if steps1 != STEPS or steps2 != STEPS or sorted(ck1) != sorted(ck2):
        failures.append(f"{name}: checkpoints differ in steps or tensors: "
                        f"{sorted(ck1)} / {sorted(ck2)}")
        return
    worst_param, worst_name = 0.0, ""
    for tensor in ck1:
        a, b = ck1[tensor], ck2[tensor]
        scale = max(abs(v) for v in a) or 1.0
        d = max(abs(p - q) for p, q in zip(a, b)) / scale
        if d > worst_param:
            worst_param, worst_name = d, tensor
        if d > tol and check_params:
            failures.append(f"{name}: checkpoint tensor '{tensor}' differs by {d:.3g} relative")
    if "w1" in ck1:
        start = struct.unpack("<512f", open(path("w1.npy"), "rb").read()[-2048:])
        if max(abs(p - q) for p, q in zip(ck1["w1"], start)) == 0:
            failures.append(f"{name}: w1 did not change in training")
    print(f"{name}: {STEPS} steps, loss {ref[0]:.6f} -> {ref[-1]:.6f}; largest relative "
          f"difference: loss {worst_loss:.3g}, checkpoint {worst_param:.3g} ('{worst_name}')")
    return worst_loss


sgd = ["--optimizer=sgd", "--lr=0.1"]
momentum = ["--optimizer=momentum", "--lr=0.1"]
adamw = ["--optimizer=adamw", "--lr=0.01"]
# (name, ranks, optimizer and precision flags, tolerance)
CASES = [("fp32-sgd-2ranks", 2, sgd, TOL),
         ("fp32-adamw-2ranks", 2, adamw, TOL),
         ("fp32-adamw-4ranks", 4, adamw, TOL),
         # bf16 rounds the weights it reads: a few bf16 ulps (2^-8).
         ("bf16-sgd-2ranks", 2, sgd + ["--precision=bf16"], TOL_BF16),
         # Sharded optimizer state (ZeRO-1): reduce-scatter, shards, all-gather.
         ("zero1-fp32-momentum-2ranks", 2, momentum, TOL),
         ("zero1-fp32-adamw-2ranks", 2, adamw, TOL),
         ("zero1-fp32-adamw-4ranks", 4, adamw, TOL)]
references = {}
for name, ranks, flags, tol in CASES:
    key = tuple(flags)
    if key not in references:  # one process, the whole global batch of 16
        train(compile_plan(16, flags, f"{name}.16.mptp"), 1, f"{name}.ref")
        references[key] = f"{name}.ref"
    mode = f"--shard-optimizer-state={ranks}" if name.startswith("zero1") else "--data-parallel"
    plan = compile_plan(16 // ranks, flags + [mode], f"{name}.dp.mptp")
    train(plan, ranks, name)
    compare(name, tol, references[key], name)

# bf16 master weights (AdamW) on 2 ranks, to nearest even and rounded
# stochastically: sharded, rank r updates its shard of each bf16 master,
# and with stochastic rounding draws each element's rounding as one process
# draws that element of the whole parameter (adamw_update's `sharded`
# offset), so ZeRO-1 gives plain data parallelism's bits exactly; both
# follow one process to bf16's tolerance.
for masters in ("bf16", "bf16-sr"):
    flags = adamw + ["--precision=bf16", f"--master-weights={masters}"]
    tag = masters.replace("-", "")
    train(compile_plan(16, flags, f"{tag}.16.mptp"), 1, f"{tag}.ref", start_params=bf16_params)
    train(compile_plan(8, flags + ["--data-parallel"], f"{tag}.dp.mptp"), 2, f"{tag}.dp",
          start_params=bf16_params)
    train(compile_plan(8, flags + ["--shard-optimizer-state=2"], f"{tag}.zero1.mptp"), 2,
          f"{tag}.zero1", start_params=bf16_params)
    # Against one process the losses are held; the tensors are printed (the
    # moments follow the bf16 weights' roundings, up to 7% of their largest).
    compare(f"{tag}-masters-2ranks", TOL_BF16, f"{tag}.ref", f"{tag}.dp", check_params=False)
    compare(f"zero1-{tag}-masters-2ranks-vs-data-parallel", 0.0, f"{tag}.dp", f"{tag}.zero1")

# Evaluation: with --eval-input every rank evaluates its share of the
# validation batches (r, r + N, ...) and the sums are added over the ranks:
# the validation loss (every 5 steps) is one process's over the same rows.
evals = ["--eval-input", f"x={x}", "--eval-input", f"labels={labels}", "--eval-every", "5"]
train(path("fp32-sgd-2ranks.16.mptp"), 1, "eval.ref", extra=evals)
train(path("fp32-sgd-2ranks.dp.mptp"), 2, "eval.dp", extra=evals)


def val_losses(name):
    return [float(json.loads(line)["val_loss"]) for line in open(path(f"{name}.jsonl"))
            if "val_loss" in json.loads(line)]


ref_val, dp_val = val_losses("eval.ref"), val_losses("eval.dp")
worst = max((abs(a - b) / abs(a) for a, b in zip(ref_val, dp_val)), default=float("inf"))
if len(ref_val) != 4 or len(dp_val) != 4 or worst > TOL:
    failures.append(f"validation losses on 2 ranks {dp_val} against one process {ref_val}")
print(f"validation loss every 5 steps, 2 ranks sharing the batches: {worst:.3g} from one "
      f"process's")

# Dropout: rank r draws its masks for elements r * numel + i, which for a
# batch-major tensor are the masks one process draws for rank r's rows, so
# 2 ranks match one process on the global batch as without dropout.
train(compile_plan(16, sgd, "dropout.16.mptp", "mlp_dropout"), 1, "dropout.ref")
train(compile_plan(8, sgd + ["--data-parallel"], "dropout.dp.mptp", "mlp_dropout"), 2,
      "dropout.dp")
compare("fp32-sgd-dropout-2ranks", TOL, "dropout.ref", "dropout.dp")

# Batch norm: a CNN (conv + batch norm + ReLU, pooled, a linear classifier;
# Inputs/cnn_bn.mlir) on 2 ranks x 4 images against one process on 8. With
# --sync-batch-norm the statistics (forward) and their gradients (backward)
# are the global batch's, so the runs agree as without batch norm, running
# statistics included; with the default per-rank statistics (DDP's) they
# must not: that difference is what the option removes.
cnn_text = open(os.path.join(here, "Inputs", "cnn_bn.mlir")).read()
for batch in (4, 8):
    with open(path(f"cnn_bn{batch}.mlir"), "w") as f:
        f.write(re.sub(r"tensor<8x", f"tensor<{batch}x", cnn_text))
images = write_npy("images.npy", "<f4", (80, 3, 8, 8), [rng.gauss(0, 1) for _ in range(80 * 192)])
classes = write_npy("classes.npy", "<i8", (80,), [rng.randrange(4) for _ in range(80)])
cnn_inputs = ["--input", f"x={images}", "--input", f"labels={classes}"]
cnn_params = ["--param", "conv.weight=" + write_npy("conv.npy", "<f4", (4, 3, 3, 3),
                                                    [rng.gauss(0, 0.3) for _ in range(108)]),
              "--param", "fc.weight=" + write_npy("fc.npy", "<f4", (4, 4),
                                                  [rng.gauss(0, 0.5) for _ in range(16)])]
train(compile_plan(8, sgd, "bn.8.mptp", "cnn_bn"), 1, "bn.ref", data=cnn_inputs,
      start_params=cnn_params)
train(compile_plan(4, sgd + ["--data-parallel", "--sync-batch-norm"], "bn.sync.mptp", "cnn_bn"),
      2, "bn.sync", data=cnn_inputs, start_params=cnn_params)
synced = compare("fp32-sgd-sync-batch-norm-2ranks", TOL, "bn.ref", "bn.sync")
train(compile_plan(4, sgd + ["--data-parallel"], "bn.local.mptp", "cnn_bn"), 2, "bn.local",
      data=cnn_inputs, start_params=cnn_params)
ref, local = losses(path("bn.ref.jsonl")), losses(path("bn.local.jsonl"))
per_rank = max(abs(a - b) / abs(a) for a, b in zip(ref, local))
print(f"per-rank batch-norm statistics on 2 ranks: losses {per_rank:.3g} from one process's")
if not per_rank > 100 * max(synced or 0.0, TOL):
    failures.append(f"per-rank batch norm is {per_rank:.3g} from one process, not clearly more "
                    f"than sync-batch-norm's {synced}")

# The char-level GPT of test/fixtures/models (2 layers, tied head, its own
# cross-entropy loss): the fixture at batch 2 in one process against
# gpt_b1 (the same weights at batch 1) on 2 ranks, 20 steps of SGD and of
# AdamW in fp32 (1e-6) and of AdamW in bf16 (bf16 rounds the weights it
# reads). With AdamW only the losses are held to the bound: the attention's
# key bias has a zero gradient in exact arithmetic (softmax ignores a
# constant per row), so its f32 gradient is rounding noise that AdamW turns
# into full lr-sized steps of either sign, and the two runs' noise differs
# (the parameters are printed: 3e-2 on that bias, 1e-4 on the qkv weight).
fixtures = os.path.join(here, "..", "fixtures", "models")
tokens = write_npy("tokens.npy", "<i8", (40, 16), [rng.randrange(65) for _ in range(640)])
shifted = write_npy("next.npy", "<i8", (40, 16), [rng.randrange(65) for _ in range(640)])
gpt_inputs = ["--input", f"idx={tokens}", "--input", f"targets={shifted}"]


def gpt_plan(model, flags, out):
    run([compile_tool, os.path.join(fixtures, model, "model.onnx"), "--train", "--quiet"] +
        flags + ["-o", path(out)])
    return path(out)


for name, flags, tol in (("gpt-fp32-sgd", sgd, TOL), ("gpt-fp32-adamw", adamw, TOL),
                         ("gpt-bf16-adamw", adamw + ["--precision=bf16"], TOL_BF16)):
    sgd_run = flags is sgd
    train(gpt_plan("gpt", flags, f"{name}.2.mptp"), 1, f"{name}.ref", data=gpt_inputs,
          start_params=[])
    train(gpt_plan("gpt_b1", flags + ["--data-parallel"], f"{name}.dp.mptp"), 2, name,
          data=gpt_inputs, start_params=[])
    compare(name + "-2ranks", tol, f"{name}.ref", name, check_params=sgd_run)

# A resume on another number of ranks: 4 sharded ranks save after step 10;
# 2 sharded ranks, and one process without sharding, train steps 11-20 from
# that checkpoint, which holds the whole moments.
HALF = STEPS // 2
train(path("zero1-fp32-adamw-4ranks.dp.mptp"), 4, "resume.4ranks", steps=HALF)
_, half = read_checkpoint(path("resume.4ranks.ckpt"))
if len(half["w1.exp_avg"]) != 32 * 16:
    failures.append(f"the 4-rank checkpoint's w1.exp_avg has {len(half['w1.exp_avg'])} values, "
                    f"not the whole 512")
train(path("zero1-fp32-adamw-2ranks.dp.mptp"), 2, "resume.2ranks", resume="resume.4ranks.ckpt")
compare("zero1-resume-4-to-2ranks", TOL, "fp32-adamw-2ranks.ref", "resume.2ranks", first=HALF + 1)
train(path("fp32-adamw-2ranks.16.mptp"), 1, "resume.1", resume="resume.4ranks.ckpt")
compare("zero1-resume-4ranks-to-1", TOL, "fp32-adamw-2ranks.ref", "resume.1", first=HALF + 1)

# fp16 with dynamic loss scaling, and an overflow in rank 1's rows only:
# row 40 (global batch 2, rows 32-47; rank 1's block 40-47) is 1e6, inf in
# f16. The mean of the gradients is then inf on every rank, so rank 0
# skips steps 3 and 13 as rank 1 does, and as one process does on the
# whole batch.
xs = list(struct.unpack("<%df" % (ROWS * 16), open(x, "rb").read()[-ROWS * 16 * 4:]))
xs[40 * 16:41 * 16] = [1e6] * 16
x_ovf = write_npy("x_overflow.npy", "<f4", (ROWS, 16), xs)
ovf_inputs = ["--input", f"x={x_ovf}", "--input", f"labels={labels}"]
fp16 = sgd + ["--precision=fp16", "--loss-scale=dynamic"]
train(compile_plan(16, fp16, "fp16.16.mptp"), 1, "fp16.ref", data=ovf_inputs)
train(compile_plan(8, fp16 + ["--data-parallel"], "fp16.dp.mptp"), 2, "fp16.dp",
      data=ovf_inputs)
# Sharded: the overflow is in rank 1's rows and in every rank's shards of
# the mean; the finite check over the ranks sees it on rank 0 too.
train(compile_plan(8, fp16 + ["--shard-optimizer-state=2"], "fp16.zero1.mptp"), 2, "fp16.zero1",
      data=ovf_inputs)


def skips(name):
    return [json.loads(line)["skipped"] for line in open(path(f"{name}.jsonl"))]


ref_skips = skips("fp16.ref")
expected = [s in (3, 13) for s in range(1, STEPS + 1)]
if ref_skips != expected:
    failures.append(f"fp16 skips: expected steps 3 and 13, one process {ref_skips}")
for run_name in ("fp16.dp", "fp16.zero1"):
    if skips(run_name) != expected:
        failures.append(f"{run_name} skips: expected steps 3 and 13, got {skips(run_name)}")
    ref, got = losses(path("fp16.ref.jsonl")), losses(path(f"{run_name}.jsonl"))
    worst = max(abs(a - b) / abs(a) for a, b, k in zip(ref, got, expected) if not k)
    if worst > TOL_BF16:
        failures.append(f"{run_name}: losses of the steps taken differ by {worst:.3g}: {ref} vs {got}")
    print(f"{run_name} (fp16 SGD, 2 ranks), an overflow in rank 1's rows at steps 3 and 13: "
          f"both ranks skip there, as one process does; largest relative loss difference "
          f"elsewhere {worst:.3g}")

# A plan without --data-parallel under two ranks is refused.
p = run(mpirun + [train_tool, path("fp32-sgd-2ranks.16.mptp")] + inputs + ["--steps", "1", "--quiet"],
        expect_ok=False)
if p.returncode == 0 or "compile the plan with mpt-compile --train --data-parallel" not in p.stdout:
    failures.append(f"a plan without all_reduce under 2 ranks: rc {p.returncode}\n{p.stdout}")

# Ranks given different plans fail, naming the plans' checksums.
p = run([mpiexec, "--oversubscribe", "--allow-run-as-root",
         "-np", "1", train_tool, path("fp32-sgd-2ranks.dp.mptp")] + inputs + ["--steps", "1", "--quiet", ":",
         "-np", "1", train_tool, path("fp32-adamw-2ranks.dp.mptp")] + inputs + ["--steps", "1", "--quiet"],
        expect_ok=False)
if p.returncode == 0 or "the ranks disagree on the plan" not in p.stdout:
    failures.append(f"ranks with different plans: rc {p.returncode}\n{p.stdout}")

# A plan sharded over 4 ranks under 2 is refused at load, saying how to
# compile it.
p = run(mpirun + [train_tool, path("zero1-fp32-adamw-4ranks.dp.mptp")] + inputs + params +
        ["--steps", "1", "--quiet"], expect_ok=False)
if p.returncode == 0 or "compile it with --shard-optimizer-state=2" not in p.stdout:
    failures.append(f"a plan sharded over 4 ranks under 2: rc {p.returncode}\n{p.stdout}")

# A rank that hangs (rank 1 sleeps 300 s before its 5th collective) must
# not leave rank 0 waiting forever: with MPTRT_COLLECTIVE_TIMEOUT=2 rank 0's
# watchdog ends it, naming the call, and mpirun ends the job.
env = dict(os.environ, MPTRT_COLLECTIVE_TIMEOUT="2", MPTRT_TEST_COLLECTIVE_STALL="1:5:300")
try:
    p = subprocess.run(mpirun + ["-x", "MPTRT_COLLECTIVE_TIMEOUT", "-x",
                                 "MPTRT_TEST_COLLECTIVE_STALL", train_tool,
                                 path("zero1-fp32-adamw-2ranks.dp.mptp")] + inputs + params +
                       ["--steps", "20", "--quiet"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env, timeout=60)
    if p.returncode == 0 or "rank 0 of 2: MPI_Allreduce of 1 elements has waited 2 s" not in p.stdout:
        failures.append(f"a hung rank: rc {p.returncode}\n{p.stdout}")
except subprocess.TimeoutExpired:
    failures.append("a hung rank: the job still ran after 60 s")

# A malformed timeout fails every rank's start, naming the variable.
p = subprocess.run(mpirun + ["-x", "MPTRT_COLLECTIVE_TIMEOUT", train_tool,
                             path("fp32-sgd-2ranks.dp.mptp")] + inputs + params +
                   ["--steps", "1", "--quiet"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True,
                   env=dict(os.environ, MPTRT_COLLECTIVE_TIMEOUT="ten"), timeout=60)
if p.returncode == 0 or "MPTRT_COLLECTIVE_TIMEOUT='ten' is not a number of seconds" not in p.stdout:
    failures.append(f"a malformed MPTRT_COLLECTIVE_TIMEOUT: rc {p.returncode}\n{p.stdout}")

# Data with fewer rows than one global batch (2 ranks x 8) is refused.
small_x = write_npy("x12.npy", "<f4", (12, 16), [0.5] * (12 * 16))
small_y = write_npy("y12.npy", "<i8", (12,), [1] * 12)
p = run(mpirun + [train_tool, path("fp32-sgd-2ranks.dp.mptp"), "--input", f"x={small_x}", "--input",
                  f"labels={small_y}", "--steps", "1", "--quiet"], expect_ok=False)
if p.returncode == 0 or "fewer rows than one global batch of 2 ranks x 8 rows = 16" not in p.stdout:
    failures.append(f"12 rows for 2 ranks x 8: rc {p.returncode}\n{p.stdout}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
