#!/usr/bin/env bash
# One bounded libFuzzer run (docs/fuzzing.md):
#   run_fuzz.sh TARGET SECONDS WORK_DIR SEED_DIR [DICT]
# TBF_FUZZ_SECONDS overrides SECONDS. New inputs go to WORK_DIR/corpus (a
# fresh one each run), crashes to WORK_DIR/artifacts; the log is WORK_DIR/log.
# On a failure the log's end and every crashing input (hex, and as text) are
# printed, and the exit status is the target's.
set -uo pipefail
target=$1 seconds=${TBF_FUZZ_SECONDS:-$2} work=$3 seeds=$4 dict=${5:-}
name=$(basename "$target")
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096
      -print_final_stats=1 -artifact_prefix="$work/artifacts/")
[ -n "$dict" ] && args+=(-dict="$dict")
"$target" "${args[@]}" "$work/corpus" "$seeds" >"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1)
echo "$name: ${runs:-?} executions in ${seconds} s, ${cov:-cov: ?} edges, exit $rc" | tee "$work/summary"
if [ "$rc" -ne 0 ]; then
  echo "---- end of $work/log"
  tail -n 60 "$work/log"
  for input in "$work"/artifacts/*; do
    [ -f "$input" ] || continue
    echo "---- crashing input $input ($(stat -c %s "$input") bytes), hex:"
    od -An -tx1 -v "$input"
    echo "---- as text:"
    cat -v "$input"
    echo
    echo "---- reproduce: $target $input"
  done
fi
exit "$rc"
