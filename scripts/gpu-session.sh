#!/usr/bin/env bash
# A GPU session's device calls (docs/runtime.md, "The GPU-host check"): the
# named phases one after another under one deadline, each writing its logs
# under a work folder, and then at most 8 files into $OUT, which is all the
# device tool brings back: summary.txt (every phase's summary and exit
# status), the benchmarks' summary.md and results.json, and logs.tar.gz
# (every log of every phase).
#
#   scripts/gpu-session.sh [PHASE...]     GPU_SESSION_BUDGET=seconds (default 540)
#
# Phases (default: check resnet gpt2), each given the time left:
#   check   scripts/gpu-check.sh with GPU_CHECK_QUICK=1 (build, ctest,
#           kernel and training parity, cuDNN convolutions, NCCL, DLPack)
#   resnet  bench/resnet_train/run_gpu.sh (issue 27's ResNet-50 benchmark)
#   gpt2    bench/gpt2_train/run_gpu.sh (issue 23's GPT-2 benchmark)
# Prepared here first: scripts/gpu-prepare.sh, bench/resnet_train/
# prepare_gpu.sh and bench/gpt2_train/prepare.sh (carry [".gpu"]). A phase
# is skipped when less than its minimum is left. Exit status: 1 when a phase
# that ran failed.
set -uo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
BUDGET=${GPU_SESSION_BUDGET:-540}
WORK=${GPU_SESSION_WORK:-/tmp/gpu-session}
DEST=${OUT:-build-gpu-session}
mkdir -p "$WORK" "$DEST"
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
[ $# -gt 0 ] || set -- check resnet gpt2
for phase in "$@"; do
  case $phase in
    check | resnet | gpt2) ;;
    *) echo "gpu-session: unknown phase '$phase' (check, resnet, gpt2)" >&2; exit 2 ;;
  esac
done
SUMMARY=$WORK/summary.txt
: > "$SUMMARY"
status=0

run_phase() { # NAME MIN_SECONDS COMMAND...
  local name=$1 need=$2
  shift 2
  if [ "$(left)" -lt "$need" ]; then
    echo "== $name: SKIPPED ($(left) s left, needs $need s)" | tee -a "$SUMMARY"
    return
  fi
  echo "== $name ($(left) s left)" | tee -a "$SUMMARY"
  mkdir -p "$WORK/$name"
  local t0=$(date +%s)
  OUT=$WORK/$name timeout "$(( $(left) - 5 ))" "$@" >"$WORK/$name/console.log" 2>&1
  local rc=$?
  echo "   exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$SUMMARY"
  [ $rc -eq 0 ] || status=1
  for f in summary.txt summary.md; do
    [ -f "$WORK/$name/$f" ] && sed 's/^/   /' "$WORK/$name/$f" >>"$SUMMARY"
  done
  [ -f "$WORK/$name/summary.txt" ] || [ -f "$WORK/$name/summary.md" ] ||
    tail -15 "$WORK/$name/console.log" | sed 's/^/   /' >>"$SUMMARY"
}

for phase in "$@"; do
  case $phase in
    check) run_phase check 240 env GPU_CHECK_QUICK=1 scripts/gpu-check.sh ;;
    resnet) run_phase resnet 150 env RESNET_BENCH_BUDGET=$(( $(left) - 15 )) \
              bench/resnet_train/run_gpu.sh ;;
    gpt2) run_phase gpt2 150 env GPT2_BENCH_BUDGET=$(( $(left) - 15 )) \
            bench/gpt2_train/run_gpu.sh ;;
  esac
done

cp "$SUMMARY" "$DEST/summary.txt"
for name in resnet gpt2; do
  [ -f "$WORK/$name/summary.md" ] && cp "$WORK/$name/summary.md" "$DEST/$name-summary.md"
  [ -f "$WORK/$name/results.json" ] && cp "$WORK/$name/results.json" "$DEST/$name-results.json"
done
[ -f "$WORK/gpt2/profile.json" ] && cp "$WORK/gpt2/profile.json" "$DEST/gpt2-profile.json"
tar -czf "$DEST/logs.tar.gz" -C "$WORK" . 2>/dev/null
cat "$SUMMARY"
echo "gpu-session: done in $(( $(date +%s) - START )) s; $DEST has $(ls "$DEST" | wc -l) files"
exit $status
