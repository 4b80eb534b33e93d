#!/usr/bin/env python3
"""Compile-time and memory scaling of `mpt-compile --train` on GPT-style
models at the GPT-2 width (issue 16).

For each depth (default 1, 2, 4, 8, 12 and 24 layers; 12 is GPT-2 124M) it
  1. exports the char-level GPT of scripts/gen_fixtures.py (the example
     model: tied embedding and LM head, pre-LN blocks, loss in the graph)
     at d_model 768, 12 heads, vocab 50257, T 128, batch 2, with PyTorch's
     TorchScript exporter in training mode, as a user would;
  2. runs `mpt-compile --train --precision=bf16 --optimizer=adamw
     --mlir-timing` on it, as a child process, and reads its wall time, its
     peak RSS (the kernel's ru_maxrss of the child) and each pass's time
     (MLIR's timing report);
  3. prints one row per depth and, at the end, the least-squares line of
     time and RSS against the layer count with the largest relative
     residual, which says whether the cost grows linearly.

Developer tool: PyTorch comes from the venv given with --python (it is
never a test dependency). The exported models are cached in --work and
reused when their generator arguments match. Results go to stdout and, as
JSON, to --json.

  bench/compile_scaling.py --python /root/torchenv/bin/python \\
      --mpt-compile build/bin/mpt-compile [--layers 1,2,4,8,12,24] \\
      [--work build/compile-scaling] [--json FILE] [--extra-flag ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Runs under the venv's python: writes model.onnx for one depth.
EXPORT = r"""
import io, sys, warnings
sys.path.insert(0, sys.argv[1])
import torch
import gen_fixtures as gf
layers, out = int(sys.argv[2]), sys.argv[3]
cfg = gf.GPTConfig(vocab_size=50257, block_size=128, n_layer=layers, n_head=12, d_model=768)
torch.manual_seed(0)
model = gf.GPT(cfg)
idx = torch.randint(0, cfg.vocab_size, (2, cfg.block_size))
tgt = torch.randint(0, cfg.vocab_size, (2, cfg.block_size))
model.train()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(model, (idx, tgt), out, dynamo=False, export_params=True,
                      opset_version=17, input_names=["idx", "targets"],
                      output_names=["logits", "loss"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
n = sum(p.numel() for p in model.parameters())
print(n)
"""

# A row of MLIR's timing report: one or two "seconds (percent)" columns
# (user and wall time when the pass manager is threaded; wall is the last),
# then the pass or pipeline name.
TIMING_COLUMN = re.compile(r"([0-9.]+)\s+\(\s*[0-9.]+%\)\s+")


def export(python, layers, path):
    stamp = path + ".params"
    if os.path.exists(path) and os.path.exists(stamp):
        with open(stamp) as f:
            return int(f.read())
    out = subprocess.run([python, "-c", EXPORT, os.path.join(REPO, "scripts"), str(layers), path],
                         check=True, capture_output=True, text=True)
    params = int(out.stdout.strip().splitlines()[-1])
    with open(stamp, "w") as f:
        f.write(str(params))
    return params


def compile_once(mpt_compile, model, plan, extra):
    cmd = [mpt_compile, model, "--train", "--precision=bf16", "--optimizer=adamw",
           "--mlir-timing", "--quiet", "-o", plan] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        sys.exit("compile_scaling: %s failed (%d):\n%s" % (" ".join(cmd), proc.returncode,
                                                           proc.stderr[-4000:]))
    if rss_kib < before:  # ru_maxrss is a maximum over all children so far
        rss_kib = before
    passes = {}
    for line in proc.stderr.splitlines():
        columns = list(TIMING_COLUMN.finditer(line))
        if not columns or line[:columns[0].start()].strip():
            continue
        name = line[columns[-1].end():].strip()
        if name and name not in ("Total", "root") and not name.endswith("Pipeline"):
            passes[name] = passes.get(name, 0.0) + float(columns[-1].group(1))
    return seconds, rss_kib * 1024, passes


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    icept = my - slope * mx
    worst = max(abs(y - (icept + slope * x)) / y for x, y in zip(xs, ys))
    return slope, icept, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="a python with torch and onnx")
    ap.add_argument("--mpt-compile", default=os.path.join(REPO, "build/bin/mpt-compile"))
    ap.add_argument("--layers", default="1,2,4,8,12,24")
    ap.add_argument("--work", default=os.path.join(REPO, "build/compile-scaling"))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--extra-flag", action="append", default=[],
                    help="another mpt-compile flag (repeatable)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    # ru_maxrss of children is a running maximum, so each compile runs in a
    # fresh child of a fresh python: this script re-executes itself per depth.
    rows = []
    for layers in [int(x) for x in args.layers.split(",")]:
        model = os.path.join(args.work, "gpt_%dl.onnx" % layers)
        t0 = time.perf_counter()
        params = export(args.python, layers, model)
        export_s = time.perf_counter() - t0
        child = subprocess.run([sys.executable, __file__, "--one", args.mpt_compile, model,
                                os.path.join(args.work, "gpt_%dl.mptp" % layers)]
                               + args.extra_flag, capture_output=True, text=True)
        if child.returncode != 0:
            sys.exit(child.stderr)
        seconds, rss, passes = json.loads(child.stdout)
        onnx_bytes = os.path.getsize(model)
        plan_bytes = os.path.getsize(os.path.join(args.work, "gpt_%dl.mptp" % layers))
        top = sorted(passes.items(), key=lambda kv: -kv[1])[:4]
        rows.append(dict(layers=layers, params=params, onnx_bytes=onnx_bytes,
                         plan_bytes=plan_bytes, seconds=seconds, peak_rss=rss,
                         passes=passes))
        print("%3d layers  %6.1fM params  onnx %7.1f MB  compile %6.2f s  peak RSS %7.1f MB"
              " (%.2fx onnx)  plan %7.1f MB (%.3fx fp32 params)  [export %.0f s]"
              % (layers, params / 1e6, onnx_bytes / 1e6, seconds, rss / 1e6, rss / onnx_bytes,
                 plan_bytes / 1e6, plan_bytes / (4.0 * params), export_s), flush=True)
        print("            slowest passes: " + ", ".join("%s %.2f s" % kv for kv in top),
              flush=True)
    if len(rows) >= 3:
        xs = [r["layers"] for r in rows]
        for key, unit, scale in (("seconds", "s", 1.0), ("peak_rss", "MB", 1e6)):
            slope, icept, worst = fit(xs, [r[key] / scale for r in rows])
            print("%s ~ %.3f %s + %.3f %s per layer; largest relative residual %.1f%%"
                  % (key, icept, unit, slope, unit, 100 * worst))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(compile_once(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])))
    else:
        main()
