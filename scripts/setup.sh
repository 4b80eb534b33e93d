#!/usr/bin/env bash
# Installs every dependency MPT needs on Debian bookworm (idempotent: only
# missing packages are installed), then configures and builds with Ninja.
#   scripts/setup.sh [build-dir]        (default: build)
#   scripts/setup.sh --packages-only    (install, do not build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

PACKAGES=(
  cmake ninja-build g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libzstd-dev  # LLVM's static Support library links it (tools/mpt-tblgen)
  libonnx-dev libonnx-testdata protobuf-compiler libprotobuf-dev
  libgtest-dev libopenblas-dev
  libdnnl-dev  # the CPU backend's fast numerics mode (oneDNN; MPTRT_ENABLE_DNNL)
  python3-venv python3-dev  # the Python package's test (a venv, the extension's headers)
  clang-format-22  # the clang-format test (scripts/check-format.sh)
  ccache  # shared by the builds of one checkout (build, build-min, build-asan)
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
[ "$BUILD_DIR" = --packages-only ] && exit 0

# ccache with paths taken relative to the checkout: the other builds of it
# (scripts/minimal-build.sh's build-min, scripts/sanitize.sh) then reuse the
# objects they share with this one instead of compiling them again.
export CCACHE_BASEDIR=$PWD
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  LAUNCHER=()
  if command -v ccache > /dev/null; then
    LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
              -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}"
fi
ninja -C "$BUILD_DIR"
