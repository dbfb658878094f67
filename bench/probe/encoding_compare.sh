#!/usr/bin/env bash
# Probe speed of both value encodings, before/after a probe change, on the
# same tables (not run in CI): a base probe_bench and this build's, each on
# a wdl-dtc/1 and a wdl-dtc/2 database of probe_bench's tables (KQvK KPvK
# KRvKN QBvK), built first by TBGEN if missing. Warm and cold probes, one
# thread, with the load average.
# Usage: bench/probe/encoding_compare.sh BASE_PROBE_BENCH TBGEN [BUILD_DIR] [WORK_DIR] [FILTER]
set -euo pipefail
base=${1:?usage: encoding_compare.sh BASE_PROBE_BENCH TBGEN [BUILD_DIR] [WORK_DIR] [FILTER]}
tbgen=${2:?usage: encoding_compare.sh BASE_PROBE_BENCH TBGEN [BUILD_DIR] [WORK_DIR] [FILTER]}
build=${3:-build}
work=${4:-/tmp/tbforge-probe-encodings}
filter=${5:-BM_Probe_(Warm|Cold)/.*threads:1}
new="$build/bench/probe/probe_bench"
[ -x "$base" ] && [ -x "$new" ] && [ -x "$tbgen" ] || { echo "need $base, $new and $tbgen" >&2; exit 2; }
mkdir -p "$work"
for enc in wdl-dtc/1 wdl-dtc/2; do
  db="$work/${enc//\//-}"
  [ -d "$db" ] || "$tbgen" gen --variant antichess --db "$db" --threads 2 --quiet --encoding "$enc" \
    KQvK KPvK KRvKN QBvK
done
for enc in wdl-dtc/1 wdl-dtc/2; do
  for side in base new; do
    bin=$base; [ "$side" = new ] && bin=$new
    echo "$side $enc: load before $(cut -d' ' -f1-3 /proc/loadavg)"
    TBF_BENCH_DB="$work/${enc//\//-}" "$bin" --benchmark_filter="$filter" \
      --benchmark_min_time=0.3 --benchmark_counters_tabular=true 2>&1 | grep -E '^BM_'
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
