#!/usr/bin/env python3
"""How much step 1 of a CNN moves when only the convolutions' summation order
changes: the measurement behind docs/runtime.md's "fp16 CNNs against the
CPU at step 1".

For each fixture (default: the zoo's CNNs), compiles the AdamW plans that
scripts/gpu-prepare.sh compiles for the GPU check (lr 1e-3, cross-entropy)
in fp32, bf16 and fp16, and runs one step with mpt-train on the CPU twice:
MPTRT_CPU_NUMERICS=reference (im2col + OpenBLAS sgemm) and =fast (oneDNN's
own kernels and order). Both are correct to float32 accumulation, so their
difference is what any other correct summation order (a GPU's) may give.
It prints the relative difference of the step-1 loss (the forward pass
alone) and of the gradient norm ("inf" when the first loss scale
overflows, as fp16's does).

    MPT_COMPILE=build/bin/mpt-compile MPT_TRAIN=build/bin/mpt-train \\
        python3 bench/resnet_train/order_sensitivity.py [--fixtures resnet18,mobilenetv2]

Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_check import FIXTURES, inputs  # noqa: E402  (the fixtures' files as mpt-train flags)

FLAGS = ["--train", "--optimizer=adamw", "--lr=1e-3", "--loss-kind=cross_entropy",
         "--loss-output=logits", "--label-input=labels", "--quiet"]


def step1(args, plan, fixture, numerics, workdir):
    metrics = os.path.join(workdir, f"{numerics}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    env = dict(os.environ, MPTRT_CPU_NUMERICS=numerics)
    subprocess.run([args.mpt_train, plan, *inputs(fixture), "--steps", "1", "--quiet",
                    "--metrics", metrics], check=True, env=env, stdout=subprocess.DEVNULL)
    row = [json.loads(line) for line in open(metrics) if line.strip()][0]
    return float(row["loss"]), float(row["grad_norm"])


def relative(a, b):
    """|a - b| / |b|; NaN where either is not finite (an overflowed step)."""
    if a != a or b != b or abs(a) == float("inf") or abs(b) == float("inf"):
        return float("nan")
    return abs(a - b) / abs(b) if a != b else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fixtures", default="smooth_cnn,resnet18,mobilenetv2")
    p.add_argument("--mpt-compile", default=os.environ.get("MPT_COMPILE", "build/bin/mpt-compile"))
    p.add_argument("--mpt-train", default=os.environ.get("MPT_TRAIN", "build/bin/mpt-train"))
    args = p.parse_args()
    print("| fixture | precision | step-1 loss, reference vs fast | step-1 gradient norm |")
    print("| --- | --- | ---: | ---: |")
    with tempfile.TemporaryDirectory() as workdir:
        for fixture in args.fixtures.split(","):
            for precision in ("fp32", "bf16", "fp16"):
                plan = os.path.join(workdir, f"{fixture}-{precision}.mptp")
                flags = FLAGS + ([] if precision == "fp32" else [f"--precision={precision}"])
                subprocess.run([args.mpt_compile, os.path.join(FIXTURES, fixture, "model.onnx"),
                                *flags, "-o", plan], check=True)
                ref = step1(args, plan, fixture, "reference", workdir)
                fast = step1(args, plan, fixture, "fast", workdir)
                norm = relative(fast[1], ref[1])
                print(f"| {fixture} | {precision} | {relative(fast[0], ref[0]):.1e} | "
                      f"{'inf (overflow)' if norm != norm else f'{norm:.1e}'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
