#!/usr/bin/env bash
# Prepares what scripts/gpu-check.sh needs on a GPU host, which has the CUDA
# toolkit, CMake and ninja but no MLIR, no GoogleTest and no network:
#
#   .gpu/plans/<model>-<precision>.mptp   training plans compiled here from the
#                                         zoo fixtures (test/fixtures/parity),
#                                         fp32, bf16 and fp16, AdamW (and
#                                         fp8 for the matmul-only models;
#                                         <model>-nhwc-<precision> for the
#                                         CNNs channels last)
#   .gpu/example/charlm-<precision>.mptp the main job's model (bf16, fp8,
#                                         bf16 with bf16-sr masters) for
#                                         scripts/gpu-example.sh
#   .gpu/distributed/gpt2-{plain,dp,zero1}.mptp  the gpt2 parity fixture, bf16
#                                         AdamW, without and with
#                                         --data-parallel and
#                                         --shard-optimizer-state=1, for the
#                                         NCCL check (docs/distributed.md)
#   .gpu/googletest/                      Debian's GoogleTest sources, built
#                                         there with the runtime's tests
#
# .gpu/ is ignored by git; name it in the device tool's `carry`. Run from
# anywhere:  scripts/gpu-prepare.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
OUT=.gpu

[ -x "$BUILD_DIR/bin/mpt-compile" ] || scripts/setup.sh "$BUILD_DIR"
rm -rf "$OUT"
mkdir -p "$OUT/plans"

if [ -d /usr/src/googletest ]; then
  cp -r /usr/src/googletest "$OUT/googletest"
else
  echo "gpu-prepare: /usr/src/googletest missing (apt-get install libgtest-dev)" >&2
  exit 1
fi

# The models of the parity suite, at their committed (small) sizes.
MODELS=(smooth_cnn resnet18 mobilenetv2 gpt2 vit mlp_dynamo)
for model in "${MODELS[@]}"; do
  onnx=test/fixtures/parity/$model/model.onnx
  for precision in fp32 bf16 fp16; do
    flags=(--train --optimizer=adamw --lr=1e-3 --loss-kind=cross_entropy
           --loss-output=logits --label-input=labels --conv-layout=nchw --quiet)
    [ "$precision" = fp32 ] || flags+=(--precision="$precision")
    "$BUILD_DIR/bin/mpt-compile" "$onnx" "${flags[@]}" -o "$OUT/plans/$model-$precision.mptp"
  done
done
# The CNNs with their convolution chains channels last (--conv-layout=nhwc,
# what --target=sm_90 picks): cuDNN's NHWC convolutions and CUDA's
# channels-last batch norms against the CPU (<model>-nhwc-<precision>).
for model in smooth_cnn resnet18 mobilenetv2; do
  for precision in fp32 bf16; do
    flags=(--train --optimizer=adamw --lr=1e-3 --loss-kind=cross_entropy
           --loss-output=logits --label-input=labels --conv-layout=nhwc --quiet)
    [ "$precision" = fp32 ] || flags+=(--precision="$precision")
    "$BUILD_DIR/bin/mpt-compile" "test/fixtures/parity/$model/model.onnx" "${flags[@]}" \
      -o "$OUT/plans/$model-nhwc-$precision.mptp"
  done
done
# FP8 (delayed scaling) where every contraction is a matmul: the scaled
# GEMMs run through cuBLASLt's FP8 path on the GPU.
for model in gpt2 mlp_dynamo; do
  "$BUILD_DIR/bin/mpt-compile" "test/fixtures/parity/$model/model.onnx" --train --optimizer=adamw \
    --lr=1e-3 --loss-kind=cross_entropy --loss-output=logits --label-input=labels --quiet \
    --precision=fp8 -o "$OUT/plans/$model-fp8.mptp" 2>/dev/null
done
# The main job's model, for scripts/gpu-example.sh: the char-level GPT with
# scripts/run-example.sh's settings, in bf16 and in fp8.
mkdir -p "$OUT/example"
for precision in bf16 fp8; do
  "$BUILD_DIR/bin/mpt-compile" test/fixtures/training/charlm/model.onnx --train \
    --precision="$precision" --optimizer=adamw --lr=3e-3 --weight-decay=0 --quiet \
    -o "$OUT/example/charlm-$precision.mptp" 2>/dev/null
done
# bf16 masters with stochastic rounding (--master-weights=bf16-sr).
"$BUILD_DIR/bin/mpt-compile" test/fixtures/training/charlm/model.onnx --train \
  --precision=bf16 --master-weights=bf16-sr --optimizer=adamw --lr=3e-3 --weight-decay=0 \
  --quiet -o "$OUT/example/charlm-bf16sr.mptp" 2>/dev/null
# Data parallelism through NCCL (a world of one on one GPU; more ranks when
# the host has more GPUs and mpirun).
mkdir -p "$OUT/distributed"
dp_flags=(--train --precision=bf16 --optimizer=adamw --lr=1e-3 --loss-kind=cross_entropy
          --loss-output=logits --label-input=labels --quiet)
"$BUILD_DIR/bin/mpt-compile" test/fixtures/parity/gpt2/model.onnx "${dp_flags[@]}" \
  -o "$OUT/distributed/gpt2-plain.mptp"
"$BUILD_DIR/bin/mpt-compile" test/fixtures/parity/gpt2/model.onnx "${dp_flags[@]}" \
  --data-parallel -o "$OUT/distributed/gpt2-dp.mptp"
"$BUILD_DIR/bin/mpt-compile" test/fixtures/parity/gpt2/model.onnx "${dp_flags[@]}" \
  --shard-optimizer-state=1 -o "$OUT/distributed/gpt2-zero1.mptp"
du -sh "$OUT" | sed 's/^/gpu-prepare: /'
echo "gpu-prepare: now run scripts/gpu-check.sh on the GPU host, carrying .gpu"
