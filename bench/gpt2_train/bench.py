"""The GPT-2 training benchmark's driver (README.md): PyTorch against MPT on
one device, in phases under a deadline, from weights made here from a seed.

  python3 bench.py --folder PREPARED --mpt-train BIN --device cuda --out DIR
  python3 bench.py --folder PREPARED --mpt-train BIN --device cpu --smoke ...

Phases, in priority order (a phase starts only with time left before the
deadline; one that cannot start or fails is reported, the rest go on):
  1. device and versions; the weights (params.safetensors, for mpt-train
     --params) and the data; step-1 parity: PyTorch fp32 (TF32 off) and AMP
  2. PyTorch eager AMP (bf16 autocast, AdamW fused on CUDA): manual attention,
     then scaled_dot_product_attention
  3. MPT bf16 (mpt-train), then again with --profile: losses must be
     bit-identical
  4. torch.compile of both attentions (torch 2 only)
  5. B=8 (PyTorch AMP manual, MPT), and MPT without CUDA graphs
  6. MPT bf16 with --fuse-attention (mpt.attention's reference kernels;
     the cuDNN path is still to come): speed, memory and step-1 parity
It writes DIR/summary.md and DIR/results.json (and the profile, the logs).
"""
import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import model as gm  # noqa: E402
from gpubench import MemorySampler, Phases, save_safetensors, step1_references  # noqa: E402

PEAK_FLOPS = 989e12  # H100 SXM dense bf16
SEED = 1234


class Bench(Phases):
    def __init__(self, args):
        super().__init__(args)
        self.cfg = gm.SMOKE if args.smoke else gm.GPT2_124M
        self.dev = torch.device(args.device)
        self.results = {"phases": {}, "runs": {}, "parity": {}}
        with open(os.path.join(args.folder, "prepare.json")) as f:
            self.prepared = json.load(f)
        self.flops = gm.flops_per_token(self.cfg)

    def save(self):
        """results.json and summary.md as they stand: after every phase, so
        a run cut off at the device's limit still reports what it measured."""
        with open(os.path.join(self.args.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1)
        try:
            self.summary(quiet=True)
        except Exception as e:  # the summary must not stop the phases
            self.say(f"   (summary.md not written: {type(e).__name__}: {e})")

    def sync(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize()

    # --- phase 1 ----------------------------------------------------------
    def setup(self):
        r = self.results
        r["device"] = (torch.cuda.get_device_name(0) if self.dev.type == "cuda"
                       else f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)")
        r["versions"] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                         "python": platform.python_version()}
        r["config"] = gm.config_dict(self.cfg)
        r["parameters"] = gm.parameter_count(self.cfg)
        r["flops_per_token"] = self.flops
        self.say(f"   device {r['device']}, torch {torch.__version__}, "
                 f"{r['parameters'] / 1e6:.1f}M parameters, {self.flops / 1e9:.3f} GFLOP/token")
        net = gm.GPT(self.cfg)
        net.init_weights(SEED)
        self.init_state = {k: v.detach().clone() for k, v in net.named_parameters()}
        self.params_path = os.path.join(self.args.work, "params.safetensors")
        save_safetensors(self.init_state, self.params_path)
        # The data: the same batches for every run; mpt-train cuts the
        # arrays into batches of the plan's B.
        for b in self.batch_sizes():
            x, y = gm.batches(self.cfg, b, self.args.data_batches, SEED)
            np.save(os.path.join(self.args.work, f"x{b}.npy"), x.numpy())
            np.save(os.path.join(self.args.work, f"y{b}.npy"), y.numpy())
        # Step-1 parity on batch 0 of B (the main batch size).
        b = self.args.batch
        x, y = gm.batches(self.cfg, b, 1, SEED)
        xd, yd = x.to(self.dev), y.to(self.dev)
        r["parity"].update(step1_references(lambda: self.fresh("manual"),
                                            lambda net: net(xd, yd), self.dev.type, self.say))

    def batch_sizes(self):
        return sorted({self.args.batch, self.args.small_batch})

    def fresh(self, attention):
        net = gm.GPT(self.cfg, attention)
        with torch.no_grad():
            for k, p in net.named_parameters():
                p.copy_(self.init_state[k])
        return net.to(self.dev)

    # --- PyTorch ------------------------------------------------------------
    def torch_run(self, label, attention, batch, compiled=False):
        net = self.fresh(attention)
        fused = {"fused": True} if self.dev.type == "cuda" else {}
        opt = torch.optim.AdamW(net.parameters(), lr=6e-4, weight_decay=0.1, **fused)
        step_fn = torch.compile(net) if compiled else net
        x, y = gm.batches(self.cfg, batch, self.args.data_batches, SEED)
        x, y = x.to(self.dev), y.to(self.dev)
        if self.dev.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        losses, times = [], []
        t_first = None
        for s in range(self.args.warmup + self.args.steps):
            i = (s % self.args.data_batches) * batch
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            with torch.autocast(self.dev.type, dtype=torch.bfloat16):
                loss = step_fn(x[i:i + batch], y[i:i + batch])
            loss.backward()
            opt.step()
            losses.append(loss.item())  # synchronises
            self.sync()
            dt = time.perf_counter() - t0
            if s == 0:
                t_first = dt
            if s >= self.args.warmup:
                times.append(dt)
            if self.left() < 5:
                break
        run = self.record(label, batch, times, losses)
        run["first_step_s"] = round(t_first, 3)
        if self.dev.type == "cuda":
            run["peak_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
            run["peak_mem_kind"] = "torch.cuda.max_memory_allocated"
        del net, opt, step_fn
        if self.dev.type == "cuda":
            torch.cuda.empty_cache()

    def record(self, label, batch, times, losses):
        tokens = batch * self.cfg.block_size
        mean = sum(times) / len(times) if times else float("nan")
        run = {"batch": batch, "steps_timed": len(times), "step_ms": round(mean * 1e3, 3),
               "tokens_per_s": round(tokens / mean, 1) if times else None,
               "mfu": float(f"{tokens / mean * self.flops / PEAK_FLOPS:.4g}") if times else None,
               "losses": losses}
        self.results["runs"][label] = run
        self.say(f"   {label}: {run['step_ms']} ms/step, {run['tokens_per_s']} tokens/s, "
                 f"MFU {run['mfu']}, losses {losses[0]:.6f} .. {losses[-1]:.6f}")
        return run

    # --- MPT ------------------------------------------------------------------
    def mpt_run(self, label, batch, profile=False, graphs=True, variant=""):
        plan = os.path.join(self.args.folder, "plans", f"gpt2-bf16-b{batch}{variant}.mptp")
        metrics = os.path.join(self.args.work, f"{label}.jsonl")
        steps = self.args.warmup + self.args.steps
        cmd = [self.args.mpt_train, plan, "--params", self.params_path,
               "--input", f"idx={os.path.join(self.args.work, f'x{batch}.npy')}",
               "--input", f"targets={os.path.join(self.args.work, f'y{batch}.npy')}",
               "--steps", str(steps), "--device", self.args.device, "--metrics", metrics,
               "--log-every", str(steps)]
        if profile:
            cmd += ["--profile", os.path.join(self.args.out, "profile.json")]
        env = dict(os.environ)
        if not graphs:
            env["MPTRT_CUDA_GRAPHS"] = "0"
        sampler = MemorySampler() if self.dev.type == "cuda" else None
        t0 = time.time()
        with open(os.path.join(self.args.out, "mpt.log"), "a") as log:
            log.write(f"\n$ {' '.join(cmd)}{'' if graphs else '  (MPTRT_CUDA_GRAPHS=0)'}\n")
            log.flush()
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                  timeout=max(10, self.left() - 5))
        wall = time.time() - t0
        if sampler:
            sampler.stop()
        if proc.returncode != 0:
            raise RuntimeError(f"mpt-train exited {proc.returncode} (mpt.log)")
        lines = [json.loads(l) for l in open(metrics)]
        times = [l["time_ms"] / 1e3 for l in lines[self.args.warmup:]]
        run = self.record(label, batch, times, [l["loss"] for l in lines])
        run["grad_norms"] = [l.get("grad_norm") for l in lines]
        run["wall_s"] = round(wall, 2)
        run["first_step_s"] = round(lines[0]["time_ms"] / 1e3, 3)
        if sampler:
            run["peak_mem_gib"] = round(sampler.peak_mib / 1024, 3)
            run["peak_mem_kind"] = "nvidia-smi memory.used, process total (CUDA context included)"
        else:
            after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            run["peak_rss_gib"] = round(max(after, before) / 2**20, 3)  # the largest child so far
        return run

    def mpt_main(self):
        b = self.args.batch
        first = self.mpt_run("mpt_bf16", b)
        ref = self.results["parity"]
        ref["mpt_bf16"] = {"loss": first["losses"][0], "grad_norm": first["grad_norms"][0]}
        for key in ("loss", "grad_norm"):
            want = ref["torch_fp32"][key]
            for name in ("torch_amp_bf16", "mpt_bf16"):
                ref[name][f"{key}_err"] = abs(ref[name][key] - want)
        amp, mpt = ref["torch_amp_bf16"], ref["mpt_bf16"]
        for key in ("loss_err", "grad_norm_err"):
            ref[f"mpt_over_amp_{key}"] = (mpt[key] / amp[key]) if amp[key] else None
        self.say(f"   step-1 parity vs fp32: loss err MPT {mpt['loss_err']:.3e} / AMP "
                 f"{amp['loss_err']:.3e}; grad-norm err MPT {mpt['grad_norm_err']:.3e} / AMP "
                 f"{amp['grad_norm_err']:.3e}")
        second = self.mpt_run("mpt_bf16_profiled", b, profile=True)
        same = first["losses"] == second["losses"]
        self.results["mpt_losses_bit_identical"] = same
        self.say(f"   losses of the two MPT runs bit-identical: {same}")

    def compiled(self):
        for attention in ("manual", "sdpa"):
            self.torch_run(f"torch_compile_{attention}", attention, self.args.batch, compiled=True)

    def small_and_no_graphs(self):
        b = self.args.small_batch
        self.torch_run(f"torch_amp_manual_b{b}", "manual", b)
        self.mpt_run(f"mpt_bf16_b{b}", b)
        if self.dev.type == "cuda":
            self.mpt_run("mpt_bf16_no_graphs", self.args.batch, graphs=False)

    def fused_attention(self):
        run = self.mpt_run("mpt_bf16_fused_attention", self.args.batch,
                           variant="-fused-attention")
        want = self.results["parity"]["torch_fp32"]
        self.results["parity"]["mpt_bf16_fused_attention"] = {
            "loss": run["losses"][0], "grad_norm": run["grad_norms"][0],
            "loss_err": abs(run["losses"][0] - want["loss"]),
            "grad_norm_err": abs(run["grad_norms"][0] - want["grad_norm"])}

    def summary(self, quiet=False):
        r = self.results
        rows = ["| run | B | ms/step | tokens/s | MFU | peak memory (GiB) | step-1 loss |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for label, run in r["runs"].items():
            mem = run.get("peak_mem_gib", run.get("peak_rss_gib", ""))
            rows.append(f"| {label} | {run['batch']} | {run['step_ms']} | {run['tokens_per_s']} | "
                        f"{run['mfu']} | {mem} | {run['losses'][0]:.6f} |")
        par = r["parity"]
        lines = [f"# GPT-2 training benchmark ({'CPU smoke' if self.args.smoke else 'GPU'})", "",
                 f"device: {r.get('device')}; versions: {r.get('versions')}",
                 f"model: {r.get('parameters', 0) / 1e6:.2f}M parameters, "
                 f"{self.flops / 1e9:.4f} GFLOP/token (6N + 6·L·d·T), MFU against 989 TFLOP/s",
                 f"prepared: {json.dumps(self.prepared.get('plans'))}",
                 f"mpt-train build: {self.args.build_note}", "", *rows, ""]
        if "mpt_bf16" in par:
            lines += ["step-1 parity against PyTorch fp32 (TF32 off):", "",
                      "| | loss | grad norm | loss error | grad-norm error |",
                      "| --- | ---: | ---: | ---: | ---: |"]
            for name in ("torch_fp32", "torch_amp_bf16", "mpt_bf16"):
                p = par[name]
                lines.append(f"| {name} | {p['loss']:.7f} | {p['grad_norm']:.7f} | "
                             f"{p.get('loss_err', 0):.3e} | {p.get('grad_norm_err', 0):.3e} |")
            lines += ["", f"MPT error / AMP error: loss {par.get('mpt_over_amp_loss_err')}, "
                          f"grad norm {par.get('mpt_over_amp_grad_norm_err')}"]
        runs = r["runs"]
        if "mpt_bf16" in runs:
            mpt = runs["mpt_bf16"]["tokens_per_s"]
            lines += ["", "MPT bf16 tokens/s against:"]
            for other in ("torch_amp_manual", "torch_amp_sdpa", "torch_compile_manual",
                          "torch_compile_sdpa"):
                if other in runs and runs[other]["tokens_per_s"]:
                    lines.append(f"- {other}: {mpt / runs[other]['tokens_per_s']:.3f}x")
        lines += ["", f"losses of two MPT runs bit-identical: {r.get('mpt_losses_bit_identical')}",
                  "", "phases:"] + [f"- {k}: {v}" for k, v in r["phases"].items()]
        with open(os.path.join(self.args.out, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        if not quiet:
            self.say("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", required=True, help="what prepare.sh wrote")
    ap.add_argument("--mpt-train", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", required=True, help="summary, results, profile, logs")
    ap.add_argument("--work", help="params and data (default: OUT/../work)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--budget", type=float, default=300, help="seconds for every phase")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--small-batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--data-batches", type=int, default=4)
    ap.add_argument("--build-note", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.work = args.work or os.path.join(os.path.dirname(os.path.abspath(args.out)), "work")
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(SEED)
    b = Bench(args)
    b.phase("1 device, weights, step-1 references", 10, b.setup)
    if "torch_fp32" not in b.results["parity"]:
        b.save()
        b.summary()
        return 1
    b.phase("2 PyTorch eager AMP, manual attention", 10,
            lambda: b.torch_run("torch_amp_manual", "manual", args.batch))
    no_sdpa = (None if hasattr(F, "scaled_dot_product_attention")
               else f"torch {torch.__version__} has no scaled_dot_product_attention")
    b.phase("2 PyTorch eager AMP, SDPA", 10,
            lambda: b.torch_run("torch_amp_sdpa", "sdpa", args.batch), no_sdpa)
    b.phase("3 MPT bf16, profile, bit-identical rerun", 20, b.mpt_main)
    b.phase("4 torch.compile", 60, b.compiled,
            None if hasattr(torch, "compile") else f"torch {torch.__version__} has no torch.compile")
    b.phase(f"5 B={args.small_batch} and graphs off", 20, b.small_and_no_graphs)
    fused_plan = os.path.join(args.folder, "plans", f"gpt2-bf16-b{args.batch}-fused-attention.mptp")
    b.phase("6 MPT bf16, --fuse-attention", 20, b.fused_attention,
            None if os.path.exists(fused_plan) else "no fused-attention plan (prepare.sh before it)")
    b.save()
    b.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
