#!/usr/bin/env bash
# The twelve starts of Four File chess (docs/fourfile.md): the initial
# position with a non-loss strategy for White, then the positions after each
# of White's eleven first moves with a non-loss strategy for Black. Each is
# solved with `tbgen solve`, then checked with `tbverify strategy`; one row
# per start: verdict, entries, explored nodes, solve time, verify time, peak
# RSS (from /usr/bin/time -v).
#
# Resumable: a start whose strategy is stored and verifies is not solved
# again; an interrupted or capped run keeps its checkpoint in DB.solve/ and
# the next run of this script resumes it (same options needed).
#
#   bash scripts/solve_fourfile.sh [START...]      # default: all twelve, in order
#
# Environment: BUILD (build), DB (fourfile-solve.db), MEMORY (12G, graph cap
# per start), THREADS (2), TABLES (a database of Four File tables; unset: no
# leaf tables), NICE (10), LOGS (DB.logs), SOLVE_OPTS (more options of
# `tbgen solve`, e.g. "--no-regions" or "--region-depth 0").
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
db=${DB:-fourfile-solve.db}
memory=${MEMORY:-12G}
threads=${THREADS:-2}
niceness=${NICE:-10}
logs=${LOGS:-$db.logs}
tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
for tool in "$tbgen" "$tbverify" /usr/bin/time; do
  [ -x "$tool" ] || { echo "solve_fourfile.sh: missing $tool (build first: scripts/build.sh)" >&2; exit 2; }
done
mkdir -p "$logs"

# name <TAB> side <TAB> FEN (tests/solve checks these against the move generator)
starts="start	white	r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1
a2a3	black	r1b1k1n1/p1p1p1p1/8/8/8/P7/2P1P1P1/R1B1K1N1 b - - 0 1
a2a4	black	r1b1k1n1/p1p1p1p1/8/8/P7/8/2P1P1P1/R1B1K1N1 b - - 0 1
c2c3	black	r1b1k1n1/p1p1p1p1/8/8/8/2P5/P3P1P1/R1B1K1N1 b - - 0 1
c2c4	black	r1b1k1n1/p1p1p1p1/8/8/2P5/8/P3P1P1/R1B1K1N1 b - - 0 1
e2e3	black	r1b1k1n1/p1p1p1p1/8/8/8/4P3/P1P3P1/R1B1K1N1 b - - 0 1
e2e4	black	r1b1k1n1/p1p1p1p1/8/8/4P3/8/P1P3P1/R1B1K1N1 b - - 0 1
g2g3	black	r1b1k1n1/p1p1p1p1/8/8/8/6P1/P1P1P3/R1B1K1N1 b - - 0 1
g2g4	black	r1b1k1n1/p1p1p1p1/8/8/6P1/8/P1P1P3/R1B1K1N1 b - - 0 1
c1a3	black	r1b1k1n1/p1p1p1p1/8/8/8/B7/P1P1P1P1/R3K1N1 b - - 0 1
c1e3	black	r1b1k1n1/p1p1p1p1/8/8/8/4B3/P1P1P1P1/R3K1N1 b - - 0 1
c1g5	black	r1b1k1n1/p1p1p1p1/8/6B1/8/8/P1P1P1P1/R3K1N1 b - - 0 1"

json_field() {  # json_field FILE KEY: a number or string field of a one-line JSON object
  sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1" | head -n 1
}
rss_mib() {  # peak RSS in MiB from a /usr/bin/time -v log
  awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}' "$1"
}
wall_seconds() {  # elapsed wall time in seconds from a /usr/bin/time -v log
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + t[i]; printf "%.1f", s}' "$1"
}

table_tables=()
[ -n "${TABLES:-}" ] && table_tables=(--tables "$TABLES")
read -r -a solve_opts <<< "${SOLVE_OPTS:-}"
rows=()
status=0
while IFS=$'\t' read -r name side fen; do
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  prefix="ff-$name"
  solve_json=$logs/$name.solve.json
  if "$tbverify" strategy --db "$db" --name "$prefix" --json > "$logs/$name.verify.json" 2> /dev/null; then
    echo "== $name: stored and closed already (remove the strategy to solve it again)"
  else
    echo "== $name: solving ($side, memory $memory, $threads threads); progress in $logs/$name.solve.log"
    nice -n "$niceness" /usr/bin/time -v -o "$logs/$name.solve.time" \
      "$tbgen" solve --variant fourfile --db "$db" --fen "$fen" --side "$side" --name "$prefix" \
        --memory "$memory" --threads "$threads" --replace --json "${table_tables[@]}" "${solve_opts[@]}" \
        > "$solve_json" 2> "$logs/$name.solve.log"
    rc=$?
    if [ $rc -eq 0 ]; then
      nice -n "$niceness" /usr/bin/time -v -o "$logs/$name.verify.time" \
        "$tbverify" strategy --db "$db" --name "$prefix" --json --threads "$threads" \
          > "$logs/$name.verify.json" 2>> "$logs/$name.solve.log" || status=1
    elif [ $rc -ne 1 ]; then
      echo "   tbgen solve failed (exit $rc): $(tail -n 1 "$logs/$name.solve.log")"
      status=1
    fi
  fi
  verdict=$(json_field "$solve_json" verdict)
  closed=$(json_field "$logs/$name.verify.json" closed)
  row="$name | ${verdict:-?} | $(json_field "$solve_json" entries) | $(json_field "$solve_json" nodes)"
  verify_time=-
  [ -f "$logs/$name.verify.time" ] && verify_time="$(wall_seconds "$logs/$name.verify.time") s"
  row+=" | $(json_field "$solve_json" seconds) s | $verify_time"
  row+=" | $( [ -f "$logs/$name.solve.time" ] && rss_mib "$logs/$name.solve.time") MiB | verified: ${closed:-no}"
  rows+=("$row")
  echo "   $row"
  if [ "$verdict" != proven ] || [ "$closed" != true ]; then
    status=1
    open=$(json_field "$solve_json" open)
    [ -n "$open" ] && echo "   not closed: $(json_field "$solve_json" reason); $open open positions; checkpoint $(json_field "$solve_json" checkpoint)"
  fi
done <<< "$starts"

echo
echo "start | verdict | entries | explored nodes | solve time | verify time | peak RSS (solve) | tbverify"
for row in "${rows[@]}"; do echo "$row"; done
exit $status
