#!/bin/sh
# Positions verified per second by `tbverify tables`.
#
# Usage: bench/verify/tables_bench.sh [BUILD_DIR [THREADS [TABLE...]]]
#   BUILD_DIR  a Release build (default: build)
#   THREADS    verifier threads (default: 2)
#   TABLE...   antichess tables to verify (default: three 4-unit tables:
#              pieces 2 against 2 and 3 against 1, pawns with en passant)
# Environment: TBF_BENCH_DB=DIR reuses a database (built if missing) instead
# of a temporary one.
#
# tbgen builds the tables and their sub-tables first (not timed); then
# tbverify checks only the named tables, and the script prints its summary
# and the rate from it.
set -eu

build=${1:-build}
threads=${2:-2}
[ $# -gt 2 ] && shift 2 || set --
[ $# -gt 0 ] || set -- KRvKN QRBvK KPvKP

tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
for exe in "$tbgen" "$tbverify"; do
    [ -x "$exe" ] || { echo "tables_bench: no $exe (build first)" >&2; exit 2; }
done

if [ -n "${TBF_BENCH_DB:-}" ]; then
    db=$TBF_BENCH_DB
else
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/tbf-verify-bench-XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    db=$scratch/db
fi

"$tbgen" gen --variant antichess --db "$db" --quiet "$@"

names=""
for t in "$@"; do names="$names antichess/$t"; done
# shellcheck disable=SC2086  # one argument per table name
out=$("$tbverify" tables --db "$db" --threads "$threads" --json $names)
echo "$out"
echo "$out" | awk -v threads="$threads" '
    /"summary"/ {
        match($0, /"positions":[0-9]+/); p = substr($0, RSTART + 12, RLENGTH - 12)
        match($0, /"seconds":[0-9.]+/); s = substr($0, RSTART + 10, RLENGTH - 10)
        printf "%d positions in %.1f s on %d threads: %.0f positions/s\n", p, s, threads, p / s
    }'
