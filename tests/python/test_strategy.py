"""Strategies: metadata, lookup of a position's move, iteration in key order,
all against tbprobe strategy-export."""

import pytest

import tbforge
from conftest import STRATEGIES, Board, run_ok


def export(tools, db, name):
    """(header fields, [(fen, uci), ...]) of tbprobe strategy-export."""
    header, entries = {}, []
    for line in run_ok(tools["tbprobe"], "strategy-export", "--db", db, "--name", name).splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            header.setdefault(key, []).append(value)
        elif line and not line.startswith("#"):
            fen, uci = line.split("\t")
            entries.append((fen, uci))
    return header, entries


@pytest.mark.parametrize("name,variant,root", STRATEGIES)
def test_strategy_matches_export(tools, db, name, variant, root):
    header, entries = export(tools, db, name)
    assert len(entries) > 10
    with tbforge.open_tablebase(db) as tb:
        strategy = tb.strategy(name)
        info = strategy.info
        assert (info.name, info.variant, info.side, info.kind) == \
            (header["name"][0], header["variant"][0], header["side"][0], header["kind"][0])
        assert info.variant == variant and info.roots == [root] == header["root"]
        assert info.entries == int(header["entries"][0]) == len(strategy) == len(entries)
        assert info in tb.strategies()

        # Iteration: every entry, in key order, as exported.
        assert list(strategy) == entries
        # Two iterators do not disturb each other.
        a, b = iter(strategy), iter(strategy)
        assert [next(a), next(a), next(b)] == [entries[0], entries[1], entries[0]]

        # Lookup: each entry's move, through a FEN and through a board object.
        for fen, uci in entries:
            assert strategy.move(fen) == uci
        fen, uci = entries[len(entries) // 2]
        assert strategy.move(Board(fen, "giveaway")) == uci  # the strategy's variant counts
        assert fen in strategy

        # The side not played by the strategy has no entries; the moves it
        # plays keep the root's value for its side.
        other = fen.replace(" w ", " x ").replace(" b ", " w ").replace(" x ", " b ")
        assert strategy.move(other) is None and other not in strategy
        side = "w" if info.side == "white" else "b"
        for fen, uci in entries[:50]:
            assert fen.split()[1] == side
            result = tb.probe(fen, variant=variant)
            score = next(m.score for m in result.moves if m.uci == uci)
            assert score.category == result.value.category
        with pytest.raises(ValueError):
            strategy.move("not a fen")


def test_strategy_kinds_and_missing_names(db):
    with tbforge.open_tablebase(db) as tb:
        kinds = {s.name: s.kind for s in tb.strategies()}
        assert kinds == {"krkb-draw": "non-loss", "kqk-win": "winning"}
        with pytest.raises(KeyError, match="no strategy 'absent'"):
            tb.strategy("absent")
        assert "kqk-win" in repr(tb.strategy("kqk-win"))
