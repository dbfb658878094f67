// SAN as the lichess tablebase API writes it (rules/san.hpp): hand-checked
// positions for each rule, then properties over random playouts: every
// move's SAN is unique in its position, disambiguates only when needed, and
// carries "#" / "+" exactly when the position after it says so.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/san.hpp"
#include "tbforge/rules/uci.hpp"

using namespace tbf;

namespace {

std::string san(const char* fen, VariantId variant, const char* uci) {
    auto pos = parse_fen(fen, variant);
    REQUIRE_MESSAGE(pos.ok(), fen);
    auto move = parse_uci(*pos, variant, uci);
    REQUIRE_MESSAGE(move.has_value(), fen << " " << uci << " is not legal");
    return to_san(*pos, variant, *move);
}

}  // namespace

TEST_CASE("SAN of hand-checked moves") {
    const auto A = VariantId::Antichess;
    const auto FICS = VariantId::AntichessFics;
    const auto F = VariantId::FourFile;
    struct Case {
        const char* fen;
        VariantId variant;
        const char* uci;
        const char* san;
    };
    const Case cases[] = {
        // Disambiguation by file, by rank, by both.
        {"7k/8/8/8/8/5N2/8/1N6 w - - 0 1", A, "b1d2", "Nbd2"},
        {"7k/8/8/8/8/5N2/8/1N6 w - - 0 1", A, "f3d2", "Nfd2"},
        {"7k/8/8/8/8/5N2/8/1N6 w - - 0 1", A, "f3g5", "Ng5"},
        {"7k/8/8/R7/8/8/8/R7 w - - 0 1", A, "a1a3", "R1a3"},
        {"7k/8/8/R7/8/8/8/R7 w - - 0 1", A, "a5a3", "R5a3"},
        {"8/8/1k6/8/4Q2Q/8/8/7Q w - - 0 1", A, "h4e1", "Qh4e1"},
        {"8/8/1k6/8/4Q2Q/8/8/7Q w - - 0 1", A, "e4e1", "Qee1"},
        {"8/8/1k6/8/4Q2Q/8/8/7Q w - - 0 1", A, "h1e1", "Q1e1"},
        // Several kings in losing chess are disambiguated like any unit.
        {"7k/8/8/8/8/8/8/K1K5 w - - 0 1", A, "a1b2", "Kab2"},
        // Only legal moves make a move ambiguous: the pinned rook on c1 cannot
        // go to c3 (Four File), both rooks can take on a1.
        {"4k3/8/8/8/8/R7/8/r1R1K3 w - - 0 1", F, "a3c3", "Rc3"},
        {"4k3/8/8/8/8/R7/8/r1R1K3 w - - 0 1", F, "a3a1", "Raxa1"},
        // Pawns: pushes, captures, promotions (to a king in losing chess).
        {"7k/8/8/8/8/8/4P3/8 w - - 0 1", A, "e2e4", "e4"},
        {"3r4/4P3/8/8/8/8/8/7k w - - 0 1", A, "e7d8q", "exd8=Q"},
        {"3r4/4P3/8/8/8/8/8/7k w - - 0 1", A, "e7d8k", "exd8=K"},
        {"7k/4P3/8/8/8/8/8/8 w - - 0 1", A, "e7e8n", "e8=N"},
        // Captures by units; en passant; the last unit taken decides the game.
        {"7k/8/8/8/8/8/8/r3R3 w - - 0 1", A, "e1a1", "Rxa1"},
        {"8/8/8/3pP3/8/8/8/8 w - d6 0 1", A, "e5d6", "exd6#"},
        {"4k3/8/8/8/8/8/8/4R3 w - - 0 1", A, "e1e8", "Rxe8#"},
        // Losing chess has no check: a rook attacking the king is no "+".
        {"4k3/8/8/8/8/8/8/R7 w - - 0 1", A, "a1a8", "Ra8"},
        // A stalemate that decides the game: the stalemated side wins
        // (antichess) or, with FICS rules, the side with fewer units wins and
        // equal counts draw.
        {"8/8/8/8/8/p7/P7/7R w - - 0 1", A, "h1h8", "Rh8#"},
        {"8/8/8/8/p7/P7/8/1B6 w - - 0 1", FICS, "b1c2", "Bc2#"},
        {"8/8/8/2p5/p1p5/P1P4p/7P/1B6 w - - 0 1", A, "b1c2", "Bc2#"},
        {"8/8/8/2p5/p1p5/P1P4p/7P/1B6 w - - 0 1", FICS, "b1c2", "Bc2"},
        {"8/8/8/2p5/p1p5/P1P4p/7P/1B6 w - - 0 1", VariantId::AntichessJoint, "b1c2", "Bc2"},
        // Four File: royal kings, check and checkmate; stalemate is a draw.
        {"4k3/R7/8/8/8/8/8/4K3 w - - 0 1", F, "a7a8", "Ra8+"},
        {"4k3/R7/8/8/8/8/8/2R1K3 w - - 0 1", F, "c1c8", "Rc8#"},
        {"4k3/8/8/4K3/8/8/8/8 w - - 0 1", F, "e5e6", "Ke6"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.fen);
        CAPTURE(c.uci);
        CHECK(san(c.fen, c.variant, c.uci) == c.san);
    }
}

namespace {

// The origin part of a unit's SAN between its letter and the "x" or the
// destination: "", a file, a rank or both.
std::string origin_part(const std::string& text, Move move) {
    std::string body = text;
    while (!body.empty() && (body.back() == '+' || body.back() == '#')) body.pop_back();
    const std::string destination = square_name(move.to());
    const auto at = body.rfind(destination);
    std::string origin = body.substr(1, at - 1);
    if (!origin.empty() && origin.back() == 'x') origin.pop_back();
    return origin;
}

template <Ruleset R>
void check_position(const Position& pos, VariantId variant) {
    MoveList legal;
    generate_legal<R>(pos, legal);
    std::set<std::string> seen;
    for (Move m : legal) {
        const std::string text = to_san(pos, variant, m);
        CAPTURE(to_fen(pos));
        CAPTURE(text);
        CHECK(seen.insert(text).second);
        CHECK(text.find(square_name(m.to())) != std::string::npos);
        CHECK((text.find('x') != std::string::npos) == pos.is_capture(m));
        CHECK((text.find('=') != std::string::npos) == m.is_promotion());
        // Suffixes from the position after the move.
        const Position after = pos.after(m);
        const auto end = terminal_value<R>(after);
        const bool decided = end && *end != Wdl::Draw;
        CHECK((text.back() == '#') == decided);
        CHECK((text.back() == '+') == (!decided && in_check<R>(after)));
        if constexpr (!R::kRoyalKing) CHECK(text.back() != '+');
        // Disambiguation only when another unit of the type reaches the square.
        const UnitType type = unit_type(pos.unit_on(m.from()));
        if (type == UnitType::Pawn) {
            CHECK(std::islower(static_cast<unsigned char>(text[0])));
            continue;
        }
        CHECK(text[0] == unit_type_char(type));
        bool rival = false;
        for (Move other : legal) {
            rival = rival || (other.to() == m.to() && other.from() != m.from() &&
                              pos.unit_on(other.from()) == pos.unit_on(m.from()));
        }
        CHECK(origin_part(text, m).empty() == !rival);
    }
}

template <Ruleset R>
void random_playouts(const char* start, int games, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto root = parse_fen(start, R::kId);
    REQUIRE(root.ok());
    for (int g = 0; g < games; ++g) {
        Position pos = *root;
        for (int ply = 0; ply < 200; ++ply) {
            check_position<R>(pos, R::kId);
            MoveList legal;
            generate_legal<R>(pos, legal);
            if (legal.empty()) break;
            pos = pos.after(legal[rng() % legal.size()]);
        }
    }
}

}  // namespace

TEST_CASE("SAN is unique, minimal and suffixed by the position after the move") {
    random_playouts<Antichess>("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", 12, 7);
    random_playouts<AntichessFics>("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", 6, 8);
    random_playouts<FourFile>("r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1", 12, 9);
}
