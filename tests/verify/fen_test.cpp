// FEN reading and writing: round trips, and one clear error per kind of bad input.

#include <doctest/doctest.h>

#include <array>
#include <string>

#include "tbforge/verify/board.hpp"
#include "test_support.hpp"

namespace {

using tbf::verify::parse_fen;
using tbf::verify::Variant;

constexpr const char* kAntichessStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
using tbf::test::kFourFileStart;

// The error for a FEN that must be rejected; fails the test if it is accepted.
std::string error_of(Variant v, const std::string& fen) {
    const auto r = parse_fen(v, fen);
    CHECK_MESSAGE(!r, "accepted: ", fen);
    if (r) return "";
    CHECK(r.status().code() == tbf::StatusCode::InvalidArgument);
    // One line, naming the input.
    CHECK(r.status().message().find('\n') == std::string::npos);
    CHECK(r.status().message().find(fen) != std::string::npos);
    return r.status().message();
}

using tbf::test::contains;

}  // namespace

TEST_CASE("FEN round trip") {
    for (const char* fen :
         {kAntichessStart, "8/8/8/3pP3/8/8/8/K7 w - d6 0 1", "k7/8/8/8/4pP2/8/8/8 b - f3 0 1",
          "8/8/2k1k3/8/8/3K1K2/8/8 w - - 0 1"}) {
        const auto r = parse_fen(Variant::Antichess, fen);
        REQUIRE_MESSAGE(r, r.status().message());
        CHECK(r->fen() == fen);
    }
    const auto ff = parse_fen(Variant::FourFile, kFourFileStart);
    REQUIRE_MESSAGE(ff, ff.status().message());
    CHECK(ff->fen() == kFourFileStart);
}

TEST_CASE("FEN: castling rights are ignored, counters optional") {
    const auto r = parse_fen(Variant::Antichess, "r3k2r/p6p/8/8/8/8/P6P/R3K2R w KQkq - 0 1");
    REQUIRE_MESSAGE(r, r.status().message());
    CHECK(r->fen() == "r3k2r/p6p/8/8/8/8/P6P/R3K2R w - - 0 1");
    CHECK(r->legal_moves().size() == 14);

    const auto four = parse_fen(Variant::Antichess, "8/8/8/8/8/8/8/K7 b -  -  ");
    REQUIRE_MESSAGE(four, four.status().message());
    CHECK(four->side_to_move() == tbf::verify::Color::Black);
    CHECK(parse_fen(Variant::Antichess, "8/8/8/8/8/8/8/K7 b - - 17"));
}

TEST_CASE("FEN: unit counts and placement") {
    const auto r = parse_fen(Variant::Antichess, "8/8/2k1k3/8/8/3K1K2/8/8 b - - 0 1");
    REQUIRE(r);
    CHECK(r->unit_count(tbf::verify::Color::White) == 2);
    CHECK(r->unit_count(tbf::verify::Color::Black) == 2);
    const auto d3 = tbf::verify::square_from_name("d3");
    REQUIRE(d3);
    CHECK(r->unit_on(*d3) ==
          tbf::verify::Unit{tbf::verify::Piece::King, tbf::verify::Color::White});
    CHECK(r->unit_on(*tbf::verify::square_from_name("d4")).empty());
}

TEST_CASE("FEN errors: field count") {
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w"), "2 fields"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w - - 0 1 extra"), "7 fields"));
    CHECK(contains(error_of(Variant::Antichess, ""), "0 fields"));
}

TEST_CASE("FEN errors: placement syntax") {
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/X7 w - - 0 1"),
                   "bad unit letter 'X' in rank 1"));
    CHECK(contains(error_of(Variant::Antichess, "ppppppppp/8/8/8/8/8/8/K7 w - - 0 1"),
                   "rank 8 has 9 squares"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/4k4/8/8/8/8/K7 w - - 0 1"),
                   "rank 6 has 9 squares"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/7/8/8/8/K7 w - - 0 1"),
                   "rank 5 has 7 squares"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K6 w - - 0 1"),
                   "rank 1 has 7 squares"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/K7 w - - 0 1"), "only 7 ranks"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7/8 w - - 0 1"),
                   "more than 8 ranks"));
    CHECK(
        contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/9 w - - 0 1"), "bad unit letter '9'"));
}

TEST_CASE("FEN errors: other fields") {
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 x - - 0 1"), "side to move"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w KQz - 0 1"), "castling"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w - e9 0 1"), "en-passant"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w - - x 1"), "halfmove"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/K7 w - - 0 0"), "fullmove"));
}

TEST_CASE("FEN errors: impossible positions") {
    CHECK(contains(error_of(Variant::Antichess, "P7/8/8/8/8/8/8/k7 w - - 0 1"), "pawn on a8"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/k2p4 w - - 0 1"), "pawn on d1"));
    CHECK(contains(error_of(Variant::FourFile, "4k3/8/8/8/8/8/8/P3K3 w - - 0 1"), "pawn on a1"));
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/8/8/8/8/8 w - - 0 1"), "no units"));
    CHECK(contains(error_of(Variant::Antichess, "QQQQQQQQ/QQQQQQQQ/Q7/8/8/8/8/k7 w - - 0 1"),
                   "white has 17 units"));
}

TEST_CASE("FEN errors: impossible en-passant squares") {
    // Wrong rank for the side to move.
    CHECK(contains(
        error_of(Variant::Antichess, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - e3 0 1"),
        "impossible en-passant square e3"));
    // No black pawn that could just have made the double push.
    CHECK(contains(error_of(Variant::Antichess, "8/8/8/4P3/8/8/8/K7 w - d6 0 1"),
                   "no black pawn on d5"));
    // The skipped square, or the pawn's start square, is occupied.
    CHECK(contains(error_of(Variant::Antichess, "8/8/3n4/3pP3/8/8/8/K7 w - d6 0 1"), "occupied"));
    CHECK(contains(error_of(Variant::Antichess, "8/3n4/8/3pP3/8/8/8/K7 w - d6 0 1"),
                   "start square d7 is occupied"));
    CHECK(contains(error_of(Variant::Antichess, "k7/8/8/8/4pP2/8/8/8 b - f6 0 1"), "rank 3"));
}

TEST_CASE("FEN errors: Four File placement") {
    CHECK(contains(
        error_of(Variant::FourFile, "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1PP/R1B1K1N1 w - - 0 1"),
        "unit on h2"));
    CHECK(contains(error_of(Variant::FourFile, "4k3/8/8/8/8/8/8/2K5 w - - 0 1"), "king on c1"));
    CHECK(
        contains(error_of(Variant::FourFile, "4k3/8/8/8/8/8/8/R7 w - - 0 1"), "white has 0 kings"));
    CHECK(contains(error_of(Variant::FourFile, "4k3/8/8/8/4K3/8/8/4K3 w - - 0 1"),
                   "white has 2 kings"));
    CHECK(
        contains(error_of(Variant::FourFile, "8/8/8/8/8/8/8/4K3 w - - 0 1"), "black has 0 kings"));
    // The same placements are fine in antichess, where kings are ordinary units.
    CHECK(parse_fen(Variant::Antichess, "4k3/8/8/8/8/8/8/2K5 w - - 0 1"));
    CHECK(parse_fen(Variant::Antichess, "4k3/8/8/8/4K3/8/8/4K3 w - - 0 1"));
}

TEST_CASE("FEN errors: Four File side not to move in check") {
    // Ra8 checks Ke8 across b8, c8, d8.
    CHECK(contains(error_of(Variant::FourFile, "R3k3/2R5/8/8/8/8/8/4K3 w - - 0 1"),
                   "side not to move (black) is in check"));
    CHECK(parse_fen(Variant::FourFile, "R3k3/2R5/8/8/8/8/8/4K3 b - - 0 1"));
    // Knight c2 gives check to Ke1 with Black not to move.
    CHECK(contains(error_of(Variant::FourFile, "4k3/8/8/8/8/8/2n5/4K3 b - - 0 1"),
                   "side not to move (white) is in check"));
}

TEST_CASE("FEN: Four File has no en passant; a possible square is dropped") {
    const auto r = parse_fen(Variant::FourFile, "4k3/8/8/8/P7/8/8/4K3 b - a3 0 1");
    REQUIRE_MESSAGE(r, r.status().message());
    CHECK(r->ep_square() == tbf::verify::kNoSquare);
    CHECK(r->fen() == "4k3/8/8/8/P7/8/8/4K3 b - - 0 1");
    CHECK(contains(error_of(Variant::FourFile, "4k3/8/8/8/8/8/8/4K3 b - a3 0 1"),
                   "no white pawn on a4"));
}

TEST_CASE("make_board builds the board parse_fen builds") {
    using tbf::verify::Color;
    using tbf::verify::Piece;
    using tbf::verify::Unit;
    std::array<Unit, 64> units{};
    // Any colour on an empty square means empty.
    units.fill(Unit{Piece::None, Color::Black});
    units[*tbf::verify::square_from_name("e1")] = Unit{Piece::King, Color::White};
    units[*tbf::verify::square_from_name("e8")] = Unit{Piece::King, Color::Black};
    units[*tbf::verify::square_from_name("a2")] = Unit{Piece::Pawn, Color::White};
    const auto made =
        tbf::verify::make_board(Variant::FourFile, units, Color::White, tbf::verify::kNoSquare);
    REQUIRE_MESSAGE(made, made.status().message());
    const auto parsed = parse_fen(Variant::FourFile, "4k3/8/8/8/8/8/P7/4K3 w - - 0 1");
    REQUIRE(parsed);
    CHECK(*made == *parsed);

    units[*tbf::verify::square_from_name("d1")] = Unit{Piece::Knight, Color::White};
    const auto bad =
        tbf::verify::make_board(Variant::FourFile, units, Color::White, tbf::verify::kNoSquare);
    CHECK(bad.status().code() == tbf::StatusCode::InvalidArgument);
    CHECK(bad.status().message() == "unit on d1 (Four File uses only files a, c, e, g)");

    // En passant checks see the normalised empty squares too.
    units.fill(Unit{Piece::None, Color::Black});
    units[*tbf::verify::square_from_name("a1")] = Unit{Piece::King, Color::White};
    units[*tbf::verify::square_from_name("e5")] = Unit{Piece::Pawn, Color::White};
    units[*tbf::verify::square_from_name("d5")] = Unit{Piece::Pawn, Color::Black};
    const auto ep = tbf::verify::make_board(Variant::Antichess, units, Color::White,
                                            *tbf::verify::square_from_name("d6"));
    REQUIRE_MESSAGE(ep, ep.status().message());
    CHECK(ep->fen() == "8/8/8/3pP3/8/8/8/K7 w - d6 0 1");
}

TEST_CASE("variant names") {
    for (Variant v : tbf::verify::kAllVariants) {
        CHECK(tbf::verify::variant_from_name(tbf::verify::variant_name(v)) == v);
    }
    CHECK(tbf::verify::variant_name(Variant::AntichessJoint) == "antichess-joint");
    CHECK_FALSE(tbf::verify::variant_from_name("suicide"));
    CHECK_FALSE(tbf::verify::variant_from_name("Antichess"));
}
