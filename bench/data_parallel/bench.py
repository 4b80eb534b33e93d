#!/usr/bin/env python3
"""Data-parallel training throughput on the CPU (issue 26, docs/distributed.md).

  bench/data_parallel/bench.py [--build build] [--ranks 1,2,4] [--steps 30]
                               [--rounds 3] [--threads 1] [--out results.md]

The char-level GPT of test/fixtures/training/charlm (the main job's model:
batch 16 x 32 characters, bf16, AdamW) is compiled with --data-parallel and
with --shard-optimizer-state=N, and trained by `mpirun -np N mpt-train` for
each N of --ranks, every rank on MPTRT_NUM_THREADS=--threads threads. The
plan's batch is each rank's (16), so the global batch is 16 N (weak scaling,
as DDP benchmarks count it). For each N and mode it reports, from rank 0's
`--profile` (the best of --rounds runs): the step time, global samples per
second, the scaling efficiency (samples/s over N times one rank's), and the
time per step in the collective kernels (all_reduce, reduce_scatter,
all_gather, and all_finite / global_norm, which also talk to the ranks when
sharded). One process without --data-parallel is the baseline.

A GPU run needs NCCL on a GPU host (docs/distributed.md, "On GPUs"): not
measured here; the script says so.

Standard library only; needs mpirun (Debian's openmpi-bin). Ranks beyond the
machine's cores are oversubscribed: their times then measure sharing, and
the table says how many cores there were.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURE = os.path.join(ROOT, "test", "fixtures", "training", "charlm")
COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")
GLOBAL = ("all_finite", "global_norm")


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.exit("bench: failed: %s\n%s" % (" ".join(cmd), p.stdout))
    return p.stdout


def compile_plan(build, flags, out):
    run([os.path.join(build, "bin", "mpt-compile"), os.path.join(FIXTURE, "model.onnx"),
         "--train", "--precision=bf16", "--optimizer=adamw", "--lr=3e-3", "--weight-decay=0",
         "--quiet"] + flags + ["-o", out])
    return out


def train(build, plan, ranks, steps, threads, work, tag):
    profile = os.path.join(work, "%s.json" % tag)
    env = dict(os.environ, MPTRT_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS="1")
    launcher = [] if ranks == 0 else [
        "mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", str(ranks),
        "-x", "MPTRT_NUM_THREADS", "-x", "OMP_NUM_THREADS", "-x", "OPENBLAS_NUM_THREADS"]
    run(launcher + [os.path.join(build, "bin", "mpt-train"), plan,
                    "--input", "idx=" + os.path.join(FIXTURE, "train_x.npy"),
                    "--input", "targets=" + os.path.join(FIXTURE, "train_y.npy"),
                    "--steps", str(steps), "--quiet", "--device", "cpu", "--profile", profile],
        env)
    data = json.load(open(profile))
    by_kind = {k["kind"]: k["ms_per_step"] for k in data["by_kind"]}
    return {"step_ms": data["wall_ms_per_step"],
            "collective_ms": sum(by_kind.get(k, 0.0) for k in COLLECTIVES),
            "global_ms": sum(by_kind.get(k, 0.0) for k in GLOBAL)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="also write the markdown table here")
    args = ap.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    work = tempfile.mkdtemp(prefix="mpt-dp-bench-")
    batch = 16

    plans = {("single", 0): compile_plan(args.build, [], os.path.join(work, "single.mptp"))}
    for n in ranks:
        plans[("data-parallel", n)] = compile_plan(
            args.build, ["--data-parallel"], os.path.join(work, "dp.mptp"))
        plans[("sharded", n)] = compile_plan(
            args.build, ["--shard-optimizer-state=%d" % n], os.path.join(work, "zero%d.mptp" % n))

    results = {}
    for r in range(args.rounds):  # interleaved rounds, the best of each
        for (mode, n), plan in plans.items():
            got = train(args.build, plan, n, args.steps, args.threads, work,
                        "%s-%d-%d" % (mode, n, r))
            best = results.get((mode, n))
            if best is None or got["step_ms"] < best["step_ms"]:
                results[(mode, n)] = got

    base = results[("single", 0)]
    one = results.get(("data-parallel", 1), base)
    lines = ["| mode | ranks | global batch | step ms | samples/s | efficiency vs 1 rank "
             "| collectives ms/step | finite check + norm ms/step |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines.append("| one process, no --data-parallel | 1 | %d | %.2f | %.0f | | | %.3f |" % (
        batch, base["step_ms"], batch / base["step_ms"] * 1e3, base["global_ms"]))
    for mode in ("data-parallel", "sharded"):
        first = results.get((mode, 1), one)
        for n in ranks:
            got = results[(mode, n)]
            rate = batch * n / got["step_ms"] * 1e3
            eff = rate / (n * batch / first["step_ms"] * 1e3)
            lines.append("| %s | %d | %d | %.2f | %.0f | %.2f | %.3f | %.3f |" % (
                "--data-parallel" if mode == "data-parallel"
                else "--shard-optimizer-state=%d" % n,
                n, batch * n, got["step_ms"], rate, eff, got["collective_ms"], got["global_ms"]))
    cores = os.cpu_count()
    table = "\n".join(lines)
    print("char-level GPT (test/fixtures/training/charlm), bf16 AdamW, %d rank threads, "
          "%d cores, best of %d rounds of %d steps" % (args.threads, cores, args.rounds,
                                                       args.steps))
    print(table)
    print("GPU: not measured (needs a GPU host with NCCL; see docs/distributed.md)")
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
