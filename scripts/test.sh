#!/usr/bin/env bash
# The whole test suite, as CI runs it: a Release build running every test
# labelled "unit", then an ASan+UBSan build (clang) running the same label, then a
# short run of every libFuzzer target (docs/fuzzing.md) when clang is there.
# Slow tests (deep perft, large builds): scripts/test.sh --slow adds label "slow".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
labels="unit"
# ctest runs two tests at once and most use OpenMP: threads that sleep at a
# barrier instead of spinning leave the cores to the other test.
export OMP_WAIT_POLICY=passive
[ "${1:-}" = "--slow" ] && labels="unit|slow"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest --output-on-failure -j "$(nproc)" -L "$labels")
# -O1 with line tables: half the compile time of -O2 -g, and a sanitizer's
# report still names file and line. clang, which the fuzz step needs anyway:
# it compiles this build in about 0.6 of gcc's time and its tests run in 0.75.
bash scripts/build.sh build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBF_SANITIZE=ON -DTBF_BUILD_BENCH=OFF \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
(cd build-asan && ctest --output-on-failure -j "$(nproc)" -L unit)

# Fuzzing: every target of tests/fuzz for TBF_FUZZ_SECONDS (20) seconds,
# built with clang in build-fuzz/. A crash fails the suite and prints the
# crashing input. The probe target's database is built by the Release tbgen.
fuzz_check=$(mktemp -d)
if command -v clang++ >/dev/null 2>&1 &&
   echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     clang++ -x c++ -fsanitize=fuzzer,address,undefined - -o "$fuzz_check/a.out" 2>/dev/null; then
  rm -rf "$fuzz_check"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTBF_FUZZ=ON -DTBF_BUILD_TESTS=OFF -DTBF_BUILD_BENCH=OFF \
    -DTBF_FUZZ_TBGEN="$PWD/build/gen/tbgen" >/dev/null
  cmake --build build-fuzz --target fuzz -j "$(nproc)"
  (cd build-fuzz && ctest --output-on-failure -j "$(nproc)" -L fuzz)
  cat build-fuzz/tests/fuzz/runs/*/summary
else
  rm -rf "$fuzz_check"
  echo "fuzz step skipped: no clang++ able to link -fsanitize=fuzzer (Debian packages clang, libclang-rt-14-dev)"
fi
