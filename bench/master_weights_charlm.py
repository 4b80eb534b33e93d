#!/usr/bin/env python3
"""bf16 master weights on the char-level GPT: loss curves of FP32, bf16
(round to nearest) and bf16-sr (stochastic rounding) masters.

For each learning rate, the bundled charlm fixture
(``test/fixtures/training/charlm``) is compiled three times with
``mpt-compile --train --precision=bf16 --optimizer=adamw --weight-decay=0
--lr=LR --master-weights=fp32|bf16|bf16-sr`` (bf16 compute in all three;
only the storage of the trainable parameters' master copy differs) and
trained with ``mpt-train`` on the CPU backend for the same steps on the same
batches (``--seed 0``). The script prints, every ``--every`` steps, the mean
training loss of the last ``--every`` steps of each run (single-batch losses
are noisy), then for each run the mean loss of the last 50 steps, its gap to
the FP32 run, the validation loss after the last step (``eval_step`` over
``val_x/val_y``), the fraction of master-weight elements whose bits the
whole run left unchanged (from checkpoints before the first step and
after the last: the stall of round-to-nearest bf16 masters), the same
among the LayerNorm gains (which start at 1.0, where round to nearest loses
every step below 2^-9) and the mean step time.

Usage (from the repository root, after building build/)::

    python3 bench/master_weights_charlm.py [--steps 600] [--lrs 3e-3 1e-3 3e-4]
        [--every 25] [--out-dir build/bench/master-weights]
        [--mpt-compile build/bin/mpt-compile] [--mpt-train build/bin/mpt-train]
        [--json results.json]

Standard library only. It takes a few minutes (3 runs per learning rate).
docs/training.md ("Master weights") records a run of it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import struct
import subprocess
import sys
import time

MODES = ["fp32", "bf16", "bf16-sr"]
FIXTURE = "test/fixtures/training/charlm"


def run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (result.returncode, " ".join(cmd), result.stdout))


def read_metrics(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_checkpoint(path: str) -> dict[str, bytes]:
    """The tensors of an mpt-train checkpoint (docs/mpt-train.md), by name."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"MPTCKPT\0":
        sys.exit("%s: not an mpt-train checkpoint" % path)
    count = struct.unpack_from("<I", data, 12)[0]
    pos, tensors = 24, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        _, rank = struct.unpack_from("<II", data, pos)
        pos += 8 + 8 * rank
        (size,) = struct.unpack_from("<Q", data, pos)
        tensors[name] = data[pos + 8:pos + 8 + size]
        pos += 8 + size + 4
    return tensors


def unchanged_fraction(before: dict, after: dict, only=lambda name: True) -> float:
    """The fraction of master-weight elements (parameters with AdamW
    moments) whose bits the run did not change, among the parameters `only`
    accepts."""
    same = total = 0
    for name, old in before.items():
        if name + ".exp_avg" not in before or not only(name):
            continue
        new, width = after[name], len(old) // (len(before[name + ".exp_avg"]) // 4)
        for i in range(0, len(old), width):
            same += old[i:i + width] == new[i:i + width]
            total += 1
    return same / total


def is_layer_norm_gain(name: str) -> bool:
    return name.split(".")[-2].startswith("ln") and name.endswith(".weight")


def train(args, lr: str, mode: str) -> dict:
    tag = "lr%s.%s" % (lr, mode)
    plan = os.path.join(args.out_dir, tag + ".mptp")
    metrics = os.path.join(args.out_dir, tag + ".jsonl")
    run([args.mpt_compile, os.path.join(FIXTURE, "model.onnx"), "--train", "--precision=bf16",
         "--optimizer=adamw", "--weight-decay=0", "--lr=" + lr, "--master-weights=" + mode,
         "--quiet", "-o", plan])
    data = ["--input", "idx=%s/train_x.npy" % FIXTURE,
            "--input", "targets=%s/train_y.npy" % FIXTURE]
    initial, final = plan + ".0.ckpt", plan + ".ckpt"
    run([args.mpt_train, plan, "--device", "cpu", *data, "--steps", "0", "--save", initial,
         "--quiet"])
    start = time.time()
    run([args.mpt_train, plan, "--device", "cpu", "--seed", "0", *data,
         "--eval-input", "idx=%s/val_x.npy" % FIXTURE,
         "--eval-input", "targets=%s/val_y.npy" % FIXTURE,
         "--steps", str(args.steps), "--metrics", metrics, "--save", final, "--quiet"])
    rows = read_metrics(metrics)
    losses = [r["loss"] for r in rows]
    val = [r["val_loss"] for r in rows if "val_loss" in r]
    return {
        "lr": lr, "mode": mode, "losses": losses,
        "last50": sum(losses[-50:]) / len(losses[-50:]),
        "val_loss": val[-1] if val else None,
        "ms_per_step": sum(r["time_ms"] for r in rows) / len(rows),
        "unchanged": unchanged_fraction(read_checkpoint(initial), read_checkpoint(final)),
        # The LayerNorm gains start at 1.0, where bf16's spacing is 2^-8
        # below and 2^-7 above: round to nearest loses any step under 2^-9.
        "ln_gains_unchanged": unchanged_fraction(read_checkpoint(initial), read_checkpoint(final),
                                                 is_layer_norm_gain),
        "wall_s": time.time() - start,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--lrs", nargs="+", default=["3e-3", "1e-3", "3e-4"])
    p.add_argument("--every", type=int, default=25)
    p.add_argument("--out-dir", default="build/bench/master-weights")
    p.add_argument("--mpt-compile", default="build/bin/mpt-compile")
    p.add_argument("--mpt-train", default="build/bin/mpt-train")
    p.add_argument("--json", help="also write the curves and summary here")
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    print("charlm, bf16 compute, AdamW (betas 0.9/0.999, no weight decay), %d steps, CPU "
          "backend; %s, %s" % (args.steps, platform.node(), time.strftime("%Y-%m-%d")))
    results = []
    for lr in args.lrs:
        runs = {mode: train(args, lr, mode) for mode in MODES}
        results.extend(runs.values())
        print("\nlr %s: mean loss of the %d steps up to each step" % (lr, args.every))
        print("%6s  %8s  %8s  %8s  %9s  %9s" % ("step", *MODES, "bf16/fp32", "sr/fp32"))
        for end in range(args.every, args.steps + 1, args.every):
            means = [sum(runs[m]["losses"][end - args.every:end]) / args.every for m in MODES]
            print("%6d  %8.4f  %8.4f  %8.4f  %+8.2f%%  %+8.2f%%" %
                  (end, *means, 100 * (means[1] / means[0] - 1), 100 * (means[2] / means[0] - 1)))
        base = runs["fp32"]
        print("%-8s  %12s  %9s  %9s  %9s  %9s  %9s" % (
            "masters", "last-50 mean", "vs fp32", "val loss", "unchanged", "LN gains", "ms/step"))
        for m in MODES:
            r = runs[m]
            print("%-8s  %12.4f  %+8.2f%%  %9.4f  %8.1f%%  %8.1f%%  %9.1f" %
                  (m, r["last50"], 100 * (r["last50"] / base["last50"] - 1), r["val_loss"],
                   100 * r["unchanged"], 100 * r["ln_gains_unchanged"], r["ms_per_step"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
