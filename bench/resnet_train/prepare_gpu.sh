#!/usr/bin/env bash
# The GPU half of the CNN benchmark, the part that runs here (README.md in
# bench/, "resnet_train: the GPU half"): exports ResNet-50 with its
# parameters zeroed, compiles the bf16 SGD-momentum plan for batch 128 (no
# weight bytes: gpu_bench.py writes the weights on the GPU host and passes
# them with mpt-train --params), and builds mpt-train for sm_90 when the
# CUDA toolkit is here (--no-build: not). Everything goes to
# .gpu/resnet_train (ignored); carry .gpu and run
# bench/resnet_train/run_gpu.sh there. scripts/gpu-prepare.sh (which the
# ResNet-18 phase needs) empties .gpu/: run it first.
#
#   bench/resnet_train/prepare_gpu.sh [--no-build]
#   bench/resnet_train/prepare_gpu.sh --smoke     the whole driver here, on
#                                                 the CPU, on a small ResNet-50
#
# --smoke exits 77 ("skipped") when no Python here has torch and onnx. The
# environment may name MPT_COMPILE, MPT_TRAIN and PYTHON.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=bench/resnet_train
MODE=gpu BUILD_HERE=1
[ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null || BUILD_HERE=0
for arg in "$@"; do
  case "$arg" in
    --smoke) MODE=smoke ;;
    --no-build) BUILD_HERE=0 ;;
    *) echo "usage: $0 [--smoke | --no-build]" >&2; exit 2 ;;
  esac
done
. bench/common/bench-lib.sh
torch_python
MPT_COMPILE=${MPT_COMPILE:-build/bin/mpt-compile}
[ -x "$MPT_COMPILE" ] || { echo "prepare: no mpt-compile at $MPT_COMPILE (set MPT_COMPILE)" >&2; exit 1; }

if [ "$MODE" = smoke ]; then
  MPT_TRAIN=${MPT_TRAIN:-build/bin/mpt-train}
  [ -x "$MPT_TRAIN" ] || { echo "prepare: no mpt-train at $MPT_TRAIN (set MPT_TRAIN)" >&2; exit 1; }
  OUT=${RESNET_SMOKE_OUT:-build-resnet-gpu-smoke}
  rm -rf "$OUT"
  mkdir -p "$OUT"
  "$PY" "$HERE/prepare_gpu.py" --out "$OUT/prepared" --mpt-compile "$MPT_COMPILE" --smoke --batch 4
  # Phase 4 (torch.compile) needs a C++ toolchain and a minute here: the
  # smoke leaves it out with a budget too short for it.
  MPTRT_NUM_THREADS=${MPTRT_NUM_THREADS:-2} "$PY" "$HERE/gpu_bench.py" --folder "$OUT/prepared" \
    --mpt-train "$MPT_TRAIN" --device cpu --smoke --out "$OUT/summary" --work "$OUT/work" \
    --steps 2 --warmup 1 --budget 85 --build-note "$MPT_TRAIN (CPU backend)" >"$OUT/smoke.log" 2>&1 || true
  "$PY" - "$OUT/summary/results.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
ok = all(r["phases"].get(p, "").startswith("ok") for p in
         ("1 device, weights, step-1 references", "2 PyTorch eager AMP channels_last", "3 MPT bf16",
          "3b MPT bf16 channels last"))
amp = r["parity"].get("torch_amp_bf16", {})
# MPT's bf16 step 1, both layouts, within 4x AMP's own error against fp32 (or 1e-2).
close = all("loss_rel_err" in r["parity"].get(run, {}) and
            r["parity"][run]["loss_rel_err"] <= max(4 * amp["loss_rel_err"], 1e-2)
            for run in ("mpt_bf16", "mpt_bf16_nhwc"))
if not (ok and close):
    print(f"prepare: smoke FAILED: phases {r['phases']}, step 1 {r['parity']}", file=sys.stderr)
    sys.exit(1)
print("prepare: smoke passed")
PYEOF
  exit 0
fi

OUT=.gpu/resnet_train
rm -rf "$OUT"
mkdir -p "$OUT"
"$PY" "$HERE/prepare_gpu.py" --out "$OUT" --mpt-compile "$MPT_COMPILE" --batch 128
if [ "$BUILD_HERE" = 1 ]; then
  bench/common/build-mpt-train.sh "$OUT"
fi
du -sh .gpu | sed 's/^/prepare: .gpu: /'
size=$(du -sm .gpu | cut -f1)
if [ "$size" -gt 60 ]; then
  echo "prepare: .gpu is $size MiB, more than the 60 MiB a GPU host takes" >&2
  exit 1
fi
echo "prepare: now run bench/resnet_train/run_gpu.sh on the GPU host, carrying .gpu"
