#!/usr/bin/env bash
# The main job's model on a GPU host: trains the char-level GPT
# (test/fixtures/training/charlm) with the plans scripts/gpu-prepare.sh
# compiled into .gpu/example (bf16 and fp8, AdamW lr 3e-3, as
# scripts/run-example.sh), on CUDA and on the host CPU, and prints each loss
# curve against PyTorch's FP32 curve recorded in the fixture, with the step
# times; on CUDA also with its graphs off (MPTRT_CUDA_GRAPHS=0), which must
# give the same losses bit for bit, only slower. scripts/gpu-check.sh runs it after its checks; it also runs alone:
#
#   scripts/gpu-example.sh [steps]        (default 300)
#
# Builds mpt-train and mpt-loss-curve into $GPU_CHECK_BUILD (default
# build-gpu) when they are missing. Logs go to $OUT when it is set, else to
# that build's logs/. Exit status: 0 when every run finished, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${GPU_CHECK_BUILD:-build-gpu}
LOGS=${OUT:-$BUILD/logs}
STEPS=${1:-300}
FIXTURE=test/fixtures/training/charlm
mkdir -p "$LOGS"

if [ ! -d .gpu/example ]; then
  echo "gpu-example: .gpu/example is missing: run scripts/gpu-prepare.sh here first and carry .gpu" >&2
  exit 1
fi
if [ ! -x "$BUILD/bin/mpt-train" ] || [ ! -x "$BUILD/bin/mpt-loss-curve" ]; then
  cmake -G Ninja -S runtime -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMPTRT_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DMPTRT_BUILD_TESTS=OFF >"$LOGS/example-configure.log" 2>&1 &&
    ninja -C "$BUILD" mpt-train mpt-loss-curve >"$LOGS/example-build.log" 2>&1 ||
    { tail -30 "$LOGS/example-build.log"; exit 1; }
fi

status=0
for plan in .gpu/example/*.mptp; do
  name=$(basename "$plan" .mptp)
  for run in cuda cuda-nographs cpu; do
    device=${run%-nographs}
    graphs=1
    [ "$run" = cuda-nographs ] && graphs=0
    echo "== $name on $run: $STEPS steps"
    if MPTRT_CUDA_GRAPHS=$graphs "$BUILD/bin/mpt-train" "$plan" --device "$device" \
         --input idx="$FIXTURE/train_x.npy" --input targets="$FIXTURE/train_y.npy" \
         --steps "$STEPS" --quiet --metrics "$LOGS/$name-$run.jsonl" 2>&1 |
         tee "$LOGS/$name-$run.log"; then
      "$BUILD/bin/mpt-loss-curve" "$LOGS/$name-$run.jsonl" \
        "$FIXTURE/reference_loss_fp32.npy" 50 | tail -3
    else
      status=1
    fi
  done
  # Graphs replay the same kernels: the same losses, bit for bit.
  if [ -s "$LOGS/$name-cuda.jsonl" ] && [ -s "$LOGS/$name-cuda-nographs.jsonl" ] &&
     cmp -s <(grep -o '"loss": [^,]*' "$LOGS/$name-cuda.jsonl") \
            <(grep -o '"loss": [^,]*' "$LOGS/$name-cuda-nographs.jsonl"); then
    echo "  $name: CUDA with and without graphs: the same losses"
  else
    echo "  $name: CUDA with and without graphs: the losses DIFFER"
    status=1
  fi
done
exit "$status"
