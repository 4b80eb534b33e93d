#!/usr/bin/env bash
# Compares the CPU kernels' outputs of this tree with those of another
# commit, bit for bit (scripts/kernel-bits/dump.cpp): the check that a
# reorganisation of runtime/src/kernels keeps today's results.
#   scripts/kernel-bits.sh [BASE]     (default: HEAD~1)
# Builds the base's runtime (CPU only) in a temporary worktree, and this
# tree's runtime in build-kernel-bits/, then runs the same dump against
# both. Exit 0 when identical, 1 when any byte differs. About 4 minutes on
# two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD~1}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$base" >/dev/null
build() { # source-root build-dir
  cmake -G Ninja -S "$1/runtime" -B "$2" -DCMAKE_BUILD_TYPE=Release -DMPTRT_ENABLE_CUDA=OFF \
    -DMPTRT_BUILD_TESTS=OFF >/dev/null
  ninja -C "$2" mptrt >/dev/null
}
dump() { # source-root build-dir output
  "${CXX:-c++}" -std=c++17 -O2 -I"$1/runtime/include" -I"$1/runtime/src" -I"$1/runtime/test" \
    scripts/kernel-bits/dump.cpp "$2/src/libmptrt.a" -lopenblas -lgtest -lpthread -o "$3.bin-dump"
  OUT="$3" "$3.bin-dump"
}
echo "kernel-bits: building $base's runtime"
build "$work/base" "$work/base-build"
echo "kernel-bits: building this tree's runtime"
build "$PWD" build-kernel-bits
dump "$work/base" "$work/base-build" "$work/base.out"
dump "$PWD" build-kernel-bits "$work/this.out"
if cmp -s "$work/base.out" "$work/this.out"; then
  echo "kernel-bits: identical to $base ($(stat -c %s "$work/this.out") bytes of outputs)"
else
  cmp "$work/base.out" "$work/this.out" | head -1
  echo "kernel-bits: outputs differ from $base"
  exit 1
fi
