#!/usr/bin/env bash
# Builds mpt-train for sm_90 (the runtime alone: CUDA, cuDNN's header when
# found, no OpenBLAS, no tests) in build-gpu-bench/ and copies it to
# DEST/bin, with DEST/bin/build.txt saying how; for the GPU benchmarks'
# prepare scripts (bench/gpt2_train, bench/resnet_train). The GPU host's
# run_gpu.sh builds there instead when the carried binary does not start.
#
#   bench/common/build-mpt-train.sh DEST
set -euo pipefail
DEST=$1
start=$(date +%s)
cmake -G Ninja -S runtime -B build-gpu-bench -DCMAKE_BUILD_TYPE=Release -DMPTRT_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPTRT_BUILD_TESTS=OFF -DMPTRT_REQUIRE_BLAS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_BLAS=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON >/dev/null
ninja -C build-gpu-bench mpt-train
mkdir -p "$DEST/bin"
cp build-gpu-bench/bin/mpt-train "$DEST/bin/"
echo "built here by prepare in $(( $(date +%s) - start )) s (ninja mpt-train, sm_90, $(nproc) cores; incremental when build-gpu-bench/ existed)" \
  > "$DEST/bin/build.txt"
echo "prepare: mpt-train $(cat "$DEST/bin/build.txt")"
