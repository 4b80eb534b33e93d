#!/usr/bin/env bash
# The main job: compile the bundled GPT-style example model (with its loss)
# from ONNX to a runtime plan, run its forward pass on the CPU runtime, print
# the outputs, and check them against the reference recorded with ONNX
# Runtime when the fixture was made; then the same in mixed precision (bf16
# contractions, FP32 softmax, norms and loss), with the precision report.
#   scripts/run-example.sh [fixture-name]     (default: gpt)
# The CUDA backend is not written yet, so this runs on the CPU whatever the
# machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >&2
NAME=${1:-gpt}
FIXTURE=test/fixtures/models/$NAME
OUT=build/example/$NAME
mkdir -p "$OUT"

echo "== compile $FIXTURE/model.onnx =="
build/bin/mpt-compile "$FIXTURE/model.onnx" -o "$OUT/model.mptp"

inputs=()
for f in "$FIXTURE"/input_*.npy; do
  name=$(basename "$f" .npy)
  inputs+=(--input "${name#input_}=$f")
done
echo "== forward pass on the CPU runtime (5 warmup runs, 20 timed) =="
build/bin/mpt-run "$OUT/model.mptp" "${inputs[@]}" --output-dir "$OUT/outputs" \
  --print --warmup 5 --repeat 20

echo "== compare with the reference outputs (ONNX Runtime, FP32) =="
build/bin/mpt-model-parity test/fixtures/models "$NAME"

echo "== the same model in mixed precision: mpt-compile --precision=bf16 =="
build/bin/mpt-compile "$FIXTURE/model.onnx" --precision=bf16 \
  --precision-report="$OUT/precision.json" -o "$OUT/model.bf16.mptp"
build/bin/mpt-run "$OUT/model.bf16.mptp" "${inputs[@]}" --output-dir "$OUT/outputs.bf16" \
  --print --warmup 5 --repeat 20
echo "decision report: $OUT/precision.json"
echo "== compare bf16 with the FP32 reference (tolerance: 2^-6 relative and of the output's max) =="
build/bin/mpt-model-parity "--pipeline=assign-precision{mode=bf16}" \
  --rtol=0.015625 --atol=0 --atol-of-max=0.015625 test/fixtures/models "$NAME"
