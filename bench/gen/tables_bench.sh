#!/usr/bin/env bash
# Whole-job generation benchmark (not run in CI): wall time, peak RSS and
# positions/s for
#   (a) every antichess table with at most 4 units, 2 threads;
#   (b) RBNvKN alone and (c) RBPvKN alone, each with its sub-tables already built.
# Prints a signature of the stored values (XXH64 of every table's checksum) so
# runs can be compared.
# Usage: bench/gen/tables_bench.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/tbforge-bench}
tbgen="$build/gen/tbgen"
tbprobe="$build/probe/tbprobe"
[ -x "$tbgen" ] || { echo "no $tbgen: build first (scripts/build.sh $build)" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
db="$work/db"

run() {  # run LABEL ARGS... : one timed tbgen gen run
  local label=$1; shift
  /usr/bin/time -v -o "$work/time.txt" "$tbgen" gen --variant antichess --db "$db" --threads 2 --quiet --json "$@" \
    > "$work/out.json"
  local wall rss positions
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$work/time.txt")
  positions=$(grep -o '"summary":{[^}]*' "$work/out.json" | grep -o '"positions":[0-9]*' | cut -d: -f2)
  seconds=$(grep -o '"summary":{[^}]*' "$work/out.json" | grep -o '"seconds":[0-9.e+-]*' | cut -d: -f2)
  bytes=$(grep -o '"summary":{[^}]*' "$work/out.json" | grep -o '"bytes":[0-9]*' | cut -d: -f2)
  awk -v l="$label" -v w="$wall" -v r="$rss" -v p="$positions" -v s="$seconds" -v b="$bytes" 'BEGIN {
    printf "%-28s wall %-10s peak RSS %6d MiB  %14.0f positions  %8.2f Mpos/s  %12.0f bytes\n",
           l, w, r, p, (s > 0 ? p / s / 1e6 : 0), b }'
}

run "antichess <=4 units" --upto 4
# RBNvKN converts only into 4-unit tables, all built by now.
run "RBNvKN" RBNvKN
# RBPvKN also promotes into the other RB?vKN tables: build those untimed first.
"$tbgen" gen --variant antichess --db "$db" --threads 2 --quiet RBQvKN RBRvKN RBBvKN RBKvKN >/dev/null
run "RBPvKN" RBPvKN
echo "signature: $("$tbprobe" info --db "$db" --json | grep -o '"checksum":"[0-9a-f]*"' | sha256sum | cut -c1-16)"
