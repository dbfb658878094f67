#!/usr/bin/env bash
# The full load benchmark of tbserve: every antichess table of at most 3
# units (built once into DB, kept), tbserve on a free loopback port, then
# serve_load with 20,000 requests over 32 connections on positions drawn
# from every table. Prints serve_load's JSON line (requests/s, p50/p99/max
# latency, errors) and exits non-zero on any failed request.
#
#   bash bench/serve/run_load.sh            # BUILD=build DB=bench-serve.db REQUESTS=20000 CONCURRENCY=32
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
db=${DB:-bench-serve.db}
requests=${REQUESTS:-20000}
concurrency=${CONCURRENCY:-32}
threads=${THREADS:-32}
load=$build/tests/serve/serve_load
[ -x "$load" ] || load=$build/bench/serve/serve_load
for tool in "$build/gen/tbgen" "$build/serve/tbserve" "$load"; do
  [ -x "$tool" ] || { echo "run_load.sh: missing $tool (build first: scripts/build.sh $build)" >&2; exit 2; }
done
"$build/gen/tbgen" gen --variant antichess --db "$db" --upto 3 > /dev/null
log=$(mktemp)
out=$(mktemp)
"$build/serve/tbserve" --db "$db" --listen 127.0.0.1:0 --threads "$threads" > "$out" 2> "$log" &
server=$!
trap 'kill $server 2> /dev/null || true; rm -f "$log" "$out"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$out")
[ -n "$port" ] || { echo "run_load.sh: tbserve did not start: $(cat "$log")" >&2; exit 3; }
"$load" --port "$port" --sample-db "$db" --requests "$requests" --concurrency "$concurrency" --max-seconds 300
echo "server log: $(wc -l < "$log") lines"
