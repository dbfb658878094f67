#!/usr/bin/env bash
# The whole test suite, as CI runs it: a Release build running every test
# labelled "unit", then an ASan+UBSan build running the same label.
# Slow tests (deep perft, large builds): scripts/test.sh --slow adds label "slow".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
labels="unit"
[ "${1:-}" = "--slow" ] && labels="unit|slow"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest --output-on-failure -j "$(nproc)" -L "$labels")
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBF_SANITIZE=ON -DTBF_BUILD_BENCH=OFF
(cd build-asan && ctest --output-on-failure -j "$(nproc)" -L unit)
