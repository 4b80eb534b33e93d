#!/usr/bin/env bash
# The GPU half of the CNN benchmark on a GPU host (bench/README.md,
# "resnet_train: the GPU half"), one call of at most 6 minutes. Needs what
# prepare_gpu.sh wrote into .gpu/resnet_train (carry .gpu) and the host's
# PyTorch. Writes to $OUT (else build-gpu-bench/resnet): summary.md,
# results.json, bench.log, mpt.log, device.txt, build.log.
#
#   bench/resnet_train/run_gpu.sh          RESNET_BENCH_BUDGET=seconds (default 330)
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
BUDGET=${RESNET_BENCH_BUDGET:-330}
LOGS=${OUT:-build-gpu-bench/resnet}
PREP=.gpu/resnet_train
WORK=${RESNET_BENCH_WORK:-/tmp/resnet_bench_work} # weights and images: never in $OUT
mkdir -p "$LOGS" "$WORK"
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
# cuDNN for mpt-train (opened at run time): the toolkit's, else PyTorch's wheel.
wheel=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null || true)
[ -n "$wheel" ] && export LD_LIBRARY_PATH="$wheel${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  echo "cuDNN for mpt-train: LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  git log -1 --format='commit %H %cs' 2>/dev/null || true
} 2>&1 | tee "$LOGS/device.txt"
[ -f "$PREP/prepare.json" ] || { echo "run_gpu: $PREP is missing: run prepare_gpu.sh here and carry .gpu" >&2; exit 1; }

. bench/common/bench-lib.sh
device_mpt_train "$PREP" "$LOGS" $(( $(left) - 60 ))
echo "mpt-train: $NOTE"
python3 bench/resnet_train/gpu_bench.py --folder "$PREP" --mpt-train "$BIN" --device cuda \
  --out "$LOGS" --work "$WORK" --budget $(( $(left) - 10 )) --build-note "$NOTE"
rc=$?
echo "run_gpu: done in $(( $(date +%s) - START )) s; summary in $LOGS/summary.md"
exit $rc
