#!/usr/bin/env bash
# Builds MPT (installing what is missing) and runs every test: lit, GoogleTest
# and the ONNX conformance walk, through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
