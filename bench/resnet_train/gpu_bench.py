"""The GPU half of the CNN benchmark (README.md beside this file): ResNet-50
training, bf16, SGD momentum, MPT against PyTorch on one device, in phases
under a deadline, from weights made here from a seed.

  python3 gpu_bench.py --folder PREPARED --mpt-train BIN --device cuda --out DIR
  python3 gpu_bench.py ... --device cpu --smoke      (the harness, here)

Phases in priority order (each starts only with time left; one that fails
is reported and the rest go on):
  1. device, versions; the weights (params.safetensors for mpt-train
     --params) and the images; step-1 references: the loss and gradient
     norm of batch 0 in PyTorch fp32 (TF32 off) and under bf16 autocast
  2. PyTorch eager AMP (bf16 autocast, channels_last), SGD momentum
  3. MPT bf16 (mpt-train, MPTRT_CUDA_CONV=cudnn so that a convolution cuDNN
     refuses fails the run instead of falling back); its step-1 loss and
     gradient norm against fp32, beside AMP's; 3b the same with the
     convolution chains channels last (--conv-layout=nhwc: cuDNN on NHWC
     activations, the batch norms between transposes)
  4. torch.compile of the AMP channels_last step
  5. the zoo's ResNet-18 plans (scripts/gpu-prepare.sh) on CUDA against the
     host's CPU (issue 27: at least 10x)
Reported: ms per step (mean of the timed steps: PyTorch's wall time with a
synchronise, MPT's metrics time_ms), images/s, peak memory. DIR gets
summary.md and results.json, after every phase.
"""
import argparse
import glob
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "bench", "common"))
import resnet50 as rn  # noqa: E402
from gpubench import MemorySampler, Phases, save_safetensors, step1_references  # noqa: E402

SEED, LR, MOMENTUM = 1234, 0.01, 0.9


class Bench(Phases):
    def __init__(self, args):
        super().__init__(args)
        self.cfg = rn.SMOKE if args.smoke else rn.FULL
        self.dev = torch.device(args.device)
        with open(os.path.join(args.folder, "prepare.json")) as f:
            self.prepared = json.load(f)
        self.batch = self.prepared["batch"]
        self.results = {"phases": {}, "runs": {}, "parity": {}, "prepared": self.prepared,
                        "build": args.build_note}

    def sync(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize()

    # --- 1 ------------------------------------------------------------------
    def setup(self):
        r = self.results
        r["device"] = (torch.cuda.get_device_name(0) if self.dev.type == "cuda"
                       else f"cpu ({platform.machine()}, {os.cpu_count()} cores)")
        r["versions"] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                         "cudnn": torch.backends.cudnn.version() if self.dev.type == "cuda" else None}
        r["flops_per_image"] = rn.train_flops_per_image(self.cfg)
        net = rn.build(self.cfg, SEED)
        self.init_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.params_path = os.path.join(self.args.work, "params.safetensors")
        # The plan's parameters are the trainable ones and the batch norms'
        # running statistics (state it updates); not the step counters.
        save_safetensors({k: v for k, v in self.init_state.items()
                          if not k.endswith("num_batches_tracked")}, self.params_path)
        x, y = rn.data(self.cfg, self.batch, self.args.data_batches, SEED)
        self.x_path = os.path.join(self.args.work, "x.npy")
        self.y_path = os.path.join(self.args.work, "y.npy")
        np.save(self.x_path, x.numpy())
        np.save(self.y_path, y.numpy())
        self.x, self.y = x, y
        self.say(f"   device {r['device']}, torch {torch.__version__}, "
                 f"{r['flops_per_image'] / 1e9:.2f} GFLOP per image per step, batch {self.batch}")
        xb, yb = x[:self.batch].to(self.dev), y[:self.batch].to(self.dev)
        r["parity"].update(step1_references(
            lambda: self.fresh(channels_last=False),
            lambda net: F.cross_entropy(net(xb).float(), yb), self.dev.type, self.say))

    def fresh(self, channels_last):
        net = rn.ResNet50(self.cfg["width"], self.cfg["blocks"], self.cfg["classes"])
        net.load_state_dict(self.init_state)
        net = net.to(self.dev).train()
        return net.to(memory_format=torch.channels_last) if channels_last else net

    def record(self, label, times, losses, extra):
        ms = 1e3 * sum(times) / len(times)
        run = {"ms_per_step": round(ms, 3), "images_per_s": round(self.batch / (ms / 1e3), 1),
               "tflops": round(self.results["flops_per_image"] * self.batch / (ms / 1e3) / 1e12, 1),
               "losses": losses, **extra}
        self.results["runs"][label] = run
        self.say(f"   {label}: {ms:.2f} ms/step, {run['images_per_s']:.0f} images/s, "
                 f"{run['tflops']} TFLOP/s, losses {losses[0]:.5f} .. {losses[-1]:.5f}")
        return run

    # --- 2, 4 -------------------------------------------------------------------
    def torch_run(self, label, compiled=False):
        net = self.fresh(channels_last=self.dev.type == "cuda")
        opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
        fn = torch.compile(net) if compiled else net
        if self.dev.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        losses, times = [], []
        n = self.args.data_batches
        for s in range(self.args.warmup + self.args.steps):
            i = s % n
            xb = self.x[i * self.batch:(i + 1) * self.batch].to(self.dev)
            yb = self.y[i * self.batch:(i + 1) * self.batch].to(self.dev)
            if self.dev.type == "cuda":
                xb = xb.to(memory_format=torch.channels_last)
            self.sync()
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            with torch.autocast(self.dev.type, dtype=torch.bfloat16):
                logits = fn(xb)
            loss = F.cross_entropy(logits.float(), yb)
            loss.backward()
            opt.step()
            self.sync()
            if s >= self.args.warmup:
                times.append(time.perf_counter() - t0)
            losses.append(loss.item())
        extra = {}
        if self.dev.type == "cuda":
            extra["peak_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
            extra["peak_mem_kind"] = "torch.cuda.max_memory_allocated"
        del net, opt, fn
        return self.record(label, times, losses, extra)

    # --- 3 ------------------------------------------------------------------
    def mpt_run(self, label, plan, inputs, steps, device, env_extra, params=True):
        metrics = os.path.join(self.args.work, f"{label}.jsonl")
        if os.path.exists(metrics):
            os.remove(metrics)
        cmd = [self.args.mpt_train, plan]
        if params:
            cmd += ["--params", self.params_path]
        for name, path in inputs:
            cmd += ["--input", f"{name}={path}"]
        cmd += ["--steps", str(steps), "--device", device, "--metrics", metrics,
                "--log-every", str(steps)]
        env = dict(os.environ, **env_extra)
        sampler = MemorySampler() if device == "cuda" else None
        with open(os.path.join(self.args.out, "mpt.log"), "a") as log:
            log.write(f"\n$ {' '.join(f'{k}={v}' for k, v in env_extra.items())} {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                  timeout=max(10, self.left() - 5))
        if sampler:
            sampler.stop()
        if proc.returncode != 0:
            raise RuntimeError(f"mpt-train exited {proc.returncode} (mpt.log)")
        rows = [json.loads(line) for line in open(metrics) if line.strip()]
        rows = [r for r in rows if "time_ms" in r]
        extra = {"grad_norms": [r.get("grad_norm") for r in rows],
                 "first_step_s": round(rows[0]["time_ms"] / 1e3, 3)}
        if sampler:
            extra["peak_mem_gib"] = round(sampler.peak_mib / 1024, 3)
            extra["peak_mem_kind"] = "nvidia-smi memory.used, process total (CUDA context included)"
        times = [r["time_ms"] / 1e3 for r in rows[self.args.warmup:]]
        return times, [r["loss"] for r in rows], extra

    def mpt_main(self, layout="nchw"):
        """MPT's plan compiled with --conv-layout=`layout` (run `mpt_bf16`
        for nchw, `mpt_bf16_nhwc` for the channels-last chains)."""
        name = "mpt_bf16" if layout == "nchw" else f"mpt_bf16_{layout}"
        plan = os.path.join(self.args.folder, self.prepared["plans"][layout])
        env = {"MPTRT_CUDA_CONV": "cudnn"} if self.args.device == "cuda" else {}
        times, losses, extra = self.mpt_run(
            name, plan, [("x", self.x_path), ("labels", self.y_path)],
            self.args.warmup + self.args.steps, self.args.device, env)
        self.record(name, times, losses, extra)
        ref = self.results["parity"]
        ref[name] = {"loss": losses[0], "grad_norm": extra["grad_norms"][0]}
        want = ref["torch_fp32"]
        for run in ("torch_amp_bf16", name):
            for key in ("loss", "grad_norm"):
                if ref[run][key] is not None:
                    ref[run][f"{key}_rel_err"] = abs(ref[run][key] - want[key]) / abs(want[key])
        self.say(f"   {name} step-1 vs fp32: loss {ref[name].get('loss_rel_err', 0):.2e} (AMP "
                 f"{ref['torch_amp_bf16']['loss_rel_err']:.2e}), grad norm "
                 f"{ref[name].get('grad_norm_rel_err', float('nan')):.2e} (AMP "
                 f"{ref['torch_amp_bf16']['grad_norm_rel_err']:.2e})")

    # --- 5 ------------------------------------------------------------------
    def resnet18_host_vs_device(self):
        plans = sorted(glob.glob(os.path.join(REPO, ".gpu", "plans", "resnet18-*.mptp")))
        if not plans:
            raise RuntimeError("no .gpu/plans/resnet18-*.mptp (scripts/gpu-prepare.sh)")
        fixture = os.path.join(REPO, "test", "fixtures", "parity", "resnet18")
        inputs = [(os.path.basename(f)[len("input_"):-len(".npy")], f)
                  for f in sorted(glob.glob(os.path.join(fixture, "input_*.npy")))]
        inputs.append(("labels", os.path.join(fixture, "labels.npy")))
        out = {}
        for plan in plans:
            name = os.path.basename(plan)[:-len(".mptp")]
            row = {}
            for device in ("cuda", "cpu"):
                times, _, _ = self.mpt_run(f"{name}-{device}", plan, inputs,
                                           self.args.warmup + 20, device, {}, params=False)
                row[f"{device}_ms"] = round(1e3 * sum(times) / len(times), 3)
            row["cuda_over_cpu_speed"] = round(row["cpu_ms"] / row["cuda_ms"], 2)
            out[name] = row
            self.say(f"   {name}: CUDA {row['cuda_ms']} ms, CPU ({os.cpu_count()} threads) "
                     f"{row['cpu_ms']} ms: {row['cuda_over_cpu_speed']}x")
        self.results["resnet18_cuda_vs_cpu"] = out

    # --- report -----------------------------------------------------------------
    def save(self):
        with open(os.path.join(self.args.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1)
        r = self.results
        lines = [f"# ResNet-50 training, bf16, SGD momentum, batch {self.batch}",
                 "", f"device: {r.get('device')}; {r.get('versions')}; mpt-train: {r['build']}", "",
                 "| run | ms/step | images/s | TFLOP/s | peak memory GiB |", "| --- | ---: | ---: | ---: | ---: |"]
        for name, run in r["runs"].items():
            lines.append(f"| {name} | {run['ms_per_step']} | {run['images_per_s']} | {run['tflops']} | "
                         f"{run.get('peak_mem_gib', '-')} |")
        runs = r["runs"]
        for mine in ("mpt_bf16", "mpt_bf16_nhwc"):
            if mine not in runs:
                continue
            lines += ["", f"{mine} images/s over:"]
            for other in ("torch_amp_channels_last", "torch_compile_amp_channels_last"):
                if other in runs:
                    lines.append(f"- {other}: {runs[mine]['images_per_s'] / runs[other]['images_per_s']:.3f}x")
        lines += ["", "step 1 (batch 0): " + json.dumps(r["parity"])]
        if "resnet18_cuda_vs_cpu" in r:
            lines += ["", "zoo ResNet-18, CUDA vs CPU: " + json.dumps(r["resnet18_cuda_vs_cpu"])]
        lines += ["", "phases:"] + [f"- {k}: {v}" for k, v in r["phases"].items()]
        with open(os.path.join(self.args.out, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", required=True, help="what prepare_gpu.sh wrote")
    ap.add_argument("--mpt-train", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True, help="weights and images (not in --out)")
    ap.add_argument("--smoke", action="store_true", help="the small model, for the CPU")
    ap.add_argument("--budget", type=float, default=300)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--data-batches", type=int, default=2)
    ap.add_argument("--build-note", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    b = Bench(args)
    b.phase("1 device, weights, step-1 references", 30, b.setup)
    if "torch_fp32" not in b.results["parity"]:
        return 1
    b.phase("2 PyTorch eager AMP channels_last", 20, lambda: b.torch_run("torch_amp_channels_last"))
    b.phase("3 MPT bf16", 30, b.mpt_main)
    b.phase("3b MPT bf16 channels last", 30, lambda: b.mpt_main("nhwc"))
    b.phase("4 torch.compile AMP channels_last", 90,
            lambda: b.torch_run("torch_compile_amp_channels_last", compiled=True))
    if args.device == "cuda":
        b.phase("5 zoo ResNet-18: CUDA vs the host CPU", 30, b.resnet18_host_vs_device)
    b.save()
    print(open(os.path.join(args.out, "summary.md")).read())
    bad = [k for k, v in b.results["phases"].items() if not v.startswith("ok")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
