// Perft: recursion making and unmaking moves on one board; root moves in
// parallel, each on its own copy.

#include "tbforge/verify/perft.hpp"

#include <algorithm>

#include "movegen.hpp"

namespace tbf::verify {
namespace {

std::uint64_t perft_in_place(Board& board, int depth) {
    detail::MoveList moves;
    detail::generate_legal(board, moves);
    // At the last ply the legal moves are the leaves: no need to make them.
    if (depth == 1) return moves.size();
    std::uint64_t nodes = 0;
    for (const Move& m : moves) {
        const detail::Undo undo = detail::BoardEditor::make(board, m);
        nodes += perft_in_place(board, depth - 1);
        detail::BoardEditor::unmake(board, m, undo);
    }
    return nodes;
}

}  // namespace

std::uint64_t perft(const Board& board, int depth) {
    if (depth <= 0) return 1;
    Board scratch = board;
    return perft_in_place(scratch, depth);
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
