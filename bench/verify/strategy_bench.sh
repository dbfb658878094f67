#!/bin/sh
# Strategy extraction and `tbverify strategy` rates on a fixed strategy: the
# longest win of antichess NNvNN (150,683 entries).
#
# Usage: bench/verify/strategy_bench.sh [BUILD_DIR [THREADS]]
#   BUILD_DIR  a Release build (default: build)
#   THREADS    threads for extraction and verification (default: 2)
# Environment: TBF_BENCH_DB=DIR reuses a database (tables built if missing).
#
# tbgen builds the tables first (not timed), extracts the strategy (timed by
# tbgen itself), then tbverify checks it; the script prints both summaries
# and the entries verified per second.
set -eu

build=${1:-build}
threads=${2:-2}
root="N7/8/8/8/8/8/2n5/4n2N w - - 0 1"

tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
for exe in "$tbgen" "$tbverify"; do
    [ -x "$exe" ] || { echo "strategy_bench: no $exe (build first)" >&2; exit 2; }
done

if [ -n "${TBF_BENCH_DB:-}" ]; then
    db=$TBF_BENCH_DB
else
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/tbf-strategy-bench-XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    db=$scratch/db
fi

"$tbgen" gen --variant antichess --db "$db" --quiet NNvNN
"$tbgen" strategy --db "$db" --variant antichess --fen "$root" --name bench-nnvnn \
    --threads "$threads" --replace --json
out=$("$tbverify" strategy --db "$db" --name bench-nnvnn --threads "$threads" --json)
echo "$out"
echo "$out" | awk -v threads="$threads" '{
    match($0, /"entries":[0-9]+/); e = substr($0, RSTART + 10, RLENGTH - 10)
    match($0, /"seconds":[0-9.]+/); s = substr($0, RSTART + 10, RLENGTH - 10)
    printf "%d entries verified in %.2f s on %d threads: %.0f entries/s\n", e, s, threads, e / s
}'
