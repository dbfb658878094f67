// Do the positions a search leaves open close locally? Runs `tbgen solve`'s
// search from a root to a node budget, then solves a sample of the X-to-move
// positions it expanded (evenly spaced in expansion order) on their own with
// a small node budget each, and prints how many close and how large their
// strategies' graphs were. A leaf test that runs such a bounded sub-search
// is worth its cost only where many positions close at sizes the main search
// does not reach soon (docs/fourfile.md, "A bounded search at X's nodes,
// and material handicaps").

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tbforge/base/byte_size.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/solve/solver.hpp"

using namespace tbf;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Bounded searches from the X-to-move positions of a stopped Four File search"};
    std::string fen, side_name = "white", memory = "3G";
    std::uint64_t main_nodes = 300'000, samples = 200;
    std::vector<std::uint64_t> budgets{500, 5'000};
    app.add_option("--fen", fen, "root position (X to move)")->required();
    app.add_option("--side", side_name, "X: white or black")->check(CLI::IsMember({"white", "black"}));
    app.add_option("--nodes", main_nodes, "node budget of the search from the root")->check(CLI::Range(1, 1 << 30));
    app.add_option("--memory", memory, "memory cap of the search from the root");
    app.add_option("--samples", samples, "X-to-move positions solved on their own")->check(CLI::Range(1, 1 << 20));
    app.add_option("--budgets", budgets, "node budget of each bounded search (one pass per budget)")
        ->check(CLI::Range(1, 1 << 30));
    CLI11_PARSE(app, argc, argv);

    auto root = parse_fen(fen, VariantId::FourFile);
    if (!root.ok()) {
        std::fprintf(stderr, "local_closure_study: %s\n", root.status().message().c_str());
        return 2;
    }
    auto memory_bytes = parse_byte_size(memory);
    if (!memory_bytes.ok()) {
        std::fprintf(stderr, "local_closure_study: --memory: %s\n", memory_bytes.status().message().c_str());
        return 2;
    }
    const Color side = side_name == "white" ? Color::White : Color::Black;
    if (root->side_to_move() != side) {
        std::fprintf(stderr, "local_closure_study: the root must have X (--side) to move\n");
        return 2;
    }
    if (!has_legal_move<FourFile>(*root)) {
        std::fprintf(stderr, "local_closure_study: the root is terminal\n");
        return 2;
    }

    solve::SolveOptions options;
    options.side = side;
    options.max_nodes = main_nodes;
    options.memory_bytes = *memory_bytes;
    const auto main_start = std::chrono::steady_clock::now();
    solve::Solver search(*root, options);
    auto summary = search.run();
    if (!summary.ok()) {
        std::fprintf(stderr, "local_closure_study: %s\n", summary.status().message().c_str());
        return 3;
    }
    std::vector<Position> x_positions;
    search.for_each_expanded_x_position([&](const Position& pos) { x_positions.push_back(pos); });
    std::printf("root %s, X %s: %s, %llu positions (%llu expanded, %zu with X to move), %.1f s\n", fen.c_str(),
                side_name.c_str(), std::string(solve::verdict_name(summary->verdict)).c_str(),
                static_cast<unsigned long long>(summary->final.nodes),
                static_cast<unsigned long long>(summary->final.expanded), x_positions.size(),
                seconds_since(main_start));
    if (x_positions.empty()) return 0;

    const std::uint64_t taken = std::min<std::uint64_t>(samples, x_positions.size());
    for (std::uint64_t budget : budgets) {
        std::uint64_t proven = 0, lost = 0, open = 0;
        std::vector<std::uint64_t> proven_sizes;
        const auto start = std::chrono::steady_clock::now();
        for (std::uint64_t k = 0; k < taken; ++k) {
            // Evenly spaced in expansion order: shallow and deep parts alike.
            const Position& pos = x_positions[k * x_positions.size() / taken];
            solve::SolveOptions sub;
            sub.side = side;
            sub.max_nodes = budget;
            sub.memory_bytes = std::uint64_t{256} << 20;
            auto result = solve::Solver(pos, sub).run();
            if (!result.ok()) {
                std::fprintf(stderr, "local_closure_study: %s: %s\n", to_fen(pos).c_str(),
                             result.status().message().c_str());
                return 3;
            }
            switch (result->verdict) {
                case solve::Verdict::Proven:
                    ++proven;
                    proven_sizes.push_back(result->final.nodes);
                    break;
                case solve::Verdict::Lost: ++lost; break;
                case solve::Verdict::NotProven: ++open; break;
            }
        }
        std::sort(proven_sizes.begin(), proven_sizes.end());
        std::printf("budget %llu: %llu positions, proven %llu, lost %llu, not proven %llu",
                    static_cast<unsigned long long>(budget), static_cast<unsigned long long>(taken),
                    static_cast<unsigned long long>(proven), static_cast<unsigned long long>(lost),
                    static_cast<unsigned long long>(open));
        if (!proven_sizes.empty()) {
            std::printf("; graph of the proven: min %llu, median %llu, max %llu",
                        static_cast<unsigned long long>(proven_sizes.front()),
                        static_cast<unsigned long long>(proven_sizes[proven_sizes.size() / 2]),
                        static_cast<unsigned long long>(proven_sizes.back()));
        }
        std::printf("; %.1f s\n", seconds_since(start));
    }
    return 0;
}
