// Move generation and perft speed per ruleset, single thread.
#include <benchmark/benchmark.h>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"

using namespace tbf;

namespace {

constexpr const char* kAntichessStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
constexpr const char* kAntichessMiddle =
    "1nb4r/3k2pp/7n/5p2/1b1Pp3/8/PP2NKPP/1R5R w - - 0 16";
constexpr const char* kAntichessEnding = "8/2k5/8/8/8/8/5B2/1N6 w - - 0 1";
constexpr const char* kFourFileStart = "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1";
constexpr const char* kFourFileMiddle = "r3k3/8/4p1n1/p1B5/P1b5/8/4P1P1/2R1K1N1 w - - 0 11";

template <Ruleset R>
void BM_Rules_Perft(benchmark::State& state, const char* fen, int depth) {
    const Position pos = *parse_fen(fen, R::kId);
    std::uint64_t nodes = 0;
    for (auto _ : state) {
        const auto n = perft<R>(pos, depth);
        benchmark::DoNotOptimize(n);
        nodes += n;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(nodes));
}

template <Ruleset R>
void BM_Rules_GenerateLegal(benchmark::State& state, const char* fen) {
    const Position pos = *parse_fen(fen, R::kId);
    MoveList list;
    for (auto _ : state) {
        generate_legal<R>(pos, list);
        benchmark::DoNotOptimize(list.size());
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_Rules_PerftAntichess(benchmark::State& state, const char* fen, int depth) {
    BM_Rules_Perft<Antichess>(state, fen, depth);
}
void BM_Rules_PerftFourFile(benchmark::State& state, const char* fen, int depth) {
    BM_Rules_Perft<FourFile>(state, fen, depth);
}
void BM_Rules_GenerateLegalAntichess(benchmark::State& state, const char* fen) {
    BM_Rules_GenerateLegal<Antichess>(state, fen);
}
void BM_Rules_GenerateLegalFourFile(benchmark::State& state, const char* fen) {
    BM_Rules_GenerateLegal<FourFile>(state, fen);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Rules_PerftAntichess, antichess_start_d5, kAntichessStart, 5)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Rules_PerftAntichess, antichess_middle_d4, kAntichessMiddle, 4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Rules_PerftAntichess, antichess_ending_d6, kAntichessEnding, 6)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Rules_PerftFourFile, fourfile_start_d6, kFourFileStart, 6)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Rules_PerftFourFile, fourfile_middle_d5, kFourFileMiddle, 5)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Rules_GenerateLegalAntichess, antichess_start, kAntichessStart);
BENCHMARK_CAPTURE(BM_Rules_GenerateLegalAntichess, antichess_middle, kAntichessMiddle);
BENCHMARK_CAPTURE(BM_Rules_GenerateLegalFourFile, fourfile_middle, kFourFileMiddle);
