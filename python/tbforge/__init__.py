"""Probe tbforge endgame tablebases and strategy databases.

A tbforge database (built by ``tbgen``) holds tables for losing chess
(``antichess``, ``antichess-fics``, ``antichess-joint``) and Four File chess
(``fourfile``), and strategy databases. This package answers, for a position
given as a FEN string or as any object with a ``fen()`` method (a
python-chess board, for instance), the value for the side to move and the
value of every legal move::

    import tbforge

    with tbforge.open_tablebase("tables.db") as tb:
        tb.probe_wdl("8/8/8/8/8/8/8/KQ3k2 b - - 0 1")     # 2: Black wins
        tb.probe_dtc("8/8/8/8/8/8/8/KQ3k2 b - - 0 1")     # 2 plies to conversion
        result = tb.probe("8/8/8/8/8/8/8/KQ3k2 b - - 0 1")
        result.moves[0].uci                                # "f1e1", a best move

Values
    WDL is 2 (win), 0 (draw) or -2 (loss) for the side to move, as
    ``chess.syzygy.Tablebase.probe_wdl`` numbers them. tbforge's tables store
    exact values without the 50-move rule, so every win is reported as 2 and
    every loss as -2: 1 and -1 (Syzygy's cursed win and blessed loss) need
    the 50-move counter's history, which the tables do not hold, and are
    never returned. DTC is the distance to conversion (capture or promotion)
    in plies; ``probe_dtc`` signs it like python-chess signs DTZ: positive
    when the side to move wins, negative when it loses, 0 for a draw and for
    a finished game (use ``probe_wdl`` to tell those apart).

Variants
    ``variant=`` takes tbforge's names (``antichess``, ``antichess-fics``,
    ``antichess-joint``, ``fourfile``) and python-chess's: ``giveaway`` is
    ``antichess`` (a stalemated side wins, as in python-chess's
    GiveawayBoard and AntichessBoard) and ``suicide`` is ``antichess-fics``
    (at a stalemate the side with fewer units wins, equal counts draw, as in
    python-chess's SuicideBoard). See ``VARIANTS``. Without ``variant=``, a
    board object's ``uci_variant`` attribute names the variant (python-chess
    boards have one); a FEN string is ``antichess``.

Errors
    ``MissingTableError`` (a ``KeyError``, as in python-chess): the table of
    the position, or of a position one move away, is not in the database.
    ``ValueError``: a malformed FEN, an illegal position, an unknown variant,
    a closed tablebase. ``CorruptTableError``: damaged data (a checksum
    mismatch); no value is ever returned from it. ``OSError``: the database
    cannot be opened or read.

Threads
    A Tablebase may be probed from many threads at once; probes release the
    GIL while they run. ``close()`` may be called while other threads probe:
    their calls finish, later calls raise ``ValueError``.
"""

import json
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Protocol, Tuple, Union

from . import _core
from ._core import CorruptTableError, MissingTableError

__all__ = [
    "CorruptTableError",
    "MissingTableError",
    "MoveValue",
    "ProbeResult",
    "Strategy",
    "StrategyInfo",
    "TableInfo",
    "Tablebase",
    "VARIANTS",
    "Value",
    "open_tablebase",
    "variant_name",
]

__version__: str = _core.__version__

#: The default byte limit of the prober's caches, decoded blocks and resolved
#: values (docs/probe.md, "Cache size").
DEFAULT_CACHE_BYTES = 256 << 20

#: Every accepted variant name and the tbforge variant it means.
VARIANTS: Dict[str, str] = {name: name for name in _core.VARIANTS}
VARIANTS.update({"giveaway": "antichess", "suicide": "antichess-fics"})


class SupportsFen(Protocol):
    """Anything with a ``fen()`` method returning a FEN, e.g. ``chess.Board``."""

    def fen(self) -> str: ...


Board = Union[str, SupportsFen]


def variant_name(name: str) -> str:
    """The tbforge variant of a tbforge or python-chess variant name.

    >>> variant_name("suicide")
    'antichess-fics'

    Raises ValueError for a name that is neither.
    """
    try:
        return VARIANTS[name.lower()]
    except (KeyError, AttributeError):
        known = ", ".join(sorted(VARIANTS))
        raise ValueError(f"unknown variant {name!r} (known: {known})") from None


def _position(board: Board, variant: Optional[str]) -> Tuple[str, str]:
    """(FEN, tbforge variant) of a probe's arguments."""
    if isinstance(board, str):
        fen = board
        if variant is None:
            variant = "antichess"
    else:
        fen_method = getattr(board, "fen", None)
        if not callable(fen_method):
            raise TypeError(
                f"expected a FEN string or an object with a fen() method, not {type(board).__name__}")
        fen = fen_method()
        if not isinstance(fen, str):
            raise TypeError(f"{type(board).__name__}.fen() returned {type(fen).__name__}, not str")
        if variant is None:
            variant = getattr(board, "uci_variant", None) or "antichess"
    return fen, variant_name(variant)


def _wdl(code: int) -> int:
    return 2 * code


_CATEGORY = {1: "win", 0: "draw", -1: "loss"}


class Value(NamedTuple):
    """A position's value for its side to move.

    category: "win", "draw" or "loss".
    dtc: plies to the next conversion (capture or promotion) with best
        play; 0 for a draw and for a finished game.
    """

    category: str
    dtc: int

    @property
    def wdl(self) -> int:
        """2 (win), 0 (draw) or -2 (loss), as python-chess's probe_wdl."""
        return {"win": 2, "draw": 0, "loss": -2}[self.category]

    @property
    def signed_dtc(self) -> int:
        """DTC, negative for a loss (as probe_dtc returns it)."""
        return -self.dtc if self.category == "loss" else self.dtc

    @classmethod
    def _from_core(cls, pair: Tuple[int, int]) -> "Value":
        return cls(_CATEGORY[pair[0]], pair[1])


class MoveValue(NamedTuple):
    """A legal move and its value.

    uci: the move in UCI ("e7e8k" promotes to a king in losing chess).
    conversion: True for a capture or a promotion.
    after: the position after the move, for the side then to move (as
        ``tbprobe --json`` and the lichess tablebase API describe a move).
    score: the move scored for the side making it: the mover's result, with
        the DTC counted from before the move (1 for a conversion, else the
        DTC after it plus 1). The best move's score is the position's value.
    """

    uci: str
    conversion: bool
    after: Value
    score: Value


class ProbeResult(NamedTuple):
    """The answer of ``Tablebase.probe``.

    fen: the position, normalised (castling rights dropped, the en-passant
        square only when a capture there is possible, counters "0 1").
    value: the position's Value for the side to move.
    moves: every legal move as a MoveValue, best first for the side to
        move: wins by increasing DTC, then draws, then losses by decreasing
        DTC, ties by UCI. Empty for a finished game.
    """

    fen: str
    value: Value
    moves: List[MoveValue]

    @property
    def best_move(self) -> Optional[str]:
        """A best move (UCI), or None when the game is over."""
        return self.moves[0].uci if self.moves else None


class TableInfo(NamedTuple):
    """A table of the database, with the fields of ``tbprobe info --json``.

    variant: "antichess", "antichess-fics", "antichess-joint" or "fourfile".
    table: the material in canonical orientation, e.g. "KQvR".
    slots: index slots of both sides to move (White to move first).
    bytes: stored (compressed) bytes.
    checksum: XXH64 of the values in slot order, 16 hex digits.
    value_width: bytes per stored value (1 or 2).
    generator: the generator's version.
    format: the storage format of its blocks (1: LZ4, 2: zstd, 3: blocks
        grouped several to a record, 4: the same with bare zstd frames, 5:
        blocks of one value kept in the group's directory).
    bytes_per_position: stored bytes per slot, index metadata included.
    split: where the bytes go: {"values": compressed values,
        "index_metadata": record headers, group directories, keys and
        the table's dictionary}; with ``info(split=True)`` also "wdl",
        the bytes of the WDL alone in the table's blocks, and "dtc", what
        the DTC adds to them (``tbprobe info --split``).
    statistics: the generator's statistics (W/D/L per side to move, DTC
        histograms, longest win).
    encoding: the value encoding, "wdl-dtc/1", "wdl-dtc/2", "wdl-dtc/3",
        "wdl-dtc/4", "wdl-dtc/5", "wdl-dtc/6", "wdl-dtc/7", "wdl-dtc/8" or "wdl-dtc/9".
    dtc_side: for wdl-dtc/2 to /9, the side to move ("white" or
        "black") whose DTC is stored; None otherwise.
    index_order: for wdl-dtc/3 to /9, the group order of the table's index, high
        digit first ("bN bK wR wK"); None otherwise.
    knight_colouring: for a wdl-dtc/9 table that derives knights' squares,
        the knights' worth it chose ("frame" or "mirror-kept"); None
        otherwise.
    """

    variant: str
    table: str
    slots: int
    bytes: int
    checksum: str
    value_width: int
    generator: str
    format: int
    bytes_per_position: float
    split: Dict[str, int]
    statistics: Dict[str, Any]
    encoding: str
    dtc_side: Optional[str]
    index_order: Optional[str]
    knight_colouring: Optional[str]


class StrategyInfo(NamedTuple):
    """A strategy of the database (docs/strategy.md).

    name, variant: as stored.
    side: the side the strategy plays, "white" or "black".
    kind: "non-loss" or "winning".
    roots: the root positions (FEN).
    entries: the number of entries (positions with the strategy's side to move).
    metadata: the free-form metadata stored with it.
    """

    name: str
    variant: str
    side: str
    kind: str
    roots: List[str]
    entries: int
    metadata: Dict[str, Any]

    @classmethod
    def _from_core(cls, t: Tuple[Any, ...]) -> "StrategyInfo":
        name, variant, side, kind, roots, entries, text = t
        return cls(name, variant, side, kind, list(roots), entries, _json_object(text))


def _json_object(text: str) -> Dict[str, Any]:
    # Stored JSON text is free-form: a damaged one reads as an empty object,
    # as tbprobe info shows it, rather than hiding the rest.
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class Strategy:
    """A strategy database: the move its side plays in each stored position.

    ``move(board)`` looks one position up; iterating yields every entry as
    ``(fen, uci)`` in key order (the order of ``tbprobe strategy-export``).
    Lookups may run in many threads at once; one iterator belongs to one
    thread at a time.
    """

    def __init__(self, core: Any, info: StrategyInfo) -> None:
        self._core = core
        #: The strategy's metadata.
        self.info = info

    def move(self, board: Board) -> Optional[str]:
        """The stored move (UCI) for the position, or None if it is no entry.

        The position is read by the strategy's variant. Raises ValueError for
        a malformed FEN or an illegal position, CorruptTableError for a
        damaged entry.
        """
        fen, _ = _position(board, self.info.variant)
        return self._core.move(fen)

    def __contains__(self, board: Board) -> bool:
        return self.move(board) is not None

    def __iter__(self) -> Iterator[Tuple[str, str]]:
        return iter(self._core.iter())

    def __len__(self) -> int:
        return self.info.entries

    def __repr__(self) -> str:
        i = self.info
        return f"<tbforge.Strategy {i.name!r} {i.variant} {i.side} {i.kind}, {i.entries} entries>"


class Tablebase:
    """An open tbforge database (read-only). Open it with ``open_tablebase``.

    Use it as a context manager or call ``close()``. Every probe takes a FEN
    string or an object with a ``fen()`` method, and an optional variant
    name (see the module documentation).
    """

    def __init__(self, path: str, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.path = str(path)
        self._core = _core.Tablebase(self.path, cache_bytes)

    def probe_wdl(self, board: Board, variant: Optional[str] = None) -> int:
        """2 if the side to move wins, 0 for a draw, -2 if it loses.

        Raises MissingTableError if the position's table is not in the
        database, ValueError for a bad FEN, position or variant,
        CorruptTableError for damaged data.
        """
        fen, name = _position(board, variant)
        return _wdl(self._core.value(name, fen)[0])

    def get_wdl(self, board: Board, variant: Optional[str] = None,
                default: Optional[int] = None) -> Optional[int]:
        """probe_wdl, or ``default`` when the table is missing."""
        try:
            return self.probe_wdl(board, variant)
        except MissingTableError:
            return default

    def probe_dtc(self, board: Board, variant: Optional[str] = None) -> int:
        """Distance to conversion in plies, signed for the side to move.

        Positive: the side to move wins and converts (captures or promotes)
        after that many plies with best play; negative: it loses and can
        delay the conversion that long; 0: a draw or a finished game. Errors
        as probe_wdl.
        """
        fen, name = _position(board, variant)
        wdl, dtc = self._core.value(name, fen)
        return -dtc if wdl < 0 else dtc

    def get_dtc(self, board: Board, variant: Optional[str] = None,
                default: Optional[int] = None) -> Optional[int]:
        """probe_dtc, or ``default`` when the table is missing."""
        try:
            return self.probe_dtc(board, variant)
        except MissingTableError:
            return default

    def probe(self, board: Board, variant: Optional[str] = None) -> ProbeResult:
        """The position's value and every legal move with its value.

        The moves come best first (``result.moves[0]`` is a best move). Errors
        as probe_wdl; MissingTableError also when the table of a position one
        move away is missing.
        """
        fen, name = _position(board, variant)
        normalised, value, moves = self._core.probe(name, fen)
        return ProbeResult(
            normalised, Value._from_core(value),
            [MoveValue(uci, conversion, Value._from_core(after), Value._from_core(score))
             for uci, conversion, after, score in moves])

    def info(self, split: bool = False) -> List[TableInfo]:
        """The tables of the database in name order (``tbprobe info --json``).

        With ``split``, each table's values are also split into the bytes
        of its WDL and of its DTC (``tbprobe info --json --split``): this
        reads and compresses every table.
        """
        tables = []
        for (variant, table, slots, stored, checksum, width, generator, fmt, per_position, values,
             index, statistics, encoding, dtc_side, index_order, knight_colouring, wdl,
             dtc) in self._core.tables(split):
            parts = {"values": values, "index_metadata": index}
            if wdl >= 0:
                parts.update(wdl=wdl, dtc=dtc)
            tables.append(TableInfo(variant, table, slots, stored, f"{checksum:016x}", width, generator,
                                    fmt, per_position, parts, _json_object(statistics), encoding,
                                    dtc_side or None, index_order or None, knight_colouring or None))
        return tables

    def strategies(self) -> List[StrategyInfo]:
        """The strategies of the database in name order."""
        return [StrategyInfo._from_core(t) for t in self._core.strategies()]

    def strategy(self, name: str) -> Strategy:
        """The strategy called ``name``; KeyError if there is none."""
        core = self._core.strategy(name)
        return Strategy(core, StrategyInfo._from_core(core.info()))

    def close(self) -> None:
        """Closes the database; later probes raise ValueError. Idempotent."""
        self._core.close()

    @property
    def closed(self) -> bool:
        return self._core.closed

    def __enter__(self) -> "Tablebase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<tbforge.Tablebase {self.path!r} ({state})>"


def open_tablebase(path: str, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> Tablebase:
    """Opens the tbforge database directory ``path`` read-only.

    ``cache_bytes`` limits the cache of decoded blocks shared by every
    thread (0 disables it). Raises OSError if the directory is missing or no
    tbforge database, CorruptTableError if its files are damaged.
    """
    return Tablebase(path, cache_bytes=cache_bytes)
