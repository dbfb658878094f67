#!/usr/bin/env bash
# Value encodings wdl-dtc/1, wdl-dtc/2 and wdl-dtc/3 (docs/values.md), not run
# in CI ($ENCODINGS picks some, in order):
#  1. every antichess table of at most UPTO units built by this build's tbgen
#     in each encoding, 2 threads, one after the other: wall, user CPU, peak
#     RSS and load average around each run;
#  2. stored bytes of both databases (the `bytes` of `tbprobe info --json`)
#     beside Syzygy's WDL+DTZ for the same set (107 MB for UPTO 4);
#  3. with EXTRA set (e.g. "RBNvKN RBPvKN"), each of those tables built alone
#     into a database of its own, sub-tables read from the database of step 1
#     in the same encoding (tbgen gen --tables-from), sizes and times;
#  4. probes/s of bench/probe/probe_bench (warm and cold) on its own tables,
#     built first in each encoding into the database it reads ($TBF_BENCH_DB:
#     probe_bench builds only what is missing).
# Usage: bench/storage/encoding_bench.sh [BUILD_DIR] [WORK_DIR] [UPTO] [EXTRA]
# Step 4 needs a build with -DTBF_BUILD_BENCH=ON (skipped without probe_bench).
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/tbforge-encoding-bench}
upto=${3:-4}
extra=${4:-}
encodings=${ENCODINGS:-wdl-dtc/1 wdl-dtc/2 wdl-dtc/3}
tbgen="$build/gen/tbgen"
tbprobe="$build/probe/tbprobe"
for f in "$tbgen" "$tbprobe"; do [ -x "$f" ] || { echo "no $f" >&2; exit 2; }; done
rm -rf "$work" && mkdir -p "$work"

timed() {  # timed LABEL COMMAND...
  local label=$1; shift
  echo "$label: load before $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "$label: wall %e s  user %U s  sys %S s  peak RSS %M KiB" "$@"
  echo "$label: load after $(cut -d' ' -f1-3 /proc/loadavg)"
}

sizes() {  # sizes LABEL DB
  "$tbprobe" info --db "$2" --json > "$work/$1.json"
  awk -v l="$1" '
    { if (match($0, /"bytes":[0-9]+/)) b += substr($0, RSTART + 8, RLENGTH - 8)
      if (match($0, /"slots":[0-9]+/)) s += substr($0, RSTART + 8, RLENGTH - 8)
      n++ }
    END { printf "%s: %d tables  %.0f slots  %.2f MB stored  %.4f B/slot\n", l, n, s, b / 1e6, b / s }' "$work/$1.json"
}

for enc in $encodings; do
  tag=${enc//\//-}
  timed "upto$upto $enc" "$tbgen" gen --variant antichess --db "$work/$tag" --threads 2 --quiet \
    --upto "$upto" --encoding "$enc"
done
for enc in $encodings; do sizes "upto$upto-${enc//\//-}" "$work/${enc//\//-}"; done
[ "$upto" = 4 ] && echo "syzygy WDL+DTZ, the same 714 tables: 107 MB"

for table in $extra; do
  for enc in $encodings; do
    tag=${enc//\//-}
    timed "$table $enc" "$tbgen" gen --variant antichess --db "$work/$table-$tag" --threads 2 --quiet \
      --tables-from "$work/$tag" --encoding "$enc" "$table"
    sizes "$table-$tag" "$work/$table-$tag"
  done
done
echo "syzygy WDL+DTZ: RBNvKN 5.7 MB, RBPvKN 26.8 MB"

bench="$build/bench/probe/probe_bench"
if [ -x "$bench" ]; then
  for enc in $encodings; do
    tag=${enc//\//-}
    "$tbgen" gen --variant antichess --db "$work/probe-$tag" --threads 2 --quiet --encoding "$enc" \
      KQvK KPvK KRvKN QBvK
    echo "probes $enc: load before $(cut -d' ' -f1-3 /proc/loadavg)"
    TBF_BENCH_DB="$work/probe-$tag" "$bench" --benchmark_filter='BM_Probe_(Warm|Cold)' \
      --benchmark_min_time=0.3 --benchmark_counters_tabular=true 2>&1 | grep -E '^BM_|^Benchmark'
    echo "probes $enc: load after $(cut -d' ' -f1-3 /proc/loadavg)"
  done
fi
