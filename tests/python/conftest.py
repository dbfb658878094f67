"""Fixtures of the tbforge Python tests: one small database per session,
built with the build's tbgen, and tbprobe as the reference the module's
answers are compared with. ctest passes the tools' paths
(tests/python/CMakeLists.txt); PYTHONPATH points at build/python."""

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

TBGEN = os.environ.get("TBF_TBGEN", "")
TBPROBE = os.environ.get("TBF_TBPROBE", "")

# The tables of the session database, by variant; tbgen adds the sub-tables.
TABLES: Dict[str, List[str]] = {
    "antichess": ["KQvK", "RvN", "BvB", "PvP", "NvP"],
    "antichess-fics": ["RvN", "NvP"],
    "antichess-joint": ["BvN"],
    "fourfile": ["KRvKB"],
}

# Strategies built from tables: (name, variant, root): a drawn Four File
# KRvKB root (tests/e2e/strategy_cli.cmake's) and KQvK's longest antichess win.
STRATEGIES = [
    ("krkb-draw", "fourfile", "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1"),
    ("kqk-win", "antichess", "8/8/8/8/8/8/k7/3K3Q w - - 0 1"),
]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=False)


def run_ok(*args: str) -> str:
    done = run(*args)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


@pytest.fixture(scope="session")
def tools() -> Dict[str, str]:
    if not (TBGEN and TBPROBE):
        pytest.fail("TBF_TBGEN and TBF_TBPROBE must name the build's tbgen and tbprobe (run through ctest)")
    return {"tbgen": TBGEN, "tbprobe": TBPROBE}


@pytest.fixture(scope="session")
def db(tools, tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("tables") / "tables.db")
    for variant, tables in TABLES.items():
        run_ok(tools["tbgen"], "gen", "--variant", variant, "--db", path, "--threads", "2",
               "--quiet", *tables)
    for name, variant, root in STRATEGIES:
        run_ok(tools["tbgen"], "strategy", "--db", path, "--variant", variant, "--fen", root,
               "--name", name, "--quiet")
    return path


def tbprobe_json(tools, db: str, variant: str, fens: List[str]) -> List[dict]:
    """tbprobe --json in batch mode: one object per FEN, value or error."""
    done = run(tools["tbprobe"], "--db", db, "--variant", variant, "--fen", "-", "--json",
               stdin="".join(f + "\n" for f in fens))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(fens), done.stderr
    return lines


# Squares a unit may stand on, by variant: Four File uses files a, c, e, g
# and its kings the e-file alone.
FILES = {"fourfile": "aceg"}
KING_FILES = {"fourfile": "e"}


def random_fen(rng: random.Random, variant: str, material: str) -> str:
    """A random placement of `material` ("KRvKB": White's units v Black's),
    either side to move. Pawns stay off the first and last ranks; anything
    else the rules forbid (Four File checks, say) is left for the prober to
    refuse, as tbprobe does."""
    white, black = material.split("v")
    units = [u.upper() for u in white] + [u.lower() for u in black]
    files = FILES.get(variant, "abcdefgh")
    board: Dict[str, str] = {}
    for unit in units:
        while True:
            file = rng.choice(KING_FILES.get(variant, files) if unit in "Kk" else files)
            rank = rng.randint(2, 7) if unit in "Pp" else rng.randint(1, 8)
            square = f"{file}{rank}"
            if square not in board:
                board[square] = unit
                break
    rows = []
    for rank in range(8, 0, -1):
        row, empty = "", 0
        for file in "abcdefgh":
            unit = board.get(f"{file}{rank}")
            if unit is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += unit
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"


# Positions with an en-passant right: valued from their (capturing) moves.
EN_PASSANT = [
    "8/8/8/3pP3/8/8/8/8 w - d6 0 1",
    "8/8/8/8/3Pp3/8/8/8 b - d3 0 1",
    "8/8/8/4Pp2/8/8/8/8 w - f6 0 1",
]


@pytest.fixture(scope="session")
def sample(db) -> Dict[str, List[str]]:
    """Random positions of every built table, per variant (fixed seed):
    about 350 in all, some illegal, a few with an en-passant right, a few of
    tables the database lacks."""
    rng = random.Random(19)
    fens: Dict[str, List[str]] = {}
    for variant, tables in TABLES.items():
        per_table = 160 // len(tables) if variant == "antichess" else 60 // len(tables)
        fens[variant] = [random_fen(rng, variant, t) for t in tables for _ in range(per_table)]
    fens["antichess"] += EN_PASSANT
    # Tables not built: tbprobe's "missing table" errors, MissingTableError here.
    fens["antichess"] += [random_fen(rng, "antichess", "KRvR") for _ in range(5)]
    fens["fourfile"] += [random_fen(rng, "fourfile", "KQvK") for _ in range(5)]
    return fens


class Board:
    """Stands in for a python-chess board: a fen() method and a uci_variant."""

    def __init__(self, fen: str, uci_variant: str = "antichess"):
        self._fen = fen
        self.uci_variant = uci_variant

    def fen(self) -> str:
        return self._fen
