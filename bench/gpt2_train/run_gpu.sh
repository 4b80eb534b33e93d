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
. bench/common/bench-lib.sh
device_mpt_train "$PREP" "$LOGS" $(( $(left) - 60 ))
echo "mpt-train: $NOTE"

python3 bench/gpt2_train/bench.py --folder "$PREP" --mpt-train "$BIN" --device cuda \
  --out "$LOGS" --work "$WORK" --budget $(( $(left) - 10 )) --build-note "$NOTE"
rc=$?
echo "run_gpu: done in $(( $(date +%s) - START )) s; summary in $LOGS/summary.md"
exit $rc
