#!/usr/bin/env bash
# Whole-job benchmark of `tbverify tables` (not run in CI): positions per
# second of a full check beside tbgen's rate for building the same tables,
# for
#   upto4   every antichess table with at most 4 units
#   rbn     RBNvKN            rbp   RBPvKN
#   kqr     KQRvKBN, built out-of-core and checked under --memory (4G)
# Each job's tables are built first when missing (timed: that is tbgen's
# rate), then checked by this build's tbverify and, when BEFORE names one,
# by an older tbverify. The machine may be shared, so every line gives the
# wall rate and the rate per CPU-second (user + system time of the process).
#
# Usage: bench/verify/tables_bench.sh [BUILD_DIR [WORK_DIR]]
# Environment:
#   JOBS="upto4 rbn rbp kqr"  the jobs, in this order (default: all four)
#   THREADS=2                 threads of tbgen and tbverify
#   KQR_MEMORY=4G             --memory of the KQRvKBN build and check
#   BEFORE=PATH               an older tbverify to compare with
#   BOUND=SECONDS             stop each tbverify run after this long and take
#                             the rate from its progress line (for checks too
#                             long to finish); the line says "bounded"
#   DB=DIR                    check this existing database (opened read-only,
#                             nothing is built) instead of building one
#   TBVERIFY=PATH, TBPROBE=PATH  executables other than BUILD_DIR's
#   UPTO4_EVERY=N             upto4 checks every table of up to 3 units and
#                             every N-th table of 4 (default 1: all)
#   GEN_TIMES=FILE            with DB: tbgen's times for the jobs, lines
#                             "upto4 wall W user U rss R" ("RBNvKN ...",
#                             "RBPvKN ...") as /usr/bin/time wrote them when
#                             DB was built; the tbgen line is taken from there
# The databases stay in WORK_DIR (default /tmp/tbforge-verify-bench): a rerun
# builds nothing already there, and an interrupted out-of-core build resumes.
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/tbforge-verify-bench}
threads=${THREADS:-2}
jobs=${JOBS:-upto4 rbn rbp kqr}
tbgen=$build/gen/tbgen
tbverify=$build/verify/tbverify
tbprobe=${TBPROBE:-$build/probe/tbprobe}
tbverify=${TBVERIFY:-$tbverify}
needed=("$tbverify" "$tbprobe")
[ -n "${DB:-}" ] || needed+=("$tbgen")
for exe in "${needed[@]}"; do
    [ -x "$exe" ] || { echo "tables_bench: no $exe (build first)" >&2; exit 2; }
done
mkdir -p "$work"
db=${DB:-$work/db}   # <=4 units, RBNvKN, RBPvKN and their sub-tables
db6=$work/db-kqr     # KQRvKBN and its sub-tables

# rate POSITIONS SECONDS CPU: "N positions/s, M per CPU-second"
rate() {
    awk -v p="$1" -v s="$2" -v c="$3" 'BEGIN {
        printf "%12.0f positions/s  %10.0f per CPU-s", (s > 0 ? p / s : 0), (c > 0 ? p / c : 0) }'
}

# gen LABEL DB ARGS...: builds the tables (if missing) and prints tbgen's rate.
gen() {
    local label=$1 target=$2; shift 2
    if [ -n "${DB:-}" ]; then gen_recorded "$label"; return; fi
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" \
        "$tbgen" gen --variant antichess --db "$target" --threads "$threads" --quiet --json "$@" \
        > "$work/gen.json"
    local summary positions seconds cpu
    summary=$(grep -o '"summary":{[^}]*' "$work/gen.json")
    positions=$(echo "$summary" | grep -o '"positions":[0-9]*' | cut -d: -f2)
    seconds=$(echo "$summary" | grep -o '"seconds":[0-9.e+-]*' | cut -d: -f2)
    cpu=$(awk '{print $2 + $3}' "$work/time.txt")
    if [ "${positions:-0}" -gt 0 ]; then
        printf '%-10s tbgen            %14d positions %9.1f s  %s\n' "$label" "$positions" \
            "$seconds" "$(rate "$positions" "$seconds" "$cpu")"
    else
        printf '%-10s tbgen            already built (remove %s to time it)\n' "$label" "$target"
    fi
}

# gen_recorded LABEL: tbgen's line from GEN_TIMES (positions: the statistics
# of the tables, as tbprobe info lists them).
gen_recorded() {
    local label=$1 key positions seconds cpu rss
    case $label in "<=4") key=upto4 ;; *) key=$label ;; esac
    if [ -z "${GEN_TIMES:-}" ] || ! grep -q "^$key " "$GEN_TIMES"; then
        printf '%-10s tbgen            (no recorded time)\n' "$label"; return
    fi
    seconds=$(grep "^$key " "$GEN_TIMES" | awk '{print $3}')
    cpu=$(grep "^$key " "$GEN_TIMES" | awk '{print $5}')
    rss=$(grep "^$key " "$GEN_TIMES" | awk '{print $7}')
    positions=$(table_positions "$label")
    printf '%-10s tbgen            %14d positions %9.1f s %9.1f CPU-s %8d KiB  %s\n' "$label" \
        "$positions" "$seconds" "$cpu" "$rss" "$(rate "$positions" "$seconds" "$cpu")"
}

# table_positions LABEL: the valid positions of the job's tables (statistics).
table_positions() {
    "$tbprobe" info --db "$db" --json | awk -v job="$1" '
        { match($0, /"table":"[A-Za-z]*"/); t = substr($0, RSTART + 9, RLENGTH - 10)
          keep = (job == "<=4") ? length(t) <= 5 : t == job
          if (!keep) next
          n = split($0, parts, /"(win|draw|loss)":/)
          for (i = 2; i <= n && i <= 7; ++i) { v = parts[i]; sub(/[^0-9].*/, "", v); s += v } }
        END { printf "%.0f", s }'
}

# check LABEL EXE DB ARGS...: one tbverify run, its rate.
check() {
    local label=$1 exe=$2 target=$3; shift 3
    local positions seconds cpu rss note=""
    if [ -n "${BOUND:-}" ]; then
        # A terminal for the progress line, stopped after BOUND seconds.
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" \
            timeout -s INT "$BOUND" script -qfec "$exe tables --db $target --threads $threads $*" \
            /dev/null > "$work/verify.txt" || true
        positions=$(tr '\r' '\n' < "$work/verify.txt" | grep -o '[0-9]* positions' | tail -1 |
                    cut -d' ' -f1)
        seconds=$(awk '{print $1}' "$work/time.txt")
        note=" (bounded)"
    else
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" \
            "$exe" tables --db "$target" --threads "$threads" --json "$@" > "$work/verify.json" ||
            { echo "tables_bench: $exe found errors in $label" >&2; tail -1 "$work/verify.json" >&2; }
        positions=$(grep -o '"summary":{[^}]*' "$work/verify.json" | grep -o '"positions":[0-9]*' |
                    cut -d: -f2)
        seconds=$(awk '{print $1}' "$work/time.txt")
    fi
    cpu=$(awk '{print $2 + $3}' "$work/time.txt")
    rss=$(awk '{print $4}' "$work/time.txt")
    printf '%-10s %-16s %14d positions %9.1f s %9.1f CPU-s %8d KiB  %s%s  load %s\n' "$label" \
        "$(basename "$(dirname "$exe")")/$(basename "$exe")" "${positions:-0}" "$seconds" "$cpu" \
        "$rss" "$(rate "${positions:-0}" "$seconds" "$cpu")" "$note" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# verify LABEL DB ARGS...: this build's tbverify, then BEFORE's.
verify() {
    local label=$1 target=$2; shift 2
    check "$label" "$tbverify" "$target" "$@"
    if [ -n "${BEFORE:-}" ]; then check "$label" "$BEFORE" "$target" "$@"; fi
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $threads threads"
for job in $jobs; do
    case $job in
    upto4)
        gen "<=4" "$db" --upto 4
        # Only the tables of up to 4 units, whatever else the database holds.
        names=$("$tbprobe" info --db "$db" --json | grep -o '"table":"[A-Za-z]*"' | cut -d'"' -f4 |
                awk -v every="${UPTO4_EVERY:-1}" '
                    length($0) <= 4 { printf "antichess/%s ", $0 }
                    length($0) == 5 && n++ % every == 0 { printf "antichess/%s ", $0 }')
        # shellcheck disable=SC2086  # one argument per table
        verify "<=4" "$db" $names ;;
    rbn)
        gen RBNvKN "$db" RBNvKN
        verify RBNvKN "$db" antichess/RBNvKN ;;
    rbp)
        # RBPvKN also promotes into the other RB?vKN tables: built untimed first.
        [ -n "${DB:-}" ] || "$tbgen" gen --variant antichess --db "$db" --threads "$threads" --quiet \
            RBQvKN RBRvKN RBBvKN RBKvKN > /dev/null
        gen RBPvKN "$db" RBPvKN
        verify RBPvKN "$db" antichess/RBPvKN ;;
    kqr)
        # The six 5-unit sub-tables (and theirs) untimed, in RAM; then the
        # table itself out-of-core, resumable from "$work/ooc".
        "$tbgen" gen --variant antichess --db "$db6" --threads "$threads" --quiet \
            KQRvKB KQRvKN KQRvBN QRvKBN KRvKBN KQvKBN > /dev/null
        gen KQRvKBN "$db6" --memory "${KQR_MEMORY:-4G}" --work "$work/ooc" KQRvKBN
        verify KQRvKBN "$db6" --memory "${KQR_MEMORY:-4G}" antichess/KQRvKBN ;;
    *)
        echo "tables_bench: unknown job $job (upto4, rbn, rbp, kqr)" >&2; exit 2 ;;
    esac
done
