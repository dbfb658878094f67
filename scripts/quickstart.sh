#!/usr/bin/env bash
# Sets up a fresh Debian machine and runs the main job: build, generate every
# antichess table with at most 3 units, probe a position, and verify.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
db=${TBF_DB:-tables.db}
echo "== move generator check: perft of the antichess initial position, depth 5"
./build/gen/tbgen perft --variant antichess --depth 5 \
  --fen "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"
echo "== generating all antichess tables with at most 3 units into $db"
./build/gen/tbgen gen --variant antichess --db "$db" --upto 3
echo "== probing: two rooks against a king, White to move"
./build/probe/tbprobe --db "$db" --variant antichess --fen "8/8/8/8/8/3K4/8/1r4r1 w - - 0 1"
