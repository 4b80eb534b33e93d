#!/usr/bin/env bash
# The ctest python-wheel: the wheel is relocatable, built either way
# `pip wheel ./python` can build it:
#  - "prefix": against a fresh installation of this build (MPT_PREFIX);
#  - "self": with no installed MPT, so that pip builds MPT itself. Its build
#    folder is BUILD_DIR's sibling BUILD_DIR-wheel, configured with BUILD_DIR's
#    compilers and ccache (scripts/setup.sh's CCACHE_BASEDIR), so that its
#    objects are BUILD_DIR's from the cache and the test takes seconds, not a
#    whole compile.
# Then it deletes the installation and the wheel's build folder, installs
# the wheel into a new venv in another folder and trains the mlp_dynamo
# fixture for 3 steps from there, checking that the extension loaded the
# compiler's C API from that venv and that nothing was loaded from the
# deleted folders. Skipped, with the reason, where the python-package venv
# (build requirements) is missing or PyPI (numpy for the new venv) cannot
# be reached.
#   run-wheel-test.sh SOURCE_DIR BUILD_DIR [prefix|self]...   (default: both)
set -uo pipefail
SOURCE_DIR=$(realpath "$1") BUILD_DIR=$(realpath "$2")
shift 2
MODES=("$@")
[ ${#MODES[@]} -eq 0 ] && MODES=(prefix self)
BUILD_VENV=$BUILD_DIR/python/venv
WORK=$BUILD_DIR/python/wheel-test
if ! "$BUILD_VENV/bin/python" -c 'import numpy, nanobind, scikit_build_core' 2>/dev/null; then
  echo "SKIPPED: $BUILD_VENV has no build requirements (the python-package test makes it)"
  exit 0
fi
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt"; }

build_wheel() { # MODE DIST -> the wheel's build folder deleted afterwards
  local mode=$1 dist=$2 wheel_build
  if [ "$mode" = prefix ]; then
    wheel_build=$WORK/wheel-build
    echo "python-wheel[prefix]: installing the build into $WORK/prefix"
    cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" > /dev/null || return 1
    echo "python-wheel[prefix]: building the wheel against it"
    MPT_PREFIX="$WORK/prefix" "$BUILD_VENV/bin/python" -m pip wheel -q --no-build-isolation \
      --no-deps --config-settings=build-dir="$wheel_build" -w "$dist" \
      "$SOURCE_DIR/python" || return 1
    echo "python-wheel[prefix]: deleting the prefix and the build folder"
    rm -rf "$WORK/prefix" "$wheel_build"
  else
    wheel_build=$BUILD_DIR-wheel
    local defines=() var value
    for var in CMAKE_CXX_COMPILER CMAKE_C_COMPILER CMAKE_CXX_COMPILER_LAUNCHER \
               CMAKE_C_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER; do
      value=$(cache_value "$var")
      [ -n "$value" ] && defines+=(--config-settings=cmake.define.$var="$value")
    done
    rm -rf "$wheel_build"
    echo "python-wheel[self]: building MPT and the wheel in $wheel_build (no MPT_PREFIX)"
    (unset MPT_PREFIX; export CCACHE_BASEDIR=$SOURCE_DIR
     "$BUILD_VENV/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
       --config-settings=build-dir="$wheel_build" "${defines[@]}" -w "$dist" \
       "$SOURCE_DIR/python") || return 1
    [ -n "$(find "$wheel_build" -name libMPTCAPICompile.so)" ] ||
      { echo "python-wheel[self]: $wheel_build did not build MPT's C API"; return 1; }
    echo "python-wheel[self]: deleting the build folder"
    rm -rf "$wheel_build"
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
for mode in "${MODES[@]}"; do
  dist=$WORK/dist-$mode
  build_wheel "$mode" "$dist" || { echo "python-wheel[$mode]: the wheel did not build"; exit 1; }
  WHEEL=$(ls "$dist"/mpt-*.whl) || exit 1
  echo "python-wheel[$mode]: built $(basename "$WHEEL")"
  venv=$WORK/elsewhere-$mode/venv
  python3 -m venv "$venv" || exit 1
  if ! "$venv/bin/python" -m pip install -q --timeout 30 --retries 1 numpy; then
    echo "SKIPPED: pip could not install numpy into the new venv (no network to PyPI?)"
    exit 0
  fi
  "$venv/bin/python" -m pip install -q --no-deps "$WHEEL" || exit 1
  (cd "$WORK/elsewhere-$mode" &&
   "$venv/bin/python" - "$SOURCE_DIR/test/fixtures/parity/mlp_dynamo" "$venv" \
     "$WORK/prefix" "$BUILD_DIR-wheel" "$mode" <<'PY'
import os, sys
import numpy as np
import mpt

fixture, venv, *deleted, mode = sys.argv[1:]
tag = f"python-wheel[{mode}]:"
assert os.path.realpath(mpt.__file__).startswith(os.path.realpath(venv)), mpt.__file__
plan = mpt.compile(os.path.join(fixture, "model.onnx"), backend="cpu", precision="bf16",
                   optimizer="adamw", lr=0.01, loss_kind="cross_entropy",
                   loss_output="logits", label_input="labels")
x = np.load(os.path.join(fixture, "input_x.npy"))
y = np.load(os.path.join(fixture, "labels.npy"))
losses = [plan.train_step(x=x, labels=y).loss for _ in range(3)]
print(tag, "losses from the relocated package:", losses)
assert all(np.isfinite(losses)) and losses[2] < losses[1] < losses[0], losses
maps = open("/proc/self/maps").read()
capi = sorted({line.split()[-1] for line in maps.splitlines()
               if "libMPTCAPICompile" in line})
print(tag, "libMPTCAPICompile loaded from", capi)
assert capi and all(p.startswith(os.path.realpath(venv)) for p in capi), capi
for folder in deleted:
    assert folder not in maps and not os.path.exists(folder), folder
print(tag, "passed")
PY
  ) || exit 1
done
echo "python-wheel: passed (${MODES[*]})"
