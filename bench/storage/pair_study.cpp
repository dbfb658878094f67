// Size and lookup cost of a pair-grammar codec on existing tables' values
// (not run in CI). Cold probes decode a whole zstd frame of 16384 slots for
// every block they touch, and smaller frames lose more bytes than they save
// time (bench/storage/README.md, "Cold probes with smaller blocks"). This
// study measures the alternative before any format carries it: the values
// of a table rewritten as symbols of a grammar (the most frequent adjacent
// pair of symbols becomes a new symbol, round after round), the final
// symbols Huffman-coded and packed into blocks of a fixed small byte size,
// no symbol across a block boundary. A value is then found by decoding the
// symbols of one small block and descending one symbol's pairs.
//
// Bytes counted for the codec: the blocks; the grammar at two symbol ids a
// pair (12 bits each up to 4096 symbols, more above); the code lengths at a byte a symbol; the terminal
// values at 2 bytes each; an index of 2 bytes a block (its value count)
// plus 8 bytes for every 2^k values, k chosen so that there are about a
// quarter as many of those entries as blocks. A block whose values do not
// fit 2 bytes counts 4.
//
// Printed per table and summed: the stored bytes (the records as the
// generator wrote them), the codec's bytes for each block size and their
// ratio to the stored bytes, the grammar's size and rounds, the codec's
// build time; then the mean cost of a random value lookup decoded from
// memory for each block size, against a random block read through the
// storage library without a cache (RocksDB read, checksum, zstd frame).
// Every table's lookups are checked against the values read.
//
// Usage: pair_study DB [TABLE...] [--blocks 32,64,...] [--symbols N]
//                   [--min-count N] [--lookups N] [--quiet]

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "study_database.hpp"
#include "tbforge/storage/database.hpp"

namespace {

using namespace tbf::storage;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "pair_study: %s\n", message.c_str());
    std::exit(3);
}

constexpr unsigned kMaxCodeBits = 24;
constexpr unsigned kFastBits = 12;

// The values of a table as a grammar over its distinct values.
struct Grammar {
    std::vector<std::uint32_t> terminal_value;  // symbol < terminals: its value
    std::vector<std::uint16_t> left, right;     // symbol terminals + k: pair k
    std::vector<std::uint64_t> length;          // values a symbol expands to
    std::vector<std::uint16_t> sequence;        // the table as symbols
    std::size_t terminals = 0;
    int rounds = 0;
    [[nodiscard]] std::size_t symbols() const { return length.size(); }
};

Grammar build_grammar(const std::vector<std::uint32_t>& values, std::size_t max_symbols, std::uint32_t min_count) {
    Grammar g;
    // Terminals ranked by frequency, so that small ids are the common values.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> freq;
    {
        std::vector<std::uint32_t> sorted(values);
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < sorted.size();) {
            std::size_t j = i;
            while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
            freq.emplace_back(j - i, sorted[i]);
            i = j;
        }
    }
    std::sort(freq.begin(), freq.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (freq.size() > max_symbols) die("more distinct values than symbols");
    std::vector<std::pair<std::uint32_t, std::uint16_t>> to_symbol;
    for (std::size_t k = 0; k < freq.size(); ++k) {
        g.terminal_value.push_back(freq[k].second);
        to_symbol.emplace_back(freq[k].second, static_cast<std::uint16_t>(k));
        g.length.push_back(1);
    }
    std::sort(to_symbol.begin(), to_symbol.end());
    g.terminals = freq.size();
    g.sequence.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        g.sequence[i] = std::lower_bound(to_symbol.begin(), to_symbol.end(), std::make_pair(values[i], std::uint16_t{0}))->second;
    }

    const std::size_t m = max_symbols;
    std::vector<std::uint32_t> count(m * m, 0);
    std::vector<std::uint16_t> replacement(m * m, 0);  // 0: not replaced (symbol 0 is a terminal)
    std::vector<std::uint8_t> is_left(m), is_right(m);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> candidates;
    while (g.symbols() < max_symbols && g.sequence.size() > 1) {
        auto& s = g.sequence;
        // Occurrences that a left-to-right replacement could all take: in a
        // run "aaa" the pair (a,a) is counted once.
        bool overlapped = false;
        for (std::size_t i = 0; i + 1 < s.size(); ++i) {
            const bool same = s[i] == s[i + 1];
            if (same && overlapped) {
                overlapped = false;
                continue;
            }
            ++count[s[i] * m + s[i + 1]];
            overlapped = same;
        }
        // Harvest the counts (clearing them as they are read).
        candidates.clear();
        for (std::size_t i = 0; i + 1 < s.size(); ++i) {
            const std::uint32_t p = s[i] * m + s[i + 1];
            if (count[p] >= min_count) candidates.emplace_back(count[p], p);
            count[p] = 0;
        }
        if (candidates.empty()) break;
        std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        // Pairs of one round never chain (no accepted pair starts with a
        // symbol another ends with), so the counts stay what the round takes.
        std::fill(is_left.begin(), is_left.end(), 0);
        std::fill(is_right.begin(), is_right.end(), 0);
        std::vector<std::uint32_t> accepted;
        for (const auto& [c, p] : candidates) {
            if (g.symbols() + accepted.size() >= max_symbols) break;
            const std::uint32_t a = p / m, b = p % m;
            if (is_right[a] || is_left[b]) continue;
            is_left[a] = 1;
            is_right[b] = 1;
            accepted.push_back(p);
            if (c < 2 * min_count && accepted.size() >= 64) break;
        }
        if (accepted.empty()) break;
        for (const std::uint32_t p : accepted) {
            const std::uint32_t a = p / m, b = p % m;
            replacement[p] = static_cast<std::uint16_t>(g.symbols());
            g.left.push_back(static_cast<std::uint16_t>(a));
            g.right.push_back(static_cast<std::uint16_t>(b));
            g.length.push_back(g.length[a] + g.length[b]);
        }
        std::size_t out = 0;
        for (std::size_t i = 0; i < s.size();) {
            if (i + 1 < s.size()) {
                const std::uint16_t r = replacement[s[i] * m + s[i + 1]];
                if (r != 0) {
                    s[out++] = r;
                    i += 2;
                    continue;
                }
            }
            s[out++] = s[i++];
        }
        s.resize(out);
        for (const std::uint32_t p : accepted) replacement[p] = 0;
        ++g.rounds;
    }
    return g;
}

// Canonical Huffman code of the final sequence's symbols, at most
// kMaxCodeBits a code.
struct Code {
    std::vector<std::uint8_t> bits;   // per symbol; 0: absent from the sequence
    std::vector<std::uint32_t> code;  // per symbol
    // Decoding: codes of length L are [first[L], first[L] + count[L]), in
    // order of `sorted` from offset[L].
    std::uint32_t first[kMaxCodeBits + 1] = {};
    std::uint32_t count[kMaxCodeBits + 1] = {};
    std::uint32_t offset[kMaxCodeBits + 1] = {};
    std::vector<std::uint16_t> sorted;
    std::vector<std::uint32_t> fast;  // top kFastBits bits -> symbol << 8 | bits (0: longer code)
};

std::vector<std::uint8_t> huffman_lengths(std::vector<std::uint64_t> weight) {
    const std::size_t n = weight.size();
    std::vector<std::uint8_t> bits(n, 0);
    for (;;) {
        using Node = std::pair<std::uint64_t, std::uint32_t>;
        std::priority_queue<Node, std::vector<Node>, std::greater<>> heap;
        std::vector<std::uint32_t> parent;
        for (std::size_t s = 0; s < n; ++s) {
            if (weight[s] > 0) {
                heap.emplace(weight[s], static_cast<std::uint32_t>(parent.size()));
                parent.push_back(0);
            }
        }
        if (parent.size() == 1) {
            for (std::size_t s = 0; s < n; ++s) bits[s] = weight[s] > 0 ? 1 : 0;
            return bits;
        }
        while (heap.size() > 1) {
            const Node a = heap.top();
            heap.pop();
            const Node b = heap.top();
            heap.pop();
            const auto id = static_cast<std::uint32_t>(parent.size());
            parent.push_back(0);
            parent[a.second] = id;
            parent[b.second] = id;
            heap.emplace(a.first + b.first, id);
        }
        std::vector<std::uint8_t> depth(parent.size(), 0);
        for (std::size_t k = parent.size() - 1; k-- > 0;) depth[k] = static_cast<std::uint8_t>(depth[parent[k]] + 1);
        unsigned longest = 0;
        std::size_t leaf = 0;
        for (std::size_t s = 0; s < n; ++s) {
            if (weight[s] == 0) continue;
            bits[s] = depth[leaf++];
            longest = std::max<unsigned>(longest, bits[s]);
        }
        if (longest <= kMaxCodeBits) return bits;
        for (auto& w : weight) {
            if (w > 0) w = (w + 1) / 2;  // flatter weights, shorter longest code
        }
    }
}

Code make_code(const Grammar& g) {
    std::vector<std::uint64_t> weight(g.symbols(), 0);
    for (const std::uint16_t s : g.sequence) ++weight[s];
    Code c;
    c.bits = huffman_lengths(weight);
    c.code.assign(g.symbols(), 0);
    for (std::size_t s = 0; s < g.symbols(); ++s) {
        if (c.bits[s] > 0) c.sorted.push_back(static_cast<std::uint16_t>(s));
    }
    std::stable_sort(c.sorted.begin(), c.sorted.end(), [&](auto a, auto b) { return c.bits[a] < c.bits[b]; });
    std::uint32_t next = 0;
    unsigned previous = c.bits[c.sorted.front()];
    for (std::size_t k = 0; k < c.sorted.size(); ++k) {
        const std::uint16_t s = c.sorted[k];
        next <<= (c.bits[s] - previous);
        previous = c.bits[s];
        if (c.count[previous] == 0) {
            c.first[previous] = next;
            c.offset[previous] = static_cast<std::uint32_t>(k);
        }
        ++c.count[previous];
        c.code[s] = next++;
    }
    c.fast.assign(std::size_t{1} << kFastBits, 0);
    for (const std::uint16_t s : c.sorted) {
        if (c.bits[s] > kFastBits) continue;
        const unsigned spare = kFastBits - c.bits[s];
        const std::uint32_t base = c.code[s] << spare;
        for (std::uint32_t k = 0; k < (1u << spare); ++k) c.fast[base + k] = (std::uint32_t{s} << 8) | c.bits[s];
    }
    return c;
}

// The sequence packed into blocks of `block_bytes`.
struct Packed {
    unsigned block_bytes = 0;
    std::vector<std::uint8_t> data;         // block b at b * block_bytes, 8 bytes of padding at the end
    std::vector<std::uint64_t> block_first;  // first value of each block
    std::uint64_t index_bytes = 0;
};

Packed pack(const Grammar& g, const Code& c, unsigned block_bytes, std::uint64_t total_values) {
    Packed p;
    p.block_bytes = block_bytes;
    const std::uint64_t capacity = 8ull * block_bytes;
    std::uint64_t bit = 0;  // within the current block
    std::uint64_t value = 0;
    std::uint64_t widest = 0;
    std::uint64_t block_values = 0;
    std::size_t block = 0;
    p.data.assign(block_bytes, 0);
    p.block_first.push_back(0);
    for (const std::uint16_t s : g.sequence) {
        const unsigned n = c.bits[s];
        if (bit + n > capacity) {
            widest = std::max(widest, block_values);
            block_values = 0;
            ++block;
            bit = 0;
            p.data.resize((block + 1) * block_bytes, 0);
            p.block_first.push_back(value);
        }
        const std::uint32_t code = c.code[s];
        for (unsigned k = 0; k < n; ++k) {
            if ((code >> (n - 1 - k)) & 1) {
                const std::uint64_t at = block * block_bytes * 8 + bit + k;
                p.data[at >> 3] |= static_cast<std::uint8_t>(0x80 >> (at & 7));
            }
        }
        bit += n;
        value += g.length[s];
        block_values += g.length[s];
    }
    widest = std::max(widest, block_values);
    p.data.resize(p.data.size() + 8, 0);
    const std::uint64_t blocks = p.block_first.size();
    const std::uint64_t per_block = std::max<std::uint64_t>(1, total_values / blocks);
    const std::uint64_t step = std::bit_ceil(4 * per_block);
    p.index_bytes = blocks * (widest <= 65536 ? 2 : 4) + 8 * ((total_values + step - 1) / step);
    return p;
}

std::uint32_t lookup(const Grammar& g, const Code& c, const Packed& p, std::uint64_t slot) {
    const auto it = std::upper_bound(p.block_first.begin(), p.block_first.end(), slot);
    const std::size_t block = static_cast<std::size_t>(it - p.block_first.begin()) - 1;
    std::uint64_t pos = slot - p.block_first[block];
    const std::uint8_t* bytes = p.data.data() + block * p.block_bytes;
    std::uint64_t bit = 0;
    std::uint32_t symbol = 0;
    for (;;) {
        std::uint64_t window;
        std::memcpy(&window, bytes + (bit >> 3), 8);
        window = __builtin_bswap64(window) << (bit & 7);
        const std::uint32_t fast = c.fast[window >> (64 - kFastBits)];
        unsigned n;
        if (fast != 0) {
            symbol = fast >> 8;
            n = fast & 0xFF;
        } else {
            for (n = kFastBits + 1;; ++n) {
                const auto code = static_cast<std::uint32_t>(window >> (64 - n));
                if (code - c.first[n] < c.count[n]) {
                    symbol = c.sorted[c.offset[n] + code - c.first[n]];
                    break;
                }
            }
        }
        bit += n;
        if (pos < g.length[symbol]) break;
        pos -= g.length[symbol];
    }
    while (symbol >= g.terminals) {
        const std::size_t k = symbol - g.terminals;
        const std::uint16_t l = g.left[k];
        if (pos < g.length[l]) {
            symbol = l;
        } else {
            pos -= g.length[l];
            symbol = g.right[k];
        }
    }
    return g.terminal_value[symbol];
}

struct TableResult : tbf::study::TableSize {
    std::size_t symbols = 0;
    int rounds = 0;
    std::uint64_t sequence = 0;
    double build_seconds = 0;
    std::vector<std::uint64_t> bytes;  // per block size
    std::vector<double> lookup_ns;      // per block size
    double zstd_block_us = 0;
};

// Written by the timed loops so that the compiler keeps their lookups.
volatile std::uint64_t lookup_sink = 0;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: pair_study DB [TABLE...] [--blocks 32,64,...] [--symbols N] [--min-count N] "
                     "[--lookups N] [--quiet]\n");
        return 2;
    }
    std::vector<std::string> names;
    std::vector<unsigned> block_sizes = {32, 64, 128, 256, 512, 1024};
    std::size_t max_symbols = 4096;
    std::uint32_t min_count = 8;
    std::uint64_t lookups = 100000;
    bool quiet = false;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--blocks" && i + 1 < argc) {
            block_sizes.clear();
            std::stringstream in(argv[++i]);
            std::string item;
            while (std::getline(in, item, ',')) block_sizes.push_back(static_cast<unsigned>(std::stoul(item)));
        } else if (arg == "--symbols" && i + 1 < argc) {
            max_symbols = std::strtoull(argv[++i], nullptr, 10);
            if (max_symbols < 2 || max_symbols > 65536) die("--symbols must be in [2, 65536]");
        } else if (arg == "--min-count" && i + 1 < argc) {
            min_count = static_cast<std::uint32_t>(std::max(2ul, std::strtoul(argv[++i], nullptr, 10)));
        } else if (arg == "--lookups" && i + 1 < argc) {
            lookups = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--quiet") {
            quiet = true;
        } else {
            names.push_back(arg);
        }
    }
    auto db = tbf::study::open_study_database("pair_study", argv[1], names);

    std::vector<TableResult> results(names.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t t = 0; t < names.size(); ++t) {
        TableResult& r = results[t];
        auto table = tbf::study::open_study_table("pair_study", db, names[t], r);
        const std::vector<std::uint32_t> values = tbf::study::read_all_codes("pair_study", table);
        const double t0 = now();
        const Grammar g = build_grammar(values, max_symbols, min_count);
        const Code c = make_code(g);
        r.build_seconds = now() - t0;
        r.symbols = g.symbols();
        r.rounds = g.rounds;
        r.sequence = g.sequence.size();
        // A pair is two symbol ids of the grammar's width (12 bits up to 4096 symbols).
        const std::uint64_t id_bits = std::max<std::uint64_t>(12, std::bit_width(g.symbols() - 1));
        const std::uint64_t tables_bytes = (2 * id_bits * (g.symbols() - g.terminals) + 7) / 8 + g.symbols() + 2 * g.terminals;
        std::vector<Packed> packed;
        for (const unsigned size : block_sizes) {
            packed.push_back(pack(g, c, size, values.size()));
            const Packed& p = packed.back();
            r.bytes.push_back((p.data.size() - 8) + p.index_bytes + tables_bytes);
        }
        // Every value of small tables, a sample of the others, in every packing.
        std::mt19937_64 rng(t + 1);
        const std::uint64_t checks = std::min<std::uint64_t>(values.size(), 200000);
        for (std::uint64_t k = 0; k < checks; ++k) {
            const std::uint64_t slot = checks == values.size() ? k : rng() % values.size();
            for (const Packed& p : packed) {
                if (lookup(g, c, p, slot) != values[slot]) {
                    die(r.name + ": slot " + std::to_string(slot) + " decodes wrong at block size " +
                        std::to_string(p.block_bytes));
                }
            }
        }
        // Lookup cost, timed on one thread at a time.
#pragma omp critical(timing)
        {
            std::vector<std::uint64_t> slots(lookups);
            for (auto& s : slots) s = rng() % values.size();
            for (const Packed& p : packed) {
                std::uint64_t sum = 0;
                const double start = now();
                for (const std::uint64_t s : slots) sum += lookup(g, c, p, s);
                r.lookup_ns.push_back(lookups ? (now() - start) * 1e9 / static_cast<double>(lookups) : 0);
                lookup_sink = sum;  // keeps the lookups from being optimized away
            }
            const std::uint64_t reads = std::min<std::uint64_t>(2000, 4 * r.block_count + 100);
            const double start = now();
            for (std::uint64_t k = 0; k < reads; ++k) {
                auto block = table.read_block(rng() % r.block_count, CacheUse::Bypass);
                if (!block.ok()) die(block.status().to_string());
            }
            r.zstd_block_us = (now() - start) * 1e6 / static_cast<double>(reads);
        }
        if (!quiet) {
#pragma omp critical(print)
            {
                std::printf("%-8s slots %10llu stored %9llu symbols %4zu rounds %3d seq %9llu build %6.2fs |",
                            r.name.c_str(), static_cast<unsigned long long>(r.slots),
                            static_cast<unsigned long long>(r.stored), r.symbols, r.rounds,
                            static_cast<unsigned long long>(r.sequence), r.build_seconds);
                for (std::size_t k = 0; k < block_sizes.size(); ++k) {
                    std::printf(" %u:%.3f", block_sizes[k], static_cast<double>(r.bytes[k]) / static_cast<double>(r.stored));
                }
                std::printf("\n");
                std::fflush(stdout);
            }
        }
    }

    std::uint64_t slots = 0, stored = 0, sequence = 0;
    double build = 0, zstd_us = 0;
    std::vector<std::uint64_t> bytes(block_sizes.size(), 0);
    std::vector<double> ns(block_sizes.size(), 0);
    for (const TableResult& r : results) {
        slots += r.slots;
        stored += r.stored;
        sequence += r.sequence;
        build += r.build_seconds;
        zstd_us += r.zstd_block_us;
        for (std::size_t k = 0; k < block_sizes.size(); ++k) {
            bytes[k] += r.bytes[k];
            ns[k] += r.lookup_ns[k];
        }
    }
    const double n = static_cast<double>(results.size());
    std::printf("\n%zu tables, %llu slots, stored %llu B (%.4f B/slot); grammar sequences %llu symbols; build %.1f s CPU\n",
                results.size(), static_cast<unsigned long long>(slots), static_cast<unsigned long long>(stored),
                static_cast<double>(stored) / static_cast<double>(slots), static_cast<unsigned long long>(sequence),
                build);
    std::printf("%-12s %14s %8s %18s\n", "block bytes", "codec bytes", "ratio", "lookup (mean/table)");
    for (std::size_t k = 0; k < block_sizes.size(); ++k) {
        std::printf("%-12u %14llu %8.3f %15.0f ns\n", block_sizes[k], static_cast<unsigned long long>(bytes[k]),
                    static_cast<double>(bytes[k]) / static_cast<double>(stored), ns[k] / n);
    }
    std::printf("stored zstd block read without cache (mean/table): %.1f us\n", zstd_us / n);
    return 0;
}
