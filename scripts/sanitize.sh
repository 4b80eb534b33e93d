#!/usr/bin/env bash
# Builds with gcc's AddressSanitizer and UndefinedBehaviorSanitizer and runs
# the test suites under them (docs/testing.md, "Sanitizers"). Any report
# (a bad access, a leak, undefined behaviour) fails the test it happens in.
#
#   scripts/sanitize.sh [--quick | --runtime-only | --all] [--build DIR] [--jobs N]
#
#   quick     (.ci/run's share, a few minutes on two cores) runtime/ alone
#             without CUDA: mpt-run, mpt-train and the suites that drive
#             them and read files (hostile and careless inputs: truncated,
#             flipped and oversized checkpoints and data, outputs naming
#             inputs, signals, the checked host buffers), the two slowest
#             kill tests left out
#   runtime   runtime/ built alone (no MLIR) and its whole ctest suite: the
#             GoogleTest suites, mpt-run, mpt-train and the plan fuzzer's
#             regression replay
#   compiler  (unless --runtime-only) the project without the runtime's test
#             suites (MPTRT_BUILD_TESTS=OFF; they ran above): the tools and
#             the ctest entries lit, onnx-import-conformance,
#             onnx-numerics-conformance and mpt-onnx-import-fuzz-regressions;
#             with --all, everything and the whole ctest suite (the unit,
#             training and parity tests too; over an hour on two cores)
#
# Defaults: --build build-asan, --jobs 2. Idempotent: a second run rebuilds
# only what changed. Exits nonzero when a build step or a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-asan
JOBS=2
COMPILER=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runtime-only) COMPILER=0; shift ;;
    --quick) COMPILER=-1; shift ;;
    --all) COMPILER=2; shift ;;
    --build) BUILD=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "sanitize: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
START=$(date +%s)
step() { echo "== sanitize [$(( $(date +%s) - START ))s] $*"; }
scripts/setup.sh --packages-only
mkdir -p "$BUILD"

# -O1 keeps the suites fast enough; frame pointers give whole stacks.
# halt_on_error / -fno-sanitize-recover make every finding fatal.
SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g1"
# abort_on_error: a report kills the process with SIGABRT, which lit's `not`
# (expecting a plain failure) does not accept either.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
configure() {  # source-dir build-dir extra-args...
  local src=$1 dir=$2
  shift 2
  [ -f "$dir/build.ninja" ] && return 0
  cmake -G Ninja -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" "$@" \
    -DCMAKE_C_FLAGS_RELEASE="$SAN_FLAGS -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="$SAN_FLAGS -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
}

rc=0
if [ "$COMPILER" -eq -1 ]; then
  step "runtime/ alone, CPU only, with -fsanitize=address,undefined in $BUILD/quick"
  configure runtime "$BUILD/quick" -DMPTRT_ENABLE_CUDA=OFF
  QUICK_TESTS=(mptrt-train-tool-test mptrt-run-tool-test mptrt-trainer-test mptrt-params-test
               mptrt-host-memory-test mptrt-plan-format-test mptrt-tensor-file-test)
  ninja -C "$BUILD/quick" -j "$JOBS" mpt-run mpt-train "${QUICK_TESTS[@]}"
  step "the tools' tests and the file readers' (${QUICK_TESTS[*]})"
  # Everything those executables hold but the two kill loops (about a minute
  # unsanitized; the plain suite runs them).
  ctest --test-dir "$BUILD/quick" --output-on-failure -j "$JOBS" \
    -R '^(MptTrainTest|MptTrainSynthetic|MptRunTest|TrainerTest|Params|HostMemory|PlanFormat|Npy|ReadRegularFile|TensorProto)' \
    -E 'KillDuringCheckpointWrite|KillAtVariedMoments' || rc=1
  step "done: $( [ "$rc" -eq 0 ] && echo "no findings, every test passed" || echo FAILED )"
  exit "$rc"
fi
step "runtime/ alone with -fsanitize=address,undefined in $BUILD/runtime"
configure runtime "$BUILD/runtime"
ninja -C "$BUILD/runtime" -j "$JOBS"
step "runtime tests"
ctest --test-dir "$BUILD/runtime" --output-on-failure -j "$JOBS" || rc=1

if [ "$COMPILER" -eq 1 ]; then
  step "the whole project with -fsanitize=address,undefined in $BUILD/all"
  configure . "$BUILD/all" -DMPTRT_BUILD_TESTS=OFF
  if [ "$COMPILER" -eq 2 ]; then
    ninja -C "$BUILD/all" -j "$JOBS"
    step "compiler tests: all (without lit's plugin test, as below)"
    export LIT_FILTER_OUT=${LIT_FILTER_OUT:-Plugin/mlir-opt-plugin}
    ctest --test-dir "$BUILD/all" --output-on-failure -j "$JOBS" || rc=1
  else
    ninja -C "$BUILD/all" -j "$JOBS" mpt-opt mpt-translate mpt-compile mpt-run mpt-train \
      MPTPlugin mpt-import-conformance mpt-numerics-conformance mpt-onnx-import-fuzz-replay
    step "compiler tests: lit, conformance, importer fuzz regressions"
    # The plugin test loads the instrumented MPTPlugin.so into Debian's
    # uninstrumented mlir-opt, which ASan refuses ("ASan runtime does not
    # come first"); it is no finding.
    export LIT_FILTER_OUT=${LIT_FILTER_OUT:-Plugin/mlir-opt-plugin}
    ctest --test-dir "$BUILD/all" --output-on-failure -j "$JOBS" \
      -R '^(lit|onnx-import-conformance|onnx-numerics-conformance|mpt-onnx-import-fuzz-regressions)$' || rc=1
  fi
fi
step "done: $( [ "$rc" -eq 0 ] && echo "no findings, every test passed" || echo FAILED )"
exit "$rc"
