#!/usr/bin/env bash
# The ctest python-torch: python/tests/test_torch.py in the venv that the
# python-package test made. Skipped when there is none or it lacks torch.
#   run-torch-tests.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
SOURCE_DIR=$1 BUILD_DIR=$2
VENV=$BUILD_DIR/python/venv
if ! "$VENV/bin/python" -c 'import mpt' 2>/dev/null; then
  echo "SKIPPED: the mpt package is not installed in $VENV (the python-package test installs it)"
  exit 0
fi
cd "$BUILD_DIR" || exit 1
exec "$VENV/bin/python" "$SOURCE_DIR/python/tests/test_torch.py" \
  --work "$BUILD_DIR/python/test-work-torch"
