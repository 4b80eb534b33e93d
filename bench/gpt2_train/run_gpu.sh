#!/usr/bin/env bash
# The GPT-2 training benchmark on a GPU host (README.md beside this file),
# in one call of at most 6 minutes. Needs what prepare.sh wrote into
# .gpu/gpt2_train (carry .gpu with the device tool) and the host's PyTorch.
# Writes at most 7 files to $OUT (else build-gpu-bench/gpt2): summary.md,
# results.json, profile.json, bench.log, mpt.log, build.log, device.txt.
#
#   bench/gpt2_train/run_gpu.sh        GPT2_BENCH_BUDGET=seconds (default 330)
#
# Phases under one deadline: the device and versions, building mpt-train
# (unless prepare.sh carried one that starts), then bench.py:
# weights from the seed and step-1 parity, PyTorch eager AMP (manual
# attention, SDPA), MPT bf16 with a profile and a bit-identical rerun,
# torch.compile, B=8 and CUDA graphs off.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
BUDGET=${GPT2_BENCH_BUDGET:-330}
LOGS=${OUT:-build-gpu-bench/gpt2}
PREP=.gpu/gpt2_train
WORK=${GPT2_BENCH_WORK:-/tmp/gpt2_bench_work} # params and data: never in $OUT
mkdir -p "$LOGS" "$WORK"
left() { echo $(( BUDGET - ($(date +%s) - START) )); }

echo "== device and versions"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  git log -1 --format='commit %H %cs' 2>/dev/null || true
} 2>&1 | tee "$LOGS/device.txt"
if [ ! -f "$PREP/prepare.json" ]; then
  echo "run_gpu: $PREP is missing: run bench/gpt2_train/prepare.sh here first and carry .gpu" >&2
  exit 1
fi

echo "== mpt-train for sm_90"
BIN=$PREP/bin/mpt-train
if [ -x "$BIN" ] && "$BIN" --help >/dev/null 2>&1; then
  NOTE="carried: $(cat "$PREP/bin/build.txt" 2>/dev/null)"
else
  BIN=build-gpu-bench/bin/mpt-train
  b0=$(date +%s)
  if timeout $(( $(left) - 60 )) bash -c '
      cmake -G Ninja -S runtime -B build-gpu-bench -DCMAKE_BUILD_TYPE=Release -DMPTRT_ENABLE_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DMPTRT_BUILD_TESTS=OFF -DMPTRT_REQUIRE_BLAS=OFF &&
      ninja -C build-gpu-bench mpt-train' >"$LOGS/build.log" 2>&1; then
    NOTE="built here in $(( $(date +%s) - b0 )) s (ninja mpt-train, sm_90)"
  else
    echo "run_gpu: building mpt-train failed (build.log); PyTorch phases only" >&2
    tail -20 "$LOGS/build.log"
    NOTE="build FAILED after $(( $(date +%s) - b0 )) s"
  fi
fi
echo "mpt-train: $NOTE"

python3 bench/gpt2_train/bench.py --folder "$PREP" --mpt-train "$BIN" --device cuda \
  --out "$LOGS" --work "$WORK" --budget $(( $(left) - 10 )) --build-note "$NOTE"
rc=$?
echo "run_gpu: done in $(( $(date +%s) - START )) s; summary in $LOGS/summary.md"
exit $rc
