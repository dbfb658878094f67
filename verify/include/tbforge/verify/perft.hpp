#pragma once
// Perft with the verifier's move generator: leaf counts at an exact depth,
// compared against the reference tables and against tbgen's perft.

#include <cstdint>
#include <string>
#include <vector>

#include "tbforge/verify/board.hpp"

namespace tbf::verify {

// Number of leaf positions exactly `depth` plies below `board` (1 at depth 0;
// a terminal position has no children). Single-threaded.
[[nodiscard]] std::uint64_t perft(const Board& board, int depth);

struct DivideEntry {
    std::string uci;
    std::uint64_t nodes = 0;
};

// Leaf counts per root move, sorted by UCI string ascending (no entries at
// depth 0). Root moves are counted in parallel (OpenMP).
[[nodiscard]] std::vector<DivideEntry> perft_divide(const Board& board, int depth);

}  // namespace tbf::verify
