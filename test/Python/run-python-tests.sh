#!/usr/bin/env bash
# The ctest python-package: installs the Python package into a venv under
# the build (scripts/install-python.sh; reused between runs) and runs
# python/tests/test_mpt.py. Skipped, with the reason, where the machine has
# no venv module, no Python headers or no way to PyPI.
#   run-python-tests.sh SOURCE_DIR BUILD_DIR PYTHON
set -uo pipefail
SOURCE_DIR=$1 BUILD_DIR=$2 PYTHON=$3
VENV=$BUILD_DIR/python/venv
PYTHON="$PYTHON" "$SOURCE_DIR/scripts/install-python.sh" "$BUILD_DIR" "$VENV"
rc=$?
if [ $rc -eq 77 ]; then
  echo "SKIPPED: the Python package cannot be installed here (see above)"
  exit 0
elif [ $rc -ne 0 ]; then
  echo "python-package: scripts/install-python.sh failed ($rc)"
  exit 1
fi
cd "$BUILD_DIR" || exit 1
exec "$VENV/bin/python" "$SOURCE_DIR/python/tests/test_mpt.py" \
  --mpt-train "$BUILD_DIR/bin/mpt-train" \
  --fixture "$SOURCE_DIR/test/fixtures/parity/mlp_dynamo" \
  --work "$BUILD_DIR/python/test-work"
