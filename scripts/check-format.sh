#!/usr/bin/env bash
# Checks that every C, C++ and CUDA source of the checkout (tracked, or new
# and not ignored; fixtures aside) is as
# clang-format 22 writes it under the repository's .clang-format files
# (runtime/ has its own). With --fix, rewrites them instead. The ctest
# `clang-format` runs it; scripts/setup.sh installs clang-format-22.
#   scripts/check-format.sh [--fix]
# Exit status 77 (with a message) when clang-format-22 is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format-22 || true)}
if [[ -z $CLANG_FORMAT ]]; then
  echo "SKIPPED: clang-format-22 not found (Debian: apt-get install clang-format-22, or set CLANG_FORMAT)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "SKIPPED: not a git checkout (the files checked are the tracked ones)"
  exit 77
fi
# Tracked files and new ones git does not ignore (a file not yet added is
# checked too, so it cannot land unformatted).
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  '*.c' '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^test/fixtures/' | sort -u)
if [[ ${1:-} == --fix ]]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "clang-format: ${#bad[@]} of ${#files[@]} files differ from $("$CLANG_FORMAT" --version | head -1):"
  printf '  %s\n' "${bad[@]}"
  echo "run scripts/check-format.sh --fix"
  exit 1
fi
echo "clang-format: all ${#files[@]} files formatted"
