"""Every failure is one of the documented Python exceptions, never a crash
or a wrong value."""

import os
import random
import shutil
from pathlib import Path

import pytest

import tbforge
from conftest import run_ok


def test_bad_input_is_value_error(db):
    with tbforge.open_tablebase(db) as tb:
        with pytest.raises(ValueError, match="bad FEN"):
            tb.probe_wdl("not a fen")
        with pytest.raises(ValueError, match="bad FEN"):
            tb.probe("8/8/8/8/8/8/8/KQ3k2 x - - 0 1")
        with pytest.raises(ValueError):
            tb.probe_dtc("8/8/8/8/8/8/8/P6k w - - 0 1")  # a pawn on the first rank
        with pytest.raises(ValueError, match="unknown variant 'horde'"):
            tb.probe_wdl("8/8/8/8/8/8/8/KQ3k2 b - - 0 1", variant="horde")
        with pytest.raises(ValueError, match="unknown variant 'chess'"):
            tb.probe_wdl(BoardWithVariant("chess"))  # a python-chess chess.Board
        # Four File: the side not to move may not be in check.
        with pytest.raises(ValueError):
            tb.probe_wdl("4k3/8/8/8/8/8/8/4R3 w - - 0 1", variant="fourfile")
        with pytest.raises(TypeError, match="fen\\(\\) method"):
            tb.probe_wdl(42)
        with pytest.raises(TypeError):
            tb.probe_wdl(BoardWithVariant("antichess", fen=None))


class BoardWithVariant:
    def __init__(self, variant, fen="8/8/8/8/8/8/8/KQ3k2 b - - 0 1"):
        self.uci_variant = variant
        self._fen = fen

    def fen(self):
        return self._fen


def test_open_errors(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        tbforge.open_tablebase(str(tmp_path / "absent"))
    with pytest.raises(OSError, match="not a tbforge database"):
        tbforge.open_tablebase(str(tmp_path))


def test_closed_tablebase(db):
    tb = tbforge.open_tablebase(db)
    strategy = tb.strategy("kqk-win")
    with tb:
        assert not tb.closed
        assert tb.probe_wdl("8/8/8/8/8/8/8/KQ3k2 b - - 0 1") == 2
    assert tb.closed
    for call in (lambda: tb.probe_wdl("8/8/8/8/8/8/8/KQ3k2 b - - 0 1"), tb.info,
                 lambda: strategy.move("8/8/8/8/8/8/8/KQ3k2 b - - 0 1"), lambda: list(strategy)):
        with pytest.raises(ValueError, match="closed"):
            call()
    tb.close()  # idempotent
    assert "closed" in repr(tb)


def largest_sst(path: str) -> Path:
    return max(Path(path).glob("*.sst"), key=lambda p: p.stat().st_size)


@pytest.fixture(scope="module")
def kqvk_db(tools, tmp_path_factory) -> str:
    """A database of KQvK and its sub-tables: KQvK's blocks are its largest file."""
    path = str(tmp_path_factory.mktemp("kqvk") / "kqvk.db")
    run_ok(tools["tbgen"], "gen", "--variant", "antichess", "--db", path, "--quiet", "KQvK")
    return path


@pytest.fixture
def small_db(kqvk_db, tmp_path) -> str:
    """A copy of kqvk_db to damage."""
    path = str(tmp_path / "small.db")
    shutil.copytree(kqvk_db, path)
    return path


def kqvk_positions(count: int):
    rng = random.Random(5)
    squares = [f + r for r in "12345678" for f in "abcdefgh"]
    for _ in range(count):
        king, queen, black = rng.sample(squares, 3)
        yield board_fen({king: "K", queen: "Q", black: "k"}) + " " + rng.choice("wb") + " - - 0 1"


def board_fen(units):
    rows = []
    for rank in "87654321":
        row, empty = "", 0
        for file in "abcdefgh":
            unit = units.get(file + rank)
            if unit:
                row += (str(empty) if empty else "") + unit
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def test_flipped_byte_is_corrupt_never_a_wrong_value(small_db):
    with tbforge.open_tablebase(small_db, cache_bytes=0) as tb:
        before = {fen: tb.probe_wdl(fen) for fen in kqvk_positions(5000)}
    # The middle of KQvK's file lies in a block of values (RocksDB's own
    # checksum or the block's XXH64 catches the flip).
    sst = largest_sst(small_db)
    with open(sst, "r+b") as f:
        f.seek(sst.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x20]))
    corrupt = 0
    with tbforge.open_tablebase(small_db, cache_bytes=0) as tb:
        for fen, wdl in before.items():
            try:
                assert tb.probe_wdl(fen) == wdl, fen
            except tbforge.CorruptTableError as e:
                assert "antichess/KQvK" in str(e), str(e)
                corrupt += 1
    assert corrupt > 0


def test_truncated_database_is_corrupt(small_db):
    sst = largest_sst(small_db)
    os.truncate(sst, sst.stat().st_size // 2)
    with pytest.raises(tbforge.CorruptTableError, match="cannot open database"):
        tbforge.open_tablebase(small_db)
    assert not issubclass(tbforge.CorruptTableError, KeyError)
    assert issubclass(tbforge.MissingTableError, KeyError)
