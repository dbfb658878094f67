#!/usr/bin/env bash
# Installs the Debian packages tbforge needs, only those still missing, then
# the web explorer's npm packages (web/package-lock.json) into web/node_modules;
# after that, builds and tests need no network.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(build-essential cmake ninja-build pkg-config git
          librocksdb-dev liblz4-dev libzstd-dev libomp-dev libbenchmark-dev doctest-dev
          libcli11-dev nlohmann-json3-dev
          python3-dev pybind11-dev python3-pybind11 python3-pytest
          libcpp-httplib-dev chromium
          snakemake  # workflow/Snakefile and its test
          clang libclang-rt-14-dev)  # the sanitized build and the libFuzzer targets (tests/fuzz)
# node and npm may come from elsewhere (e.g. a newer nodejs); Debian's npm
# package (which brings nodejs) only when either is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi
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
# The explorer's board (chessground), pinned by web/package-lock.json;
# installed again only when web/node_modules does not match the lockfile.
if ! node -e '
  const lock = require("./web/package-lock.json");
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path && require("./web/" + path + "/package.json").version !== entry.version) process.exit(1);
  }' 2>/dev/null; then
  echo "installing the web explorer's npm packages (web/)"
  (cd web && npm ci --no-audit --no-fund)
fi
