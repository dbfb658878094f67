#pragma once
// X's move order (docs/fourfile.md, "Move order"). Only speed depends on it:
// the solver's proofs are checked by the attractor, whatever order is used.

#include <cstdint>
#include <functional>
#include <vector>

#include "tbforge/rules/movegen.hpp"

namespace tbf::solve::detail {

// What the graph already knows about a position reached by one of X's moves.
enum class Known : std::uint8_t {
    Unknown,   // not in the graph
    Open,      // in the graph, undecided
    Expanded,  // in the graph with its replies known, not proven lost
    Safe,      // in the graph and proven safe (outside the attractor)
    Lost,      // proven lost for X
};

// How many positions after X's move the graph holds with the same placement
// of X's units (0: none): X keeping to few placements keeps the strategy small.
using PlacementCount = std::function<std::uint32_t(const Position&)>;

// How far X's move order looks for the opponent's forced checkmates after
// each of X's moves (docs/fourfile.md, "X's move order").
struct MateSearch {
    // Mates by checks within this many of the opponent's moves (the last
    // one mates, every earlier one checks); 1: mate in one only.
    int check_moves = 3;
    // Also mates in two whose first move is quiet: a threat no reply of X's
    // meets.
    bool threats = true;
};

struct ScoredMove {
    Move move;
    std::int64_t score = 0;
};

// X's legal moves at `pos` (X to move), best first. Ties by move bits, so the
// order is deterministic.
std::vector<ScoredMove> order_moves(const Position& pos, const MoveList& moves,
                                    const std::function<Known(const Position&)>& known,
                                    const PlacementCount& placements, const MateSearch& mates = {});

// Squares the opponent of X could ever attack while X's pawns and the
// opponent's blocked pawns stay where they are.
Bitboard opponent_reach(const Position& pos, Color x);

// The squares ahead of a pawn of colour `c` on `s`, on its file: where it
// may still go (pawns never capture in Four File), and where a unit in
// front stops it for good.
constexpr Bitboard squares_ahead(Color c, Square s) {
    const Bitboard below = bit(s) - 1;
    return file_bb(file_of(s)) & (c == Color::White ? ~below & ~bit(s) : below);
}

// A unit's worth in centipawns: pawn 100, knight and bishop 300, rook 500,
// queen 900; the king counts nothing (it is never traded).
constexpr std::int64_t unit_value(UnitType t) {
    switch (t) {
        case UnitType::Queen: return 900;
        case UnitType::Rook: return 500;
        case UnitType::Bishop: return 300;
        case UnitType::Knight: return 300;
        case UnitType::Pawn: return 100;
        case UnitType::King: break;
    }
    return 0;
}

// The material of `c`'s units at `pos` (unit_value summed).
std::int64_t material(const Position& pos, Color c);

// True if the side to move at `pos` can checkmate in one move.
bool mates_in_one(const Position& pos);

// True if the side to move at `pos` forces checkmate within the reach of
// `search`: a mate in one, a mate by checks within search.check_moves of its
// moves, or (search.threats) a mate in two after a quiet first move.
bool forces_mate(const Position& pos, const MateSearch& search);

}  // namespace tbf::solve::detail
