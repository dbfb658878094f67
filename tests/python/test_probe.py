"""Values from the Python module equal tbprobe's for every sampled position."""

import json

import pytest

import tbforge
from conftest import Board, run_ok, tbprobe_json

CATEGORY_WDL = {"win": 2, "draw": 0, "loss": -2}


def expected_exception(message: str):
    return tbforge.MissingTableError if message.startswith("missing table") else ValueError


def test_every_sampled_position_matches_tbprobe(tools, db, sample):
    valued = 0
    with tbforge.open_tablebase(db) as tb:
        for variant, fens in sample.items():
            for fen, want in zip(fens, tbprobe_json(tools, db, variant, fens)):
                if "error" in want:
                    with pytest.raises(expected_exception(want["error"])) as raised:
                        tb.probe(fen, variant=variant)
                    assert raised.value.args[0] == want["error"]
                    with pytest.raises(expected_exception(want["error"])):
                        tb.probe_wdl(fen, variant=variant)
                    continue
                valued += 1
                got = tb.probe(fen, variant=variant)
                assert got.fen == want["fen"]
                assert got.value.category == want["category"], fen
                assert got.value.dtc == want["dtc"], fen
                assert [(m.uci, m.after.category, m.after.dtc, m.conversion) for m in got.moves] == \
                    [(m["uci"], m["category"], m["dtc"], m["conversion"]) for m in want["moves"]], fen
                wdl = CATEGORY_WDL[want["category"]]
                assert tb.probe_wdl(fen, variant=variant) == wdl
                assert tb.probe_dtc(fen, variant=variant) == (-want["dtc"] if wdl < 0 else want["dtc"])
                # The mover's score of a move is the position after it, negated
                # (docs/values.md); the best move's score is the position's value.
                for m in got.moves:
                    assert m.score.wdl == -m.after.wdl
                    if m.score.category != "draw":
                        assert m.score.dtc == (1 if m.conversion else m.after.dtc + 1)
                if got.moves:
                    assert got.moves[0].score == got.value
                    assert got.best_move == got.moves[0].uci
    assert valued >= 200, f"only {valued} sampled positions had a value"


def test_board_objects_and_python_chess_variant_names(tools, db, sample):
    fics = sample["antichess-fics"]
    want = tbprobe_json(tools, db, "antichess-fics", fics)
    intl = tbprobe_json(tools, db, "antichess", fics)
    differs = 0
    with tbforge.open_tablebase(db) as tb:
        for fen, w, i in zip(fics, want, intl):
            if "error" in w:
                continue
            wdl = CATEGORY_WDL[w["category"]]
            # python-chess's SuicideBoard is the FICS stalemate rule ...
            assert tb.probe_wdl(Board(fen, "suicide")) == wdl
            assert tb.probe_wdl(fen, variant="suicide") == wdl
            assert tb.probe_wdl(fen, variant="SUICIDE") == wdl
            # ... its GiveawayBoard and AntichessBoard the international one.
            assert tb.probe_wdl(Board(fen, "giveaway")) == CATEGORY_WDL[i["category"]]
            assert tb.probe_wdl(Board(fen, "antichess"), variant="giveaway") == CATEGORY_WDL[i["category"]]
            # An explicit variant wins over the board's.
            assert tb.probe_wdl(Board(fen, "giveaway"), variant="antichess-fics") == wdl
            differs += w["category"] != i["category"]
        assert differs > 0, "the sample never tells the two stalemate rules apart"

        # A FEN string without variant= is antichess.
        fen = "8/8/8/8/8/8/8/KQ3k2 b - - 0 1"
        assert tb.probe_wdl(fen) == tb.probe_wdl(fen, variant="antichess") == 2
        assert tb.probe_dtc(fen) == 2
        assert tb.probe(fen).best_move == "f1e1"


def test_variant_names():
    assert tbforge.variant_name("giveaway") == "antichess"
    assert tbforge.variant_name("suicide") == "antichess-fics"
    for ours in ("antichess", "antichess-fics", "antichess-joint", "fourfile"):
        assert tbforge.variant_name(ours) == ours
    with pytest.raises(ValueError, match="unknown variant 'chess'"):
        tbforge.variant_name("chess")


def test_info_equals_tbprobe_info(tools, db):
    want = [json.loads(line) for line in run_ok(tools["tbprobe"], "info", "--db", db, "--json").splitlines()]
    with tbforge.open_tablebase(db) as tb:
        got = [t._asdict() for t in tb.info()]
    assert got == want
    assert {t["variant"] for t in got} == {"antichess", "antichess-fics", "antichess-joint", "fourfile"}


def test_info_split_equals_tbprobe_info_split(tools, db):
    want = [json.loads(line)
            for line in run_ok(tools["tbprobe"], "info", "--db", db, "--json", "--split").splitlines()]
    with tbforge.open_tablebase(db) as tb:
        got = [t._asdict() for t in tb.info(split=True)]
        plain = tb.info()
    assert got == want
    for table in got:
        assert table["split"]["wdl"] + table["split"]["dtc"] == table["split"]["values"]
    assert "wdl" not in plain[0].split


def test_missing_tables_are_key_errors(db):
    with tbforge.open_tablebase(db) as tb:
        fen = "8/8/8/8/8/8/8/KQR2k2 b - - 0 1"
        with pytest.raises(tbforge.MissingTableError, match="missing table antichess/KQRvK"):
            tb.probe_wdl(fen)
        with pytest.raises(KeyError):
            tb.probe_dtc(fen)
        with pytest.raises(KeyError):
            tb.probe(fen)
        assert tb.get_wdl(fen) is None
        assert tb.get_dtc(fen, default=-999) == -999
        assert tb.get_wdl("8/8/8/8/8/8/8/KQ3k2 b - - 0 1") == 2


def test_finished_games_have_distance_zero(db):
    with tbforge.open_tablebase(db) as tb:
        # Black has no units: Black has won (losing chess), nothing to move.
        result = tb.probe("8/8/8/8/8/8/8/KQ6 b - - 0 1")
        assert result.value == tbforge.Value("win", 0)
        assert result.moves == [] and result.best_move is None
        assert tb.probe_wdl("8/8/8/8/8/8/8/KQ6 b - - 0 1") == 2
        assert tb.probe_dtc("8/8/8/8/8/8/8/KQ6 b - - 0 1") == 0
        assert tb.probe_wdl("8/8/8/8/8/8/8/KQ6 w - - 0 1") == -2
