// Where the two FEN parsers, rules/ and the verifier's own, are meant to
// differ, and where fuzzing them against each other made them agree
// (docs/fuzzing.md). The fuzz target tests/fuzz/fen_differential_fuzz.cpp
// allows for exactly the differences checked here.
#include <doctest/doctest.h>

#include <string>

#include "tbforge/rules/fen.hpp"
#include "tbforge/verify/board.hpp"

namespace {

bool rules_accept(const std::string& fen, tbf::VariantId v = tbf::VariantId::Antichess) {
    return tbf::parse_fen(fen, v).ok();
}

bool verify_accepts(const std::string& fen,
                    tbf::verify::Variant v = tbf::verify::Variant::Antichess) {
    return tbf::verify::parse_fen(v, fen).ok();
}

}  // namespace

TEST_CASE("FEN field count: rules/ reads 2 to 6 fields, the verifier 4 to 6") {
    // rules/ takes missing castling and en-passant fields as "-"
    // (docs/ARCHITECTURE.md section 3.1); the verifier insists on them.
    for (const char* fen : {"8/8/8/8/8/8/8/K6k w", "8/8/8/8/8/8/8/K6k b KQkq"}) {
        CAPTURE(fen);
        CHECK(rules_accept(fen));
        CHECK_FALSE(verify_accepts(fen));
    }
    CHECK(verify_accepts("8/8/8/8/8/8/8/K6k w - -"));
    CHECK(verify_accepts("8/8/8/8/8/8/8/K6k b KQkq -"));
    for (const char* fen : {"8/8/8/8/8/8/8/K6k", "8/8/8/8/8/8/8/K6k w - - 0 1 x"}) {
        CAPTURE(fen);
        CHECK_FALSE(rules_accept(fen));
        CHECK_FALSE(verify_accepts(fen));
    }
}

TEST_CASE("FEN en passant: the verifier keeps a square no pawn can use, rules/ drops it") {
    // Possible (a black pawn just pushed d7d5) but no white pawn beside it.
    const std::string unusable = "4k3/8/8/3p4/8/8/8/4K3 w - d6 0 1";
    auto pos = tbf::parse_fen(unusable, tbf::VariantId::Antichess);
    auto board = tbf::verify::parse_fen(tbf::verify::Variant::Antichess, unusable);
    REQUIRE(pos.ok());
    REQUIRE(board.ok());
    CHECK(pos->ep_square() == tbf::kNoSquare);
    // The verifier's strategy check tells such a key from the canonical one,
    // so its board keeps the square; no legal move uses it.
    CHECK(board->ep_square() == tbf::verify::square_at(3, 5));
    for (const auto& m : board->legal_moves()) CHECK(m.to != board->ep_square());

    // A square a pawn can use is kept by both.
    const std::string usable = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1";
    pos = tbf::parse_fen(usable, tbf::VariantId::Antichess);
    board = tbf::verify::parse_fen(tbf::verify::Variant::Antichess, usable);
    REQUIRE(pos.ok());
    REQUIRE(board.ok());
    CHECK(pos->ep_square() == tbf::make_square(3, 5));
    CHECK(board->ep_square() == tbf::verify::square_at(3, 5));
    CHECK(tbf::to_fen(*pos) == board->fen());

    // An impossible square is rejected by both; in Four File a possible one
    // is accepted and dropped by both.
    CHECK_FALSE(rules_accept("4k3/8/8/8/8/8/8/4K3 w - d6 0 1"));
    CHECK_FALSE(verify_accepts("4k3/8/8/8/8/8/8/4K3 w - d6 0 1"));
    const std::string four_file = "4k3/8/8/2p5/8/8/8/4K3 w - c6 0 1";
    pos = tbf::parse_fen(four_file, tbf::VariantId::FourFile);
    board = tbf::verify::parse_fen(tbf::verify::Variant::FourFile, four_file);
    REQUIRE(pos.ok());
    REQUIRE(board.ok());
    CHECK(pos->ep_square() == tbf::kNoSquare);
    CHECK(board->ep_square() == tbf::verify::kNoSquare);
}

// Found by fuzzing: rules/ took any unsigned number for the counters, the
// full-move number 0 and ten-digit numbers included, where the verifier
// takes 1 to 9 digits and full moves from 1. Both now read them alike.
TEST_CASE("FEN move counters are read alike: 1 to 9 digits, full moves from 1") {
    const std::string board = "8/8/8/8/8/8/8/K6k w - - ";
    for (const char* counters : {"0 1", "17 40", "000000000 999999999", "0"}) {
        CAPTURE(counters);
        CHECK(rules_accept(board + counters));
        CHECK(verify_accepts(board + counters));
    }
    for (const char* counters :
         {"0 0", "0 00", "1234567890 1", "0 4294967295", "x 1", "0 +1", "-1 1"}) {
        CAPTURE(counters);
        CHECK_FALSE(rules_accept(board + counters));
        CHECK_FALSE(verify_accepts(board + counters));
    }
}
