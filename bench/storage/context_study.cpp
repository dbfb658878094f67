// How many bytes a table's stored codes need under a static context model
// (not run in CI), against what zstd stores for them. zstd finds repeats of
// byte strings; a table's codes are better seen as an image: a code mostly
// equals the one before it (the last unit one square further) or the one a
// period of the index back (the next unit one square further). This study
// measures the entropy of the codes under such contexts, with every model
// fitted to its own table (static: a reader would load the model with the
// table and decode any block on its own), to see whether a codec of that
// kind could store less than zstd before any format carries it.
//
// The codes of each side to move are coded in index order as a chain of
// binary decisions, each in a context of the neighbours' codes:
//   - equal to the code before (L)?  context: whether L equals the code one
//     period back (U), the one a second period back (V), the one before U
//     (UL), U equal to UL, and the length of L's run so far, bucketed;
//   - otherwise equal to U (if it differs from L)?  context: U = V, U = UL;
//   - otherwise equal to V (if it differs from both)?
//   - otherwise the code itself, from its frequency among the codes not
//     predicted (order 0, or given L: the cheaper of the two per table).
// The two periods are the ones whose codes most often equal the code
// (sampled over 2..4096). A neighbour that lies in an earlier block of
// `--block` slots is unknown, as a reader decoding one block would have it.
//
// Bytes counted: the entropy of every decision and code under its context's
// frequencies in the table, plus the model (2 bytes a context and a code
// frequency) and `--overhead` bytes a block (a coder's flush and the
// block's place in an index). Printed per table and summed against the
// stored bytes.
//
// Usage: context_study DB [TABLE...] [--block N] [--overhead B] [--quiet]

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include "study_database.hpp"
#include "tbforge/storage/database.hpp"

namespace {

using namespace tbf::storage;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "context_study: %s\n", message.c_str());
    std::exit(3);
}

constexpr std::uint32_t kUnknown = 0xFFFFFFFFu;

// Bits to code symbols with these counts, each at its own frequency.
template <class Counts>
double coded_bits(const Counts& counts) {
    double total = 0;
    for (const std::uint64_t c : counts) total += static_cast<double>(c);
    double bits = 0;
    for (const std::uint64_t c : counts) {
        if (c) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / total);
    }
    return bits;
}

double symbol_bits(const std::map<std::uint32_t, std::uint64_t>& counts) {
    std::vector<std::uint64_t> n;
    for (const auto& [symbol, c] : counts) n.push_back(c);
    return coded_bits(n);
}

// The two periods in 2..4096 whose codes most often equal the code.
std::pair<std::size_t, std::size_t> best_periods(const std::uint32_t* s, std::size_t n) {
    const std::size_t max_period = std::min<std::size_t>(4096, n / 4);
    if (max_period < 3) return {0, 0};
    const std::size_t samples = std::min<std::size_t>(n - max_period, 65536);
    const std::size_t stride = std::max<std::size_t>(1, (n - max_period) / samples);
    std::vector<std::uint32_t> hits(max_period + 1, 0);
    for (std::size_t k = 0; k < samples; ++k) {
        const std::size_t i = max_period + k * stride;
        if (i >= n) break;
        for (std::size_t p = 2; p <= max_period; ++p) hits[p] += s[i] == s[i - p];
    }
    std::size_t first = 2;
    for (std::size_t p = 2; p <= max_period; ++p) if (hits[p] > hits[first]) first = p;
    std::size_t second = first == 2 ? 3 : 2;
    for (std::size_t p = 2; p <= max_period; ++p) {
        if (p != first && hits[p] > hits[second]) second = p;
    }
    return {first, second};
}

struct Counts {
    std::vector<std::uint64_t> same_left[2], same_up[2], same_second[2];
    std::map<std::uint32_t, std::uint64_t> order0;
    std::map<std::uint32_t, std::map<std::uint32_t, std::uint64_t>> by_left;
    // Every code given its three neighbours' codes in full: what a model of
    // the joint context could reach at most (its model counted apart).
    std::unordered_map<std::uint64_t, std::uint64_t> joint, joint_context;
    Counts() {
        for (int b = 0; b < 2; ++b) {
            same_left[b].assign(16 * 8, 0);
            same_up[b].assign(4, 0);
            same_second[b].assign(1, 0);
        }
    }
};

int run_bucket(std::size_t run) {
    if (run <= 1) return 0;
    if (run == 2) return 1;
    if (run <= 4) return 2;
    if (run <= 8) return 3;
    if (run <= 16) return 4;
    if (run <= 64) return 5;
    if (run <= 512) return 6;
    return 7;
}

void count_side(const std::uint32_t* s, std::size_t n, std::size_t block, Counts& c) {
    const auto [p1, p2] = best_periods(s, n);
    std::size_t run = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const std::size_t in_block = j % block;
        const auto at = [&](std::size_t back) { return back != 0 && back <= in_block ? s[j - back] : kUnknown; };
        const std::uint32_t left = at(1), up = at(p1), second = at(p2), up_left = p1 ? at(p1 + 1) : kUnknown;
        if (left == kUnknown) run = 0;
        const std::uint32_t code = s[j];
        bool coded = false;
        if (left != kUnknown) {
            const int ctx = (left == up) | (left == second) << 1 | (up == up_left) << 2 | (left == up_left) << 3 |
                            run_bucket(run) << 4;
            const bool hit = code == left;
            ++c.same_left[hit][ctx];
            coded = hit;
        }
        if (!coded && up != kUnknown && up != left) {
            const int ctx = (up == second) | (up == up_left) << 1;
            const bool hit = code == up;
            ++c.same_up[hit][ctx];
            coded = hit;
        }
        if (!coded && second != kUnknown && second != left && second != up) {
            const bool hit = code == second;
            ++c.same_second[hit][0];
            coded = hit;
        }
        {
            // Codes fit 16 bits and never reach 0xFFFF, which stands for an
            // unknown neighbour: the keys are exact.
            const std::uint64_t ctx =
                std::uint64_t{left & 0xFFFF} << 32 | std::uint64_t{up & 0xFFFF} << 16 | (second & 0xFFFF);
            ++c.joint_context[ctx];
            ++c.joint[ctx << 16 | code];
        }
        if (!coded) {
            ++c.order0[code];
            ++c.by_left[left][code];
        }
        run = code == left ? run + 1 : 1;
    }
}

struct TableResult : tbf::study::TableSize {
    double joint_bytes = 0, joint_model_bytes = 0;
    double decisions_bytes = 0, symbols_bytes = 0, model_bytes = 0, overhead_bytes = 0;
    [[nodiscard]] double total() const { return decisions_bytes + symbols_bytes + model_bytes + overhead_bytes; }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: context_study DB [TABLE...] [--block N] [--overhead B] [--quiet]\n");
        return 2;
    }
    std::vector<std::string> names;
    std::size_t block = 16384;
    double overhead = 6;
    bool quiet = false;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--block" && i + 1 < argc) {
            block = std::strtoull(argv[++i], nullptr, 10);
            if (block < 2) die("--block must be at least 2");
        } else if (arg == "--overhead" && i + 1 < argc) {
            overhead = std::strtod(argv[++i], nullptr);
        } else if (arg == "--quiet") {
            quiet = true;
        } else {
            names.push_back(arg);
        }
    }
    auto db = tbf::study::open_study_database("context_study", argv[1], names);

    std::vector<TableResult> results(names.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t t = 0; t < names.size(); ++t) {
        TableResult& r = results[t];
        auto table = tbf::study::open_study_table("context_study", db, names[t], r);
        const std::vector<std::uint32_t> values = tbf::study::read_all_codes("context_study", table);
        // Both sides to move, each its own image.
        Counts c;
        const std::size_t half = values.size() / 2;
        count_side(values.data(), half, block, c);
        count_side(values.data() + half, values.size() - half, block, c);
        double decisions = 0;
        std::size_t contexts = 0;
        for (const auto* d : {&c.same_left, &c.same_up, &c.same_second}) {
            for (std::size_t k = 0; k < (*d)[0].size(); ++k) {
                decisions += coded_bits(std::array{(*d)[0][k], (*d)[1][k]});
                contexts += ((*d)[0][k] + (*d)[1][k]) != 0;
            }
        }
        const double order0_bits = symbol_bits(c.order0);
        const double order0_model = 2.0 * static_cast<double>(c.order0.size());
        double left_bits = 0, left_model = 0;
        for (const auto& [l, counts] : c.by_left) {
            left_bits += symbol_bits(counts);
            left_model += 2.0 * static_cast<double>(counts.size());
        }
        const bool use_left = left_bits / 8 + left_model < order0_bits / 8 + order0_model;
        r.decisions_bytes = decisions / 8;
        r.symbols_bytes = (use_left ? left_bits : order0_bits) / 8;
        r.model_bytes = 2.0 * static_cast<double>(contexts) + (use_left ? left_model : order0_model);
        {
            // H(code | L, U, V) = H(code, L, U, V) - H(L, U, V).
            double bits = 0;
            for (const auto& [k, n] : c.joint) bits -= static_cast<double>(n) * std::log2(static_cast<double>(n));
            for (const auto& [k, n] : c.joint_context) bits += static_cast<double>(n) * std::log2(static_cast<double>(n));
            r.joint_bytes = bits / 8;
            r.joint_model_bytes = 2.0 * static_cast<double>(c.joint.size());
        }
        const std::uint64_t blocks = (half + block - 1) / block + (values.size() - half + block - 1) / block;
        r.overhead_bytes = overhead * static_cast<double>(blocks);
        if (!quiet) {
#pragma omp critical(print)
            std::printf("%-20s slots %11llu stored %10llu context %12.0f (%.3f) decisions %10.0f codes %10.0f model %7.0f"
                        " joint %10.0f model %9.0f\n",
                        r.name.c_str(), static_cast<unsigned long long>(r.slots),
                        static_cast<unsigned long long>(r.stored), r.total(),
                        r.total() / static_cast<double>(r.stored), r.decisions_bytes, r.symbols_bytes, r.model_bytes,
                        r.joint_bytes, r.joint_model_bytes);
        }
    }
    std::uint64_t slots = 0, stored = 0;
    double total = 0, decisions = 0, symbols = 0, model = 0, over = 0, joint = 0, joint_model = 0;
    for (const TableResult& r : results) {
        slots += r.slots;
        stored += r.stored;
        total += r.total();
        decisions += r.decisions_bytes;
        symbols += r.symbols_bytes;
        model += r.model_bytes;
        over += r.overhead_bytes;
        joint += r.joint_bytes;
        joint_model += r.joint_model_bytes;
    }
    std::printf("\n%zu tables, %llu slots, blocks of %zu slots: stored %llu B, context model %.0f B (%.4f): "
                "decisions %.0f, codes %.0f, models %.0f, blocks %.0f\n",
                results.size(), static_cast<unsigned long long>(slots), block, static_cast<unsigned long long>(stored),
                total, total / static_cast<double>(stored), decisions, symbols, model, over);
    std::printf("every code given its three neighbours in full: %.0f B (%.4f), its model %.0f B\n", joint,
                joint / static_cast<double>(stored), joint_model);
    return 0;
}
