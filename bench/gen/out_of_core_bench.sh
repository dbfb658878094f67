#!/usr/bin/env bash
# Out-of-core generation benchmark (not run by CI; docs/generation.md,
# "Out-of-core").
#
#   bench/gen/out_of_core_bench.sh [--small] [BUILD_DIR [OUT_DIR]]
#
# Full run (default): builds, under --memory ${MEMORY:-4G}, the 6-unit
# antichess tables ${PAWNLESS:-KQRvKBN} (pawnless, six distinct units) and
# ${PAWNS:-KRPvKBN} (with a pawn), each with every sub-table it needs (the
# 5-unit ones fit the cap and are built in RAM first). A 6-unit table has
# about 1e10 positions: KQRvKBN took 2.5 hours on two cores.
#
# TABLES overrides the two tables (e.g. MEMORY=512M TABLES=QQQQQvP
# SUBTABLES="QQQQQvK QQQQQvQ QQQQQvR QQQQQvB QQQQQvN", the pawn run reported
# in README.md).
#
# --small: the same measurements on ${SMALL:-RBNvK} (5 units), built once in
# RAM and once forced out-of-core under ${SMALL_MEMORY:-16M}, so that the two
# builders' throughput can be compared on one table; the stored checksums
# must agree.
#
# For each capped table it prints wall time, peak RSS (/usr/bin/time -v), the
# work-file bytes read and written and the fraction of predecessor updates
# that crossed chunks (tbgen --json), the I/O the kernel counted for the whole
# process (/proc/PID/io), and then runs tbverify tables --sample 1000000.
# Everything goes to OUT_DIR (default: bench-ooc/ in the current directory);
# a rerun resumes unfinished tables from OUT_DIR/work.
set -euo pipefail
# The whole script is one block, read before it runs: a run takes hours, and
# bash would otherwise read an edited file from the middle.
{

small=0
if [[ ${1:-} == --small ]]; then small=1; shift; fi
build=${1:-build}
out=${2:-bench-ooc}
tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
threads=${THREADS:-$(nproc)}
mkdir -p "$out"

# Runs tbgen under /usr/bin/time -v, samples /proc/PID/io until it exits,
# and prints one summary line per out-of-core table plus the process totals.
measured_gen() {
    local label=$1; shift
    local log=$out/$label
    /usr/bin/time -v -o "$log.time" "$tbgen" gen --variant antichess --threads "$threads" --json "$@" \
        > "$log.json" 2> "$log.err" &
    local time_pid=$!
    local io_read=0 io_written=0
    # The child of /usr/bin/time is tbgen; its counters are read until it exits.
    while kill -0 "$time_pid" 2>/dev/null; do
        local pid
        pid=$(pgrep -P "$time_pid" -n tbgen || true)
        if [[ -n $pid && -r /proc/$pid/io ]]; then
            io_read=$(awk '/^rchar/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo "$io_read")
            io_written=$(awk '/^wchar/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo "$io_written")
        fi
        sleep 1
    done
    wait "$time_pid" || { cat "$log.err" >&2; return 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log.time")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log.time")
    echo "== $label: wall $wall, peak RSS ${rss} KiB, process I/O (last sample) read ${io_read} B, written ${io_written} B"
    grep '"built":true' "$log.json" | sed -E 's/^\{"table":"([^"]*)".*"positions":([0-9]+).*"seconds":([0-9.e+-]+),"out_of_core":(true|false)(.*)\}$/   \1: \2 positions, \3 s, out-of-core \4\5/' \
        | sed -E 's/,"resumed":/ resumed /; s/,"chunks":/, chunks /; s/,"bytes_read":/, work bytes read /; s/,"bytes_written":/, written /; s/,"crossing_fraction":/, crossing /'
}

checksum() {
    "$build/probe/tbprobe" info --db "$1" --json | grep -F "\"table\":\"$2\"" | sed -E 's/.*"checksum":"([0-9a-f]+)".*/\1/'
}

if (( small )); then
    table=${SMALL:-RBNvK}
    measured_gen ram --db "$out/ram.db" "$table"
    measured_gen ooc --db "$out/ooc.db" --memory "${SMALL_MEMORY:-16M}" --work "$out/work" "$table"
    a=$(checksum "$out/ram.db" "$table"); b=$(checksum "$out/ooc.db" "$table")
    echo "checksum in RAM $a, out-of-core $b: $([[ $a == "$b" ]] && echo identical || echo DIFFERENT)"
    "$tbverify" tables --db "$out/ooc.db" "antichess/$table" --sample 1000000
    [[ $a == "$b" ]]
    exit
fi

# SUBTABLES: tables built first, in RAM and without a cap, and not measured:
# sub-tables that would otherwise be built under the cap as well.
if [[ -n ${SUBTABLES:-} ]]; then
    # shellcheck disable=SC2086
    "$tbgen" gen --variant antichess --threads "$threads" --json --db "$out/tables.db" $SUBTABLES > "$out/subtables.json"
fi
for table in ${TABLES:-${PAWNLESS:-KQRvKBN} ${PAWNS:-KRPvKBN}}; do
    measured_gen "$table" --db "$out/tables.db" --memory "${MEMORY:-4G}" --work "$out/work" "$table"
    "$tbverify" tables --db "$out/tables.db" "antichess/$table" --sample 1000000
done
exit
}
