#!/usr/bin/env bash
# The main job, for now: import the bundled GPT-style example model (with its
# loss) and print its mpt IR and an op summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >&2
MODEL=${1:-test/fixtures/models/gpt/model.onnx}
build/bin/mpt-translate --import-onnx "$MODEL" -o build/example.mlir
cat build/example.mlir
echo "== op summary for $MODEL =="
build/bin/mpt-opt build/example.mlir --print-op-stats -o /dev/null
