// The retrograde engine over the naive indexer, against the Syzygy giveaway
// tables (tests/reference/syzygy) and against its own definition.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "naive_tables.hpp"
#include "syzygy_check.hpp"
#include "tbforge/rules/fen.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

void check_syzygy_rows(const std::string& file, std::size_t max_units,
                       const std::vector<std::string>& only = {}) {
    test::NaiveTables<Antichess> tables;
    const auto result = test::compare_with_syzygy(
        file,
        [&](const std::string& table) {
            return table.size() - 1 <= max_units &&
                   (only.empty() || std::find(only.begin(), only.end(), table) != only.end());
        },
        [&](const Position& pos) {
            // Positions with an en-passant right are valued from their captures.
            if (pos.ep_square() == kNoSquare) return tables.value(pos);
            MoveList list;
            generate_legal<Antichess>(pos, list);
            probe::Value best{Wdl::Loss, 0};
            for (Move m : list) {
                const auto v = probe::move_value(tables.value(pos.after(m)), true);
                if (probe::better_for_mover(v, best)) best = v;
            }
            return best;
        });
    CHECK(result.wdl_compared > 0);
}

}  // namespace

TEST_CASE("naive-index tables agree with Syzygy on 2-unit tables") {
    check_syzygy_rows("syzygy/giveaway_samples_2.tsv", 2);
}

TEST_CASE("naive-index tables agree with Syzygy on some 3-unit tables") {
    if (test::kSanitized) return;
    check_syzygy_rows("syzygy/giveaway_samples_34.tsv", 3, {"RRvK", "KPvK", "BNvQ", "PvPP", "NvBB"});
}

TEST_SUITE("slow") {
    TEST_CASE("naive-index tables agree with Syzygy on all 3-unit tables") {
        check_syzygy_rows("syzygy/giveaway_samples_34.tsv", 3);
    }
}
