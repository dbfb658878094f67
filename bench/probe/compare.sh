#!/usr/bin/env bash
# Probe speed before/after a storage change, back to back (not run in CI):
# runs a base probe_bench and this build's on their own scratch databases
# (each built by its own generator, so each reads its own format), warm and
# cold probes (bench/probe/probe_bench.cpp: "cold" = no decoded-block cache,
# every probe reads, checks and decodes its block), with the load average.
# Usage: bench/probe/compare.sh BASE_PROBE_BENCH [BUILD_DIR] [WORK_DIR] [FILTER]
set -euo pipefail
base=${1:?usage: compare.sh BASE_PROBE_BENCH [BUILD_DIR] [WORK_DIR] [FILTER]}
build=${2:-build}
work=${3:-/tmp/tbforge-probe-compare}
filter=${4:-BM_Probe_(Warm|Cold)}
new="$build/bench/probe/probe_bench"
[ -x "$base" ] && [ -x "$new" ] || { echo "need $base and $new" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
for side in base new; do
  bin=$base; [ "$side" = new ] && bin=$new
  echo "$side: load before $(cut -d' ' -f1-3 /proc/loadavg)"
  TBF_BENCH_DB="$work/$side-db" "$bin" --benchmark_filter="$filter" \
    --benchmark_min_time=0.3 --benchmark_counters_tabular=true 2>&1 | grep -E '^BM_|^Benchmark'
  echo "$side: load after $(cut -d' ' -f1-3 /proc/loadavg)"
done
