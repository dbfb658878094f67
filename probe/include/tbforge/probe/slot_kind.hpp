#pragma once
// What a stored slot of a table holds under the value encoding "wdl-dtc/2"
// (docs/values.md): the generator's store phase and the probe classify a
// slot by the same function, so a table reads back as it was written.

#include <cstdint>
#include <optional>

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

namespace detail {

// Does a unit of colour `us` (as placed in pos) attack one of `targets`,
// with `occ` occupied? Pawns also capture onto `ep`.
template <Ruleset R>
bool attacks_any(const Position& pos, Color us, Bitboard targets, Bitboard occ, Square ep) {
    if constexpr (R::kPawnsCapture) {
        const Bitboard pawn_targets = ep == kNoSquare ? targets : targets | bit(ep);
        for (Bitboard pawns = pos.units(us, UnitType::Pawn); pawns;) {
            if (pawn_attacks(us, pop_lsb(pawns)) & pawn_targets) return true;
        }
    }
    for (Bitboard knights = pos.units(us, UnitType::Knight); knights;) {
        if (knight_attacks(pop_lsb(knights)) & targets) return true;
    }
    for (Bitboard kings = pos.units(us, UnitType::King); kings;) {
        if (king_attacks(pop_lsb(kings)) & targets) return true;
    }
    const Bitboard queens = pos.units(us, UnitType::Queen);
    for (Bitboard diagonal = pos.units(us, UnitType::Bishop) | queens; diagonal;) {
        if (bishop_attacks(pop_lsb(diagonal), occ) & targets) return true;
    }
    for (Bitboard straight = pos.units(us, UnitType::Rook) | queens; straight;) {
        if (rook_attacks(pop_lsb(straight), occ) & targets) return true;
    }
    return false;
}

// quick_slot_kind() for colour `us` to move, its units as placed in pos,
// the opponent's units on `them`, `occ` occupied.
template <Ruleset R>
std::optional<SlotKind> quick_kind(const Position& pos, Color us, Bitboard them, Bitboard occ, Square ep) {
    if constexpr (R::kCapturesCompulsory) {
        if (pos.units(us) == 0 || them == 0) return SlotKind::Terminal;
        if (attacks_any<R>(pos, us, them & R::kBoard, occ, ep)) return SlotKind::OutsideResolved;
        // No capture: a quiet move of any unit but a pawn stays in the table.
        const Bitboard empty = ~occ & R::kBoard;
        for (Bitboard knights = pos.units(us, UnitType::Knight); knights;) {
            if (knight_attacks(pop_lsb(knights)) & empty) return SlotKind::Free;
        }
        for (Bitboard kings = pos.units(us, UnitType::King); kings;) {
            if (king_attacks(pop_lsb(kings)) & empty) return SlotKind::Free;
        }
        const Bitboard queens = pos.units(us, UnitType::Queen);
        for (Bitboard diagonal = pos.units(us, UnitType::Bishop) | queens; diagonal;) {
            if (bishop_attacks(pop_lsb(diagonal), occ) & empty) return SlotKind::Free;
        }
        for (Bitboard straight = pos.units(us, UnitType::Rook) | queens; straight;) {
            if (rook_attacks(pop_lsb(straight), occ) & empty) return SlotKind::Free;
        }
    }
    return std::nullopt;
}

}  // namespace detail

// Can the side to move capture (en passant included)? Attack sets only, no
// move list. Under compulsory captures it tells an outside-resolved position
// from the others; for other rulesets it ignores legality.
template <Ruleset R>
bool has_capture(const Position& pos) {
    const Color us = pos.side_to_move();
    return detail::attacks_any<R>(pos, us, pos.units(~us) & R::kBoard, pos.occupied(), pos.ep_square());
}

// The kind of a position (no en-passant right) of a table where attack sets
// tell it without a move list, as slot_kind() would; nullopt where only the
// move list does (positions whose quiet moves are pawn moves alone, and
// rulesets without compulsory captures, where a move's legality counts).
template <Ruleset R>
std::optional<SlotKind> quick_slot_kind(const Position& pos) {
    const Color us = pos.side_to_move();
    return detail::quick_kind<R>(pos, us, pos.units(~us), pos.occupied(), pos.ep_square());
}

// quick_slot_kind(pos.after(m)) for a move m that stays in the table (no
// capture, promotion or en-passant right), without making the move: the
// side then to move has the units it has in pos.
template <Ruleset R>
std::optional<SlotKind> quick_slot_kind_after(const Position& pos, Move m) {
    const Color mover = pos.side_to_move();
    const Bitboard change = bit(m.from()) | bit(m.to());
    return detail::quick_kind<R>(pos, ~mover, pos.units(mover) ^ change, pos.occupied() ^ change, kNoSquare);
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
