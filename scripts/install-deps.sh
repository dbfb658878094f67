#!/usr/bin/env bash
# Installs the Debian packages tbforge needs, only those still missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config git
          librocksdb-dev liblz4-dev libomp-dev libbenchmark-dev doctest-dev
          libcli11-dev nlohmann-json3-dev
          clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y "${missing[@]}"
fi
