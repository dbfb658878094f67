// Handwritten positions for the verifier's move generator and outcomes: each
// expected move list and result is worked out by hand from docs/ARCHITECTURE.md section 3.

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "board_support.hpp"
#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"

namespace {

using tbf::verify::Board;
using tbf::verify::Color;
using tbf::verify::Outcome;
using tbf::verify::Variant;
using Ucis = std::vector<std::string>;

constexpr Variant kLosingVariants[] = {Variant::Antichess, Variant::AntichessFics,
                                       Variant::AntichessJoint};

using tbf::test::board;

Ucis moves(Variant v, const std::string& fen) { return board(v, fen).legal_moves_uci(); }

Board play(const Board& b, const std::string& uci) {
    const auto next = b.after_uci(uci);
    REQUIRE_MESSAGE(next, uci, " is not legal in ", b.fen());
    return *next;
}

}  // namespace

TEST_CASE("antichess stalemate outcomes under each rule set") {
    struct Case {
        const char* fen;
        const char* why;
        Outcome antichess, fics, joint;
    };
    const Case cases[] = {
        {"8/8/8/8/8/p7/P7/8 w - - 0 1", "equal counts", Outcome::Win, Outcome::Draw, Outcome::Draw},
        {"8/p7/P7/8/8/8/8/8 b - - 0 1", "equal counts, Black to move", Outcome::Win, Outcome::Draw,
         Outcome::Draw},
        {"8/8/8/7p/8/p7/P7/8 w - - 0 1", "mover has fewer units", Outcome::Win, Outcome::Win,
         Outcome::Win},
        {"8/8/8/8/p7/P7/P7/8 w - - 0 1", "mover has more units", Outcome::Win, Outcome::Loss,
         Outcome::Draw},
    };
    for (const Case& c : cases) {
        INFO(c.fen, " (", c.why, ")");
        const Outcome expected[] = {c.antichess, c.fics, c.joint};
        for (int i = 0; i < 3; ++i) {
            const Board b = board(kLosingVariants[i], c.fen);
            CHECK(b.legal_moves().empty());
            CHECK(tbf::verify::perft(b, 1) == 0);
            CHECK(b.outcome() == expected[i]);
        }
    }
}

TEST_CASE("antichess: a side without units has won, and nobody moves") {
    for (Variant v : kLosingVariants) {
        const Board no_units_to_move = board(v, "8/8/8/8/8/8/8/K7 b - - 0 1");
        CHECK(no_units_to_move.outcome() == Outcome::Win);
        CHECK(no_units_to_move.legal_moves().empty());
        // White still has a king with free squares, but the game is over.
        const Board opponent_bare = board(v, "8/8/8/8/8/8/8/K7 w - - 0 1");
        CHECK(opponent_bare.outcome() == Outcome::Loss);
        CHECK(opponent_bare.legal_moves().empty());
        CHECK(tbf::verify::perft(opponent_bare, 3) == 0);
    }
}

TEST_CASE("antichess: captures are compulsory, with a choice among them") {
    // Ra1 can take a7 or h1; the king's and the rook's quiet moves are illegal.
    CHECK(moves(Variant::Antichess, "k7/p7/8/8/8/8/8/R6n w - - 0 1") == Ucis{"a1a7", "a1h1"});
    // No capture at all: every move is legal (K a1: a2 b1 b2; pawn e5: e6).
    CHECK(moves(Variant::Antichess, "8/8/8/3pP3/8/8/8/K7 w - - 0 1") ==
          Ucis{"a1a2", "a1b1", "a1b2", "e5e6"});
    // After 1.e3 b5 the only legal move is Bxb5.
    CHECK(moves(Variant::Antichess, "rnbqkbnr/p1pppppp/8/1p6/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2") ==
          Ucis{"f1b5"});
    // A non-capture is rejected when a capture exists.
    const Board b = board(Variant::Antichess, "k7/p7/8/8/8/8/8/R6n w - - 0 1");
    CHECK_FALSE(b.after_uci("a1a2"));
    CHECK_FALSE(b.after_uci("e2e4"));
    CHECK_FALSE(b.after_uci("nonsense"));
}

TEST_CASE("antichess: en passant is a capture and makes captures compulsory") {
    // White: the only capture is exd6 e.p., so it is the only legal move.
    const Board white = board(Variant::Antichess, "8/8/8/3pP3/8/8/8/K7 w - d6 0 1");
    CHECK(white.legal_moves_uci() == Ucis{"e5d6"});
    const Board after = play(white, "e5d6");
    CHECK(after.fen() == "8/8/3P4/8/8/8/8/K7 b - - 0 1");
    CHECK(after.unit_count(Color::Black) == 0);
    CHECK(after.outcome() == Outcome::Win);  // Black has no units left: Black has won
    // Black: the same with colours reversed.
    CHECK(moves(Variant::Antichess, "k7/8/8/8/4pP2/8/8/8 b - f3 0 1") == Ucis{"e4f3"});
    CHECK(white.is_capture(white.legal_moves().front()));
    CHECK(white.is_conversion(white.legal_moves().front()));
}

TEST_CASE("antichess: a double push sets the en-passant square when it can be used") {
    const Board black = board(Variant::Antichess, "8/3p4/8/4P3/8/8/8/K7 b - - 0 1");
    CHECK(black.legal_moves_uci() == Ucis{"d7d5", "d7d6"});
    const Board pushed = play(black, "d7d5");
    CHECK(pushed.fen() == "8/8/8/3pP3/8/8/8/K7 w - d6 0 1");
    CHECK(pushed.legal_moves_uci() == Ucis{"e5d6"});
    // d7d6 offers exd6 instead: also a single forced capture.
    CHECK(play(black, "d7d6").legal_moves_uci() == Ucis{"e5d6"});
    // Nobody can take en passant: no square is recorded.
    const Board alone = board(Variant::Antichess, "8/3p4/8/8/8/8/8/K7 b - - 0 1");
    CHECK(play(alone, "d7d5").fen() == "8/8/8/3p4/8/8/8/K7 w - - 0 1");
    // The right lasts one ply only.
    const Board later = play(board(Variant::Antichess, "8/3p3p/8/4P3/8/8/8/K7 b - - 0 1"), "d7d5");
    CHECK(later.ep_square() == *tbf::verify::square_from_name("d6"));
    CHECK(later.legal_moves_uci() == Ucis{"e5d6"});
}

TEST_CASE("antichess: promotions include the king") {
    const Board b = board(Variant::Antichess, "8/4P3/8/8/8/8/8/k7 w - - 0 1");
    CHECK(b.legal_moves_uci() == Ucis{"e7e8b", "e7e8k", "e7e8n", "e7e8q", "e7e8r"});
    const Board king = play(b, "e7e8k");
    CHECK(king.fen() == "4K3/8/8/8/8/8/8/k7 b - - 0 1");
    CHECK(king.unit_on(*tbf::verify::square_from_name("e8")) ==
          tbf::verify::Unit{tbf::verify::Piece::King, Color::White});
    // A capture-promotion is compulsory over the push.
    CHECK(moves(Variant::Antichess, "1n6/P7/8/8/8/8/8/k7 w - - 0 1") ==
          Ucis{"a7b8b", "a7b8k", "a7b8n", "a7b8q", "a7b8r"});
    // Black promotes on rank 1.
    CHECK(moves(Variant::Antichess, "7K/8/8/8/8/8/3p4/8 b - - 0 1") ==
          Ucis{"d2d1b", "d2d1k", "d2d1n", "d2d1q", "d2d1r"});
    CHECK(b.is_conversion(b.legal_moves().front()));
    CHECK_FALSE(b.is_capture(b.legal_moves().front()));
}

TEST_CASE("fourfile: promotions without the king") {
    CHECK(moves(Variant::FourFile, "4k3/P7/8/8/8/8/8/4K3 w - - 0 1") ==
          Ucis{"a7a8b", "a7a8n", "a7a8q", "a7a8r", "e1e2"});
    CHECK_FALSE(board(Variant::FourFile, "4k3/P7/8/8/8/8/8/4K3 w - - 0 1").after_uci("a7a8k"));
}

TEST_CASE("fourfile: geometry") {
    // Kings move only along the e-file.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/4K3/8/8/8 w - - 0 1") == Ucis{"e4e3", "e4e5"});
    // Kings may not stand next to each other: e5 is covered by Ke6.
    CHECK(moves(Variant::FourFile, "8/8/4k3/8/4K3/8/8/8 w - - 0 1") == Ucis{"e4e3"});
    // Knight c3 moves by (2 files, 1 rank) only: a2 a4 e2 e4.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/8/2N5/8/4K3 w - - 0 1") ==
          Ucis{"c3a2", "c3a4", "c3e2", "c3e4", "e1e2"});
    // Bishop c1 passes over d2 and b2; it is stopped by its own pawn on e3.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/8/4P3/8/2B1K3 w - - 0 1") ==
          Ucis{"c1a3", "e1e2", "e3e4"});
    // Ng1 checks Ke2. Rook a1 passes over b1, d1, f1 and takes it; the king
    // steps away; the rook's other moves leave the check.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/8/8/4K3/R5n1 w - - 0 1") ==
          Ucis{"a1g1", "e2e1", "e2e3"});
    // Pawns never capture: c2 is blocked by c3 and nothing else happens.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/8/2r5/2P5/4K3 w - - 0 1") == Ucis{"e1e2"});
    // Double push passes the third rank; no en-passant square follows.
    const Board b = board(Variant::FourFile, "4k3/8/8/8/8/8/P7/4K3 w - - 0 1");
    CHECK(b.legal_moves_uci() == Ucis{"a2a3", "a2a4", "e1e2"});
    CHECK(play(b, "a2a4").fen() == "4k3/8/8/8/P7/8/8/4K3 b - - 0 1");
}

TEST_CASE("fourfile: checks, mates and stalemates") {
    // Checkmate: Ra8 checks across b8-d8, Rc7 covers e7.
    const Board mate = board(Variant::FourFile, "R3k3/2R5/8/8/8/8/8/4K3 b - - 0 1");
    CHECK(mate.in_check(Color::Black));
    CHECK(mate.legal_moves().empty());
    CHECK(mate.outcome() == Outcome::Loss);
    // Reference position: Bg5 checks Ke7 across f6.
    const Board mate2 =
        board(Variant::FourFile, "4r1n1/2p1k3/4b3/p1P1p1B1/4P3/P7/8/R3K3 b - - 0 12");
    CHECK(mate2.in_check(Color::Black));
    CHECK(mate2.outcome() == Outcome::Loss);

    // Check with escapes: king step, or the bishop blocks on c8 (b8 and d8 do not exist).
    const Board check = board(Variant::FourFile, "R3k3/8/4b3/8/8/8/8/4K3 b - - 0 1");
    CHECK(check.in_check(Color::Black));
    CHECK(check.legal_moves_uci() == Ucis{"e6c8", "e8e7"});
    CHECK(check.outcome() == Outcome::NotTerminal);
    // Knight check: only the king step out of it.
    CHECK(moves(Variant::FourFile, "4k3/8/8/8/8/8/2n5/4K3 w - - 0 1") == Ucis{"e1e2"});
    // Pinned knight e3 (Re6 on the e-file) cannot move.
    CHECK(moves(Variant::FourFile, "4k3/8/4r3/8/8/4N3/8/4K3 w - - 0 1") == Ucis{"e1e2"});

    // Stalemate: Ke1 may only go to e2, which Ra2 covers across b2-d2.
    const Board stalemate = board(Variant::FourFile, "4k3/8/8/8/8/8/r7/4K3 w - - 0 1");
    CHECK_FALSE(stalemate.in_check(Color::White));
    CHECK(stalemate.legal_moves().empty());
    CHECK(stalemate.outcome() == Outcome::Draw);
    CHECK(board(Variant::FourFile, "4k3/p7/P3K3/8/2n5/8/8/8 w - - 0 30").outcome() ==
          Outcome::Draw);
    CHECK(board(Variant::FourFile, "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1")
              .outcome() == Outcome::NotTerminal);
}

TEST_CASE("perft: depth 0, terminal roots, divide sums to the total") {
    const Board start =
        board(Variant::Antichess, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1");
    CHECK(tbf::verify::perft(start, 0) == 1);
    CHECK(tbf::verify::perft_divide(start, 0).empty());
    const auto divide = tbf::verify::perft_divide(start, 3);
    REQUIRE(divide.size() == 20);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < divide.size(); ++i) {
        total += divide[i].nodes;
        if (i > 0) CHECK(divide[i - 1].uci < divide[i].uci);
    }
    CHECK(total == tbf::verify::perft(start, 3));
    CHECK(total == 8067);
}

// Random games from the start positions (fixed seed): invariants that must hold
// in every position reached.
TEST_CASE("random games keep the board consistent") {
    struct Start {
        Variant variant;
        const char* fen;
    };
    const Start starts[] = {
        {Variant::Antichess, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"},
        {Variant::AntichessFics, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"},
        {Variant::FourFile, "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"},
    };
    std::mt19937 rng(20240611);
    for (const Start& s : starts) {
        for (int game = 0; game < 40; ++game) {
            Board b = board(s.variant, s.fen);
            for (int ply = 0; ply < 200; ++ply) {
                // The FEN writer and reader agree on every position.
                const auto again = tbf::verify::parse_fen(s.variant, b.fen());
                REQUIRE_MESSAGE(again, again.status().message());
                REQUIRE(*again == b);
                int counted[2] = {0, 0};
                for (int sq = 0; sq < 64; ++sq) {
                    const auto u = b.unit_on(sq);
                    if (!u.empty()) ++counted[u.color == Color::White ? 0 : 1];
                }
                CHECK(counted[0] == b.unit_count(Color::White));
                CHECK(counted[1] == b.unit_count(Color::Black));

                const std::vector<tbf::verify::Move> legal = b.legal_moves();
                CHECK((legal.empty()) == (b.outcome() != Outcome::NotTerminal));
                if (legal.empty()) break;
                bool any_capture = false;
                bool any_quiet = false;
                for (const auto& m : legal) {
                    (b.is_capture(m) ? any_capture : any_quiet) = true;
                    if (s.variant == Variant::FourFile) {
                        CHECK_FALSE(b.after(m).in_check(b.side_to_move()));
                    }
                }
                if (s.variant != Variant::FourFile) CHECK_FALSE((any_capture && any_quiet));
                std::uniform_int_distribution<std::size_t> pick(0, legal.size() - 1);
                b = b.after(legal[pick(rng)]);
            }
        }
    }
}
