// Size and lookup cost of storage format 6's pair code (storage/src/
// pair_codec.hpp: a grammar of value pairs over the whole table, its symbols
// Huffman-coded in sub-blocks that decode on their own) on existing tables'
// values, for several sub-block sizes and grammar sizes (not run in CI).
// Cold probes of zstd tables decode a whole frame for every block they
// touch; this measures what one value costs instead, and what the code
// stores, before or apart from the generator choosing it.
//
// Each table's codes (as a reader decodes them, don't-care slots filled as
// stored) are coded in the table's own blocks by the library's encoder;
// the bytes counted are the members' payloads and the model. Every value of
// small tables, a sample of the others, is checked by a single-value read;
// lookups are timed decoding from memory (as from a mapped file in the page
// cache), against a random block read through the storage library without
// a cache (RocksDB read, record checksum, zstd frame).
//
// Printed per table and summed: the stored bytes, the code's bytes for each
// sub-block size and their ratio to the stored bytes, the model's symbols
// and bytes, the code's build time.
//
// Usage: pair_study DB [TABLE...] [--blocks 32,64,...] [--symbols N]
//                   [--min-count N] [--lookups N] [--quiet]

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pair_codec.hpp"
#include "study_database.hpp"
#include "tbforge/storage/database.hpp"

namespace {

using namespace tbf::storage;
namespace detail = tbf::storage::detail;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "pair_study: %s\n", message.c_str());
    std::exit(3);
}

struct TableResult : tbf::study::TableSize {
    std::size_t symbols = 0;      // at the first sub-block size
    std::uint64_t model_bytes = 0;
    double build_seconds = 0;     // at the first sub-block size
    std::vector<std::uint64_t> bytes;  // per sub-block size
    std::vector<double> lookup_ns;     // per sub-block size
    double zstd_block_us = 0;
};

// Written by the timed loops so that the compiler keeps their lookups.
volatile std::uint64_t lookup_sink = 0;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The codes as little-endian values of the narrowest width that holds them.
std::vector<std::uint8_t> as_raw(const std::vector<std::uint32_t>& codes, std::uint32_t& width) {
    const std::uint32_t largest = codes.empty() ? 0 : *std::max_element(codes.begin(), codes.end());
    width = largest <= 0xFF ? 1 : largest <= 0xFFFF ? 2 : 4;
    std::vector<std::uint8_t> raw(codes.size() * width);
    for (std::size_t i = 0; i < codes.size(); ++i) {
        for (std::uint32_t b = 0; b < width; ++b) raw[i * width + b] = static_cast<std::uint8_t>(codes[i] >> (8 * b));
    }
    return raw;
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
    detail::PairCodecLimits base_limits;
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
            base_limits.max_symbols = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
            if (base_limits.max_symbols < 2 || base_limits.max_symbols > 65536) die("--symbols must be in [2, 65536]");
        } else if (arg == "--min-count" && i + 1 < argc) {
            base_limits.min_pair_count = static_cast<std::uint32_t>(std::max(2ul, std::strtoul(argv[++i], nullptr, 10)));
        } else if (arg == "--lookups" && i + 1 < argc) {
            lookups = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--quiet") {
            quiet = true;
        } else {
            names.push_back(arg);
        }
    }
    if (block_sizes.empty()) die("--blocks names no size");
    auto db = tbf::study::open_study_database("pair_study", argv[1], names);

    std::vector<TableResult> results(names.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t t = 0; t < names.size(); ++t) {
        TableResult& r = results[t];
        auto table = tbf::study::open_study_table("pair_study", db, names[t], r);
        const std::uint32_t member_slots = table.info().slots_per_block;
        const std::vector<std::uint32_t> values = tbf::study::read_all_codes("pair_study", table);
        std::uint32_t width = 1;
        const std::vector<std::uint8_t> raw = as_raw(values, width);
        std::vector<detail::PairEncoding> coded;
        for (const unsigned size : block_sizes) {
            detail::PairCodecLimits limits = base_limits;
            limits.sub_block_bytes = size;
            const double t0 = now();
            auto encoding = detail::pair_encode(raw, width, member_slots, limits);
            if (!encoding.ok()) die(r.name + ": " + encoding.status().to_string());
            if (coded.empty()) r.build_seconds = now() - t0;
            std::uint64_t bytes = encoding->model.serialized().size();
            for (const std::string& member : encoding->members) bytes += member.size();
            r.bytes.push_back(bytes);
            coded.push_back(std::move(*encoding));
        }
        r.symbols = coded.front().model.symbols();
        r.model_bytes = coded.front().model.serialized().size();
        const auto lookup = [&](const detail::PairEncoding& e, std::uint64_t slot) {
            const std::uint64_t member = slot / member_slots;
            const auto slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(member_slots, values.size() - member * member_slots));
            std::uint32_t value = 0;
            if (!detail::pair_member_value(e.model, e.members[member], slots, static_cast<std::uint32_t>(slot % member_slots), value).ok()) {
                die(r.name + ": slot " + std::to_string(slot) + " does not decode");
            }
            return value;
        };
        // Every value of small tables, a sample of the others, in every size.
        std::mt19937_64 rng(t + 1);
        const std::uint64_t checks = std::min<std::uint64_t>(values.size(), 200000);
        for (std::uint64_t k = 0; k < checks; ++k) {
            const std::uint64_t slot = checks == values.size() ? k : rng() % values.size();
            for (std::size_t s = 0; s < coded.size(); ++s) {
                if (lookup(coded[s], slot) != values[slot]) {
                    die(r.name + ": slot " + std::to_string(slot) + " decodes wrong at sub-block size " +
                        std::to_string(block_sizes[s]));
                }
            }
        }
        // Lookup cost, timed on one thread at a time.
#pragma omp critical(timing)
        {
            std::vector<std::uint64_t> slots(lookups);
            for (auto& s : slots) s = rng() % values.size();
            for (const detail::PairEncoding& e : coded) {
                std::uint64_t sum = 0;
                const double start = now();
                for (const std::uint64_t s : slots) sum += lookup(e, s);
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
                std::printf("%-8s slots %10llu stored %9llu symbols %5zu model %6llu build %6.2fs |", r.name.c_str(),
                            static_cast<unsigned long long>(r.slots), static_cast<unsigned long long>(r.stored),
                            r.symbols, static_cast<unsigned long long>(r.model_bytes), r.build_seconds);
                for (std::size_t k = 0; k < block_sizes.size(); ++k) {
                    std::printf(" %u:%.3f", block_sizes[k], static_cast<double>(r.bytes[k]) / static_cast<double>(r.stored));
                }
                std::printf("\n");
                std::fflush(stdout);
            }
        }
    }

    std::uint64_t slots = 0, stored = 0, models = 0;
    double build = 0, zstd_us = 0;
    std::vector<std::uint64_t> bytes(block_sizes.size(), 0);
    std::vector<double> ns(block_sizes.size(), 0);
    for (const TableResult& r : results) {
        slots += r.slots;
        stored += r.stored;
        models += r.model_bytes;
        build += r.build_seconds;
        zstd_us += r.zstd_block_us;
        for (std::size_t k = 0; k < block_sizes.size(); ++k) {
            bytes[k] += r.bytes[k];
            ns[k] += r.lookup_ns[k];
        }
    }
    const double n = static_cast<double>(results.size());
    std::printf("\n%zu tables, %llu slots, stored %llu B (%.4f B/slot); models %llu B; build %.1f s CPU\n",
                results.size(), static_cast<unsigned long long>(slots), static_cast<unsigned long long>(stored),
                static_cast<double>(stored) / static_cast<double>(slots), static_cast<unsigned long long>(models), build);
    std::printf("%-12s %14s %8s %18s\n", "block bytes", "codec bytes", "ratio", "lookup (mean/table)");
    for (std::size_t k = 0; k < block_sizes.size(); ++k) {
        std::printf("%-12u %14llu %8.3f %15.0f ns\n", block_sizes[k], static_cast<unsigned long long>(bytes[k]),
                    static_cast<double>(bytes[k]) / static_cast<double>(stored), ns[k] / n);
    }
    std::printf("stored zstd block read without cache (mean/table): %.1f us\n", zstd_us / n);
    return 0;
}
