// The minimax rule of docs/ARCHITECTURE.md section 4 as derive_value applies it, with
// child values given by hand: no database involved.

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "board_support.hpp"
#include "tbforge/verify/board.hpp"
#include "tbforge/verify/tables.hpp"

namespace {

using tbf::verify::Board;
using tbf::verify::DtcValue;
using tbf::verify::Variant;
using tbf::verify::Wdl;

using tbf::test::board;

// Children valued from a table of FENs; a child missing from it has no value.
std::optional<DtcValue> derive(const Board& b, const std::map<std::string, DtcValue>& children) {
    return tbf::verify::derive_value(b, [&](const Board& child, DtcValue& v) {
        const auto it = children.find(child.fen());
        if (it == children.end()) return false;
        v = it->second;
        return true;
    });
}

constexpr DtcValue win(unsigned d) { return {Wdl::Win, d}; }
constexpr DtcValue loss(unsigned d) { return {Wdl::Loss, d}; }
constexpr DtcValue kDraw{};

// Antichess, White king a1 against Black king h8: three quiet moves.
constexpr const char* kKings = "7k/8/8/8/8/8/8/K7 w - - 0 1";
constexpr const char* kAfterA2 = "7k/8/8/8/8/8/K7/8 b - - 0 1";
constexpr const char* kAfterB1 = "7k/8/8/8/8/8/8/1K6 b - - 0 1";
constexpr const char* kAfterB2 = "7k/8/8/8/8/8/1K6/8 b - - 0 1";

}  // namespace

TEST_CASE("move_score: conversions score 1, quiet moves the child's distance + 1") {
    using tbf::verify::move_score;
    CHECK(move_score(loss(4), false) == win(5));
    CHECK(move_score(win(0), false) == loss(1));
    CHECK(move_score(kDraw, false) == kDraw);
    CHECK(move_score(loss(9), true) == win(1));
    CHECK(move_score(win(9), true) == loss(1));
    CHECK(move_score(kDraw, true) == kDraw);
}

TEST_CASE("derive_value: the fastest win, else a draw, else the longest loss") {
    const Board b = board(Variant::Antichess, kKings);
    CHECK(derive(b, {{kAfterA2, loss(4)}, {kAfterB1, loss(2)}, {kAfterB2, kDraw}}) == win(3));
    CHECK(derive(b, {{kAfterA2, win(4)}, {kAfterB1, kDraw}, {kAfterB2, win(0)}}) == kDraw);
    CHECK(derive(b, {{kAfterA2, win(4)}, {kAfterB1, win(0)}, {kAfterB2, win(7)}}) == loss(8));
    // One child without a value: nothing can be derived.
    CHECK_FALSE(derive(b, {{kAfterA2, win(4)}, {kAfterB2, win(7)}}).has_value());
}

TEST_CASE("derive_value: a capture scores 1 whatever the child's distance") {
    // The capture is compulsory; afterwards Black has no units and has won.
    const Board b = board(Variant::Antichess, "8/8/8/8/8/8/1k6/K7 w - - 0 1");
    CHECK(derive(b, {{"8/8/8/8/8/8/1K6/8 b - - 0 1", win(0)}}) == loss(1));
    CHECK(derive(b, {{"8/8/8/8/8/8/1K6/8 b - - 0 1", loss(6)}}) == win(1));
}

TEST_CASE("derive_value: terminal positions take their outcome at distance 0") {
    const std::map<std::string, DtcValue> none;
    // Blocked pawns: stalemate, won by the side to move in antichess, a draw
    // under FICS rules with equal unit counts.
    CHECK(derive(board(Variant::Antichess, "8/8/8/8/8/p7/P7/8 w - - 0 1"), none) == win(0));
    CHECK(derive(board(Variant::AntichessFics, "8/8/8/8/8/p7/P7/8 w - - 0 1"), none) == kDraw);
    // A side without units has won.
    CHECK(derive(board(Variant::Antichess, "8/8/8/8/8/8/8/K7 b - - 0 1"), none) == win(0));
    CHECK(derive(board(Variant::Antichess, "8/8/8/8/8/8/8/K7 w - - 0 1"), none) == loss(0));
    // Four File: mate is a loss, stalemate a draw.
    CHECK(derive(board(Variant::FourFile, "4k3/8/4K3/8/8/8/8/R7 b - - 0 1"), none) == kDraw);
    CHECK(derive(board(Variant::FourFile, "R3k3/8/4K3/8/8/8/8/8 b - - 0 1"), none) == loss(0));
}
