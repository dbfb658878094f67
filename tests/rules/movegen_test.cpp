#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

using namespace tbf;

namespace {

template <Ruleset R>
std::set<std::string> legal_uci(const std::string& fen) {
    auto pos = parse_fen(fen, R::kId);
    REQUIRE_MESSAGE(pos.ok(), fen);
    MoveList list;
    generate_legal<R>(*pos, list);
    std::set<std::string> out;
    for (Move m : list) out.insert(to_uci(m));
    return out;
}

template <Ruleset R>
std::optional<Wdl> terminal(const std::string& fen) {
    auto pos = parse_fen(fen, R::kId);
    REQUIRE_MESSAGE(pos.ok(), fen);
    return terminal_value<R>(*pos);
}

}  // namespace

TEST_CASE_TEMPLATE("antichess captures are compulsory, en passant included", R, Antichess,
                   AntichessFics, AntichessJoint) {
    CHECK(legal_uci<R>("rnbqkbnr/ppp1ppp1/7p/3pP3/8/8/PPPP1PPP/RNBQKBNR w - d6 0 3") ==
          std::set<std::string>{"e5d6"});
    CHECK(legal_uci<R>("rnbqkbnr/p1pppppp/8/1p6/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2") ==
          std::set<std::string>{"f1b5"});
    // A double push that gives the opponent an en-passant capture forces it.
    auto pos = parse_fen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1", R::kId);
    REQUIRE(pos.ok());
    const Position after = pos->after(*parse_uci(*pos, R::kId, "e2e4"));
    CHECK(square_name(after.ep_square()) == "e3");
    MoveList list;
    generate_legal<R>(after, list);
    REQUIRE(list.size() == 1);
    CHECK(to_uci(list[0]) == "d4e3");
    CHECK(after.is_en_passant(list[0]));
    CHECK(after.after(list[0]).units(Color::White, UnitType::Pawn) == 0);
}

TEST_CASE("antichess promotes to king; Four File does not") {
    CHECK(legal_uci<Antichess>("8/4P3/8/8/8/8/3p4/8 w - - 0 1") ==
          std::set<std::string>{"e7e8q", "e7e8r", "e7e8b", "e7e8n", "e7e8k"});
    CHECK(legal_uci<FourFile>("4k3/P7/8/8/8/8/8/4K3 w - - 0 1") ==
          std::set<std::string>{"a7a8q", "a7a8r", "a7a8b", "a7a8n", "e1e2"});
    auto pos = parse_fen("8/4P3/8/8/8/8/3p4/8 w - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    const Position after = pos->after(*parse_uci(*pos, VariantId::Antichess, "e7e8k"));
    CHECK(after.unit_on(make_square(4, 7)) == make_unit(Color::White, UnitType::King));
    CHECK(after.is_conversion(*parse_uci(after, VariantId::Antichess, "d2d1k")));
}

TEST_CASE("stalemate values differ between the antichess rule sets") {
    // Equal unit counts, white to move and blocked.
    const std::string equal = "8/8/8/8/8/p7/P7/8 w - - 0 1";
    CHECK(terminal<Antichess>(equal) == Wdl::Win);
    CHECK(terminal<AntichessFics>(equal) == Wdl::Draw);
    CHECK(terminal<AntichessJoint>(equal) == Wdl::Draw);
    // The stalemated side has more units.
    const std::string more = "8/8/8/8/p7/P7/P7/8 w - - 0 1";
    CHECK(terminal<Antichess>(more) == Wdl::Win);
    CHECK(terminal<AntichessFics>(more) == Wdl::Loss);
    CHECK(terminal<AntichessJoint>(more) == Wdl::Draw);
    // The stalemated side has fewer units.
    const std::string fewer = "8/8/8/8/8/p7/P7/7k w - - 0 1";
    CHECK(terminal<Antichess>(fewer) == Wdl::Win);
    CHECK(terminal<AntichessFics>(fewer) == Wdl::Win);
    CHECK(terminal<AntichessJoint>(fewer) == Wdl::Win);
    // Not a stalemate: black to move has a pawn push.
    CHECK_FALSE(terminal<Antichess>("8/8/8/8/8/p7/P7/7k b - - 0 1").has_value());
}

TEST_CASE_TEMPLATE("a side without units has won", R, Antichess, AntichessFics, AntichessJoint) {
    CHECK(terminal<R>("8/8/8/8/8/8/8/k7 w - - 0 1") == Wdl::Win);
    CHECK(terminal<R>("8/8/8/8/8/8/8/k7 b - - 0 1") == Wdl::Loss);
    CHECK(legal_uci<R>("8/8/8/8/8/8/8/k7 b - - 0 1").empty());
}

TEST_CASE("Four File geometry") {
    // Knights jump two files and one rank; kings move only along the e-file.
    CHECK(legal_uci<FourFile>("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1") ==
          std::set<std::string>{"e1e2", "g1e2"});
    // Bishops move two files per two ranks and pass over b/d/f/h squares.
    CHECK(legal_uci<FourFile>("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1") ==
          std::set<std::string>{"e1e2", "c1a3", "c1e3", "c1g5"});
    // Pawns never capture.
    CHECK(legal_uci<FourFile>("4k3/8/8/8/8/2p5/2P5/4K3 w - - 0 1") ==
          std::set<std::string>{"e1e2"});
    CHECK(legal_uci<FourFile>("4k3/8/8/8/8/8/2P5/4K3 w - - 0 1") ==
          std::set<std::string>{"e1e2", "c2c3", "c2c4"});
}

TEST_CASE("Four File checks, mates and stalemates") {
    // Rook g1 checks Ke1 across f1 and nothing can block on f1: the king steps up.
    CHECK(legal_uci<FourFile>("4k3/8/6n1/p3p1p1/P3P1P1/8/N7/4K1r1 w - - 0 31") ==
          std::set<std::string>{"e1e2"});
    CHECK(terminal<FourFile>("4r1n1/2p1k3/4b3/p1P1p1B1/4P3/P7/8/R3K3 b - - 0 12") == Wdl::Loss);
    CHECK(terminal<FourFile>("4k3/p7/P3K3/8/2n5/8/8/8 w - - 0 30") == Wdl::Draw);
    CHECK_FALSE(terminal<FourFile>("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").has_value());
    // Back-rank mate by a rook with the kings facing each other at distance 2.
    CHECK(terminal<FourFile>("R3k3/8/4K3/8/8/8/8/8 b - - 0 1") == Wdl::Loss);
}

TEST_CASE_TEMPLATE("random playouts keep the move generator's invariants", R, Antichess, FourFile) {
    const char* start = R::kId == VariantId::FourFile
                            ? "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"
                            : "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
    std::mt19937 rng(7);
    int positions = 0;
    for (int game = 0; game < 200; ++game) {
        Position pos = *parse_fen(start, R::kId);
        for (int ply = 0; ply < 200; ++ply) {
            MoveList list;
            generate_legal<R>(pos, list);
            ++positions;
            // FEN printing and parsing is lossless for every reached position.
            auto reparsed = parse_fen(to_fen(pos), R::kId);
            REQUIRE_MESSAGE(reparsed.ok(), to_fen(pos));
            REQUIRE(*reparsed == pos);
            if (list.empty()) {
                REQUIRE(terminal_value<R>(pos, false).has_value());
                break;
            }
            const bool any_capture = std::any_of(list.begin(), list.end(),
                                                 [&](Move m) { return pos.is_capture(m); });
            for (Move m : list) {
                REQUIRE((bit(m.to()) & R::kBoard) != 0);
                if constexpr (R::kCapturesCompulsory) REQUIRE(pos.is_capture(m) == any_capture);
                if constexpr (R::kRoyalKing) {
                    REQUIRE_FALSE(king_attacked<R>(pos.after(m), pos.side_to_move()));
                }
                REQUIRE(parse_uci(pos, R::kId, to_uci(m)) == m);
            }
            pos = pos.after(list[rng() % list.size()]);
        }
    }
    CHECK(positions > 5000);
}
