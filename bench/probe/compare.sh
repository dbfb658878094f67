#!/usr/bin/env bash
# Probe speed before/after a storage change, back to back (not run in CI):
# runs a base probe_bench and this build's on their own scratch databases
# (each built by its own generator, so each reads its own format), warm and
# cold probes (bench/probe/probe_bench.cpp: "cold" = no decoded-block cache,
# every probe reads, checks and decodes its block), with the load average.
# ROUNDS=N (default 1) alternates the two N times and ends with each
# benchmark's min / median ns a probe per side and the base ÷ new ratio of
# each round (median, range): on a shared machine one run each says little.
# Extra environment (TBF_BENCH_ENCODING, TBF_BENCH_PAIR_CODING) reaches both.
# Usage: bench/probe/compare.sh BASE_PROBE_BENCH [BUILD_DIR] [WORK_DIR] [FILTER]
set -euo pipefail
base=${1:?usage: compare.sh BASE_PROBE_BENCH [BUILD_DIR] [WORK_DIR] [FILTER]}
build=${2:-build}
work=${3:-/tmp/tbforge-probe-compare}
filter=${4:-BM_Probe_(Warm|Cold)}
rounds=${ROUNDS:-1}
new="$build/bench/probe/probe_bench"
[ -x "$base" ] && [ -x "$new" ] || { echo "need $base and $new" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
times="$work/times.txt"
: > "$times"
for round in $(seq 1 "$rounds"); do
  for side in base new; do
    bin=$base; [ "$side" = new ] && bin=$new
    echo "round $round, $side: load before $(cut -d' ' -f1-3 /proc/loadavg)"
    out="$work/$side-$round.txt"
    TBF_BENCH_DB="$work/$side-db" "$bin" --benchmark_filter="$filter" \
      --benchmark_min_time=0.3 --benchmark_counters_tabular=true 2>&1 | grep -E '^BM_|^Benchmark' > "$out" || true
    cat "$out"
    awk -v s="$side" -v r="$round" '/^BM_/ {print r, s, $1, $2}' "$out" >> "$times"
    echo "round $round, $side: load after $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
[ "$rounds" -gt 1 ] || exit 0
echo "ns a probe (real time), min / median over $rounds rounds; base ÷ new per round: median (range)"
sort -k3,3 -k2,2 -k1,1n "$times" | awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j-1] > a[j]; --j) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  function flush(   i, nb, nn, nr, b, n, r, mb, mn, mr) {
    if (name == "") return
    nb = nn = nr = 0
    for (i in tb) { b[++nb] = tb[i]; if (i in tn) r[++nr] = tb[i] / tn[i] }
    for (i in tn) n[++nn] = tn[i]
    mb = median(b, nb); mn = median(n, nn); mr = median(r, nr)  # each sorts its array
    printf "%-48s base %8.0f / %8.0f   new %8.0f / %8.0f   %.2fx (%.2f-%.2f)\n", name, b[1], mb, n[1], mn, mr, r[1], r[nr]
    delete tb; delete tn
  }
  { if ($3 != name) { flush(); name = $3 } if ($2 == "base") tb[$1] = $4; else tn[$1] = $4 }
  END { flush() }'
