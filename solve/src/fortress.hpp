#pragma once
// A leaf solver for quiet positions (docs/fourfile.md, "Fortress leaves"):
// X keeps every unit of its own out of the opponent's reach with waiting
// moves, and every opponent line is followed until the positions close on
// themselves. Repetition is a draw, so a closure with no loss for X in it is
// a proof, whatever the opponent does; the thesis's barrier states are such
// positions.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "tbforge/rules/movegen.hpp"

namespace tbf::solve::detail {

// How X waits: which of its unit kinds moves first (a fixed order, so X's
// move is a function of the position and the closure is well defined).
struct WaitingPolicy {
    std::uint8_t first = 0;  // index into the unit kinds (knight, bishop, king, rook, queen)
    // Out of reach (false): after X's move no unit of X's can ever be
    // attacked. Guarded (true): after X's move every unit the opponent can
    // take is worth no more than what takes it and X can take back.
    bool guarded = false;
};

// A waiting policy under which the closure from `pos` (X to move) holds at
// most `budget` X-to-move positions, never lets X be checkmated and always
// leaves X a waiting move; nullopt if none does. Tried only when no unit of
// X's can be reached by the opponent's pieces. Deterministic.
std::optional<WaitingPolicy> find_fortress(const Position& pos, std::size_t budget);

// The same with guarded waiting policies: units of X's may stand within the
// opponent's reach where every capture of the opponent's is an exchange X
// takes back at once (docs/fourfile.md, "Guarded fortress leaves"). Tried
// only where the opponent has at most one piece besides king and pawns.
std::optional<WaitingPolicy> find_guarded_fortress(const Position& pos, std::size_t budget);

// Forgets the closures known to fail on this thread (they only save work:
// answers are the same with or without them).
void clear_fortress_memo();

// How many closures on this thread stopped at a position known to fail.
std::uint64_t fortress_memo_hits();

// Visits every X-to-move position of the closure of `policy` from `pos` with
// X's move, breadth first. `skip(p)` true: p is answered elsewhere (neither
// visited nor followed). Returns false if the closure fails.
bool follow_fortress(const Position& pos, WaitingPolicy policy, std::size_t budget,
                     const std::function<bool(const Position&)>& skip,
                     const std::function<void(const Position&, Move)>& visit);

}  // namespace tbf::solve::detail
