"""Exports the benchmark's GPT-2 to ONNX with zeroed weights and compiles
its bf16 AdamW training plans (run by prepare.sh; see README.md).

The trainable parameters are zeroed before the export, so the ONNX file
holds zeros and mpt-compile stores none of them: a parameter whose initial
value is all zero is written as *zero-initialized* (docs/plan-format.md),
like the AdamW moments. The plan is then a few MB; `mpt-train --params`
gives it the real weights, which bench.py writes from the seed on the host
that trains.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as gm  # noqa: E402

# The training flags of every plan; bench.py gives PyTorch the same AdamW.
COMPILE_FLAGS = ["--train", "--precision=bf16", "--optimizer=adamw", "--lr=6e-4",
                 "--weight-decay=0.1", "--quiet"]


def export(cfg: gm.Config, batch: int, path: str) -> None:
    net = gm.GPT(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
    net.train()  # train mode: the exporter merges only tensors sharing storage
    idx = torch.zeros(batch, cfg.block_size, dtype=torch.long)
    kwargs = dict(export_params=True, opset_version=17, input_names=["idx", "targets"],
                  output_names=["loss"], do_constant_folding=False,
                  training=torch.onnx.TrainingMode.PRESERVE)
    if int(torch.__version__.split(".")[0]) >= 2:
        kwargs["dynamo"] = False
    # The tracer runs the model once: without autograd's saved tensors (the
    # B x H x T x T attention scores of every layer) the 124M export at
    # B = 16 fits in a few GB.
    with torch.no_grad():
        torch.onnx.export(net, (idx, idx.clone()), path, **kwargs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mpt-compile", required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--batches", default="8,16")
    args = ap.parse_args()
    cfg = gm.SMOKE if args.smoke else gm.GPT2_124M
    os.makedirs(os.path.join(args.out, "plans"), exist_ok=True)
    info = {"config": gm.config_dict(cfg), "parameters": gm.parameter_count(cfg),
            "flops_per_token": gm.flops_per_token(cfg), "compile_flags": COMPILE_FLAGS,
            "torch_export": torch.__version__, "plans": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for b in [int(x) for x in args.batches.split(",")]:
            onnx_path = os.path.join(tmp, f"gpt2-b{b}.onnx")
            t0 = time.time()
            export(cfg, b, onnx_path)
            t1 = time.time()
            plan = os.path.join(args.out, "plans", f"gpt2-bf16-b{b}.mptp")
            subprocess.run([args.mpt_compile, onnx_path, *COMPILE_FLAGS, "-o", plan], check=True)
            t2 = time.time()
            # The same step with mpt.attention (docs/attention.md): phase 6.
            fused = os.path.join(args.out, "plans", f"gpt2-bf16-b{b}-fused-attention.mptp")
            subprocess.run([args.mpt_compile, onnx_path, *COMPILE_FLAGS, "--fuse-attention",
                            "-o", fused], check=True)
            info["plans"][str(b)] = {"plan": os.path.relpath(plan, args.out),
                                     "onnx_bytes": os.path.getsize(onnx_path),
                                     "plan_bytes": os.path.getsize(plan),
                                     "export_s": round(t1 - t0, 2), "compile_s": round(t2 - t1, 2)}
            print(f"prepare: B={b}: ONNX {os.path.getsize(onnx_path) / 2**20:.1f} MiB "
                  f"(export {t1 - t0:.1f} s), plan {os.path.getsize(plan) / 2**20:.2f} MiB "
                  f"(mpt-compile {t2 - t1:.1f} s)", flush=True)
    with open(os.path.join(args.out, "prepare.json"), "w") as f:
        json.dump(info, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
