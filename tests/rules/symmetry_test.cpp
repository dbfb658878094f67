#include <doctest/doctest.h>

#include <set>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"
#include "tbforge/rules/symmetry.hpp"

using namespace tbf;

TEST_CASE("the eight symmetries are distinct bijections") {
    std::set<std::vector<int>> maps;
    for (int sym = 0; sym < kSymmetryCount; ++sym) {
        std::vector<int> image;
        std::set<int> seen;
        for (int s = 0; s < 64; ++s) {
            const int t = transform_square(static_cast<Square>(s), sym);
            image.push_back(t);
            seen.insert(t);
        }
        CHECK(seen.size() == 64);
        maps.insert(image);
    }
    CHECK(maps.size() == 8);
}

TEST_CASE("pawnless perft is invariant under board symmetries") {
    const auto pos = parse_fen("8/2k5/8/8/8/8/5B2/1N6 w - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    const auto expected = perft(*pos, VariantId::Antichess, 4);
    for (int sym = 0; sym < kSymmetryCount; ++sym) {
        CHECK(perft(transform(*pos, sym), VariantId::Antichess, 4) == expected);
    }
}

TEST_CASE("colour flip preserves perft, including en passant") {
    for (const char* fen : {"rnbqkbnr/ppp1ppp1/7p/3pP3/8/8/PPPP1PPP/RNBQKBNR w - d6 0 3",
                            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
                            "r1b1k3/2pp1ppr/np3q1n/4p3/8/P1P1P2P/P2P1PP1/R1BQK2R b - - 0 9"}) {
        const auto pos = parse_fen(fen, VariantId::Antichess);
        REQUIRE(pos.ok());
        const Position flipped = pos->color_flipped();
        CHECK(flipped.color_flipped() == *pos);
        CHECK(perft(flipped, VariantId::Antichess, 4) == perft(*pos, VariantId::Antichess, 4));
    }
    const auto ff = parse_fen("r3k3/8/4p1n1/p1B5/P1b5/8/4P1P1/2R1K1N1 w - - 0 11", VariantId::FourFile);
    REQUIRE(ff.ok());
    CHECK(perft(ff->color_flipped(), VariantId::FourFile, 4) == perft(*ff, VariantId::FourFile, 4));
}
