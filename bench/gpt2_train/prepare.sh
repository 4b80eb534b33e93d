#!/usr/bin/env bash
# The GPT-2 training benchmark, the part that runs here (README.md beside
# this file): exports GPT-2 124M (T 1024, vocabulary 50304, tied
# embeddings, attention written out) with its weights zeroed, compiles bf16
# AdamW plans for B = 8 and 16 (a few MB: no weight bytes; run_gpu.sh
# writes the weights there and passes them with mpt-train --params), and
# builds mpt-train for sm_90 when the CUDA toolkit is here (--no-build: not;
# run_gpu.sh then builds it there, in the GPU host's time). Everything goes to
# .gpu/gpt2_train (ignored; at most 60 MiB); carry .gpu to the GPU host and
# run bench/gpt2_train/run_gpu.sh there.
#
#   bench/gpt2_train/prepare.sh [--no-build]
#   bench/gpt2_train/prepare.sh --smoke
#
# --smoke runs the whole driver here instead, on a 2-layer T=128 model:
# MPT's CPU backend against CPU PyTorch, into build-gpt2-smoke/ (exit 77,
# "skipped", when no Python here has torch). The environment may name the
# tools: MPT_COMPILE (default build/bin/mpt-compile), MPT_TRAIN (default
# build/bin/mpt-train, else build-rt/bin/mpt-train), PYTHON (default: the
# first of python3, /usr/bin/python3 that imports torch and onnx).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=bench/gpt2_train
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
if [ ! -x "$MPT_COMPILE" ]; then
  echo "prepare: no mpt-compile at $MPT_COMPILE (build the compiler, or set MPT_COMPILE)" >&2
  exit 1
fi

if [ "$MODE" = smoke ]; then
  MPT_TRAIN=${MPT_TRAIN:-}
  for candidate in build/bin/mpt-train build-rt/bin/mpt-train; do
    [ -n "$MPT_TRAIN" ] || { [ -x "$candidate" ] && MPT_TRAIN=$candidate; }
  done
  [ -x "${MPT_TRAIN:-}" ] || { echo "prepare: no mpt-train (set MPT_TRAIN)" >&2; exit 1; }
  OUT=${GPT2_SMOKE_OUT:-build-gpt2-smoke}
  rm -rf "$OUT"
  mkdir -p "$OUT"
  "$PY" "$HERE/prepare.py" --out "$OUT/prepared" --mpt-compile "$MPT_COMPILE" --smoke --batches 2,4
  MPTRT_NUM_THREADS=${MPTRT_NUM_THREADS:-2} "$PY" "$HERE/bench.py" --folder "$OUT/prepared" \
    --mpt-train "$MPT_TRAIN" --device cpu --smoke --out "$OUT/summary" --work "$OUT/work" \
    --batch 4 --small-batch 2 --steps 3 --warmup 1 --data-batches 2 --budget 600 \
    --build-note "$MPT_TRAIN (CPU backend)"
  # The smoke passes when every phase that can run here ran and the two
  # MPT runs gave bit-identical losses.
  "$PY" - "$OUT/summary/results.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
bad = {k: v for k, v in r["phases"].items() if not v.startswith(("ok", "skipped: torch"))}
if bad or not r.get("mpt_losses_bit_identical"):
    print(f"prepare: smoke FAILED: {bad}, bit-identical {r.get('mpt_losses_bit_identical')}", file=sys.stderr)
    sys.exit(1)
print("prepare: smoke passed")
PYEOF
  exit 0
fi

OUT=.gpu/gpt2_train
rm -rf "$OUT"
mkdir -p "$OUT"
"$PY" "$HERE/prepare.py" --out "$OUT" --mpt-compile "$MPT_COMPILE" --batches 8,16
if [ "$BUILD_HERE" = 1 ]; then
  bench/common/build-mpt-train.sh "$OUT"
fi
du -sh "$OUT" | sed 's/^/prepare: /'
size=$(du -sm "$OUT" | cut -f1)
if [ "$size" -gt 60 ]; then
  echo "prepare: $OUT is $size MiB, more than the 60 MiB a GPU host takes" >&2
  exit 1
fi
echo "prepare: now run bench/gpt2_train/run_gpu.sh on the GPU host, carrying .gpu"
