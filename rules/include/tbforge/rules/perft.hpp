#pragma once
// Leaf-node counting, the standard check of a move generator against others.

#include <cstdint>
#include <utility>
#include <vector>

#include "tbforge/rules/movegen.hpp"

namespace tbf {

template <Ruleset R>
std::uint64_t perft(const Position& pos, int depth) {
    if (depth <= 0) return 1;
    MoveList list;
    generate_legal<R>(pos, list);
    if (depth == 1) return list.size();
    std::uint64_t nodes = 0;
    for (Move m : list) nodes += perft<R>(pos.after(m), depth - 1);
    return nodes;
}

// Node count below each root move, in generation order. Root moves are
// searched in parallel.
std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Position& pos, VariantId variant,
                                                         int depth);
std::uint64_t perft(const Position& pos, VariantId variant, int depth);

}  // namespace tbf
