// Probe cost on the tables of an existing database (not run in CI): for each
// named table, random positions (both sides to move, fixed seed) probed with
// a warm block cache (every position probed once before timing) and without
// one (every probe reads and decodes its block), `probe` and `probe_wdl`,
// one thread, microseconds a probe. probe_bench builds its own four tables;
// this reads any table in any encoding, so two databases of the same tables
// compare encodings.
//
// Usage: probe_sample DB TABLE... [--variant V] [--warm N] [--cold N]
// (--warm, --cold: how many positions each, 200,000 and 20,000 unless given)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tbforge/index/material.hpp"
#include "tbforge/probe/tablebase.hpp"

namespace {

using namespace tbf;

constexpr std::size_t kDefaultWarmPositions = 200000;
constexpr std::size_t kDefaultColdPositions = 20000;

[[noreturn]] void fail(const std::string& message, int code) {
    std::fprintf(stderr, "probe_sample: %s\n", message.c_str());
    std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> names;
    VariantId variant = VariantId::Antichess;
    std::size_t warm_positions = kDefaultWarmPositions, cold_positions = kDefaultColdPositions;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--warm" || arg == "--cold") && i + 1 < argc) {
            const long long n = std::atoll(argv[++i]);
            if (n <= 0) fail(arg + " needs a positive count", 2);
            (arg == "--warm" ? warm_positions : cold_positions) = static_cast<std::size_t>(n);
        } else if (arg == "--variant" && i + 1 < argc) {
            auto v = parse_variant(argv[++i]);
            if (!v) fail("unknown variant '" + std::string(argv[i]) + "'", 2);
            variant = *v;
        } else {
            names.push_back(arg);
        }
    }
    if (argc < 3 || names.empty()) fail("usage: probe_sample DB TABLE... [--variant V] [--warm N] [--cold N]", 2);
    for (const std::string& name : names) {
        auto parsed = index::parse_table(name, variant);
        if (!parsed.ok()) fail(parsed.status().message(), 2);
        const index::Material material = index::canonical(*parsed);
        for (const bool cold : {false, true}) {
            probe::TablebaseOptions options;
            options.cache_bytes = cold ? 0 : std::size_t{1} << 30;
            auto tb = probe::Tablebase::open(argv[1], options);
            if (!tb.ok()) fail(tb.status().to_string(), 3);
            auto table = tb->table(variant, material);
            if (!table.ok()) fail(table.status().to_string(), 3);
            const index::Indexer& ix = (*table)->indexer();
            std::mt19937_64 rng(7);
            std::vector<Position> positions;
            const std::size_t wanted = cold ? cold_positions : warm_positions;
            while (positions.size() < wanted) {
                const Color side = rng() & 1 ? Color::White : Color::Black;
                if (auto pos = ix.position(rng() % ix.size(), side)) positions.push_back(*pos);
            }
            if (!cold) {
                for (const Position& pos : positions) (void)tb->probe(variant, pos);
            }
            for (const bool wdl_only : {false, true}) {
                std::size_t failed = 0;
                const auto start = std::chrono::steady_clock::now();
                for (const Position& pos : positions) {
                    failed += wdl_only ? !tb->probe_wdl(variant, pos).ok() : !tb->probe(variant, pos).ok();
                }
                const double us =
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                    static_cast<double>(positions.size());
                std::printf("%-10s %s %-9s %8.3f us a probe (%zu positions, %zu failed)\n", name.c_str(),
                            cold ? "cold" : "warm", wdl_only ? "probe_wdl" : "probe", us, positions.size(), failed);
                if (failed != 0) fail(name + ": " + std::to_string(failed) + " probes failed", 1);
            }
        }
    }
}
