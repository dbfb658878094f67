// probe_moves against the rules: every legal move once, children probed
// independently, scores recomputed from docs/ARCHITECTURE.md section 4, best first; and
// probe against the Syzygy giveaway values.
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "probe_fixture.hpp"
#include "tbforge/rules/movegen.hpp"

using namespace tbf;
using namespace tbf::test;

namespace {

// docs/ARCHITECTURE.md section 4, written out again: a converting move scores 1, a
// quiet one the child's distance + 1; the result is the child's negated.
probe::Value score(const probe::Value& child, bool conversion) {
    if (child.wdl == Wdl::Draw) return {};
    return {-child.wdl, static_cast<std::uint16_t>(conversion ? 1 : child.dtc + 1)};
}

// Sort key of a move: wins by increasing DTC, draws, losses by decreasing DTC.
std::tuple<int, int> rank(const probe::Value& v) {
    if (v.wdl == Wdl::Win) return {0, v.dtc};
    if (v.wdl == Wdl::Draw) return {1, 0};
    return {2, -v.dtc};
}

template <Ruleset R>
void check_moves(const BuiltDb& db, const Position& pos) {
    CAPTURE(to_fen(pos));
    const auto moves = db.moves(pos);
    MoveList legal;
    generate_legal<R>(pos, legal);
    REQUIRE(moves.size() == legal.size());
    std::set<std::uint16_t> seen;
    for (const auto& mv : moves) seen.insert(mv.move.raw());
    for (Move m : legal) CHECK(seen.count(m.raw()) == 1);

    std::optional<probe::Value> best;
    for (std::size_t i = 0; i < moves.size(); ++i) {
        const auto& mv = moves[i];
        CAPTURE(mv.uci);
        const bool conversion = mv.move.is_promotion() || pos.unit_on(mv.move.to()) != Unit::None ||
                                pos.is_en_passant(mv.move);
        CHECK(mv.conversion == conversion);
        CHECK(mv.child == db.value(pos.after(mv.move)));
        CHECK(mv.for_mover == score(mv.child, conversion));
        CHECK(mv.for_mover == probe::move_value(mv.child, mv.conversion));
        if (i > 0) {
            const auto& prev = moves[i - 1];
            CHECK(std::make_tuple(rank(prev.for_mover), prev.uci) <
                  std::make_tuple(rank(mv.for_mover), mv.uci));
        }
        if (!best || rank(mv.for_mover) < rank(*best)) best = mv.for_mover;
    }
    const probe::Value value = db.value(pos);
    if (best) {
        // The minimax of the children, and the first move is a best move.
        CHECK(value == *best);
        CHECK(moves.front().for_mover == value);
    } else {
        const auto terminal = terminal_value<R>(pos, false);
        REQUIRE(terminal.has_value());
        CHECK(value == probe::Value{*terminal, 0});
    }
}

}  // namespace

TEST_CASE("probe_moves: every legal move, children, scores and order (antichess)") {
    const auto& db = BuiltDb::antichess();
    const std::size_t n = kSanitized ? 40 : 400;
    for (const char* table : {"KQvK", "KPvK", "PvP", "KvR", "NvN"}) {
        for (const Position& pos : sample_positions(VariantId::Antichess, table, n, 7)) {
            check_moves<Antichess>(db, pos);
            check_moves<Antichess>(db, pos.color_flipped());
        }
    }
}

TEST_CASE("probe_moves: every legal move, children, scores and order (Four File, FICS)") {
    const std::size_t n = kSanitized ? 40 : 400;
    for (const char* table : {"KQvK", "KPvK", "KRvK", "KBvK"}) {
        for (const Position& pos : sample_positions(VariantId::FourFile, table, n, 11)) {
            check_moves<FourFile>(BuiltDb::fourfile(), pos);
        }
    }
    for (const Position& pos : sample_positions(VariantId::AntichessFics, "PvP", n, 13)) {
        check_moves<AntichessFics>(BuiltDb::fics(), pos);
    }
}

TEST_CASE("probe agrees with the Syzygy giveaway tables") {
    // WDL on every row (cursed win = win, blessed loss = loss); DTC on
    // pawnless uncursed rows, where Syzygy's halved storage reports a win of
    // odd r or a loss of even r for a true distance of r or r + 1.
    const auto& db = BuiltDb::antichess();
    const std::set<std::string> built = {"KQvK", "KvKQ", "KPvK", "KvKP"};
    int wdl_rows = 0, dtc_rows = 0;
    for (const char* file : {"syzygy/giveaway_samples_2.tsv", "syzygy/giveaway_samples_34.tsv"}) {
        const Tsv tsv = read_tsv(reference_path(file));
        const auto table_col = tsv.column("table"), fen_col = tsv.column("fen"),
                   wdl_col = tsv.column("wdl"), dtz_col = tsv.column("dtz"),
                   single_col = tsv.column("dtz_single_valued_subtable");
        for (const auto& row : tsv.rows) {
            const std::string& table = row[table_col];
            if (table.size() != 3 && built.count(table) == 0) continue;
            const int wdl = std::stoi(row[wdl_col]);
            const int dtz = std::abs(std::stoi(row[dtz_col]));
            const probe::Value v = db.value(row[fen_col]);
            INFO(table << " " << row[fen_col] << " syzygy " << wdl << " " << dtz);
            CHECK(static_cast<int>(v.wdl) == (wdl > 0) - (wdl < 0));
            ++wdl_rows;
            if (table.find('P') == std::string::npos && (wdl == 2 || wdl == -2) &&
                row[single_col] == "0") {
                const bool rounded = wdl > 0 ? dtz % 2 == 1 : dtz % 2 == 0;
                CHECK((v.dtc == dtz || (rounded && v.dtc == dtz + 1)));
                ++dtc_rows;
            }
        }
    }
    CHECK(wdl_rows > 3000);
    CHECK(dtc_rows > 1000);
    MESSAGE(wdl_rows << " WDL and " << dtc_rows << " DTC values compared with Syzygy");
}
