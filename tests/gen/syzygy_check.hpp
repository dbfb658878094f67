#pragma once
// Compares values with the Syzygy giveaway samples in tests/reference/
// syzygy: WDL always (cursed win = win, blessed loss = loss), DTC for
// pawnless tables on uncursed positions within Syzygy's rounding.

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "tbforge/probe/value.hpp"
#include "tbforge/rules/fen.hpp"
#include "test_support.hpp"

namespace tbf::test {

// Syzygy stores DTZ halved: a value read from the table is the true
// distance n when n is odd and n - 1 when n is even (reference README), so a
// reported odd r stands for r or r + 1. A loss whose side the table does not
// store is probed as one ply more than its opponent's rounded win, which
// flips the parity: there an even r stands for r or r + 1. A loss can come
// from either source (e.g. QRRvK 8/7R/6k1/7R/8/8/8/7Q w, reported -1: White
// cannot capture and loses at ply 2), a win only from the table.
inline bool dtz_agrees(int wdl, int reported, int dtc) {
    const bool rounded = wdl > 0 ? reported % 2 == 1 : true;
    return dtc == reported || (rounded && dtc == reported + 1);
}

struct SyzygyComparison {
    int wdl_compared = 0;
    int dtc_compared = 0;
};

// Rows of `file` whose table passes `wanted`; `value` gives our value.
inline SyzygyComparison compare_with_syzygy(
    const std::string& file, const std::function<bool(const std::string&)>& wanted,
    const std::function<probe::Value(const Position&)>& value) {
    const auto tsv = read_tsv(reference_path(file));
    const auto table_col = tsv.column("table");
    const auto fen_col = tsv.column("fen");
    const auto wdl_col = tsv.column("wdl");
    const auto dtz_col = tsv.column("dtz");
    const auto single_col = tsv.column("dtz_single_valued_subtable");
    SyzygyComparison out;
    for (const auto& row : tsv.rows) {
        const std::string& table = row[table_col];
        if (!wanted(table)) continue;
        auto pos = parse_fen(row[fen_col], VariantId::Antichess);
        REQUIRE_MESSAGE(pos.ok(), row[fen_col]);
        const int wdl = std::stoi(row[wdl_col]);
        const int dtz = std::stoi(row[dtz_col]);
        const probe::Value v = value(*pos);
        const int expected_wdl = wdl > 0 ? 1 : (wdl < 0 ? -1 : 0);
        INFO(table << " " << row[fen_col] << " syzygy wdl " << wdl << " dtz " << dtz << " ours "
                   << static_cast<int>(v.wdl) << " dtc " << v.dtc);
        CHECK(static_cast<int>(v.wdl) == expected_wdl);
        ++out.wdl_compared;
        const bool pawnless = table.find('P') == std::string::npos;
        if (pawnless && (wdl == 2 || wdl == -2) && row[single_col] == "0") {
            CHECK(dtz_agrees(wdl, std::abs(dtz), v.dtc));
            ++out.dtc_compared;
        }
    }
    MESSAGE(file << ": " << out.wdl_compared << " WDL and " << out.dtc_compared
                 << " DTC values compared");
    return out;
}

}  // namespace tbf::test
