#pragma once
// wdl-dtc/7's derived pawn structures (docs/values.md "Derived pawn
// structures"): the rule a writer and a reader share for which free slots of
// the DTC side store nothing and are valued by two plies of moves instead.
//
// Where every unit off the DTC side is a pawn, each move of that side (that
// stays in the table) advances one of its pawns. A DTC-side position whose
// grandchildren in the table all lie in stored pawn structures can then be
// valued from them: its move, then the other side's, each valued by what the
// table and its sub-tables store. Such structures must not reach one
// another in one move of the other side's pawns (whatever the DTC side
// plays first, which never moves the other side's pawns back), so the
// derived ones are the zero positions of the sum game of those pawns alone:
// each pawn a heap of the steps it has left before promoting (a pawn on its
// start square may take two at once), a structure derived when the XOR of
// the pawns' game values is 0. Every pawn step from there changes exactly
// one pawn's value and so makes the XOR nonzero; blocked steps only remove
// moves. About half the structures of one pawn, 39 % of two, 33 % of three.

#include <string_view>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/types.hpp"

namespace tbf::probe {

inline constexpr std::string_view kDerivedStructuresCompactValueEncoding = "wdl-dtc/7";

// Whether a table of `material` stored in `encoding` with DTC side
// `dtc_side` derives pawn structures: wdl-dtc/7, the two sides' units
// differ, and the other side has pawns and nothing else.
inline bool derives_pawn_structures(std::string_view encoding, const index::Material& material, Color dtc_side) {
    if (encoding != kDerivedStructuresCompactValueEncoding || material == material.flipped()) return false;
    const Color other = ~dtc_side;
    const int pawns = material.count(other, UnitType::Pawn);
    return pawns > 0 && pawns == material.count(other);
}

// The game value of a pawn of `color` on `square`: its steps left before the
// promotion (0 on the last rank before it), alternately 0 and 1, and 2 on
// its start square, whose double step reaches both a 0 and a 1.
inline unsigned pawn_step_value(Color color, Square square) {
    const int left = color == Color::White ? 6 - rank_of(square) : rank_of(square) - 1;
    return left == 5 ? 2U : static_cast<unsigned>(left & 1);
}

// Whether the placement `squares` (the indexer's unit order, the table's
// colour orientation) of a table that derives pawn structures with DTC side
// `dtc_side` lies in a derived structure.
inline bool derived_structure(const index::Indexer& ix, Color dtc_side, const Square* squares) {
    unsigned sum = 0;
    for (int u = 0; u < ix.unit_count(); ++u) {
        const Unit unit = ix.unit(u);
        if (unit_color(unit) != dtc_side) sum ^= pawn_step_value(unit_color(unit), squares[u]);
    }
    return sum == 0;
}

}  // namespace tbf::probe
