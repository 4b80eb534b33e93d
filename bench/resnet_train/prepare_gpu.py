"""Exports ResNet-50 with its parameters zeroed (the plans then store no
weight bytes) and compiles the bf16 SGD-momentum training plans for the GPU
half of the CNN benchmark (README.md beside this file): one with the
activations channels first (--conv-layout=nchw), one with the convolution
chains channels last (--conv-layout=nhwc, what --target=sm_90 picks).

  python3 prepare_gpu.py --out .gpu/resnet_train --mpt-compile build/bin/mpt-compile [--smoke]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resnet50 as rn  # noqa: E402

LR, MOMENTUM = 0.01, 0.9  # gpu_bench.py gives PyTorch the same
COMPILE_FLAGS = ["--train", "--precision=bf16", "--loss-kind=cross_entropy", "--loss-output=logits",
                 "--label-input=labels", "--optimizer=momentum", f"--lr={LR}",
                 f"--momentum={MOMENTUM}", "--quiet"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mpt-compile", required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # the TorchScript exporter's notes
    cfg = rn.SMOKE if args.smoke else rn.FULL
    os.makedirs(os.path.join(args.out, "plans"), exist_ok=True)
    net = rn.build(cfg).train()  # zeroed parameters
    x = torch.zeros(args.batch, 3, cfg["image"], cfg["image"])
    plans = {layout: os.path.join(args.out, "plans", f"resnet50-bf16-{layout}-b{args.batch}.mptp")
             for layout in ("nchw", "nhwc")}
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "resnet50.onnx")
        t0 = time.time()
        kwargs = dict(opset_version=17, input_names=["x"], output_names=["logits"],
                      export_params=True, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
        if int(torch.__version__.split(".")[0]) >= 2:
            kwargs["dynamo"] = False
        with torch.no_grad():  # the tracer's one run keeps no activations
            torch.onnx.export(net, (x,), onnx_path, **kwargs)
        t1 = time.time()
        for layout, plan in plans.items():
            subprocess.run([args.mpt_compile, onnx_path, *COMPILE_FLAGS,
                            f"--conv-layout={layout}", "-o", plan], check=True)
        t2 = time.time()
        onnx_bytes = os.path.getsize(onnx_path)
    info = {"model": "resnet50-smoke" if args.smoke else "resnet50", "config": cfg,
            "batch": args.batch,
            "plans": {layout: os.path.relpath(plan, args.out) for layout, plan in plans.items()},
            "compile_flags": COMPILE_FLAGS, "torch_export": torch.__version__,
            "onnx_bytes": onnx_bytes, "plan_bytes": os.path.getsize(plans["nchw"]),
            "export_s": round(t1 - t0, 1), "compile_s": round(t2 - t1, 1)}
    with open(os.path.join(args.out, "prepare.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(f"prepare: ResNet-50 B={args.batch}: ONNX {onnx_bytes / 2**20:.1f} MiB (export "
          f"{t1 - t0:.1f} s), plans {os.path.getsize(plans['nchw']) / 2**20:.2f} MiB each (mpt-compile "
          f"{t2 - t1:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
