#!/usr/bin/env bash
# Two tbgen builds side by side, back to back in one run (not run in CI):
# for each job the previous build, then the new one, each on its own copy of
# the same database of sub-tables, 2 threads. Per run: wall, user and system
# CPU seconds, peak RSS, the load average before it, positions/s and the
# phases of `tbgen gen --json`; then new/previous ratios, and whether every
# table both runs stored has the same checksum.
#
# Usage: bench/gen/before_after_bench.sh BEFORE_TBGEN AFTER_TBGEN WORK_DIR JOB...
#   JOB = NAME:SUBTABLE_DB:TABLE[,TABLE...]   build TABLE... into a copy of
#                                              SUBTABLE_DB (a directory of
#                                              finished sub-tables; "-" for
#                                              an empty database)
#   JOB = NAME:-:--upto,4                      arguments are passed as given
# A database of sub-tables comes from e.g.
#   tbgen gen --variant antichess --db SUBS RBNvN RBNvK KNvBN KNvRN KNvRB
# Lines go to stdout and WORK_DIR/results.txt; per run JSON in WORK_DIR.
set -euo pipefail
before=$1 after=$2 work=$3
shift 3
# The after build's tbprobe: a newer library reads the older build's format too.
tbprobe=$(dirname "$after")/tbprobe
[ -x "$tbprobe" ] || tbprobe=tbprobe
mkdir -p "$work"
results="$work/results.txt"

checksums() {  # checksums DB: "table checksum" lines
  "$tbprobe" info --db "$1" --json | grep -o '"table":"[^"]*"[^}]*"checksum":"[0-9a-f]*"' |
    sed 's/"table":"\([^"]*\)".*"checksum":"\([0-9a-f]*\)"/\1 \2/' | sort
}

run() {  # run LABEL TBGEN SUBS ARGS...: one timed run; prints its figures
  local label=$1 tbgen=$2 subs=$3
  shift 3
  local db="$work/$label.db"
  rm -rf "$db"
  [ "$subs" != "-" ] && cp -r "$subs" "$db"
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %U %S %M" -o "$work/$label.time" \
    "$tbgen" gen --variant antichess --db "$db" --threads 2 --quiet --json "$@" > "$work/$label.json"
  read -r wall user sys rss < "$work/$label.time"
  python3 - "$label" "$wall" "$user" "$sys" "$rss" "$load" "$work/$label.json" <<'PY'
import json, sys
label, wall, user, sys_s, rss, load, path = sys.argv[1:]
built = [json.loads(l) for l in open(path) if l.startswith('{"table"')]
built = [t for t in built if t.get("built")]
positions = sum(t["positions"] for t in built)
phases = {}
for t in built:
    for k, v in t.get("phases", {}).items():
        phases[k] = phases.get(k, 0) + v
print(f"{label:24s} wall {float(wall):8.1f} s  user {float(user):8.1f} s  sys {float(sys_s):6.1f} s  "
      f"RSS {int(rss) / 1024:7.0f} MiB  load {load:>5s}  {positions / float(wall) / 1e6:6.2f} Mpos/s  "
      + " ".join(f"{k} {v:.1f}" for k, v in phases.items()))
PY
}

for job in "$@"; do
  IFS=: read -r name subs tables <<< "$job"
  IFS=, read -r -a args <<< "$tables"
  {
    run "$name.before" "$before" "$subs" "${args[@]}"
    run "$name.after" "$after" "$subs" "${args[@]}"
    python3 - "$work/$name.before.time" "$work/$name.after.time" "$name" <<'PY'
import sys
b = open(sys.argv[1]).read().split()
a = open(sys.argv[2]).read().split()
print(f"{sys.argv[3]:24s} after/before: wall {float(a[0]) / float(b[0]):.2f}  user {float(a[1]) / float(b[1]):.2f}  "
      f"RSS {float(a[3]) / float(b[3]):.2f}")
PY
    if diff <(checksums "$work/$name.before.db") <(checksums "$work/$name.after.db") > /dev/null; then
      echo "$name: all $(checksums "$work/$name.after.db" | wc -l) table checksums equal"
    else
      echo "$name: CHECKSUMS DIFFER"
      diff <(checksums "$work/$name.before.db") <(checksums "$work/$name.after.db") || true
    fi
  } | tee -a "$results"
  rm -rf "$work/$name.before.db" "$work/$name.after.db"
done
