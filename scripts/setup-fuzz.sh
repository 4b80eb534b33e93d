#!/usr/bin/env bash
# Installs what the fuzz and sanitizer builds need on top of scripts/setup.sh
# (idempotent: only missing packages are installed): clang 22 with its
# compiler-rt (libFuzzer, ASan, UBSan) from Debian bookworm's security
# archive. The normal build does not need them. gcc's own ASan and UBSan
# (scripts/sanitize.sh) come with g++.
#   scripts/setup-fuzz.sh
set -euo pipefail
PACKAGES=(clang-22 libclang-rt-22-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-fuzz: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup-fuzz: clang-22 and libclang-rt-22-dev present"
fi
