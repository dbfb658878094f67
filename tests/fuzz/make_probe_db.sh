#!/usr/bin/env bash
# The database the probe target reads (TBF_FUZZ_DB): every table of at most
# 3 units of antichess and Four File, and of at most 2 units of the other two
# rule sets, so that every position of that size has its table and its
# children's. Built afresh each time (a few seconds), so that it always
# comes from the tbgen given.
#   make_probe_db.sh TBGEN DIR
set -euo pipefail
tbgen=$1 dir=$2
rm -rf "$dir"
# Both value encodings (docs/values.md): the 2-unit tables in wdl-dtc/1, the
# antichess and Four File 3-unit tables in wdl-dtc/2 over them, so that
# probes cross from one reader to the other.
for spec in antichess:2 fourfile:2 antichess-fics:2 antichess-joint:2; do
  "$tbgen" gen --quiet --threads 1 --variant "${spec%:*}" --db "$dir" --upto "${spec#*:}" >/dev/null
done
for variant in antichess fourfile; do
  "$tbgen" gen --quiet --threads 1 --variant "$variant" --db "$dir" --upto 3 --encoding wdl-dtc/2 >/dev/null
done
