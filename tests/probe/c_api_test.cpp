// The C API from C++: the same answers as the C++ API, struct validation,
// buffers, the catalogue, per-thread error messages.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include "probe_fixture.hpp"
#include "tbforge/probe/tbforge.h"

using namespace tbf;
using namespace tbf::test;

namespace {

class Handle {
public:
    explicit Handle(const std::string& path, std::size_t cache = 0) {
        REQUIRE_MESSAGE(tbf_open(path.c_str(), cache, &db_) == TBF_OK, tbf_last_error());
    }
    ~Handle() { tbf_close(db_); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    tbf_db* get() const { return db_; }

private:
    tbf_db* db_ = nullptr;
};

bool same(const tbf_value& c, const probe::Value& v) {
    return c.wdl == static_cast<int>(v.wdl) && c.dtc == v.dtc;
}

tbf_position parsed(const char* fen, const char* variant = "antichess") {
    tbf_position pos;
    REQUIRE_MESSAGE(tbf_parse_fen(variant, fen, &pos) == TBF_OK, tbf_last_error());
    return pos;
}

}  // namespace

TEST_CASE("C API: version and status strings") {
    CHECK(tbf_api_version() == TBF_API_VERSION);
    CHECK(std::string(tbf_status_string(TBF_ERR_MISSING_TABLE)) == "missing table");
    CHECK(std::string(tbf_status_string(99)) == "unknown status");
}

TEST_CASE("C API: FEN and struct probes agree with the C++ API") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    for (const char* table : {"KQvK", "KPvK", "PvP"}) {
        for (const Position& pos : sample_positions(VariantId::Antichess, table, 200, 17)) {
            const std::string fen = to_fen(pos);
            CAPTURE(fen);
            const probe::Value expected = db.value(pos);
            tbf_value by_fen{}, by_struct{};
            REQUIRE(tbf_probe_fen(h.get(), "antichess", fen.c_str(), &by_fen) == TBF_OK);
            CHECK(same(by_fen, expected));
            // The struct built by hand, units in reverse square order.
            tbf_position p{};
            for (int s = 63; s >= 0; --s) {
                const Unit u = pos.unit_on(static_cast<Square>(s));
                if (u == Unit::None) continue;
                p.units[p.unit_count++] = {static_cast<uint8_t>(s),
                                           static_cast<uint8_t>(unit_type(u)),
                                           static_cast<uint8_t>(unit_color(u))};
            }
            p.side_to_move = static_cast<uint8_t>(pos.side_to_move());
            p.ep_square = TBF_NO_SQUARE;
            REQUIRE(tbf_probe(h.get(), "antichess", &p, &by_struct) == TBF_OK);
            CHECK(same(by_struct, expected));
            CHECK(std::string(tbf_last_error()).empty());
        }
    }
}

TEST_CASE("C API: en passant in the struct; the parsed struct") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    tbf_position p = parsed("8/8/8/3pP3/8/8/8/8 w - d6 0 1");
    CHECK(p.unit_count == 2);
    CHECK(p.side_to_move == TBF_WHITE);
    CHECK(p.ep_square == 43);  // d6
    tbf_value v{};
    REQUIRE(tbf_probe(h.get(), "antichess", &p, &v) == TBF_OK);
    CHECK(v.wdl == -1);  // White must capture its last enemy: Black has won
    CHECK(v.dtc == 1u);
    p.ep_square = TBF_NO_SQUARE;
    REQUIRE(tbf_probe(h.get(), "antichess", &p, &v) == TBF_OK);
    CHECK(same(v, db.value("8/8/8/3pP3/8/8/8/8 w - - 0 1")));
    p.ep_square = 44;  // e6: no pawn skipped it
    CHECK(tbf_probe(h.get(), "antichess", &p, &v) == TBF_ERR_BAD_INPUT);
    CHECK(std::string(tbf_last_error()).find("en-passant") != std::string::npos);
}

TEST_CASE("C API: malformed structs and arguments are TBF_ERR_BAD_INPUT") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    const tbf_position good = parsed("8/8/8/8/8/8/8/KQ3k2 b - - 0 1");
    tbf_value v{};
    auto expect_bad = [&](tbf_position p, const char* what) {
        CAPTURE(what);
        CHECK(tbf_probe(h.get(), "antichess", &p, &v) == TBF_ERR_BAD_INPUT);
        CHECK(std::string(tbf_last_error()).size() > 0);
    };
    tbf_position p = good;
    p.units[1].square = p.units[0].square;
    expect_bad(p, "two units on one square");
    p = good;
    p.units[0].square = 64;
    expect_bad(p, "square out of range");
    p = good;
    p.units[0].type = 6;
    expect_bad(p, "unit type out of range");
    p = good;
    p.units[0].color = 2;
    expect_bad(p, "colour out of range");
    p = good;
    p.unit_count = TBF_MAX_UNITS + 1;
    expect_bad(p, "too many units");
    p = good;
    p.side_to_move = 2;
    expect_bad(p, "side to move");
    p = good;
    p.units[0] = {0, TBF_PAWN, TBF_WHITE};  // a pawn on a1
    expect_bad(p, "pawn on the first rank");
    CHECK(std::string(tbf_last_error()).rfind("bad position: pawn on rank 1 (a1)", 0) == 0);
    CHECK(tbf_probe(h.get(), "chess", &good, &v) == TBF_ERR_BAD_INPUT);
    CHECK(std::string(tbf_last_error()) == "unknown variant 'chess'");
    CHECK(tbf_probe(h.get(), "antichess", nullptr, &v) == TBF_ERR_BAD_INPUT);
    CHECK(tbf_probe(nullptr, "antichess", &good, &v) == TBF_ERR_BAD_INPUT);
    CHECK(tbf_probe_fen(h.get(), "antichess", "8/8/8/8/8/8/8/KQ3k2 x - - 0 1", &v) ==
          TBF_ERR_BAD_INPUT);
    CHECK(std::string(tbf_last_error()).find("side to move") != std::string::npos);
    CHECK(tbf_probe_fen(h.get(), "antichess", "8/8/8/8/8/8/8/KQRk4 b - - 0 1", &v) ==
          TBF_ERR_MISSING_TABLE);
    CHECK(std::string(tbf_last_error()) == "missing table antichess/KQRvK");
}

TEST_CASE("C API: moves, best first, with squares and promotions") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    const char* fen = "8/4P3/8/8/8/8/8/K6k w - - 0 1";
    const auto expected = db.moves(db.fen(fen));
    tbf_move_value moves[TBF_MAX_MOVES];
    std::size_t count = 0;
    REQUIRE(tbf_probe_moves_fen(h.get(), "antichess", fen, moves, TBF_MAX_MOVES, &count) == TBF_OK);
    REQUIRE(count == expected.size());
    int promotions = 0;
    for (std::size_t i = 0; i < count; ++i) {
        CAPTURE(expected[i].uci);
        CHECK(std::string(moves[i].uci) == expected[i].uci);
        CHECK(moves[i].from == expected[i].move.from());
        CHECK(moves[i].to == expected[i].move.to());
        if (expected[i].move.is_promotion()) {
            ++promotions;
            CHECK(moves[i].promotion == static_cast<uint8_t>(expected[i].move.promotion()));
        } else {
            CHECK(moves[i].promotion == TBF_NO_PROMOTION);
        }
        CHECK(moves[i].conversion == (expected[i].conversion ? 1 : 0));
        CHECK(same(moves[i].child, expected[i].child));
        CHECK(same(moves[i].for_mover, expected[i].for_mover));
    }
    CHECK(promotions == 5);  // e8 = Q, R, B, N and K
    tbf_value v{};
    REQUIRE(tbf_probe_fen(h.get(), "antichess", fen, &v) == TBF_OK);
    CHECK(v.wdl == moves[0].for_mover.wdl);
    CHECK(v.dtc == moves[0].for_mover.dtc);

    // The struct version gives the same list.
    const tbf_position p = parsed(fen);
    tbf_move_value again[TBF_MAX_MOVES];
    std::size_t again_count = 0;
    REQUIRE(tbf_probe_moves(h.get(), "antichess", &p, again, TBF_MAX_MOVES, &again_count) ==
            TBF_OK);
    REQUIRE(again_count == count);
    CHECK(std::memcmp(again, moves, count * sizeof moves[0]) == 0);

    // Too small a buffer reports the count needed; NULL with capacity 0 asks for it.
    CHECK(tbf_probe_moves_fen(h.get(), "antichess", fen, moves, 2, &count) == TBF_ERR_BUFFER);
    CHECK(count == expected.size());
    count = 0;
    CHECK(tbf_probe_moves_fen(h.get(), "antichess", fen, nullptr, 0, &count) == TBF_ERR_BUFFER);
    CHECK(count == expected.size());
    CHECK(tbf_probe_moves_fen(h.get(), "antichess", fen, nullptr, 5, &count) == TBF_ERR_BAD_INPUT);
    // A terminal position has no moves.
    CHECK(tbf_probe_moves_fen(h.get(), "antichess", "8/8/8/8/8/p7/P7/8 w - - 0 1", nullptr, 0,
                              &count) == TBF_OK);
    CHECK(count == 0);
}

TEST_CASE("C API: catalogue, slot positions and stored values") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    auto tables = db.tablebase().database().list_tables();
    REQUIRE(tables.ok());
    std::size_t count = 0;
    REQUIRE(tbf_table_count(h.get(), &count) == TBF_OK);
    REQUIRE(count == tables->size());
    for (std::size_t i = 0; i < count; ++i) {
        tbf_table_info info;
        REQUIRE(tbf_table_info_at(h.get(), i, &info) == TBF_OK);
        const auto& t = (*tables)[i];
        CHECK(std::string(info.name) == t.spec.name);
        CHECK(std::string(info.variant) == "antichess");
        CHECK(std::string(info.material) == t.spec.material);
        CHECK(info.slots == t.spec.slot_count);
        CHECK(info.index_size * 2 == info.slots);
        CHECK(info.stored_bytes == t.stored_bytes);
        CHECK(info.checksum == t.values_checksum);
        CHECK(info.value_width == t.spec.value_width);
    }
    tbf_table_info info;
    CHECK(tbf_table_info_at(h.get(), count, &info) == TBF_ERR_BAD_INPUT);

    // Slot by slot: the position of a slot probes to the stored value.
    REQUIRE(tbf_table_count(h.get(), &count) == TBF_OK);
    auto ix =
        index::Indexer::create(VariantId::Antichess, table_material(VariantId::Antichess, "KPvK"));
    REQUIRE(ix.ok());
    const std::uint64_t n = ix->size();
    std::vector<tbf_value> values(2 * n);
    REQUIRE(tbf_table_values(h.get(), "antichess/KvKP", 0, values.size(), values.data()) == TBF_OK);
    int checked = 0, holes = 0;
    for (std::uint64_t slot = 0; slot < 2 * n; slot += 97) {
        tbf_position p;
        const tbf_status s =
            tbf_table_position(h.get(), "antichess/KPvK", slot % n, static_cast<int>(slot / n), &p);
        if (s == TBF_ERR_NOT_A_POSITION) {
            ++holes;
            continue;
        }
        REQUIRE(s == TBF_OK);
        tbf_value v{};
        REQUIRE(tbf_probe(h.get(), "antichess", &p, &v) == TBF_OK);
        CHECK(v.wdl == values[slot].wdl);
        CHECK(v.dtc == values[slot].dtc);
        ++checked;
    }
    CHECK(checked > 1000);
    CHECK(holes == 0);  // antichess indexes hold no invalid slots
    tbf_position p;
    CHECK(tbf_table_position(h.get(), "antichess/KPvK", n, 0, &p) == TBF_ERR_BAD_INPUT);
    CHECK(tbf_table_position(h.get(), "antichess/KPvK", 0, 2, &p) == TBF_ERR_BAD_INPUT);
    CHECK(tbf_table_position(h.get(), "antichess/BBvN", 0, 0, &p) == TBF_ERR_MISSING_TABLE);
    CHECK(tbf_table_values(h.get(), "antichess/KPvK", 2 * n - 1, 2, values.data()) ==
          TBF_ERR_BAD_INPUT);
}

TEST_CASE("C API: Four File holes are not positions") {
    const auto& db = BuiltDb::fourfile();
    Handle h(db.path());
    auto ix =
        index::Indexer::create(VariantId::FourFile, table_material(VariantId::FourFile, "KQvK"));
    REQUIRE(ix.ok());
    int holes = 0;
    for (std::uint64_t i = 0; i < ix->size(); ++i) {
        tbf_position p;
        const tbf_status s = tbf_table_position(h.get(), "fourfile/KQvK", i, TBF_WHITE, &p);
        CHECK(s == (ix->is_valid(i, Color::White) ? TBF_OK : TBF_ERR_NOT_A_POSITION));
        holes += s == TBF_ERR_NOT_A_POSITION;
    }
    CHECK(holes > 0);  // White to move while Black's king is in check
    tbf_value v{};
    REQUIRE(tbf_probe_fen(h.get(), "fourfile", "4k3/4Q3/4K3/8/8/8/8/8 b - - 0 1", &v) == TBF_OK);
    CHECK(v.wdl == -1);  // checkmate
    CHECK(v.dtc == 0u);
}

TEST_CASE("C API: the last error belongs to the calling thread") {
    const auto& db = BuiltDb::antichess();
    Handle h(db.path());
    tbf_value v{};
    CHECK(tbf_probe_fen(h.get(), "antichess", "not a fen", &v) == TBF_ERR_BAD_INPUT);
    const std::string mine = tbf_last_error();
    CHECK_FALSE(mine.empty());
    std::string other = "unset";
    std::thread t([&] {
        tbf_value w{};
        if (tbf_probe_fen(h.get(), "antichess", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1", &w) == TBF_OK) {
            other = tbf_last_error();
        }
    });
    t.join();
    CHECK(other.empty());
    CHECK(std::string(tbf_last_error()) == mine);
}
