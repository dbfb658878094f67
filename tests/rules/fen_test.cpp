#include <doctest/doctest.h>

#include <random>
#include <string>

#include "tbforge/rules/fen.hpp"

using namespace tbf;

namespace {

std::string error_of(const std::string& fen, VariantId variant) {
    auto pos = parse_fen(fen, variant);
    return pos.ok() ? std::string("(accepted)") : pos.status().message();
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("malformed FENs are rejected with a message naming the problem") {
    const auto A = VariantId::Antichess;
    const auto F = VariantId::FourFile;
    struct Case {
        const char* fen;
        VariantId variant;
        const char* expected;
    };
    const Case cases[] = {
        {"", A, "expected 2 to 6 fields, got 0"},
        {"8/8/8/8/8/8/8/K7", A, "expected 2 to 6 fields, got 1"},
        {"8/8/8/8/8/8/8/K7 w - - 0 1 extra", A, "expected 2 to 6 fields, got 7"},
        {"8/8/8/8/8/8/8/X7 w - - 0 1", A, "bad piece letter 'X' in rank 1"},
        {"8/8/8/8/8/8/8/K8 w - - 0 1", A, "rank 1 has more than 8 squares"},
        {"8/8/8/8/8/8/8/K6 w - - 0 1", A, "rank 1 has 7 squares, expected 8"},
        {"8/8/8/8/8/8/K7 w - - 0 1", A, "board has 7 ranks, expected 8"},
        {"8/8/8/8/8/8/8/8/K7 w - - 0 1", A, "board has more than 8 ranks"},
        {"8/8/8/8/8/8/8/P6k w - - 0 1", A, "pawn on rank 1 (a1)"},
        {"p7/8/8/8/8/8/8/7K w - - 0 1", A, "pawn on rank 8 (a8)"},
        {"8/8/8/8/8/8/8/K6k x - - 0 1", A, "side to move must be 'w' or 'b', got 'x'"},
        {"8/8/8/8/8/8/8/K6k w XYZ - 0 1", A, "bad castling field 'XYZ'"},
        {"8/8/8/8/8/8/8/K6k w - e9 0 1", A, "bad en-passant field 'e9'"},
        {"8/8/8/8/8/8/8/K6k w - e6 0 1", A, "impossible en-passant square e6 with white to move"},
        {"8/8/8/4p3/8/8/8/K7 w - e3 0 1", A, "impossible en-passant square e3 with white to move"},
        {"8/8/8/8/4P3/8/8/k7 b - e6 0 1", A, "impossible en-passant square e6 with black to move"},
        {"8/8/8/8/8/8/8/K6k w - - x 1", A, "bad halfmove clock 'x'"},
        {"8/8/8/8/8/8/8/K6k w - - 0 -1", A, "bad fullmove number '-1'"},
        // Counters as the verifier reads them (found by fuzzing the two
        // parsers against each other): 1 to 9 digits, full moves from 1.
        {"8/8/8/8/8/8/8/K6k w - - 0 0", A, "bad fullmove number '0'"},
        {"8/8/8/8/8/8/8/K6k w - - 0 000", A, "bad fullmove number '000'"},
        {"8/8/8/8/8/8/8/K6k w - - 1234567890 1", A, "bad halfmove clock '1234567890'"},
        {"8/8/8/8/8/8/8/K6k w - - 0 +1", A, "bad fullmove number '+1'"},
        {"8/8/8/8/8/8/8/K6k w - - 000000000 999999999", A, "(accepted)"},
        {"8/8/8/8/8/8/8/8 w - - 0 1", A, "no units on the board"},
        {"QQQQQQQQ/QQQQQQQQ/Q7/8/8/8/8/7k w - - 0 1", A, "White has 17 units, at most 16 allowed"},
        {"4k3/8/8/8/8/8/8/1N2K3 w - - 0 1", F, "unit N on b1: fourfile uses only files a, c, e, g"},
        {"k7/8/8/8/8/8/8/4K3 w - - 0 1", F, "Black king on a8: fourfile kings stay on the e-file"},
        {"8/8/8/8/8/8/8/4K3 w - - 0 1", F, "Black has 0 kings, fourfile needs exactly one"},
        {"4k3/8/8/8/8/8/4K3/4K3 w - - 0 1", F, "White has 2 kings, fourfile needs exactly one"},
        {"4k3/8/8/8/8/8/8/R3K3 b - - 0 1", F, "(accepted)"},
        {"4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", F, "White king on g1: fourfile kings stay on the e-file"},
        {"4k3/8/8/8/8/8/8/4K2R w - - 0 1", F, "unit R on h1: fourfile uses only files a, c, e, g"},
        {"4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", A, "(accepted)"},
        {"4k3/8/8/8/8/8/8/4KR2 w - - 0 1", F, "unit R on f1: fourfile uses only files a, c, e, g"},
        {"4k3/8/8/8/8/8/8/4K2R w KQ - 0 1", A, "(accepted)"},
        {"4k3/8/8/8/8/8/8/R3K3 w - - 0 1", F, "(accepted)"},
        {"4k3/8/8/8/8/8/8/4R1K1 b - - 0 1", A, "(accepted)"},
        {"4k3/8/8/8/8/8/8/4K1R1 w - - 0 1", F, "(accepted)"},
        {"4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", F, "side not to move (Black) is in check"},
    };
    for (const auto& c : cases) {
        INFO(c.fen);
        const std::string error = error_of(c.fen, c.variant);
        CHECK(mentions(error, c.expected));
    }
}

TEST_CASE("FEN round trip and normalisation") {
    const char* fens[] = {
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        "rnbqkbnr/ppp1ppp1/7p/3pP3/8/8/PPPP1PPP/RNBQKBNR w - d6 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
        "8/8/2k1k3/8/8/3K1K2/8/8 b - - 0 1",
    };
    for (const char* fen : fens) {
        auto pos = parse_fen(fen, VariantId::Antichess);
        REQUIRE(pos.ok());
        CHECK(to_fen(*pos) == fen);
    }
    // Castling rights are ignored; counters are not kept.
    auto pos = parse_fen("r3k2r/p6p/8/8/8/8/P6P/R3K2R w KQkq - 12 40", VariantId::Antichess);
    REQUIRE(pos.ok());
    CHECK(to_fen(*pos) == "r3k2r/p6p/8/8/8/8/P6P/R3K2R w - - 0 1");
    // An en-passant square no pawn can use is dropped, as Syzygy and lichess print it.
    pos = parse_fen("4k3/8/8/3p4/8/8/8/4K3 w - d6 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    CHECK(pos->ep_square() == kNoSquare);
    // Short forms take defaults.
    pos = parse_fen("8/8/8/8/8/8/8/K6k b", VariantId::Antichess);
    REQUIRE(pos.ok());
    CHECK(pos->side_to_move() == Color::Black);
}

TEST_CASE("FEN parser survives random mutations") {
    // Mutated FENs must be either rejected with a message or accepted as a
    // position that prints and parses back to itself.
    const std::string seeds[] = {
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        "rnbqkbnr/ppp1ppp1/7p/3pP3/8/8/PPPP1PPP/RNBQKBNR w - d6 0 3",
        "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1",
        "4k3/8/6n1/p3p1p1/P3P1P1/8/N7/4K1r1 w - - 0 31",
    };
    const std::string alphabet = "KQRBNPkqrbnp12345678/ wb-acdefgh0x9";
    std::mt19937 rng(2026);
    int accepted = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string fen = seeds[rng() % 4];
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rng() % (fen.size() + 1);
            const char c = alphabet[rng() % alphabet.size()];
            switch (rng() % 3) {
                case 0: fen.insert(fen.begin() + static_cast<long>(at), c); break;
                case 1: if (at < fen.size()) fen.erase(at, 1); break;
                default: if (at < fen.size()) fen[at] = c; break;
            }
        }
        for (VariantId v : {VariantId::Antichess, VariantId::FourFile}) {
            auto pos = parse_fen(fen, v);
            if (!pos.ok()) {
                REQUIRE_MESSAGE(!pos.status().message().empty(), fen);
                REQUIRE_MESSAGE(pos.status().message().find('\n') == std::string::npos, fen);
                continue;
            }
            ++accepted;
            auto again = parse_fen(to_fen(*pos), v);
            REQUIRE_MESSAGE(again.ok(), fen);
            REQUIRE_MESSAGE(*again == *pos, fen);
        }
    }
    CHECK(accepted > 1000);
}

TEST_CASE("regressions found by fuzzing") {
    // An en-passant square on the edge must not read outside the board.
    CHECK_FALSE(parse_fen("8/8/8/8/8/8/8/K6k w - a1 0 1", VariantId::Antichess).ok());
    CHECK_FALSE(parse_fen("8/8/8/8/8/8/8/K6k b - h8 0 1", VariantId::Antichess).ok());
}
