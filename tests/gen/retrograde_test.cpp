// The retrograde engine over the naive indexer, against the Syzygy giveaway
// tables (../shared/reference/syzygy) and against its own definition.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "naive_tables.hpp"
#include "tbforge/rules/fen.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

bool pawnless(const std::string& table) { return table.find('P') == std::string::npos; }

// Syzygy stores DTZ halved: a win reported as odd r, or a loss reported as
// even r, stands for a true distance of r or r + 1; other values are exact.
bool dtz_agrees(int wdl, int reported, int dtc) {
    const bool rounded = wdl > 0 ? reported % 2 == 1 : reported % 2 == 0;
    return dtc == reported || (rounded && dtc == reported + 1);
}

// Rows of tables with at most max_units units; with `only`, just those tables.
void check_syzygy_rows(const std::string& file, std::size_t max_units,
                       const std::vector<std::string>& only = {}) {
    const auto tsv = test::read_tsv(test::reference_path(file));
    const auto table_col = tsv.column("table");
    const auto fen_col = tsv.column("fen");
    const auto wdl_col = tsv.column("wdl");
    const auto dtz_col = tsv.column("dtz");
    const auto single_col = tsv.column("dtz_single_valued_subtable");
    test::NaiveTables<Antichess> tables;
    int checked = 0;
    int dtc_checked = 0;
    for (const auto& row : tsv.rows) {
        const std::string& table = row[table_col];
        if (table.size() - 1 > max_units) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), table) == only.end()) continue;
        auto pos = parse_fen(row[fen_col], VariantId::Antichess);
        REQUIRE_MESSAGE(pos.ok(), row[fen_col]);
        // Positions with an en-passant right are not table positions.
        if (pos->ep_square() != kNoSquare) continue;
        const int wdl = std::stoi(row[wdl_col]);
        const int dtz = std::stoi(row[dtz_col]);
        const probe::Value v = tables.value(*pos);
        const int expected_wdl = wdl > 0 ? 1 : (wdl < 0 ? -1 : 0);
        INFO(table << " " << row[fen_col] << " syzygy wdl " << wdl << " dtz " << dtz
                   << " ours " << static_cast<int>(v.wdl) << " dtc " << v.dtc);
        CHECK(static_cast<int>(v.wdl) == expected_wdl);
        ++checked;
        if (pawnless(table) && (wdl == 2 || wdl == -2) && row[single_col] == "0") {
            CHECK(dtz_agrees(wdl, std::abs(dtz), v.dtc));
            ++dtc_checked;
        }
    }
    MESSAGE(file << ": " << checked << " WDL and " << dtc_checked << " DTC values compared");
    CHECK(checked > 0);
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
