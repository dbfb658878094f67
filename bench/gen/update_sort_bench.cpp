// Micro-benchmarks of an out-of-core flush: sorting one bucket's updates
// (the radix sort used, and the comparison sort it replaced) and encoding
// them into delta-coded frames. Updates are spread as in a big level of a
// 6-unit table: one level, slots uniform over a chunk of 1.5e9 slots,
// nearly all one-un-move updates.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "work_files.hpp"

namespace {

using tbf::gen::ooc::Update;

std::vector<Update> level_updates(std::size_t n) {
    std::mt19937_64 rng(5);
    std::vector<Update> updates(n);
    for (auto& u : updates) {
        const std::uint64_t r = rng();
        u.slot = static_cast<std::uint32_t>((r >> 32) % 1516000000u);
        u.level = 0;
        u.repeats = (r & 63) == 0 ? 2 : 1;
        u.child = static_cast<std::uint8_t>(((r >> 8) & 1 ? tbf::gen::ooc::kLossChild : 0) | 1);
    }
    return updates;
}

void BM_SortUpdates_Radix(benchmark::State& state) {
    const auto source = level_updates(static_cast<std::size_t>(state.range(0)));
    std::vector<Update> updates;
    for (auto _ : state) {
        state.PauseTiming();
        updates = source;
        state.ResumeTiming();
        tbf::gen::ooc::sort_updates(updates);
        benchmark::DoNotOptimize(updates.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SortUpdates_Radix)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

void BM_SortUpdates_Comparison(benchmark::State& state) {
    const auto source = level_updates(static_cast<std::size_t>(state.range(0)));
    std::vector<Update> updates;
    auto order = [](const Update& a, const Update& b) {
        return std::tie(a.level, a.slot, a.repeats, a.child) < std::tie(b.level, b.slot, b.repeats, b.child);
    };
    for (auto _ : state) {
        state.PauseTiming();
        updates = source;
        state.ResumeTiming();
        std::sort(updates.begin(), updates.end(), order);
        benchmark::DoNotOptimize(updates.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SortUpdates_Comparison)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

void BM_EncodeUpdateFrames(benchmark::State& state) {
    const auto source = level_updates(static_cast<std::size_t>(state.range(0)));
    std::vector<Update> updates;
    std::size_t bytes = 0;
    for (auto _ : state) {
        state.PauseTiming();
        updates = source;
        state.ResumeTiming();
        bytes = tbf::gen::ooc::encode_update_frames(updates).size();
        benchmark::DoNotOptimize(bytes);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.counters["bytes_per_update"] = static_cast<double>(bytes) / static_cast<double>(state.range(0));
}
BENCHMARK(BM_EncodeUpdateFrames)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

}  // namespace
