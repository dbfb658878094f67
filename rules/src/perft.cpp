#include "tbforge/rules/perft.hpp"

namespace tbf {

std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Position& pos, VariantId variant,
                                                         int depth) {
    return with_variant(variant, [&]<class R>() {
        MoveList list;
        generate_legal<R>(pos, list);
        std::vector<std::pair<Move, std::uint64_t>> counts(list.size());
        const auto n = static_cast<long>(list.size());
#pragma omp parallel for schedule(dynamic, 1)
        for (long i = 0; i < n; ++i) {
            const Move m = list[static_cast<std::size_t>(i)];
            counts[static_cast<std::size_t>(i)] = {m, perft<R>(pos.after(m), depth - 1)};
        }
        return counts;
    });
}

std::uint64_t perft(const Position& pos, VariantId variant, int depth) {
    if (depth <= 1) {
        return with_variant(variant, [&]<class R>() { return perft<R>(pos, depth); });
    }
    std::uint64_t total = 0;
    for (const auto& entry : perft_divide(pos, variant, depth)) total += entry.second;
    return total;
}

}  // namespace tbf
