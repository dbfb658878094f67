#!/usr/bin/env bash
# Long fuzzing runs (docs/fuzzing.md): every target of tests/fuzz in turn,
# niced, one process at a time, for a number of executions or seconds each;
# then a table of executions, coverage (libFuzzer's edges "cov" and features
# "ft"), corpus size and crashes per target.
#
#   scripts/fuzz-long.sh [--runs N | --seconds S] [TARGET...]
#
# Default: --runs 10000000, every target. The corpus of each target grows in
# build-fuzz/fuzz-long/TARGET/corpus across runs; crashing inputs go to
# build-fuzz/fuzz-long/TARGET/ (crash-*, leak-*, oom-*, timeout-*); the log
# of the last run is build-fuzz/fuzz-long/TARGET/log. A crash ends that
# target's run (the next target still runs) and makes the exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-runs=10000000)
limit_text="10000000 executions"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) limit=(-runs="$2"); limit_text="$2 executions"; shift 2 ;;
    --seconds) limit=(-max_total_time="$2"); limit_text="$2 s"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(fen_rules fen_verify fen_differential uci_move strategy_line probe
     storage_record storage_block storage_group ooc_manifest ooc_frames http_query)
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# The build of scripts/test.sh's fuzz step; the probe database comes from a
# Release tbgen when there is one, else from build-fuzz's own.
tbgen=""
[ -x build/gen/tbgen ] && tbgen="$PWD/build/gen/tbgen"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTBF_FUZZ=ON -DTBF_BUILD_TESTS=OFF -DTBF_BUILD_BENCH=OFF -DTBF_FUZZ_TBGEN="$tbgen" >/dev/null
nice -n 10 cmake --build build-fuzz --target fuzz -j 1
fuzz=build-fuzz/tests/fuzz
nice -n 10 "$fuzz/make_seeds" "$fuzz/seeds" >/dev/null
[ -n "$tbgen" ] || tbgen="$PWD/build-fuzz/gen/tbgen"
bash tests/fuzz/make_probe_db.sh "$tbgen" "$fuzz/probe.db"
export TBF_FUZZ_DB="$PWD/$fuzz/probe.db"

dict_of() {
  case "$1" in
    fen_rules|fen_verify|fen_differential|probe) echo "-dict=tests/fuzz/dict/fen.dict" ;;
    uci_move|strategy_line) echo "-dict=tests/fuzz/dict/uci.dict" ;;
    http_query) echo "-dict=tests/fuzz/dict/http.dict" ;;
  esac
}
seeds_of() {
  case "$1" in
    fen_rules|fen_verify|fen_differential) echo fen ;;
    *) echo "$1" ;;
  esac
}

status=0
rows=()
for t in "${targets[@]}"; do
  dir=build-fuzz/fuzz-long/$t
  mkdir -p "$dir/corpus"
  echo "fuzz-long: $t, $limit_text ($(date '+%H:%M:%S'))"
  start=$(date +%s)
  rc=0
  # shellcheck disable=SC2046
  nice -n 10 "$fuzz/${t}_fuzz" "${limit[@]}" $(dict_of "$t") -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$dir/" \
    "$dir/corpus" "$fuzz/seeds/$(seeds_of "$t")" >"$dir/log" 2>&1 || rc=$?
  seconds=$(( $(date +%s) - start ))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  crashes=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' -o -name 'timeout-*' \) | wc -l)
  rate=0
  [ "$seconds" -gt 0 ] && [ -n "$runs" ] && rate=$(( runs / seconds ))
  rows+=("| $t | ${runs:-?} | $seconds | $rate | ${cov:-?} | ${ft:-?} | $corpus | $crashes |")
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz-long: $t stopped with exit $rc; see $dir/log"
    tail -n 30 "$dir/log"
  fi
done

echo
echo "| target | executions | seconds | exec/s | edges (cov) | features (ft) | corpus | crash files |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
exit "$status"
