#!/usr/bin/env python3
"""The CPU's fast numerics mode against the reference mode on the parity zoo.

For each fixture of test/fixtures/parity (default: all of them), compiles
the two trajectories the zoo parity tests check (test/Training/
ZooParityTest.cpp) with mpt-compile --train, the fixture's hyperparameters
(tolerances.txt) and the cross-entropy loss, and runs each with mpt-train
on the fixture's batch, once with MPTRT_CPU_NUMERICS=reference and once
with =fast:

  fp32  5 SGD-momentum steps, against momentum_loss.npy (float64)
  bf16  5 AdamW steps (--precision=bf16), against adamw_loss.npy (float64)

The error is the parity tests' trajectory metric, max_i |l_i - l64_i| /
|l64_i|; the script prints both modes' errors and their ratio, and exits 1
if the fast error exceeds twice the reference's (issue 27's criterion) on
any run, counting an error below --floor (default 1e-6, a few f32 units of
rounding of the loss) as the floor. A fixture that fails to compile or to
run is reported and counted as a failure.

    MPT_COMPILE=build/bin/mpt-compile MPT_TRAIN=build/bin/mpt-train \\
        python3 bench/resnet_train/zoo_check.py [--fixtures resnet18,mobilenetv2,smooth_cnn]

Needs only numpy. A loss-level check: the gradient-level parity checks
(mpt-training-tests) are not run in fast mode by this script.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "test", "fixtures", "parity")


def hyper(fixture):
    """The `hyper NAME VALUE` lines of the fixture's tolerances.txt."""
    values = {}
    for line in open(os.path.join(FIXTURES, fixture, "tolerances.txt")):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "hyper":
            values[parts[1]] = parts[2]
    return values


def inputs(fixture):
    meta = json.load(open(os.path.join(FIXTURES, fixture, "meta.json")))
    args = []
    for name in meta["onnx"]["inputs"]:
        args += ["--input", f"{name}={os.path.join(FIXTURES, fixture, 'input_' + name + '.npy')}"]
    return args + ["--input", f"labels={os.path.join(FIXTURES, fixture, 'labels.npy')}"]


def trajectory(args, fixture, flags, steps, numerics, workdir, tag):
    plan = os.path.join(workdir, f"{fixture}-{tag}.mptp")
    if not os.path.exists(plan):
        subprocess.run([args.mpt_compile, os.path.join(FIXTURES, fixture, "model.onnx"), "--train",
                        "--loss-kind=cross_entropy", "--loss-output=logits",
                        "--label-input=labels", *flags, "-o", plan],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    metrics = os.path.join(workdir, f"{fixture}-{tag}-{numerics}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    env = dict(os.environ, MPTRT_CPU_NUMERICS=numerics)
    # A step the loss scaler skips is not a step of the reference's: more
    # steps are run and only the applied ones kept (as the parity test does).
    subprocess.run([args.mpt_train, plan, *inputs(fixture), "--steps", str(steps + 16),
                    "--metrics", metrics, "--quiet", "--device", "cpu"],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rows = [json.loads(line) for line in open(metrics) if line.strip()]
    return [r["loss"] for r in rows if "loss" in r and not r.get("skipped", False)][:steps]


def error(losses, ref):
    return max(abs(l - r) / abs(r) for l, r in zip(losses, ref))


def main():
    import numpy as np  # here, so that the helpers import with the standard library alone

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fixtures", default=None, help="comma-separated (default: all)")
    p.add_argument("--floor", type=float, default=1e-6)
    p.add_argument("--mpt-compile", default=os.environ.get(
        "MPT_COMPILE", os.path.join(REPO, "build", "bin", "mpt-compile")))
    p.add_argument("--mpt-train", default=os.environ.get(
        "MPT_TRAIN", os.path.join(REPO, "build", "bin", "mpt-train")))
    args = p.parse_args()
    fixtures = args.fixtures.split(",") if args.fixtures else sorted(
        d for d in os.listdir(FIXTURES) if os.path.exists(os.path.join(FIXTURES, d, "model.onnx")))
    workdir = tempfile.mkdtemp(prefix="zoo_check-")
    failures = 0
    print("| fixture | run | reference error | fast error | fast / reference |")
    print("| --- | --- | ---: | ---: | ---: |")
    for fixture in fixtures:
        h = hyper(fixture)
        runs = [("fp32 momentum", "momentum_loss.npy",
                 ["--optimizer=momentum", f"--lr={h.get('momentum.lr')}",
                  f"--momentum={h.get('momentum.momentum')}"]),
                ("bf16 adamw", "adamw_loss.npy",
                 ["--precision=bf16", "--optimizer=adamw", f"--lr={h.get('adamw.lr')}",
                  f"--weight-decay={h.get('adamw.weight_decay')}"])]
        for tag, ref_file, flags in runs:
            ref = np.load(os.path.join(FIXTURES, fixture, ref_file)).astype(np.float64).tolist()
            try:
                errs = {m: error(trajectory(args, fixture, flags, len(ref), m, workdir,
                                            tag.replace(" ", "-")), ref)
                        for m in ("reference", "fast")}
            except subprocess.CalledProcessError as e:
                failures += 1
                detail = (e.stderr or b"").decode(errors="replace").strip().splitlines()
                print(f"| {fixture} | {tag} | failed: {detail[-1] if detail else e} | | |")
                continue
            ratio = max(errs["fast"], args.floor) / max(errs["reference"], args.floor)
            bad = ratio > 2.0
            failures += bad
            print(f"| {fixture} | {tag} | {errs['reference']:.2e} | {errs['fast']:.2e} | "
                  f"{ratio:.2f}{' OVER 2x' if bad else ''} |", flush=True)
    print(f"\n{failures} run(s) failed or over twice the reference's error")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
