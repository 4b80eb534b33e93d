#!/usr/bin/env bash
# Rewrites (or, with --check, compares) the files that mpt-tblgen generates
# from the records in include/mpt and that are checked in so that runtime/
# builds without LLVM:
#   runtime/include/mptrt/generated/UnaryKinds.def
#       from include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td
#   docs/unary-functions.md (the same records as a table)
#   runtime/include/mptrt/generated/KernelKinds.def (the kernel schema's rows)
#       from the kernel ops of include/mpt/Dialect/MPTRT/IR/MPTRTOps.td
#
#   scripts/regen-generated.sh [--check] [--tblgen PATH] [--mlir-include DIR]
# PATH defaults to build/bin/mpt-tblgen; DIR, where mlir/IR/OpBase.td is, to
# /usr/lib/llvm-22/include. --check exits 1, with a diff, when
# a checked-in file differs from what the records generate (the ctest
# `generated-current`).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
tblgen=build/bin/mpt-tblgen
mlir_include=/usr/lib/llvm-22/include
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --tblgen) tblgen=$2; shift ;;
    --mlir-include) mlir_include=$2; shift ;;
    *) echo "regen-generated: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ ! -x "$tblgen" ]; then
  echo "regen-generated: no mpt-tblgen at '$tblgen' (build it: ninja -C build mpt-tblgen)" >&2
  exit 2
fi

# backend, source record file, generated file
GENERATED=(
  "-gen-unary-kinds include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td runtime/include/mptrt/generated/UnaryKinds.def"
  "-gen-unary-docs include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td docs/unary-functions.md"
  "-gen-kernel-schema include/mpt/Dialect/MPTRT/IR/MPTRTOps.td runtime/include/mptrt/generated/KernelKinds.def"
)
if [ ! -f "$mlir_include/mlir/IR/OpBase.td" ]; then
  echo "regen-generated: no mlir/IR/OpBase.td under '$mlir_include' (pass --mlir-include)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for entry in "${GENERATED[@]}"; do
  read -r backend source target <<< "$entry"
  out="$tmp/$(basename "$target")"
  "$tblgen" "$backend" -I include -I "$mlir_include" "$source" -o "$out"
  if [ "$check" = 1 ]; then
    if ! diff -u "$target" "$out"; then
      echo "regen-generated: $target is not what $source generates; run scripts/regen-generated.sh" >&2
      status=1
    else
      echo "regen-generated: $target is current"
    fi
  elif ! cmp -s "$target" "$out"; then
    cp "$out" "$target"
    echo "regen-generated: rewrote $target"
  else
    echo "regen-generated: $target unchanged"
  fi
done
exit $status
