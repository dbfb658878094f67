// Values of hand-checked positions, probed in tables built by the generator.
// Each expected value is derived in the comment beside it from the rules of
// docs/ARCHITECTURE.md section 3, not read from a table.
#include <doctest/doctest.h>

#include <algorithm>

#include "probe_fixture.hpp"
#include "tbforge/rules/movegen.hpp"

using namespace tbf;
using namespace tbf::test;

TEST_CASE("a side without units has won, distance 0") {
    const auto& db = BuiltDb::antichess();
    // Black has no units: with Black to move Black has won, with White to
    // move White has lost. No table is needed (there is no "KQv" table).
    CHECK(db.value("8/8/8/8/8/8/8/KQ6 b - - 0 1") == win(0));
    CHECK(db.value("8/8/8/8/8/8/8/KQ6 w - - 0 1") == loss(0));
    CHECK(db.moves(db.fen("8/8/8/8/8/8/8/KQ6 w - - 0 1")).empty());
}

TEST_CASE(
    "stalemate: the stalemated side wins in antichess, draws with equal counts in FICS rules") {
    // White a2 and Black a3 block each other and neither attacks anything:
    // whoever is to move has units but no move.
    const auto& db = BuiltDb::antichess();
    for (const char* fen : {"8/8/8/8/8/p7/P7/8 w - - 0 1", "8/8/8/8/8/p7/P7/8 b - - 0 1"}) {
        CAPTURE(fen);
        CHECK(db.moves(db.fen(fen)).empty());
        CHECK(db.value(fen) == win(0));
        CHECK(BuiltDb::fics().value(fen) == draw());
    }
}

TEST_CASE("a position with a capture available: the capture is compulsory") {
    const auto& db = BuiltDb::antichess();
    // Qd1 sees Kd8 down the open d-file; it is White's only capture, so it
    // must be played, and Black, left without units, has won: a loss in 1.
    const Position pos = db.fen("3k4/8/8/8/8/8/8/K2Q4 w - - 0 1");
    CHECK(db.value(pos) == loss(1));
    const auto moves = db.moves(pos);
    REQUIRE(moves.size() == 1);
    CHECK(moves[0].uci == "d1d8");
    CHECK(moves[0].conversion);
    CHECK(moves[0].child == win(0));
    CHECK(moves[0].for_mover == loss(1));
}

TEST_CASE("a win in 2 where the opponent is forced to capture") {
    const auto& db = BuiltDb::antichess();
    // Kf1 has no capture. Kf1-e1 and Kf1-g1 step onto the queen's rank, so
    // White must take the king and Black has won: win in 2. Black cannot
    // convert itself, so no win is shorter.
    const Position pos = db.fen("8/8/8/8/8/8/8/KQ3k2 b - - 0 1");
    CHECK(db.value(pos) == win(2));
    const auto moves = db.moves(pos);
    REQUIRE(moves.size() == 5);
    CHECK(moves[0].uci == "f1e1");
    CHECK(moves[1].uci == "f1g1");
    for (int i = 0; i < 2; ++i) {
        CHECK(moves[i].child == loss(1));
        CHECK(moves[i].for_mover == win(2));
        CHECK_FALSE(moves[i].conversion);
    }
}

TEST_CASE("colour-flipped material: KvKQ is answered from the KQvK table") {
    const auto& db = BuiltDb::antichess();
    // The capture position above with colours swapped.
    CHECK(db.value("k2q4/8/8/8/8/8/8/3K4 b - - 0 1") == loss(1));
    CHECK(db.value("8/8/8/8/8/8/8/kq3K2 w - - 0 1") == win(2));
    CHECK(db.tablebase().database().table_info("antichess/KvKQ").status().code() ==
          StatusCode::NotFound);
    // Every position has the value of its colour flip.
    for (const char* table : {"KQvK", "KPvK", "PvP", "NvB"}) {
        for (const Position& pos : sample_positions(VariantId::Antichess, table, 300)) {
            CAPTURE(to_fen(pos));
            CHECK(db.value(pos) == db.value(pos.color_flipped()));
        }
    }
}

TEST_CASE("en passant: a position with the right is valued from its captures") {
    const auto& db = BuiltDb::antichess();
    // White must take e5xd6 e.p. (its only capture); Black is left without
    // units and has won.
    const Position with_ep = db.fen("8/8/8/3pP3/8/8/8/8 w - d6 0 1");
    REQUIRE(with_ep.ep_square() == make_square(3, 5));
    CHECK(db.value(with_ep) == loss(1));
    const auto moves = db.moves(with_ep);
    REQUIRE(moves.size() == 1);
    CHECK(moves[0].uci == "e5d6");
    CHECK(moves[0].child == win(0));
    // Without the right the same placement is a quiet position of the PvP
    // table, whose only move is e5-e6.
    const Position without = db.fen("8/8/8/3pP3/8/8/8/8 w - - 0 1");
    const auto quiet = db.moves(without);
    REQUIRE(quiet.size() == 1);
    CHECK(quiet[0].uci == "e5e6");
    CHECK(db.value(without) == quiet[0].for_mover);
    CHECK(db.value(without) != loss(1));

    // A double push that gives the opponent an en-passant capture: the child
    // carries the right, and Black must take e4xd3, leaving White without
    // units. d2-d3 is met by the same capture. Both win in 2.
    const Position before = db.fen("8/8/8/8/4p3/8/3P4/8 w - - 0 1");
    const auto pushes = db.moves(before);
    REQUIRE(pushes.size() == 2);
    for (const auto& mv : pushes) {
        CAPTURE(mv.uci);
        CHECK(mv.child == loss(1));
        CHECK(mv.for_mover == win(2));
    }
    const auto push = std::find_if(pushes.begin(), pushes.end(),
                                   [](const probe::MoveValue& mv) { return mv.uci == "d2d4"; });
    REQUIRE(push != pushes.end());
    const Position child = before.after(push->move);
    CHECK(child.ep_square() == make_square(3, 2));
    CHECK(db.value(child) == loss(1));
    CHECK(db.value(before) == win(2));
}

TEST_CASE("Four File: checkmate, stalemate, mate in 1") {
    const auto& db = BuiltDb::fourfile();
    // Ke8 is checked by Qe7, which Ke6 guards; a Four File king moves only
    // along the e-file: mate.
    const Position mate = db.fen("4k3/4Q3/4K3/8/8/8/8/8 b - - 0 1");
    CHECK(db.moves(mate).empty());
    CHECK(db.value(mate) == loss(0));
    // Without the queen's check, e7 is still covered by Ke6: stalemate, a draw.
    CHECK(db.value("4k3/8/4K3/8/8/8/8/Q7 b - - 0 1") == draw());
    CHECK(db.value("4k3/8/4K3/8/8/8/8/8 b - - 0 1") == draw());
    // Bc6+ (a8-c6, nothing can block on the d-file) mates: win in 1; kings
    // are never captured, so nothing converts sooner.
    const Position bishop = db.fen("B3k3/8/4K3/8/8/8/8/8 w - - 0 1");
    CHECK(db.value(bishop) == win(1));
    CHECK(db.moves(bishop).front().uci == "a8c6");
    CHECK(db.moves(bishop).front().child == loss(0));
}

TEST_CASE("Four File: a placement whose side not to move is in check is not a position") {
    const auto& db = BuiltDb::fourfile();
    Position pos;
    pos.put(make_square(4, 7), make_unit(Color::Black, UnitType::King));
    pos.put(make_square(4, 6), make_unit(Color::White, UnitType::Queen));
    pos.put(make_square(4, 0), make_unit(Color::White, UnitType::King));
    pos.set_side_to_move(Color::White);
    auto v = db.tablebase().probe(VariantId::FourFile, pos);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::InvalidArgument);
    CHECK(v.status().message().find("check") != std::string::npos);
    CHECK(db.tablebase().probe_moves(VariantId::FourFile, pos).status().code() == StatusCode::InvalidArgument);
}
