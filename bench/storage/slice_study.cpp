// Stored size of the DTC side of pawn tables when each decided code is
// written relative to a base of its pawn structure (not run in CI; the
// measurement behind docs/values.md's choice for pawn tables).
//
// A pawn table's DTC counts through pawn moves, so positions that differ
// only by how far the pawns have come carry codes offset from one another:
// the same pattern of a piece's squares appears one or two moves longer
// for every pawn step still to go, and zstd finds no match between them.
// Here every free slot of the table's DTC side, in its stored order, is
// rewritten as its distance minus the smallest distance of the same WDL
// among the free slots of its slice (the placement of every pawn, or of
// every unit but the last group's), the other side laid out empty as
// wdl-dtc/5 does, and both layouts are compressed block by block as the
// generator stores them (block_record_bytes with the stored parser). The
// bases are counted at 2 bytes a slice and WDL.
//
// Usage: slice_study DB TABLE...

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "compact_study.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/storage/table.hpp"

namespace {

using namespace tbf;

enum class SliceBy { Pawns, AllButLast };

std::uint64_t slice_key(const index::Indexer& ix, const Square* squares, SliceBy by) {
    std::uint64_t key = 0;
    if (by == SliceBy::Pawns) {
        for (int u = 0; u < ix.unit_count(); ++u) {
            if (unit_type(ix.unit(u)) != UnitType::Pawn) continue;
            key = key * 131 + 1 + squares[u] + 64 * static_cast<int>(unit_color(ix.unit(u)));
        }
        return key;
    }
    // Every unit but those of the last group in the index order (the
    // lowest digits of the slot).
    const std::vector<Unit> order = ix.group_order();
    const Unit last = order.back();
    for (int u = 0; u < ix.unit_count(); ++u) {
        if (ix.unit(u) == last) continue;
        key = key * 131 + 1 + squares[u];
    }
    return key;
}


}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: slice_study DB TABLE...\n");
        return 2;
    }
    const probe::Tablebase tb = study::open_study_tablebase("slice_study", argv[1]);
    storage::TableWriteOptions options = study::compact_table_options();
    study::use_stored_compact_parser(options);
    for (int a = 2; a < argc; ++a) {
        const study::StudyTable opened = study::open_study_codes("slice_study", tb, argv[a]);
        const probe::Table& table = *opened.table;
        const std::vector<std::uint16_t>& codes = opened.codes;
        const index::Indexer& ix = table.indexer();
        const std::uint64_t n = ix.size();
        const int d = static_cast<int>(table.dtc_side());
        const std::vector<std::uint8_t> is_free = study::free_slots(ix);
        const std::uint64_t spb = table.info().slots_per_block;

        // The DTC side as stored (free codes, other slots repeating the
        // previous free code), then the empty side.
        auto layout = [&](auto&& code_of) {
            std::vector<std::uint16_t> stored(2 * n, 0);
            std::uint16_t previous = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint64_t s = static_cast<std::uint64_t>(d) * n + i;
                if (is_free[s]) previous = code_of(i, codes[s]);
                stored[s] = previous;
            }
            return stored;
        };
        const std::uint64_t plain = study::compressed_bytes(layout([](std::uint64_t, std::uint16_t c) { return c; }), spb, options);
        std::printf("%-8s slots %10llu DTC side %s stored %llu plain %llu", argv[a],
                    static_cast<unsigned long long>(n), d == 0 ? "white" : "black",
                    static_cast<unsigned long long>(table.info().stored_bytes),
                    static_cast<unsigned long long>(plain));
        const std::uint64_t wdl_only = study::compressed_bytes(
            layout([](std::uint64_t, std::uint16_t c) -> std::uint16_t { return c == 0 ? 0 : static_cast<std::uint16_t>(2 - (c & 1)); }), spb, options);
        std::uint16_t longest = 0;
        for (std::uint64_t i = 0; i < n; ++i) longest = std::max(longest, codes[static_cast<std::uint64_t>(d) * n + i]);
        std::printf(" wdl-only %llu largest code %u", static_cast<unsigned long long>(wdl_only), longest);
        // Both sides stored, the DTC kept for one kind of result only (the
        // other's found one ply away, over the other side's stored codes).
        auto both_sides = [&](int keep_bit) {
            std::vector<std::uint16_t> stored(2 * n, 0);
            for (int side = 0; side < 2; ++side) {
                std::uint16_t previous = 0;
                for (std::uint64_t i = 0; i < n; ++i) {
                    const std::uint64_t s = static_cast<std::uint64_t>(side) * n + i;
                    if (is_free[s]) {
                        const std::uint16_t c = codes[s];
                        previous = c == 0 ? 0 : (((c - 1) & 1) == keep_bit ? c : static_cast<std::uint16_t>(2 - (c & 1)));
                    }
                    stored[s] = previous;
                }
            }
            return study::compressed_bytes(stored, spb, options);
        };
        std::printf(" | both sides, losses' DTC %llu (%.3f), wins' DTC %llu (%.3f)",
                    static_cast<unsigned long long>(both_sides(1)), static_cast<double>(both_sides(1)) / static_cast<double>(plain),
                    static_cast<unsigned long long>(both_sides(0)), static_cast<double>(both_sides(0)) / static_cast<double>(plain));
        for (const SliceBy by : {SliceBy::Pawns, SliceBy::AllButLast}) {
            std::vector<std::uint32_t> slice(n, 0);
            std::unordered_map<std::uint64_t, std::uint32_t> ids;
            for (std::uint64_t i = 0; i < n; ++i) {
                Square squares[index::kMaxUnits];
                if (!ix.decode(i, squares)) continue;
                const auto [it, fresh] = ids.try_emplace(slice_key(ix, squares, by), static_cast<std::uint32_t>(ids.size()));
                slice[i] = it->second;
            }
            // Smallest distance of each WDL per slice.
            std::vector<std::uint16_t> base(2 * ids.size(), 0xFFFF);
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint64_t s = static_cast<std::uint64_t>(d) * n + i;
                const std::uint16_t c = codes[s];
                if (!is_free[s] || c == 0) continue;
                const std::uint16_t dist = static_cast<std::uint16_t>((c - 1) / 2);
                std::uint16_t& b = base[2 * slice[i] + ((c - 1) & 1)];
                b = std::min(b, dist);
            }
            const std::uint64_t relative = study::compressed_bytes(
                layout([&](std::uint64_t i, std::uint16_t c) -> std::uint16_t {
                    if (c == 0) return 0;
                    const std::uint16_t dist = static_cast<std::uint16_t>((c - 1) / 2);
                    const std::uint16_t b = base[2 * slice[i] + ((c - 1) & 1)];
                    return static_cast<std::uint16_t>(1 + 2 * (dist - b) + ((c - 1) & 1));
                }),
                spb, options);
            std::printf(" | %s: %zu slices, relative %llu + bases %zu = %.3f", by == SliceBy::Pawns ? "pawns" : "all-but-last",
                        ids.size(), static_cast<unsigned long long>(relative), 4 * ids.size(),
                        static_cast<double>(relative + 4 * ids.size()) / static_cast<double>(plain));
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    return 0;
}
