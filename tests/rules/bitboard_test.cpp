#include <doctest/doctest.h>

#include <random>

#include "tbforge/rules/bitboard.hpp"

using namespace tbf;

TEST_CASE("magic slider attacks equal ray walking for random occupancies") {
    std::mt19937_64 rng(12345);
    for (int i = 0; i < 20000; ++i) {
        const auto s = static_cast<Square>(rng() % 64);
        const Bitboard occ = rng() & rng();
        REQUIRE(rook_attacks(s, occ) == sliding_attacks_slow(true, s, occ));
        REQUIRE(bishop_attacks(s, occ) == sliding_attacks_slow(false, s, occ));
    }
}

TEST_CASE("step attacks") {
    CHECK(popcount(knight_attacks(0)) == 2);
    CHECK(popcount(knight_attacks(make_square(3, 3))) == 8);
    CHECK(popcount(king_attacks(0)) == 3);
    CHECK(popcount(king_attacks(make_square(4, 4))) == 8);
    CHECK(pawn_attacks(Color::White, make_square(0, 1)) == bit(make_square(1, 2)));
    CHECK(pawn_attacks(Color::Black, make_square(4, 6)) ==
          (bit(make_square(3, 5)) | bit(make_square(5, 5))));
}
