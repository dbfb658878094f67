#pragma once
// Attack sets on the full 8x8 board. Sliders use magic bitboards whose
// magics are found at start-up with a fixed seed (a few milliseconds), so no
// table of numbers has to be trusted. Rulesets restrict destinations with
// their own square masks; attack relations between allowed squares are the
// ordinary ones, which is exactly Four File chess's geometry.

#include <array>

#include "tbforge/rules/types.hpp"

namespace tbf {

namespace detail {

struct Magic {
    Bitboard mask;
    Bitboard magic;
    const Bitboard* table;
    unsigned shift;

    unsigned offset(Bitboard occupied) const {
        return static_cast<unsigned>(((occupied & mask) * magic) >> shift);
    }
};

struct AttackTables {
    std::array<Bitboard, 64> knight;
    std::array<Bitboard, 64> king;
    std::array<std::array<Bitboard, 64>, 2> pawn;  // squares a pawn of that colour attacks
    std::array<Magic, 64> rook;
    std::array<Magic, 64> bishop;
};

extern const AttackTables& kAttacks;

}  // namespace detail

inline Bitboard knight_attacks(Square s) { return detail::kAttacks.knight[s]; }
inline Bitboard king_attacks(Square s) { return detail::kAttacks.king[s]; }
inline Bitboard pawn_attacks(Color c, Square s) { return detail::kAttacks.pawn[to_index(c)][s]; }
inline Bitboard rook_attacks(Square s, Bitboard occupied) {
    const auto& m = detail::kAttacks.rook[s];
    return m.table[m.offset(occupied)];
}
inline Bitboard bishop_attacks(Square s, Bitboard occupied) {
    const auto& m = detail::kAttacks.bishop[s];
    return m.table[m.offset(occupied)];
}
inline Bitboard queen_attacks(Square s, Bitboard occupied) {
    return rook_attacks(s, occupied) | bishop_attacks(s, occupied);
}

// Squares attacked by a unit of type t (not a pawn) standing on s.
// Inlined: the generator calls it per position in its hottest loops.
[[gnu::always_inline]] inline Bitboard unit_attacks(UnitType t, Square s, Bitboard occupied) {
    switch (t) {
        case UnitType::King: return king_attacks(s);
        case UnitType::Queen: return queen_attacks(s, occupied);
        case UnitType::Rook: return rook_attacks(s, occupied);
        case UnitType::Bishop: return bishop_attacks(s, occupied);
        case UnitType::Knight: return knight_attacks(s);
        case UnitType::Pawn: break;
    }
    return 0;
}

// Slow reference slider attacks by ray walking; used to build and test the
// magic tables.
Bitboard sliding_attacks_slow(bool rook, Square s, Bitboard occupied);

}  // namespace tbf
