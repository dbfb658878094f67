#pragma once
// wdl-dtc/7's derived pawn structures and wdl-dtc/8's derived knight squares
// (docs/values.md "Derived pawn structures", "Derived knight squares"): the
// rule a writer and a reader share for which free slots of the DTC side
// store nothing and are valued by two plies of moves instead.
//
// Where every move of the side off the DTC side (that stays in the table)
// moves a unit whose "worth" it always changes, a DTC-side position whose
// grandchildren in the table all lie in stored placements can be valued from
// them: its move, then the other side's, each valued by what the table and
// its sub-tables store. Derived placements must therefore not reach one
// another by one move of the other side's units (whatever the DTC side plays
// first, which never moves those units), so the derived ones are those where
// the XOR of the other side's worths is 0: any move of that side changes
// exactly one worth and makes the XOR nonzero; blocked moves only remove
// moves. A reader computes the rule at the placement a slot holds (the
// table's canonical image), so each worth must be kept by the table's
// symmetries.
//
// Pawns (wdl-dtc/7 and /8): a pawn is a heap of the steps it has left before
// promoting; its worth is that count's parity, and 2 on its start square,
// whose double step reaches both parities. Ranks alone: the file mirror of
// pawn tables keeps them. About half the structures of one pawn are derived,
// 39 % of two, 33 % of three.
//
// Knights (wdl-dtc/8, tables with a pawn, whose only symmetry is the file
// mirror): every knight move changes the square's colour, but the mirror
// changes it too. Pawns never change file within a table (only captures
// would), so the pawns' files fix a frame for the whole table region: where
// they are not symmetric under the mirror, the side with more pawns on the
// first file that differs is read as the left, and a knight's worth is its
// square's colour in that frame (half the squares worth 0). Where they are
// symmetric (pawns paired across the middle), the worth is a
// colouring of the knight's graph that the mirror keeps: its class 0 is a
// largest such set no knight move joins (24 of the 64 squares, the a- and
// h-files and d and e on ranks 1, 2, 5 and 6; an exhaustive search over the
// 32 mirror pairs finds none larger).
//
// wdl-dtc/9: wdl-dtc/8 with the knights' worth chosen per table. The frame
// scatters the derived slots wherever the pawns' files flip it between
// neighbouring slots (an index led by the knight: PPPvN), while a frame
// derives half a knight's squares against the mirror-kept colouring's 24 of
// 64 (several knights, an index led by pawns: KPvNN). The writer takes the
// one whose sampled blocks are smaller and names it in the table counter
// kKnightColouringCounter.
//
// The same units on both sides, pawns alone (wdl-dtc/8: PvP, PPvPP): a
// position off the DTC side is read at its colour-swapped image, a DTC-side
// position of the same table, so a derived position needs the images of its
// children stored, not its grandchildren. The colour swap keeps every pawn's
// worth and every move is a pawn step, so the derived placements are those
// where the XOR over both sides' pawns is 0: a child's image then never is,
// and each search a derived position starts ends (pawn steps cannot repeat).
// Pieces would break both: their moves keep the XOR.

#include <cstdint>
#include <string_view>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/types.hpp"

namespace tbf::probe {

inline constexpr std::string_view kDerivedStructuresCompactValueEncoding = "wdl-dtc/7";
inline constexpr std::string_view kDerivedKnightsCompactValueEncoding = "wdl-dtc/8";
inline constexpr std::string_view kChosenColouringCompactValueEncoding = "wdl-dtc/9";
// wdl-dtc/9: the table counter naming the knights' worth a table that
// derives knights' squares uses (KnightColouring, 0 or 1).
inline constexpr std::string_view kKnightColouringCounter = "knight_colouring";

// A knight's worth: the square's colour in the pawns' frame, the
// mirror-kept colouring where the pawn files are symmetric (wdl-dtc/8's
// rule), or the mirror-kept colouring everywhere.
enum class KnightColouring : std::uint8_t { PawnFrame = 0, MirrorKept = 1 };

// Whose worths decide whether a placement is derived: none (the table
// derives nothing), the side off the DTC side's, or both sides' (wdl-dtc/8,
// the same units on both sides, pawns alone).
enum class DerivedWorths : std::uint8_t { None, OffSide, BothSides };

// wdl-dtc/8 and /9: the rules with knights' squares and same-unit pawns.
inline bool derives_knights(std::string_view encoding) {
    return encoding == kDerivedKnightsCompactValueEncoding || encoding == kChosenColouringCompactValueEncoding;
}

// What a table of `material` stored in `encoding` with DTC side `dtc_side`
// derives by. The two sides' units differ and the other side has pawns and
// nothing else (wdl-dtc/7), or knights and pawns and nothing else in a table
// with at least one pawn (wdl-dtc/8): that side's worths. Both sides have
// the same units, pawns alone (wdl-dtc/8): both sides' worths.
inline DerivedWorths derived_worths(std::string_view encoding, const index::Material& material, Color dtc_side) {
    const Color other = ~dtc_side;
    const int pawns = material.count(other, UnitType::Pawn);
    if (material == material.flipped()) {
        const bool pawns_alone = pawns > 0 && pawns == material.count(other);
        return derives_knights(encoding) && pawns_alone ? DerivedWorths::BothSides : DerivedWorths::None;
    }
    bool derives = false;
    if (encoding == kDerivedStructuresCompactValueEncoding) {
        derives = pawns > 0 && pawns == material.count(other);
    } else if (derives_knights(encoding)) {
        derives = material.has_pawns() && pawns + material.count(other, UnitType::Knight) == material.count(other);
    }
    return derives ? DerivedWorths::OffSide : DerivedWorths::None;
}
inline bool derives_slots(std::string_view encoding, const index::Material& material, Color dtc_side) {
    return derived_worths(encoding, material, dtc_side) != DerivedWorths::None;
}
// Whether a table of `material` in `encoding` with DTC side `dtc_side`
// derives by a knight colouring it chose (wdl-dtc/9: knights among the
// worths off the DTC side), so that it names one in kKnightColouringCounter.
inline bool chooses_knight_colouring(std::string_view encoding, const index::Material& material, Color dtc_side) {
    return encoding == kChosenColouringCompactValueEncoding &&
           derived_worths(encoding, material, dtc_side) == DerivedWorths::OffSide &&
           material.count(~dtc_side, UnitType::Knight) > 0;
}

// The worth of a pawn of `color` on `square`: its steps left before the
// promotion (0 on the last rank before it), alternately 0 and 1, and 2 on
// its start square, whose double step reaches both a 0 and a 1.
inline unsigned pawn_step_value(Color color, Square square) {
    const int left = color == Color::White ? 6 - rank_of(square) : rank_of(square) - 1;
    return left == 5 ? 2U : static_cast<unsigned>(left & 1);
}

// The worth of a knight on `square` where the pawns' files are symmetric
// (rows: ranks 1 to 8): no knight move joins two squares of the same worth,
// a file's worths equal its mirror file's, and worth 0 is the largest class
// possible under both.
inline unsigned knight_square_value(Square square) {
    static constexpr std::uint8_t kWorth[8][8] = {
        {0, 1, 1, 0, 0, 1, 1, 0}, {0, 1, 2, 0, 0, 2, 1, 0}, {0, 2, 2, 3, 3, 2, 2, 0}, {0, 1, 2, 3, 3, 2, 1, 0},
        {0, 1, 1, 0, 0, 1, 1, 0}, {0, 1, 2, 0, 0, 2, 1, 0}, {0, 2, 2, 3, 3, 2, 2, 0}, {0, 1, 2, 1, 1, 2, 1, 0}};
    return kWorth[rank_of(square)][file_of(square)];
}

// The frame the pawns' files fix: 0 as placed, 1 mirrored, -1 symmetric
// (a placement and its mirror image get opposite frames, or both -1).
inline int pawn_files_frame(const index::Indexer& ix, const Square* squares) {
    int on_file[8] = {};
    for (int u = 0; u < ix.unit_count(); ++u)
        if (unit_type(ix.unit(u)) == UnitType::Pawn) ++on_file[file_of(squares[u])];
    for (int f = 0; f < 4; ++f)
        if (on_file[f] != on_file[7 - f]) return on_file[f] > on_file[7 - f] ? 0 : 1;
    return -1;
}

// The worth of a knight on `square` in `frame` (pawn_files_frame; -1 the
// mirror-kept colouring).
inline unsigned knight_worth(int frame, Square square) {
    if (frame < 0) return knight_square_value(square);
    const int file = frame == 0 ? file_of(square) : 7 - file_of(square);
    return static_cast<unsigned>((file + rank_of(square)) & 1);
}

// Whether the placement `squares` (the indexer's unit order, the table's
// colour orientation) of a table that derives slots by `worths` and
// `colouring` with DTC side `dtc_side` is derived.
inline bool derived_placement(const index::Indexer& ix, DerivedWorths worths, KnightColouring colouring,
                              Color dtc_side, const Square* squares) {
    if (worths == DerivedWorths::None) return false;
    // Computed at the first knight.
    int frame = colouring == KnightColouring::MirrorKept ? -1 : -2;
    unsigned sum = 0;
    for (int u = 0; u < ix.unit_count(); ++u) {
        const Unit unit = ix.unit(u);
        if (worths == DerivedWorths::OffSide && unit_color(unit) == dtc_side) continue;
        if (unit_type(unit) == UnitType::Knight) {
            if (frame == -2) frame = pawn_files_frame(ix, squares);
            sum ^= knight_worth(frame, squares[u]);
        } else {
            sum ^= pawn_step_value(unit_color(unit), squares[u]);
        }
    }
    return sum == 0;
}

}  // namespace tbf::probe
