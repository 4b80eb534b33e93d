#!/usr/bin/env bash
# Training parity with float64 PyTorch at the larger model sizes
# (docs/parity.md, "Larger sizes"): one command that
#   1. makes a Python venv with torch, onnx, onnxscript and numpy from PyPI
#      if it has none (PyTorch is a developer dependency, never a CI one),
#   2. builds MPT with scripts/setup.sh,
#   3. generates the large fixtures (scripts/gen_parity_fixtures.py --size
#      large) into a directory outside test/fixtures (never committed),
#      skipping a model whose fixture was written by the same generator,
#   4. runs ZooParityTest on them (MPT_PARITY_FIXTURES + --gtest_filter),
#   5. prints a summary table.
# Idempotent: a second run reuses the venv, the build and the fixtures.
#
#   scripts/parity-large.sh [--out DIR] [--build DIR] [--venv DIR]
#                           [--models "resnet18 gpt2 ..."] [--regenerate]
#
# Defaults: --out build/parity-large, --build build, --venv build/parity-venv
# (an existing venv, e.g. --venv /root/torchenv, is used as is when it
# imports the four packages), every large model. Exit status: nonzero when
# a step or a parity check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

OUT=build/parity-large
BUILD=build
VENV=build/parity-venv
MODELS="resnet18 gpt2 mobilenetv2 vit vit_dynamo mlp_dynamo"
REGEN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --venv) VENV=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --regenerate) REGEN=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "parity-large: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case "$OUT/" in
  "$REPO/test/fixtures/"*) echo "parity-large: --out $OUT is under test/fixtures" >&2; exit 2 ;;
esac
START=$(date +%s)
step() { echo "== parity-large [$(( $(date +%s) - START ))s] $*"; }

# 1. The venv.
PY=$VENV/bin/python
if [ -x "$PY" ] && "$PY" -c 'import torch, onnx, onnxscript, numpy' 2>/dev/null; then
  step "venv $VENV: torch $("$PY" -c 'import torch; print(torch.__version__)') present"
else
  step "venv $VENV: installing torch, onnx, onnxscript, numpy from PyPI (a few minutes)"
  [ -x "$PY" ] || python3 -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q torch==2.15.0 onnx==1.23.2 onnxscript==0.7.2 numpy==2.4.6
fi

# 2. MPT.
step "building MPT (scripts/setup.sh $BUILD)"
scripts/setup.sh "$BUILD"
TESTS=$BUILD/bin/mpt-training-tests
[ -x "$TESTS" ] || { echo "parity-large: $TESTS was not built" >&2; exit 1; }

# 3. Fixtures. A model is regenerated when its stamp (the generator's hash)
# differs or --regenerate is given.
GEN=scripts/gen_parity_fixtures.py
HASH=$(sha256sum "$GEN" scripts/gen_fixtures.py | sha256sum | cut -c1-16)
for m in $MODELS; do
  stamp=$OUT/$m/.generator
  if [ $REGEN -eq 0 ] && [ -f "$OUT/$m/tolerances.txt" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$HASH" ]; then
    step "fixture $m: up to date in $OUT/$m"
    continue
  fi
  step "fixture $m: generating (float64 reference, fp32 and perturbed spreads, autocast)"
  t0=$(date +%s)
  "$PY" "$GEN" --size large --out "$OUT" --only "$m"
  echo "$HASH" > "$stamp"
  step "fixture $m: done in $(( $(date +%s) - t0 ))s"
done

# 4. The checks.
filter=""
for m in $MODELS; do filter="$filter${filter:+:}Models/ZooParity.*/$m"; done
LOG=$OUT/zoo-parity.log
step "running $TESTS --gtest_filter=$filter with MPT_PARITY_FIXTURES=$OUT (log: $LOG)"
set +e
MPT_PARITY_FIXTURES=$OUT "$TESTS" --gtest_filter="$filter" 2>&1 | tee "$LOG" |
  grep --line-buffered -E '^\[ +(RUN|OK|FAILED) +\]|fp32|bf16|fp16'
rc=${PIPESTATUS[0]}
set -e

# 5. The summary.
step "summary (ratio = error / tolerance, passes at <= 1; bounds in parentheses)"
python3 - "$LOG" $MODELS <<'EOF'
import re, sys
log = open(sys.argv[1]).read()
rows = [("model", "loss error (tol)", "worst grad ratio", "worst SGD-update ratio",
         "momentum (tol)", "AdamW (tol)", "bf16 (bound)", "fp16 (bound)", "failed")]
num = r"([-+0-9.eE]+|inf|nan)"
for m in sys.argv[2:]:
    def find(pat):
        r = re.search(r"^" + re.escape(m) + " " + pat, log, re.M)
        return r.groups() if r else None
    sgd = find(r"fp32 SGD step: loss error " + num + r" \(tolerance " + num +
               r"\); worst gradient error / tolerance " + num + r" \((\S*)\); worst update "
               r"error / tolerance " + num + r" \((\S*)\)")
    cells = [m]
    cells += ([f"{float(sgd[0]):.2g} ({float(sgd[1]):.2g})", f"{float(sgd[2]):.2g} ({sgd[3]})",
               f"{float(sgd[4]):.2g} ({sgd[5]})"] if sgd else ["-"] * 3)
    for kind in ("fp32 momentum", "fp32 adamw"):
        t = find(kind + r" trajectory: error " + num + r" \(tolerance " + num + r"\)")
        cells.append(f"{float(t[0]):.2g} ({float(t[1]):.2g})" if t else "-")
    for p in ("bf16", "fp16"):
        t = find(p + r" adamw trajectory: error " + num + r" \(bound " + num + r";.*?\), (\d+) steps skipped")
        cells.append(f"{float(t[0]):.2g} ({float(t[1]):.2g}), {t[2]} skipped" if t else "-")
    failed = re.findall(r"^\[  FAILED  \] Models/ZooParity\.(\w+)/" + re.escape(m) + r"\b.*\(\d+ ms\)",
                        log, re.M)
    cells.append(",".join(failed) or "none")
    rows.append(tuple(cells))
w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
EOF
step "done: tests $( [ "$rc" -eq 0 ] && echo passed || echo FAILED ) (exit $rc)"
exit "$rc"
