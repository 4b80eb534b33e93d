#!/usr/bin/env python3
"""CNN training on the CPU: MPT (reference and fast numerics) against PyTorch eager.

Issue 27, the CPU half. For ResNet-18 and MobileNetV2 (the model classes of
scripts/gen_fixtures.py, the zoo's CNN fixtures, at batch 8 and 64x64
inputs), one run:

  1. builds the module (seed 0), exports it to ONNX in training mode (the
     TorchScript exporter, as scripts/gen_parity_fixtures.py does) and
     compiles SGD-momentum training plans with mpt-compile --train, fp32
     and --precision=bf16, once per --layouts value (--conv-layout: nchw,
     and nhwc, whose convolution chains' activations are channels last);
  2. times mpt-train on the same batch (--input x=..., labels=...) with
     MPTRT_CPU_NUMERICS=reference and =fast, every thread count variable
     (MPTRT_NUM_THREADS, OMP_NUM_THREADS for oneDNN, OPENBLAS_NUM_THREADS)
     set to --threads: the median of the per-step times mpt-train's
     --metrics file records, after --warmup steps;
  3. times PyTorch eager on the same threads (torch.set_num_threads): the
     same module, batch, loss (mean cross-entropy) and optimizer
     (torch.optim.SGD, lr 0.01, momentum 0.9), fp32 and under CPU autocast
     to bf16: the median wall time of zero_grad + forward + loss + backward
     + step. Steps 2 and 3 run in --rounds interleaved rounds, and each
     side's figure is its best round's median. Each side runs in a process
     of its own, one at a time (PyTorch in a child of this script, which
     itself keeps torch to one thread): an idle OpenMP team left in the
     timing process would spin on the cores the other side is using;
  4. checks the numerics: the first --check-steps losses of each MPT run
     against the same steps in float64 PyTorch (the module in double),
     |l_i - l64_i| / |l64_i| per step. Step 2's loss is the first that the
     backward pass and the update reach (step 1's is the forward alone);
     later steps amplify any difference on these small-batch CNNs (batch
     norm over 2x2 maps, ReLU6 kinks: MobileNetV2's fp32 reference is 3%
     off float64 by step 5), so the table shows steps 1 and 2 and the
     largest over all.

--omp-wait-policy sets OMP_WAIT_POLICY for both sides: `default` (unset,
what a user gets: libgomp spins a little after each parallel region, then
sleeps), `passive` (sleeps at once: every parallel region pays a wake-up,
which both sides' oneDNN convolutions feel) or `active` (spins). Before
the PyTorch side ran in a child process, its idle team spun in this
process while mpt-train was timed, which made `passive` look necessary (a
ResNet-18 fast step measured 145 ms against 27 ms).

It prints one table (MPT / PyTorch is PyTorch's ms over MPT's: above 1.0,
MPT is faster) and writes results.json into --out.

    python3 bench/resnet_train/bench.py --threads 2
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LR, MOMENTUM = 0.01, 0.9


def load_gen_fixtures():
    """scripts/gen_fixtures.py as a module (it generates nothing on import)."""
    path = os.path.join(REPO, "scripts", "gen_fixtures.py")
    spec = importlib.util.spec_from_file_location("gen_fixtures", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_fixtures"] = mod  # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


def build_model(gf, name):
    import torch
    torch.manual_seed(0)
    return {"resnet18": gf.ResNet18, "mobilenetv2": gf.MobileNetV2}[name]()


def export_onnx(model, x, path):
    import torch
    model.train()
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17, input_names=["x"],
                      output_names=["logits"], export_params=True,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      keep_initializers_as_inputs=False)


def compile_plan(args, onnx_path, precision, plan, layout="nchw"):
    cmd = [args.mpt_compile, onnx_path, "--train", "--loss-kind=cross_entropy",
           "--loss-output=logits", "--label-input=labels", "--optimizer=momentum",
           f"--lr={LR}", f"--momentum={MOMENTUM}", f"--conv-layout={layout}", "-o", plan]
    if precision != "fp32":
        cmd.insert(2, f"--precision={precision}")
    subprocess.run(cmd, check=True)


def thread_env(threads, numerics=None):
    env = dict(os.environ)
    for var in ("MPTRT_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    if numerics:
        env["MPTRT_CPU_NUMERICS"] = numerics
    return env


def run_mpt(args, plan, x_path, y_path, numerics, steps, workdir):
    metrics = os.path.join(workdir, f"metrics-{os.path.basename(plan)}-{numerics}-{steps}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [args.mpt_train, plan, "--input", f"x={x_path}", "--input", f"labels={y_path}",
           "--steps", str(steps), "--metrics", metrics, "--quiet", "--device", "cpu"]
    subprocess.run(cmd, check=True, env=thread_env(args.threads, numerics))
    rows = [json.loads(line) for line in open(metrics) if line.strip()]
    rows = [r for r in rows if "loss" in r and "time_ms" in r]
    return [r["loss"] for r in rows], [r["time_ms"] for r in rows]


def torch_step_times(model, x, y, steps, warmup, bf16):
    import torch
    import torch.nn.functional as F
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if bf16:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float(), y)
        else:
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def torch_worker(args):
    """--torch-worker: times PyTorch alone in this process and prints the
    step times as JSON (the model is built as the parent built it: seed 0)."""
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    name, precision, workdir = args.torch_worker
    model = build_model(load_gen_fixtures(), name)
    model.train()
    x = torch.from_numpy(np.load(os.path.join(workdir, f"{name}-x.npy")))
    y = torch.from_numpy(np.load(os.path.join(workdir, f"{name}-y.npy")))
    print(json.dumps(torch_step_times(model, x, y, args.steps, args.warmup, precision == "bf16")))


def run_torch(args, name, precision, workdir):
    cmd = [sys.executable, os.path.abspath(__file__), "--threads", str(args.threads),
           "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--torch-worker", name, precision, workdir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=thread_env(args.threads)).stdout
    return json.loads(out.strip().splitlines()[-1])


def float64_losses(model, x, y, steps):
    import torch
    import torch.nn.functional as F
    model = model.double()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x.double()), y)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


def loss_errors(losses, ref):
    """|l_i - l64_i| / |l64_i| for each step i."""
    return [abs(losses[i] - ref[i]) / abs(ref[i]) for i in range(min(len(losses), len(ref)))]


def errors(e):
    return f"{e[0]:.1e} / {e[1] if len(e) > 1 else float('nan'):.1e} / {max(e):.1e}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--models", default="resnet18,mobilenetv2")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--image", type=int, default=64)
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed first steps")
    p.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    p.add_argument("--check-steps", type=int, default=5, help="steps of the float64 check")
    p.add_argument("--layouts", default="nchw,nhwc",
                   help="mpt-compile --conv-layout values to time, each a plan of its own")
    p.add_argument("--mpt-compile", default=os.environ.get(
        "MPT_COMPILE", os.path.join(REPO, "build", "bin", "mpt-compile")))
    p.add_argument("--mpt-train", default=os.environ.get(
        "MPT_TRAIN", os.path.join(REPO, "build", "bin", "mpt-train")))
    p.add_argument("--omp-wait-policy", default="default",
                   choices=["default", "passive", "active"])
    p.add_argument("--out", default=None, help="directory for results.json (default: a temp dir)")
    p.add_argument("--torch-worker", nargs=3, metavar=("MODEL", "PRECISION", "WORKDIR"),
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.torch_worker:
        return torch_worker(args)
    layouts = args.layouts.split(",")

    if args.omp_wait_policy == "default":
        os.environ.pop("OMP_WAIT_POLICY", None)
    else:
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy  # before torch loads libgomp
    import numpy as np
    import torch
    torch.set_num_threads(1)  # export and float64 only: no idle team during the timings
    gf = load_gen_fixtures()
    workdir = args.out or tempfile.mkdtemp(prefix="resnet_train-")
    os.makedirs(workdir, exist_ok=True)
    results = {"threads": args.threads, "omp_wait_policy": args.omp_wait_policy,
               "rounds": args.rounds, "batch": args.batch, "image": args.image,
               "torch": torch.__version__, "steps": args.steps, "warmup": args.warmup,
               "layouts": layouts, "rows": []}
    for name in args.models.split(","):
        model = build_model(gf, name)
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(args.batch, 3, args.image, args.image, generator=gen)
        y = torch.randint(0, 10, (args.batch,), generator=gen)
        x_path, y_path = os.path.join(workdir, f"{name}-x.npy"), os.path.join(workdir, f"{name}-y.npy")
        np.save(x_path, x.numpy())
        np.save(y_path, y.numpy().astype(np.int64))
        onnx_path = os.path.join(workdir, f"{name}.onnx")
        export_onnx(model, x, onnx_path)
        ref64 = float64_losses(build_model(gf, name), x, y, args.check_steps)
        for precision in ("fp32", "bf16"):
            rows, plans = {}, {}
            for layout in layouts:
                plans[layout] = os.path.join(workdir, f"{name}-{precision}-{layout}.mptp")
                compile_plan(args, onnx_path, precision, plans[layout], layout)
                row = {"model": name, "precision": precision, "layout": layout,
                       "float64_losses": ref64}
                for numerics in ("reference", "fast"):
                    losses, _ = run_mpt(args, plans[layout], x_path, y_path, numerics,
                                        args.check_steps, workdir)
                    row[f"mpt_{numerics}_loss_errors"] = loss_errors(losses, ref64)
                rows[layout] = row
            # Interleaved rounds; each side's figure is its best round median,
            # so a burst of other load on the machine hits one round, not one side.
            medians = {(layout, numerics): [] for layout in layouts
                       for numerics in ("reference", "fast")}
            torch_medians = []
            for _ in range(args.rounds):
                for layout in layouts:
                    for numerics in ("reference", "fast"):
                        _, times = run_mpt(args, plans[layout], x_path, y_path, numerics,
                                           args.warmup + args.steps, workdir)
                        medians[(layout, numerics)].append(
                            statistics.median(times[args.warmup:]))
                torch_medians.append(statistics.median(
                    run_torch(args, name, precision, workdir)))
            for layout in layouts:
                row = rows[layout]
                row["round_medians_ms"] = {
                    "reference": medians[(layout, "reference")],
                    "fast": medians[(layout, "fast")], "torch": torch_medians}
                row["mpt_reference_ms"] = min(medians[(layout, "reference")])
                row["mpt_fast_ms"] = min(medians[(layout, "fast")])
                row["torch_ms"] = min(torch_medians)
                results["rows"].append(row)
                print(f"{name} {precision} {layout}: " + json.dumps(row), flush=True)

    print()
    print(f"threads {args.threads}, batch {args.batch}, {args.image}x{args.image}, "
          f"SGD momentum, OMP_WAIT_POLICY={args.omp_wait_policy}, best median of {args.rounds} "
          f"interleaved rounds of {args.steps} steps, torch {torch.__version__}; MPT / PyTorch = PyTorch ms / MPT ms")
    print("| model | precision | layout | MPT reference ms | MPT fast ms | PyTorch eager ms "
          "| reference / PyTorch | fast / PyTorch | loss error vs float64, step 1 / step 2 / "
          "max: reference; fast |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in results["rows"]:
        print(f"| {r['model']} | {r['precision']} | {r['layout']} | {r['mpt_reference_ms']:.1f} | "
              f"{r['mpt_fast_ms']:.1f} | {r['torch_ms']:.1f} | "
              f"{r['torch_ms'] / r['mpt_reference_ms']:.2f}x | "
              f"{r['torch_ms'] / r['mpt_fast_ms']:.2f}x | "
              f"{errors(r['mpt_reference_loss_errors'])}; {errors(r['mpt_fast_loss_errors'])} |")
    with open(os.path.join(workdir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nresults: {os.path.join(workdir, 'results.json')}")


if __name__ == "__main__":
    main()
