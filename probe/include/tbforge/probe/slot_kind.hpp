#pragma once
// What a stored slot of a table holds under the value encoding "wdl-dtc/2"
// (docs/values.md): the generator's store phase and the probe classify a
// slot by the same function, so a table reads back as it was written.

#include <cstdint>

#include "tbforge/rules/movegen.hpp"

namespace tbf::probe {

enum class SlotKind : std::uint8_t {
    NotAPosition,     // the indexer decodes no position there
    Terminal,         // no legal move: valued by the rules
    OutsideResolved,  // every move leaves the table: valued one ply over sub-tables
    Free,             // a move stays in the table: the value is stored
};

// Does move m of pos hand the opponent an en-passant capture? Such a push
// leads outside the table (the right is part of the position), exactly when
// Position::after records the skipped square.
inline bool gives_en_passant(const Position& pos, Move m) {
    const Square from = m.from();
    const Square to = m.to();
    if ((from ^ to) != 16 || unit_type(pos.unit_on(from)) != UnitType::Pawn) return false;
    const Color us = pos.side_to_move();
    const auto skipped = static_cast<Square>((from + to) / 2);
    return (pawn_attacks(us, skipped) & pos.units(~us, UnitType::Pawn)) != 0;
}

// Does m lead to a position of the same table (quiet, not promoting, not
// handing over an en-passant capture)?
inline bool stays_in_table(const Position& pos, Move m) {
    return !pos.is_conversion(m) && !gives_en_passant(pos, m);
}

// The kind of a position (no en-passant right) of a table; `moves` receives
// its legal moves.
template <Ruleset R>
SlotKind slot_kind(const Position& pos, MoveList& moves) {
    generate_legal<R>(pos, moves);
    if (moves.empty()) return SlotKind::Terminal;
    // Under compulsory captures either every move captures or none does.
    if (R::kCapturesCompulsory && pos.is_capture(moves[0])) return SlotKind::OutsideResolved;
    for (Move m : moves) {
        if (stays_in_table(pos, m)) return SlotKind::Free;
    }
    return SlotKind::OutsideResolved;
}

}  // namespace tbf::probe
