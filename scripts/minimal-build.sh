#!/usr/bin/env bash
# The smallest build, checked: configures the dialect and passes alone
# (MPT_ENABLE_ONNX=OFF MPT_BUILD_TESTS=OFF MPT_BUILD_RUNTIME=OFF; no protobuf,
# ONNX, GoogleTest, BLAS or CUDA), builds and installs it, then builds
# test/Consumer/compiler against that install and runs it (its matmul must
# come out in bf16), and checks that asking the install for the runtime
# fails with the package file's message. docs/building.md.
#   scripts/minimal-build.sh [build-dir]      (default: build-min)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --packages-only >&2
BUILD=$(realpath -m "${1:-build-min}")
PREFIX=$BUILD/prefix
LAUNCHER=()
# Paths relative to the checkout, so that the objects this build shares with
# scripts/setup.sh's come from ccache (the same flags and sources).
export CCACHE_BASEDIR=$PWD
if command -v ccache > /dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
say() { echo "== minimal-build [${SECONDS}s] $*"; }

say "configure $BUILD"
mkdir -p "$BUILD"
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMPT_ENABLE_ONNX=OFF \
  -DMPT_BUILD_TESTS=OFF -DMPT_BUILD_RUNTIME=OFF "${LAUNCHER[@]}" > "$BUILD/mpt-configure.log" 2>&1 ||
  { cat "$BUILD/mpt-configure.log"; exit 1; }
say "build"
ninja -C "$BUILD" > "$BUILD/mpt-build.log" 2>&1 || { tail -50 "$BUILD/mpt-build.log"; exit 1; }
say "install into $PREFIX"
rm -rf "$PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
for unwanted in MPTRuntimeTargets.cmake libmptrt.a; do
  if find "$PREFIX" -name "$unwanted" | grep -q .; then
    echo "minimal-build: the compiler-only install has $unwanted" >&2
    exit 1
  fi
done

say "test/Consumer/compiler against it"
CONSUMER=$BUILD/consumer-compiler
rm -rf "$CONSUMER"
cmake -G Ninja -S test/Consumer/compiler -B "$CONSUMER" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" > /dev/null
cmake --build "$CONSUMER" > /dev/null
if ! "$CONSUMER/assign-bf16" | grep -q 'tensor<8x16xbf16>'; then
  echo "minimal-build: assign-bf16 did not put the matmul in bf16" >&2
  exit 1
fi
"$PREFIX/bin/mpt-opt" --help > /dev/null

say "find_package(MPT COMPONENTS Runtime) must fail, saying why"
PROBE=$BUILD/probe-runtime
rm -rf "$PROBE"
if out=$(cmake -S test/Consumer/components -B "$PROBE" -DCMAKE_PREFIX_PATH="$PREFIX" \
           -DMPT_COMPONENTS=Runtime 2>&1); then :; fi
if ! grep -q 'probe: found=0 targets=\[\] why=\[this MPT installation has only the compiler' <<< "$out"; then
  echo "minimal-build: unexpected answer for the Runtime component:" >&2
  echo "$out" >&2
  exit 1
fi
say "done: the compiler-only build installs and embeds"
