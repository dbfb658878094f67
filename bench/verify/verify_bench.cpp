// Perft speed of the verifier's move generator (single thread), a few
// positions per variant. Items are perft leaf nodes.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <iterator>
#include <string>

#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"

namespace {

using tbf::verify::Variant;

struct BenchPosition {
    Variant variant;
    const char* name;
    const char* fen;
    int depth;
};

// Positions from tests/reference/perft, at depths of 0.5 to 5 million nodes.
constexpr BenchPosition kPositions[] = {
    {Variant::Antichess, "start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", 5},
    {Variant::Antichess, "random-mid-1", "1nb4r/3k2pp/7n/5p2/1b1Pp3/8/PP2NKPP/1R5R w - - 0 16", 5},
    {Variant::AntichessFics, "two-kings-each", "8/8/2k1k3/8/8/3K1K2/8/8 w - - 0 1", 5},
    {Variant::AntichessJoint, "stalemate-ish", "8/8/8/8/8/p1p1p1p1/P1P1P1P1/7K w - - 0 1", 13},
    {Variant::FourFile, "start", "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1", 6},
    {Variant::FourFile, "mid-white", "r3k3/8/4p1n1/p1B5/P1b5/8/4P1P1/2R1K1N1 w - - 0 11", 6},
    {Variant::FourFile, "promotions-both", "2r1k3/P5P1/8/8/8/8/p5p1/2R1K3 w - - 0 1", 5},
};

void BM_Verify_Perft(benchmark::State& state) {
    const BenchPosition& p = kPositions[state.range(0)];
    const tbf::Result<tbf::verify::Board> root = tbf::verify::parse_fen(p.variant, p.fen);
    if (!root) {
        state.SkipWithError(root.status().message().c_str());
        return;
    }
    std::uint64_t nodes = 0;
    for (auto _ : state) {
        const std::uint64_t n = tbf::verify::perft(*root, p.depth);
        benchmark::DoNotOptimize(n);
        nodes += n;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(nodes));
    state.SetLabel(std::string(tbf::verify::variant_name(p.variant)) + " " + p.name + " d" +
                   std::to_string(p.depth));
}

BENCHMARK(BM_Verify_Perft)
    ->DenseRange(0, static_cast<int>(std::size(kPositions)) - 1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
