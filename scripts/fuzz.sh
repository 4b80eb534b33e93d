#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 22 (ASan + UBSan + coverage) and
# runs each for a given time (docs/testing.md, "Fuzzing"):
#   plan-load     runtime/fuzz/PlanLoadFuzzer.cpp: plan bytes -> load ->
#                 prepare (-> run, for small plans); built from runtime/
#                 alone, no MLIR
#   onnx-import   test/Fuzz/ONNXImportFuzzer.cpp: ONNX bytes -> import ->
#                 verify; the compiler built with clang against Debian's
#                 MLIR 22
#
#   scripts/fuzz.sh [--time SECONDS] [--targets "plan-load onnx-import"]
#                   [--build DIR] [--jobs N] [--build-only]
#
# Defaults: --time 60 (per target; any length works: --time 36000 runs each
# for ten hours), both targets, --build build-fuzz, --jobs 2. The corpus
# grows in DIR/corpus/<target> and is reused by the next run; seeds come
# from the fixtures: generated plans (one per kernel kind, and with a
# normal build in build/ the plans it emits for the ONNX node tests), the
# .onnx and .onnxtext fixtures, the ONNX node tests ($MPT_ONNX_NODE_TESTS,
# else the build's, else Debian's libonnx-testdata). A crash, hang,
# leak or out-of-memory input is written to DIR/artifacts/<target>/ and the
# script exits nonzero; add the input under the target's regressions/
# directory with the fix (the replay tests run them in the normal build).
# Each run ends with a line "fuzz <target>: N execs in S s".
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

TIME=60
TARGETS="plan-load onnx-import"
BUILD=build-fuzz
JOBS=2
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "fuzz: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for t in $TARGETS; do
  case "$t" in
    plan-load|onnx-import) ;;
    *) echo "fuzz: unknown target '$t' (plan-load, onnx-import)" >&2; exit 2 ;;
  esac
done
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
START=$(date +%s)
step() { echo "== fuzz [$(( $(date +%s) - START ))s] $*"; }

scripts/setup-fuzz.sh
if [[ " $TARGETS " == *" onnx-import "* ]]; then
  scripts/setup.sh --packages-only
fi

SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -gline-tables-only"
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
configure() {  # source-dir build-dir extra-args...
  local src=$1 dir=$2
  shift 2
  [ -f "$dir/build.ninja" ] && return 0
  cmake -G Ninja -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "${LAUNCHER[@]}" \
    -DCMAKE_C_FLAGS="$SAN_FLAGS" -DCMAKE_CXX_FLAGS="$SAN_FLAGS" \
    -DMPT_ENABLE_FUZZERS=ON "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
}

# Copies the files `find DIR EXPR...` lists into DEST, named by their path.
copy_seeds() {  # dest dir find-expression...
  local dest=$1 dir=$2 f
  shift 2
  mkdir -p "$dest"
  [ -d "$dir" ] || return 0
  while IFS= read -r f; do
    cp -f "$f" "$dest/$(echo "${f#/}" | tr / _)"
  done < <(find "$dir" "$@")
}
# The ONNX node tests (seeds): $MPT_ONNX_NODE_TESTS, else what the build in
# build/ found (its MPT_ONNX_NODE_TESTS), else Debian's libonnx-testdata;
# their seeds are left out, with a message, when none is there.
ONNX_NODE_TESTS=${MPT_ONNX_NODE_TESTS:-}
if [ -z "$ONNX_NODE_TESTS" ] && [ -f build/CMakeCache.txt ]; then
  ONNX_NODE_TESTS=$(sed -n 's/^MPT_ONNX_NODE_TESTS:[A-Z]*=//p' build/CMakeCache.txt)
fi
[ -n "$ONNX_NODE_TESTS" ] || ONNX_NODE_TESTS=/usr/share/libonnx-testdata/data/node
if [ ! -f "$ONNX_NODE_TESTS/test_abs/model.onnx" ]; then
  echo "fuzz: no ONNX node tests in '$ONNX_NODE_TESTS' (set MPT_ONNX_NODE_TESTS); seeding without them" >&2
  ONNX_NODE_TESTS=
fi

# The binaries, and each target's seed directories.
declare -A BIN SEEDS
for t in $TARGETS; do
  case "$t" in
  plan-load)
    step "building mptrt-plan-fuzzer (runtime/ alone, clang-22) in $BUILD/runtime"
    # The CPU backend only: the fuzzer loads and runs plans on the CPU, and
    # the CUDA objects took most of this build's time.
    configure runtime "$BUILD/runtime" -DMPTRT_BUILD_TESTS=OFF -DMPTRT_ENABLE_CUDA=OFF
    ninja -C "$BUILD/runtime" -j "$JOBS" mptrt-plan-fuzzer
    BIN[$t]=$BUILD/runtime/fuzz/mptrt-plan-fuzzer
    SEEDS[$t]="$BUILD/runtime/fuzz/plan-seeds $REPO/runtime/fuzz/regressions/plan-load"
    # With a normal build in build/: the plans the compiler emits for every
    # ONNX node test it supports (about 400 small plans covering most
    # kernel kinds) and those its lit tests wrote.
    if [ -x build/bin/mpt-numerics-conformance ] && [ -n "$ONNX_NODE_TESTS" ]; then
      mkdir -p "$BUILD/seeds/plan-load"
      MPT_DUMP_PLANS_DIR=$BUILD/seeds/plan-load build/bin/mpt-numerics-conformance \
        "$ONNX_NODE_TESTS" test/Conformance/expected-numerics-failures.txt > /dev/null || true
      copy_seeds "$BUILD/seeds/plan-load" build/test -name '*.mptp' -size -256k
      SEEDS[$t]+=" $BUILD/seeds/plan-load"
    fi
    ;;
  onnx-import)
    step "building mpt-onnx-import-fuzzer (the compiler with clang-22, MLIR 22) in $BUILD/compiler"
    configure . "$BUILD/compiler"
    ninja -C "$BUILD/compiler" -j "$JOBS" mpt-onnx-import-fuzzer
    BIN[$t]=$BUILD/compiler/bin/mpt-onnx-import-fuzzer
    # Binary models up to 256 KiB (larger ones make every execution slow),
    # the textual fixtures, and Debian's ONNX node tests.
    copy_seeds "$BUILD/seeds/onnx-import" test -name '*.onnx' -size -256k
    if [ -n "$ONNX_NODE_TESTS" ]; then
      copy_seeds "$BUILD/seeds/onnx-import" "$ONNX_NODE_TESTS" -name model.onnx
    fi
    SEEDS[$t]="$BUILD/seeds/onnx-import $REPO/test/Import/ONNX $REPO/test/Fuzz/regressions/onnx-import"
    ;;
  esac
done
[ "$BUILD_ONLY" -eq 1 ] && { step "built; not running (--build-only)"; exit 0; }

# Each target: -max_total_time bounds the run, -timeout flags a hang
# (one input over 10 s), -rss_limit_mb an out-of-memory, and leaks are
# detected at the end of each input (ASan's LeakSanitizer).
rc=0
for t in $TARGETS; do
  corpus=$BUILD/corpus/$t
  artifacts=$BUILD/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  log=$BUILD/$t.log
  step "running ${BIN[$t]} for $TIME s (corpus $corpus, log $log)"
  t0=$(date +%s)
  set +e
  # shellcheck disable=SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "${BIN[$t]}" -max_total_time="$TIME" -timeout=10 -rss_limit_mb=2560 \
      -max_len=262144 -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$corpus" ${SEEDS[$t]} > "$log" 2>&1
  status=$?
  set -e
  elapsed=$(( $(date +%s) - t0 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  step "fuzz $t: ${execs:-?} execs in $elapsed s, corpus $(ls "$corpus" | wc -l) inputs, exit $status"
  if [ "$status" -ne 0 ]; then
    rc=1
    echo "fuzz $t: FAILED; the report (from $log):" >&2
    grep -E -A30 '^==[0-9]+==ERROR|runtime error:|^==[0-9]+== ERROR|ALARM|out-of-memory|deadly signal' "$log" | head -60 >&2
    ls -l "$artifacts" >&2
  fi
done
exit "$rc"
