#!/usr/bin/env bash
# Sets up a fresh Debian machine and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
echo "== antichess: perft of the initial position, depth 5"
./build/gen/tbgen perft --variant antichess --depth 5 \
  --fen "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"
echo "== fourfile: perft of the initial position, depth 6"
./build/gen/tbgen perft --variant fourfile --depth 6 \
  --fen "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"
