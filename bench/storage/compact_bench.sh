#!/usr/bin/env bash
# Format 2 (zstd) against format 1 (LZ4), back to back on the same machine
# (not run in CI): every antichess table with at most 4 units built by a
# format-1 tbgen and by this build's, 2 threads each; prints wall, user CPU,
# peak RSS and the load average around each run, the stored bytes of both
# databases (the `bytes` of `tbprobe info --json`, and the total with index
# metadata), and each database's value signature: the hash of every table's
# values checksum (docs/storage-format.md section 5), which covers the values
# in slot order and not their encoding, so the two signatures must be equal.
# Usage: bench/storage/compact_bench.sh BASE_BIN_DIR [BUILD_DIR] [WORK_DIR] [UPTO]
#   BASE_BIN_DIR holds the format-1 tbgen and tbprobe.
set -euo pipefail
base=${1:?usage: compact_bench.sh BASE_BIN_DIR [BUILD_DIR] [WORK_DIR] [UPTO]}
build=${2:-build}
work=${3:-/tmp/tbforge-compact-bench}
upto=${4:-4}
for f in "$base/tbgen" "$base/tbprobe" "$build/gen/tbgen" "$build/probe/tbprobe"; do
  [ -x "$f" ] || { echo "no $f" >&2; exit 2; }
done
rm -rf "$work" && mkdir -p "$work"

run() {  # run LABEL TBGEN DB
  echo "$1: load before $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "$1: wall %e s  user %U s  sys %S s  peak RSS %M KiB" \
    "$2" gen --variant antichess --db "$3" --threads 2 --quiet --upto "$upto"
  echo "$1: load after $(cut -d' ' -f1-3 /proc/loadavg)"
}

sizes() {  # sizes LABEL TBPROBE DB
  "$2" info --db "$3" --json > "$work/$1.json"
  awk -v l="$1" '
    { if (match($0, /"bytes":[0-9]+/)) b += substr($0, RSTART + 8, RLENGTH - 8)
      if (match($0, /"index_metadata":[0-9]+/)) m += substr($0, RSTART + 17, RLENGTH - 17)
      if (match($0, /"values":[0-9]+/)) v += substr($0, RSTART + 9, RLENGTH - 9)
      if (match($0, /"slots":[0-9]+/)) s += substr($0, RSTART + 8, RLENGTH - 8)
      n++ }
    END { printf "%s: %d tables  %.0f slots  %.1f MB stored", l, n, s, b / 1e6
          if (v > 0) printf "  (values %.1f MB, index metadata %.2f MB, %.4f B/position)", v / 1e6, m / 1e6, (v + m) / s
          printf "\n" }' "$work/$1.json"
  echo "$1: signature $(grep -o '"checksum":"[0-9a-f]*"' "$work/$1.json" | sha256sum | cut -c1-16)"
}

run base "$base/tbgen" "$work/base"
run new "$build/gen/tbgen" "$work/new"
sizes base "$base/tbprobe" "$work/base"
sizes new "$build/probe/tbprobe" "$work/new"
