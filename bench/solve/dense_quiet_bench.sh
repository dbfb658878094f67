#!/usr/bin/env bash
# The dense quiet game against the hash-table one, as whole `tbgen solve`
# runs from two starts with all eight pawns (docs/fourfile.md, "Dense quiet
# games"): the rooks' start, whose quiet game is larger than any budget a
# hash table can hold (the root alone, --max-nodes 2), and the knights'
# start, which the search closes either way. Prints one line per run
# (verdict, positions, seconds, peak RSS), then verifies the stored
# strategies.
#
#   bash bench/solve/dense_quiet_bench.sh [BUILD_DIR] [THREADS]
set -euo pipefail

build=${1:-build}
threads=${2:-2}
tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rooks="r3k3/p1p1p1p1/8/8/8/8/P1P1P1P1/R3K3 w - - 0 1"
knights="4k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/4K1N1 w - - 0 1"

run() {  # label db name fen extra-options...
    local label=$1 db=$2 name=$3 fen=$4
    shift 4
    set +e
    "$tbgen" solve --variant fourfile --db "$work/$db" --fen "$fen" --side white --name "$name" \
        --threads "$threads" --quiet --json "$@" > "$work/$name.json"
    set -e
    python3 - "$label" "$work/$name.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[2]))
print(f"{sys.argv[1]:<34} {d['verdict']:<11} entries {d['entries']:>7}  nodes {d['nodes']:>4}  "
      f"hash games {d['quiet_explorations']:>3} ({d['quiet_positions']:>9} positions, {d['quiet_cut']} cut)  "
      f"dense {d['quiet_dense_structures']:>6} structures ({d['quiet_dense_positions']:>10} positions)  "
      f"{d['seconds']:7.1f} s  peak RSS {d['peak_rss_bytes'] / 2**20:6.0f} MiB")
EOF
}

run "rooks' start, hash only (5M)" rooks-hash rooks-hash "$rooks" --max-nodes 2 --quiet-budget 5000000 --no-dense
run "rooks' start, dense" rooks-dense rooks-dense "$rooks" --max-nodes 2 --quiet-budget 1000
run "knights' start, hash only" knights-hash knights-hash "$knights" --no-dense
run "knights' start, dense" knights-dense knights-dense "$knights"
for name in knights-hash knights-dense; do
    "$tbverify" strategy --db "$work/$name" --name "$name"
done
