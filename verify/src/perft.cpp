// Perft: plain recursion over copied boards; root moves in parallel.

#include "tbforge/verify/perft.hpp"

#include <algorithm>

#include "movegen.hpp"

namespace tbf::verify {

std::uint64_t perft(const Board& board, int depth) {
    if (depth <= 0) return 1;
    detail::MoveList moves;
    detail::generate_legal(board, moves);
    // At the last ply the legal moves are the leaves: no need to make them.
    if (depth == 1) return moves.size();
    std::uint64_t nodes = 0;
    for (const Move& m : moves) nodes += perft(board.after(m), depth - 1);
    return nodes;
}

std::vector<DivideEntry> perft_divide(const Board& board, int depth) {
    std::vector<DivideEntry> entries;
    if (depth <= 0) return entries;
    const std::vector<Move> moves = board.legal_moves();
    entries.resize(moves.size());
    const auto count = static_cast<long>(moves.size());
    // Each iteration writes only its own entry: no shared state.
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        entries[k].uci = to_uci(moves[k]);
        entries[k].nodes = perft(board.after(moves[k]), depth - 1);
    }
    std::sort(entries.begin(), entries.end(),
              [](const DivideEntry& a, const DivideEntry& b) { return a.uci < b.uci; });
    return entries;
}

}  // namespace tbf::verify
