#!/usr/bin/env bash
# tbforge's generator and Syzygy's giveaway generator on the same machine,
# back to back, 2 threads each (not run in CI): the retrograde targets measured
# against Syzygy on the same machine rather than taken from another.
#
#   1. Syzygy: every giveaway table of at most 4 units (WDL and DTZ files,
#      compression included), in an order where each table's sub-tables
#      come first; tbforge: `tbgen gen --upto 4`.
#   2. Syzygy: the five 5-unit tables RBPvKN promotes into, in full.
#   3. Syzygy's retrograde alone (`-g`: no compression, nothing saved) for
#      QRBNvK, KRBvKN, RBNvKN and RBPvKN; tbforge builds each of them alone
#      (generation and storing) on a copy of its own sub-tables.
#
# Usage: bench/gen/syzygy_side_by_side.sh GTB_DIR TBGEN WORK_DIR
#   GTB_DIR  holds gtbgen and gtbgenp built from Syzygy's generator
#            (github.com/syzygy1/tb, `make giveaway` in its src/)
#   TBGEN    this tree's tbgen (tbprobe beside it)
# Each finished step leaves a line in WORK_DIR/results.txt and is skipped
# when the script runs again, so an interrupted run resumes.
set -euo pipefail
gtb=$(cd "$1" && pwd) tbgen=$(realpath "$2") work=$3
mkdir -p "$work/syzygy"
work=$(cd "$work" && pwd)
results="$work/results.txt"
touch "$results"

done_step() { grep -q "^$1 " "$results"; }
timed() {  # timed LABEL DIR COMMAND...: runs COMMAND in DIR, appends its line
  local label=$1 dir=$2
  shift 2
  done_step "$label" && return 0
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$dir" && GTBPATH="$work/syzygy" /usr/bin/time -f "%e %U %S %M" -o "$work/$label.time" "$@" \
     > "$work/$label.out" 2> "$work/$label.err")
  read -r wall user sys rss < "$work/$label.time"
  printf '%s wall %.1f s user %.1f s sys %.1f s peak RSS %d MiB load %s\n' \
    "$label" "$wall" "$user" "$sys" $((rss / 1024)) "$load" | tee -a "$results"
}

# Syzygy's ≤4 set: names as its probing code looks them up (units in the
# order KQRBNP, the side with more units first, equal sides by that order),
# fewer units first, then fewer pawns (a pawn table promotes into tables of
# as many units with a pawn less). A table whose DTZ step stops is made
# again with its WDL file alone (sub-tables need only that) and listed.
cat > "$work/syzygy_upto4.py" <<'PY'
import itertools, os, subprocess, sys
gtb = sys.argv[1]
order = "KQRBNP"
rank = lambda s: [order.index(c) for c in s]
names = set()
for n in (2, 3, 4):
    for a in range(n - 1, 0, -1):
        b = n - a
        if b > a:
            continue
        for w in itertools.combinations_with_replacement(order, a):
            for k in itertools.combinations_with_replacement(order, b):
                if a == b and rank(w) > rank(k):
                    continue
                names.add((n, (w + k).count("P"), "".join(w) + "v" + "".join(k)))
for n, pawns, name in sorted(names):
    if os.path.exists(name + ".gtbw"):
        continue
    exe = os.path.join(gtb, "gtbgenp" if pawns else "gtbgen")
    if subprocess.run([exe, "-t", "2", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        print("wdl only:", name, file=sys.stderr)
        subprocess.run([exe, "-t", "2", "-w", name], stdout=subprocess.DEVNULL, check=True)
print(len(names), "tables")
PY
timed syzygy.upto4 "$work/syzygy" python3 "$work/syzygy_upto4.py" "$gtb"
timed tbforge.upto4 "$work" "$tbgen" gen --variant antichess --db "$work/upto4.db" --upto 4 --threads 2 --quiet

# RBPvKN's promotions, in full (Syzygy's names, then tbforge's).
for t in QRBvKN RRBvKN RBBvKN KRBvKN RBNvKN; do
  timed "syzygy.full.$t" "$work/syzygy" "$gtb/gtbgen" -t 2 "$t"
done
if ! done_step tbforge.rbp_subs; then
  rm -rf "$work/rbp_subs.db"
  cp -r "$work/upto4.db" "$work/rbp_subs.db"
fi
timed tbforge.rbp_subs "$work" "$tbgen" gen --variant antichess --db "$work/rbp_subs.db" --threads 2 --quiet \
  RBQvKN RBRvKN RBBvKN RBKvKN RBNvKN

# The four tables alone.
for t in QRBNvK KRBvKN RBNvKN RBPvKN; do
  exe=gtbgen
  [ "$t" = RBPvKN ] && exe=gtbgenp
  timed "syzygy.retrograde.$t" "$work/syzygy" "$gtb/$exe" -t 2 -g "$t"
  subs="$work/upto4.db"
  [ "$t" = RBPvKN ] && subs="$work/rbp_subs.db"
  if ! done_step "tbforge.$t"; then
    rm -rf "$work/alone.db"
    cp -r "$subs" "$work/alone.db"
  fi
  timed "tbforge.$t" "$work" "$tbgen" gen --variant antichess --db "$work/alone.db" --threads 2 --quiet --json "$t"
  rm -rf "$work/alone.db"
done
cat "$results"
