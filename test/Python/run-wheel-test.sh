#!/usr/bin/env bash
# The ctest python-wheel: the wheel is relocatable. Builds a wheel of
# python/ against a fresh installation of this build, deletes that
# installation and the wheel's build folder, installs the wheel into a new
# venv in another folder and trains the mlp_dynamo fixture for 3 steps
# from there; checks that the extension loaded the compiler's C API from
# the venv, not from a prefix. Skipped, with the reason, where the
# python-package venv (build requirements) is missing or PyPI (numpy for
# the new venv) cannot be reached.
#   run-wheel-test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
SOURCE_DIR=$(realpath "$1") BUILD_DIR=$(realpath "$2")
BUILD_VENV=$BUILD_DIR/python/venv
WORK=$BUILD_DIR/python/wheel-test
if ! "$BUILD_VENV/bin/python" -c 'import numpy, nanobind, scikit_build_core' 2>/dev/null; then
  echo "SKIPPED: $BUILD_VENV has no build requirements (the python-package test makes it)"
  exit 0
fi
rm -rf "$WORK"
mkdir -p "$WORK"
echo "python-wheel: installing the build into $WORK/prefix"
cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" > /dev/null || exit 1
echo "python-wheel: building the wheel"
MPT_PREFIX="$WORK/prefix" "$BUILD_VENV/bin/python" -m pip wheel -q --no-build-isolation \
  --no-deps --config-settings=build-dir="$WORK/wheel-build" -w "$WORK/dist" \
  "$SOURCE_DIR/python" || exit 1
WHEEL=$(ls "$WORK"/dist/mpt-*.whl) || exit 1
echo "python-wheel: built $(basename "$WHEEL"); deleting the prefix and the build folder"
rm -rf "$WORK/prefix" "$WORK/wheel-build"
python3 -m venv "$WORK/elsewhere/venv" || exit 1
if ! "$WORK/elsewhere/venv/bin/python" -m pip install -q --timeout 30 --retries 1 numpy; then
  echo "SKIPPED: pip could not install numpy into the new venv (no network to PyPI?)"
  exit 0
fi
"$WORK/elsewhere/venv/bin/python" -m pip install -q --no-deps "$WHEEL" || exit 1
cd "$WORK/elsewhere" || exit 1
exec "$WORK/elsewhere/venv/bin/python" - "$SOURCE_DIR/test/fixtures/parity/mlp_dynamo" \
  "$WORK/elsewhere/venv" "$WORK/prefix" <<'PY'
import os, sys
import numpy as np
import mpt

fixture, venv, prefix = sys.argv[1:4]
assert os.path.realpath(mpt.__file__).startswith(os.path.realpath(venv)), mpt.__file__
plan = mpt.compile(os.path.join(fixture, "model.onnx"), backend="cpu", precision="bf16",
                   optimizer="adamw", lr=0.01, loss_kind="cross_entropy",
                   loss_output="logits", label_input="labels")
x = np.load(os.path.join(fixture, "input_x.npy"))
y = np.load(os.path.join(fixture, "labels.npy"))
losses = [plan.train_step(x=x, labels=y).loss for _ in range(3)]
print("python-wheel: losses from the relocated package:", losses)
assert all(np.isfinite(losses)) and losses[2] < losses[1] < losses[0], losses
maps = open("/proc/self/maps").read()
capi = sorted({line.split()[-1] for line in maps.splitlines()
               if "libMPTCAPICompile" in line})
print("python-wheel: libMPTCAPICompile loaded from", capi)
assert capi and all(p.startswith(os.path.realpath(venv)) for p in capi), capi
assert prefix not in maps and not os.path.exists(prefix)
print("python-wheel: passed")
PY
