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
for spec in antichess:3 fourfile:3 antichess-fics:2 antichess-joint:2; do
  "$tbgen" gen --quiet --threads 1 --variant "${spec%:*}" --db "$dir" --upto "${spec#*:}" >/dev/null
done
