#!/usr/bin/env bash
# The main job: train the bundled character-level GPT (KJV Genesis, from
# Debian's bible-kjv-text; test/fixtures/training/charlm) in mixed precision.
# It compiles the ONNX model to a training plan (bf16 contractions with FP32
# accumulation, FP32 softmax, LayerNorm and loss, FP32 master weights,
# AdamW), trains it with mpt-train for N steps on the GPU when the machine
# has one the CUDA backend can use, else on the CPU runtime (--device auto;
# set MPT_DEVICE=cpu or cuda to choose), prints the loss curve, and compares
# it with PyTorch's FP32 curve recorded in the fixture.
#   scripts/run-example.sh [steps]     (default: 300)
# For its test (test/Tools/main-job.test): MPT_EXAMPLE_BUILD=DIR uses the
# tools of that existing build and skips the set-up, MPT_EXAMPLE_OUT=DIR
# writes there instead of build/example/charlm.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n ${MPT_EXAMPLE_BUILD:-} ]]; then
  BIN=$MPT_EXAMPLE_BUILD/bin
else
  scripts/setup.sh build >&2
  BIN=build/bin
fi
STEPS=${1:-300}
DEVICE=${MPT_DEVICE:-auto}
FIXTURE=test/fixtures/training/charlm
OUT=${MPT_EXAMPLE_OUT:-build/example/charlm}
mkdir -p "$OUT"

echo "== compile $FIXTURE/model.onnx for training: bf16, AdamW lr 3e-3 =="
"$BIN/mpt-compile" "$FIXTURE/model.onnx" --train --precision=bf16 \
  --precision-report="$OUT/precision.json" \
  --optimizer=adamw --lr=3e-3 --weight-decay=0 -o "$OUT/train.bf16.mptp"

echo "== train $STEPS steps, --device $DEVICE (batch 16 x 32 characters) =="
"$BIN/mpt-train" "$OUT/train.bf16.mptp" --device "$DEVICE" \
  --input idx="$FIXTURE/train_x.npy" --input targets="$FIXTURE/train_y.npy" \
  --steps "$STEPS" --metrics "$OUT/metrics.bf16.jsonl" --log-every 50 \
  --save "$OUT/checkpoint.bf16"

echo "== loss curve (bf16, every 25 steps) against PyTorch FP32 on the same batches =="
"$BIN/mpt-loss-curve" "$OUT/metrics.bf16.jsonl" "$FIXTURE/reference_loss_fp32.npy" 25
echo "metrics: $OUT/metrics.bf16.jsonl  checkpoint: $OUT/checkpoint.bf16  precision report: $OUT/precision.json"
