#include "tbforge/index/material.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "tbforge/index/indexer.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "test_support.hpp"

namespace tbf::index {
namespace {

std::vector<std::string> names(const std::vector<Material>& tables) {
    std::vector<std::string> out;
    for (const auto& m : tables) out.push_back(m.name());
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> sub_names(std::string_view table, VariantId v) {
    return names(sub_tables(*parse_table(table, v), v));
}

}  // namespace

TEST_CASE("material names parse and print") {
    for (const char* name : {"KQvR", "RPvKP", "QRvBN", "KvK", "KKKvK", "BBvBB", "QRBNPvK"}) {
        auto m = parse_material(name);
        REQUIRE_MESSAGE(m.ok(), name);
        CHECK(m->name() == name);
    }
    const Material m = *parse_material("RPvKP");
    CHECK(m.count(Color::White, UnitType::Rook) == 1);
    CHECK(m.count(Color::White, UnitType::Pawn) == 1);
    CHECK(m.count(Color::Black, UnitType::King) == 1);
    CHECK(m.count(Color::Black, UnitType::Pawn) == 1);
    CHECK(m.count(Color::White) == 2);
    CHECK(m.total() == 4);
    CHECK(m.has_pawns());
    CHECK(m.flipped().name() == "KPvRP");
    // Units in another order name the same table.
    CHECK(parse_material("PRvPK")->name() == "RPvKP");
}

TEST_CASE("bad material names give a clear error") {
    auto check_error = [](const char* name, const char* part) {
        auto m = parse_material(name);
        REQUIRE_FALSE(m.ok());
        CHECK_MESSAGE(m.status().message().find(part) != std::string::npos, m.status().message());
        CHECK(m.status().message().find(std::string("'") + name + "'") != std::string::npos);
    };
    check_error("KQR", "'v'");
    check_error("KvQvR", "more than one 'v'");
    check_error("KXvK", "unknown unit letter 'X'");
    check_error("kqvK", "unknown unit letter 'k'");
    check_error("v", "no units");
    check_error("QQQQQvQQQQ", "more than 8 units");
    // Syntax is fine, but not a table of the variant.
    auto empty_side = parse_table("KQv", VariantId::Antichess);
    REQUIRE_FALSE(empty_side.ok());
    CHECK(empty_side.status().message().find("without units") != std::string::npos);
    CHECK_FALSE(parse_table("QvK", VariantId::FourFile).ok());
    CHECK_FALSE(parse_table("KKvK", VariantId::FourFile).ok());
    CHECK(parse_table("KQvK", VariantId::FourFile).ok());
}

TEST_CASE("canonical orientation: the stronger side is White") {
    CHECK(is_canonical(*parse_material("KQvR")));
    CHECK_FALSE(is_canonical(*parse_material("RvKQ")));
    CHECK(canonical(*parse_material("RvKQ")).name() == "KQvR");
    // Equal counts: compare K, then Q, R, B, N, P.
    CHECK(canonical(*parse_material("QBvKB")).name() == "KBvQB");
    CHECK(canonical(*parse_material("QBvQR")).name() == "QRvQB");
    CHECK(canonical(*parse_material("PvN")).name() == "NvP");
    CHECK(needs_color_flip(*parse_material("RvKQ")));
    // Symmetric materials are their own canonical form.
    CHECK(is_canonical(*parse_material("BBvBB")));
    CHECK_FALSE(needs_color_flip(*parse_material("KvK")));
    // Every table name of the Syzygy reference data is canonical under the
    // same rule, and its flip is not (unless symmetric).
    for (const char* file : {"syzygy/giveaway_samples_2.tsv", "syzygy/giveaway_samples_34.tsv",
                             "syzygy/giveaway_samples_5.tsv"}) {
        const auto tsv = tbf::test::read_tsv(tbf::test::reference_path(file));
        const auto col = tsv.column("table");
        std::set<std::string> seen;
        for (const auto& row : tsv.rows) {
            if (!seen.insert(row[col]).second) continue;
            const Material m = *parse_material(row[col]);
            CHECK_MESSAGE(is_canonical(m), row[col]);
            CHECK(canonical(m.flipped()) == m);
        }
    }
}

TEST_CASE("material of a position") {
    Position pos;
    pos.put(0, make_unit(Color::White, UnitType::Queen));
    pos.put(9, make_unit(Color::White, UnitType::Pawn));
    pos.put(63, make_unit(Color::Black, UnitType::Knight));
    CHECK(material_of(pos).name() == "QPvN");
}

TEST_CASE("table enumeration") {
    // Losing chess: each side one or more units; up to colour flip.
    // 2 units: 6*7/2; 3 units: 21*6; 4 units: 56*6 + 21*22/2.
    CHECK(enumerate_tables(VariantId::Antichess, 2).size() == 21);
    CHECK(enumerate_tables(VariantId::Antichess, 3).size() == 21 + 126);
    const auto four = enumerate_tables(VariantId::Antichess, 4);
    CHECK(four.size() == 714);
    // The same 714 tables as the Syzygy reference data.
    std::set<std::string> reference;
    for (const char* file : {"syzygy/giveaway_samples_2.tsv", "syzygy/giveaway_samples_34.tsv"}) {
        const auto tsv = tbf::test::read_tsv(tbf::test::reference_path(file));
        for (const auto& row : tsv.rows) reference.insert(row[tsv.column("table")]);
    }
    const auto got = names(four);
    CHECK(std::set<std::string>(got.begin(), got.end()) == reference);
    for (const auto& m : four) {
        CHECK(is_canonical(m));
        CHECK_FALSE(material_error(m, VariantId::Antichess).has_value());
    }
    CHECK(enumerate_tables(VariantId::AntichessFics, 4).size() == 714);
    // Four File: K + K plus multisets of Q R B N P, up to colour flip.
    const auto ff = enumerate_tables(VariantId::FourFile, 4);
    CHECK(ff.size() == 1 + 5 + 15 + 15);
    CHECK(ff.front().name() == "KvK");
    for (const auto& m : ff) {
        CHECK(m.count(Color::White, UnitType::King) == 1);
        CHECK(m.count(Color::Black, UnitType::King) == 1);
    }
    // 5 units: KXYZvK (35) + KXYvKZ (15 * 5).
    CHECK(enumerate_tables(VariantId::FourFile, 5).size() == 36 + 35 + 75);
}

TEST_CASE("sub-tables, checked by hand") {
    // KPvK: Black's king takes the pawn (KvK) or the king (KvP after flip);
    // the pawn promotes to any of Q R B N K. White taking the black king
    // ends the game (Black has no units): terminal, not a table.
    CHECK(sub_names("KPvK", VariantId::Antichess) ==
          std::vector<std::string>{"KBvK", "KKvK", "KNvK", "KQvK", "KRvK", "KvK", "KvP"});
    // KvK: any capture leaves a side without units.
    CHECK(sub_names("KvK", VariantId::Antichess).empty());
    // QRvB: White takes the bishop (terminal); Black takes Q or R.
    CHECK(sub_names("QRvB", VariantId::Antichess) == std::vector<std::string>{"QvB", "RvB"});
    // PvP: captures are terminal; promotions of either pawn.
    CHECK(sub_names("PvP", VariantId::Antichess) ==
          std::vector<std::string>{"BvP", "KvP", "NvP", "QvP", "RvP"});
    // RPvN: Black takes R (PvN, flipped to NvP) or P (RvN); White promotes
    // (5 ways). White taking the knight, with or without promotion, leaves
    // Black with nothing.
    CHECK(sub_names("RPvN", VariantId::Antichess) ==
          std::vector<std::string>{"KRvN", "NvP", "QRvN", "RBvN", "RNvN", "RRvN", "RvN"});
    // RPvKN: White takes K or N (RPvN, RPvK); the pawn takes one on the last
    // rank and promotes (QRvN ... KRvK); Black takes R or P (KNvP, KNvR);
    // the pawn promotes (KRvKN stays, QRvKN flips to KNvQR: equal counts,
    // Black has the king).
    CHECK(sub_names("RPvKN", VariantId::Antichess) ==
          std::vector<std::string>{"KNvP", "KNvQR", "KNvR", "KNvRB", "KNvRN", "KNvRR", "KRvK",
                                   "KRvKN", "KRvN", "QRvK", "QRvN", "RBvK", "RBvN", "RNvK", "RNvN",
                                   "RPvK", "RPvN", "RRvK", "RRvN"});
    // KQvKP: White takes the pawn; Black's king takes the queen (KvKP,
    // flipped); Black promotes.
    CHECK(sub_names("KQvKP", VariantId::FourFile) ==
          std::vector<std::string>{"KPvK", "KQvK", "KQvKB", "KQvKN", "KQvKQ", "KQvKR"});
    CHECK(sub_names("KvK", VariantId::FourFile).empty());
}

TEST_CASE("dependency order: every table after what it converts into") {
    for (const VariantId v : {VariantId::Antichess, VariantId::FourFile}) {
        const auto all = enumerate_tables(v, 4);
        const auto order = dependency_order(v, all);
        CHECK(order.size() == all.size());  // closed under conversion
        std::set<Material> done;
        for (const Material& m : order) {
            for (const Material& sub : sub_tables(m, v)) {
                CHECK_MESSAGE(done.count(sub) == 1, sub.name() << " before " << m.name());
            }
            done.insert(m);
        }
    }
    const Material krp = *parse_table("KRPvKP", VariantId::Antichess);
    const auto order = dependency_order(VariantId::Antichess, std::vector<Material>{krp});
    CHECK(order.back() == krp);
    CHECK(std::find(order.begin(), order.end(), *parse_material("KvK")) != order.end());
    // Promotions keep the unit count: 5-unit tables come before KRPvKP.
    CHECK(std::find(order.begin(), order.end(), *parse_material("KQRvKP")) != order.end());
}

}  // namespace tbf::index

namespace tbf::index {
namespace {

// Every capture or promotion of sampled positions of `table`, played by the
// move generator, is one of conversions(), made by the side to move.
template <Ruleset R>
void check_conversions_against_moves(std::string_view table, VariantId v) {
    const Material m = *parse_table(table, v);
    const auto listed = conversions(m, v);
    auto ix = Indexer::create(v, m);
    REQUIRE(ix.ok());
    std::set<Conversion> seen;
    const std::uint64_t step = std::max<std::uint64_t>(1, ix->size() / 20000);
    MoveList moves;
    for (const Color side : {Color::White, Color::Black}) {
        for (std::uint64_t i = 0; i < ix->size(); i += step) {
            const auto pos = ix->position(i, side);
            if (!pos) continue;
            generate_legal<R>(*pos, moves);
            for (const Move move : moves) {
                const Material after = material_of(pos->after(move));
                if (after == m || material_error(after, v)) continue;
                const Conversion c{after, side};
                CAPTURE(to_fen(*pos));
                CHECK(std::binary_search(listed.begin(), listed.end(), c));
                seen.insert(c);
            }
        }
    }
    // The sample meets most of what is listed, so the check is not vacuous.
    CHECK(seen.size() * 2 > listed.size());
    for (const Conversion& c : listed) CHECK(canonical(c.after) != m);
}

}  // namespace

TEST_CASE("conversions are the captures and promotions the move generator plays") {
    check_conversions_against_moves<Antichess>("KRvKP", VariantId::Antichess);
    check_conversions_against_moves<Antichess>("BNvPP", VariantId::Antichess);
    check_conversions_against_moves<Antichess>("PvP", VariantId::Antichess);
    check_conversions_against_moves<FourFile>("KRPvKP", VariantId::FourFile);
}

}  // namespace tbf::index
