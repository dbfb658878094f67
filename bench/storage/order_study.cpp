// Stored size of wdl-dtc/2 tables under every permitted group order of their
// index (not run in CI; the measurement behind a per-table choice of order,
// docs/storage-format.md). The order decides which unit changes the slot
// least when it moves, and so how long the runs of equal codes are.
//
// For each antichess table named it reads the values (any encoding),
// classifies every slot as the generator does (probe::slot_kind), and for
// each permitted order (index::GroupOrders) lays the codes out in that
// order's slots, fills the don't-care slots with the previous free code
// and compresses them as the generator does
// (storage::block_record_bytes with the stored wdl-dtc/2 settings), for
// either DTC side; the smaller side counts. With --sample K only about one
// block in K of each order, picked by a hash of its number, is laid out and
// compressed (an estimate; the ratio between orders is what matters).
//
// With --dtc-side-alone, the side other than the DTC side stores nothing (0
// in every slot), as wdl-dtc/5 lays it out; each line also gives the bytes
// with either side as the DTC side.
//
// Usage: order_study DB [--sample K] [--dtc-side-alone] TABLE...

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "compact_study.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/storage/table.hpp"
#include "tbforge/base/mix64.hpp"

namespace {

using namespace tbf;

std::uint16_t wdl_code(std::uint16_t code) { return code == 0 ? 0 : static_cast<std::uint16_t>(2 - (code & 1)); }

std::string order_name(const std::vector<Unit>& order) {
    std::string s;
    for (const Unit u : order) {
        if (!s.empty()) s += ' ';
        s += index::unit_label(u);
    }
    return s;
}

// With --sample K, whether block b is one of the sampled: about one in K,
// by a hash of b. A stride (every K-th block) falls in step with the
// index's radices (64^k slots are whole blocks) and then sees one phase of
// the table's structure only: every 16th block measured NPvNP's best order
// at 0.847 of the rule's where all blocks give 0.995.
bool sampled_block(std::uint64_t b, std::uint64_t sample) {
    return tbf::mix64(b + tbf::kGoldenGamma) % sample == 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: order_study DB [--sample K] [--dtc-side-alone] TABLE...\n");
        return 2;
    }
    const probe::Tablebase tb = study::open_study_tablebase("order_study", argv[1]);
    int first_table = 2;
    std::uint64_t sample = 1;
    bool dtc_side_alone = false;
    while (first_table < argc) {
        const std::string arg = argv[first_table];
        if (arg == "--sample" && first_table + 1 < argc) {
            sample = std::max(1ULL, std::strtoull(argv[first_table + 1], nullptr, 10));
            first_table += 2;
        } else if (arg == "--dtc-side-alone") {
            dtc_side_alone = true;
            first_table += 1;
        } else {
            break;
        }
    }
    const storage::TableWriteOptions options = study::compact_table_options();
    std::uint64_t total_default = 0, total_best = 0, total_worst = 0;
    for (int a = first_table; a < argc; ++a) {
        const study::StudyTable opened = study::open_study_codes("order_study", tb, argv[a]);
        const std::vector<std::uint16_t>& codes = opened.codes;
        const index::Indexer& base = opened.table->indexer();
        const std::uint64_t n = base.size();
        const std::vector<std::uint8_t> is_free = study::free_slots(base);
        const std::vector<Unit> default_order = base.group_order();
        std::uint64_t default_bytes = 0, best = ~0ULL, worst = 0;
        std::string best_name;
        // The width follows the largest code stored with each DTC side (the
        // other side stores WDL codes, 0-2).
        std::uint16_t side_max[2] = {0, 0};
        for (std::uint64_t s = 0; s < 2 * n; ++s) {
            if (is_free[s]) side_max[s / n] = std::max(side_max[s / n], codes[s]);
        }
        for (index::GroupOrders orders(base.variant(), base.material()); auto made = orders.next();) {
            const index::Indexer& ix = *made;
            if (ix.size() != n) {
                std::fprintf(stderr, "order_study: %s: %llu slots, not %llu\n", order_name(ix.group_order()).c_str(),
                             static_cast<unsigned long long>(ix.size()), static_cast<unsigned long long>(n));
                return 1;
            }
            // The slots of this order's sampled blocks, each read where it
            // lives in the base order (the position path regroups the units).
            auto base_slot = [&](std::uint64_t slot) {
                const std::uint64_t c = slot / n, i = slot % n;
                Square squares[index::kMaxUnits];
                ix.decode(i, squares);
                Position placed;
                for (int u = 0; u < ix.unit_count(); ++u) placed.put(squares[u], ix.unit(u));
                const std::uint64_t k = base.index(placed);
                return k < n ? c * n + k : ~std::uint64_t{0};
            };
            const std::uint64_t blocks = (2 * n + options.slots_per_block - 1) / options.slots_per_block;
            std::uint64_t bytes[2] = {0, 0};
            bool bad = false;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bytes[:2]) reduction(|| : bad)
            for (std::int64_t b = 0; b < static_cast<std::int64_t>(blocks); ++b) {
                if (!sampled_block(static_cast<std::uint64_t>(b), sample)) continue;
                const std::uint64_t at = static_cast<std::uint64_t>(b) * options.slots_per_block;
                const std::uint64_t count = std::min<std::uint64_t>(options.slots_per_block, 2 * n - at);
                std::vector<std::uint64_t> from(count);
                for (std::uint64_t k = 0; k < count; ++k) {
                    from[k] = base_slot(at + k);
                    bad = bad || from[k] == ~std::uint64_t{0};
                }
                if (bad) continue;
                for (int d = 0; d < 2; ++d) {
                    auto stored_code = [&](std::uint64_t s) -> std::uint16_t {
                        if (static_cast<int>(s / n) == d) return codes[s];
                        return dtc_side_alone ? 0 : wdl_code(codes[s]);
                    };
                    // The free code before the block, on the same side.
                    std::uint16_t previous = 0;
                    if (at % n != 0) {
                        for (std::uint64_t back = at; back-- > at - at % n;) {
                            const std::uint64_t s = base_slot(back);
                            if (is_free[s]) {
                                previous = stored_code(s);
                                break;
                            }
                        }
                    }
                    std::vector<std::uint16_t> stored(count);
                    for (std::uint64_t k = 0; k < count; ++k) {
                        if ((at + k) % n == 0) previous = 0;
                        if (is_free[from[k]]) previous = stored_code(from[k]);
                        stored[k] = previous;
                    }
                    // The table's width, not the block's.
                    const unsigned width = side_max[d] > 0xFF ? 2 : 1;
                    std::vector<std::uint8_t> raw(count * width);
                    for (std::uint64_t k = 0; k < count; ++k) {
                        raw[k * width] = static_cast<std::uint8_t>(stored[k]);
                        if (width == 2) raw[k * 2 + 1] = static_cast<std::uint8_t>(stored[k] >> 8);
                    }
                    bytes[d] += storage::block_record_bytes(raw, width, options);
                }
            }
            if (bad) {
                std::fprintf(stderr, "order_study: %s: a slot has no base slot\n",
                             order_name(ix.group_order()).c_str());
                return 1;
            }
            const std::uint64_t side_best = std::min(bytes[0], bytes[1]);
            const bool is_default = ix.group_order() == default_order;
            std::printf("%-10s %-24s %10llu%s  (DTC side white %llu, black %llu)\n", argv[a],
                        order_name(ix.group_order()).c_str(), static_cast<unsigned long long>(side_best),
                        is_default ? "  (default)" : "", static_cast<unsigned long long>(bytes[0]),
                        static_cast<unsigned long long>(bytes[1]));
            std::fflush(stdout);
            if (is_default) default_bytes = side_best;
            if (side_best < best) {
                best = side_best;
                best_name = order_name(ix.group_order());
            }
            worst = std::max(worst, side_best);
        }
        std::printf("%-10s default %llu best %llu (%.3f, %s) worst %llu (%.3f)\n", argv[a],
                    static_cast<unsigned long long>(default_bytes), static_cast<unsigned long long>(best),
                    static_cast<double>(best) / static_cast<double>(default_bytes), best_name.c_str(),
                    static_cast<unsigned long long>(worst),
                    static_cast<double>(worst) / static_cast<double>(default_bytes));
        total_default += default_bytes;
        total_best += best;
        total_worst += worst;
    }
    std::printf("all: default %llu best %llu (%.3f) worst %llu (%.3f)\n",
                static_cast<unsigned long long>(total_default), static_cast<unsigned long long>(total_best),
                static_cast<double>(total_best) / static_cast<double>(total_default),
                static_cast<unsigned long long>(total_worst),
                static_cast<double>(total_worst) / static_cast<double>(total_default));
    return 0;
}
