#!/usr/bin/env bash
# Installs the Python package (python/) into a virtual environment, built
# against this repository's build:
#   scripts/install-python.sh [build-dir] [venv]   (default: build, build/python/venv)
# It installs the build into PREFIX (default: <build-dir>/python/prefix; set
# MPT_PREFIX to choose), creates the venv if it does not exist, installs
# numpy, scikit-build-core and nanobind there from PyPI, and then
# `pip install ./python` with MPT_PREFIX pointing at the installation. The
# extension finds the compiler's library in PREFIX/lib at run time: keep
# PREFIX where it is. docs/python.md has the details.
#
# Exit status 77 (with a message) when this machine cannot do it: no venv
# module (Debian: python3-venv), no Python headers (python3-dev), or numpy,
# scikit-build-core and nanobind cannot be had from PyPI (no network). The
# ctest python-package reports that as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=$(realpath "${1:-build}")
VENV=$(realpath -m "${2:-$BUILD_DIR/python/venv}")
PREFIX=$(realpath -m "${MPT_PREFIX:-$BUILD_DIR/python/prefix}")
PYTHON=${PYTHON:-python3}

if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  echo "install-python: $BUILD_DIR is not a configured build (run scripts/setup.sh first)" >&2
  exit 1
fi
echo "install-python: installing $BUILD_DIR into $PREFIX"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" > /dev/null

cannot() {
  echo "install-python: cannot install here: $*" >&2
  exit 77
}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
    cannot "$PYTHON has no venv module (Debian: apt-get install python3-venv)"
  echo "install-python: creating $VENV"
  "$PYTHON" -m venv "$VENV" || { rm -rf "$VENV"; cannot "$PYTHON -m venv $VENV failed"; }
fi
"$VENV/bin/python" -c 'import os, sysconfig, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
  cannot "no Python.h for $("$VENV/bin/python" --version) (Debian: apt-get install python3-dev)"
# Build requirements go into the venv too: the package is built without
# isolation, so repeated installs need no download (nor a network).
if ! "$VENV/bin/python" -c 'import numpy, nanobind, scikit_build_core' 2>/dev/null; then
  echo "install-python: installing numpy, scikit-build-core and nanobind from PyPI"
  "$VENV/bin/python" -m pip install -q --timeout 30 --retries 1 numpy \
    "scikit-build-core>=0.10" "nanobind>=1.8" ||
    cannot "pip could not install numpy, scikit-build-core and nanobind (no network to PyPI?)"
fi
# Configure afresh each time (the objects are kept): a cached configuration
# would hide a change in the installed MPTConfig.cmake.
rm -f "$BUILD_DIR/python/wheel-build/CMakeCache.txt"
MPT_PREFIX="$PREFIX" "$VENV/bin/python" -m pip install -q --no-build-isolation \
  --config-settings=build-dir="$BUILD_DIR/python/wheel-build" ./python
echo "install-python: done; try: $VENV/bin/python -c 'import mpt; print(mpt.backends())'"
