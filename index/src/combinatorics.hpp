#pragma once
// Internal helpers of the indexers: binomials, colex ranking of combinations,
// the board symmetries as square tables, and bit selection.

#include <array>
#include <cstdint>

#if defined(__BMI2__)
#include <immintrin.h>
#endif

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/symmetry.hpp"
#include "tbforge/rules/types.hpp"

namespace tbf::index::detail {

struct BinomialTable {
    std::array<std::array<std::uint64_t, kMaxUnits + 1>, 65> c{};
};

constexpr BinomialTable make_binomials() {
    BinomialTable t;
    for (int n = 0; n <= 64; ++n) {
        t.c[n][0] = 1;
        for (int k = 1; k <= kMaxUnits; ++k) {
            t.c[n][k] = n == 0 ? 0 : t.c[n - 1][k - 1] + t.c[n - 1][k];
        }
    }
    return t;
}

inline constexpr BinomialTable kBinomials = make_binomials();

// C(n, k) for 0 <= n <= 64, 0 <= k <= kMaxUnits.
inline std::uint64_t binomial(int n, int k) { return kBinomials.c[n][k]; }

// Colex rank of a k-subset given as ascending values a[0] < ... < a[k-1]:
// sum of C(a[i], i + 1). It does not depend on the size of the ground set,
// so one unranking table serves every domain.
inline std::uint64_t colex_rank(const std::uint8_t* a, int k) {
    std::uint64_t r = 0;
    for (int i = 0; i < k; ++i) r += binomial(a[i], i + 1);
    return r;
}

// Ascending values of the k-subset with colex rank r.
void colex_unrank(std::uint64_t r, int k, std::uint8_t* out);

// Symmetry tables: kSymSquare[s][sq] is transform_square(sq, s).
struct SymmetryTables {
    std::array<std::array<Square, 64>, kSymmetryCount> square{};
    std::array<std::array<std::uint8_t, kSymmetryCount>, kSymmetryCount> compose{};
};

constexpr SymmetryTables make_symmetry_tables() {
    SymmetryTables t;
    for (int s = 0; s < kSymmetryCount; ++s) {
        for (int sq = 0; sq < 64; ++sq) {
            t.square[s][sq] = transform_square(static_cast<Square>(sq), s);
        }
    }
    // compose[a][b]: apply b, then a.
    for (int a = 0; a < kSymmetryCount; ++a) {
        for (int b = 0; b < kSymmetryCount; ++b) {
            for (int c = 0; c < kSymmetryCount; ++c) {
                bool same = true;
                for (int sq = 0; sq < 64 && same; ++sq) {
                    same = t.square[a][t.square[b][sq]] == t.square[c][sq];
                }
                if (same) t.compose[a][b] = static_cast<std::uint8_t>(c);
            }
        }
    }
    return t;
}

inline constexpr SymmetryTables kSymmetry = make_symmetry_tables();

inline Bitboard below(Square s) { return bit(s) - 1; }

// Population count that stays inline without the POPCNT instruction (the
// default build targets baseline x86-64, where std::popcount is a library
// call).
inline int count_bits(Bitboard b) {
#if defined(__POPCNT__) || !defined(__x86_64__)
    return std::popcount(b);
#else
    b = b - ((b >> 1) & 0x5555555555555555ULL);
    b = (b & 0x3333333333333333ULL) + ((b >> 2) & 0x3333333333333333ULL);
    b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return static_cast<int>((b * 0x0101010101010101ULL) >> 56);
#endif
}

// Next k-subset in colex order (ascending values); false after the last one
// below n.
inline bool next_combination(std::uint8_t* a, int k, int n) {
    for (int i = 0; i < k; ++i) {
        const int limit = i + 1 < k ? a[i + 1] : n;
        if (a[i] + 1 < limit) {
            ++a[i];
            for (int j = 0; j < i; ++j) a[j] = static_cast<std::uint8_t>(j);
            return true;
        }
    }
    return false;
}

// Square of the n-th (from 0) set bit of b; b must have more than n bits.
inline Square select_bit(Bitboard b, unsigned n) {
#if defined(__BMI2__)
    return static_cast<Square>(std::countr_zero(_pdep_u64(Bitboard{1} << n, b)));
#else
    unsigned base = 0;
    unsigned c = static_cast<unsigned>(count_bits(static_cast<std::uint32_t>(b)));
    if (n >= c) {
        n -= c;
        b >>= 32;
        base = 32;
    }
    c = static_cast<unsigned>(count_bits(b & 0xFFFF));
    if (n >= c) {
        n -= c;
        b >>= 16;
        base += 16;
    }
    c = static_cast<unsigned>(count_bits(b & 0xFF));
    if (n >= c) {
        n -= c;
        b >>= 8;
        base += 8;
    }
    b &= 0xFF;
    for (; n > 0; --n) b &= b - 1;
    return static_cast<Square>(base + static_cast<unsigned>(std::countr_zero(b)));
#endif
}

inline FastDiv make_fast_div(std::uint64_t d) { return {d, 1.0 / static_cast<double>(d)}; }

// Quotient and remainder through the reciprocal, corrected to the exact
// values: far cheaper than a 64-bit hardware division. Exact for dividends
// below 2^52 (indexes of tables up to 8 units are far below).
inline std::uint64_t divide(const FastDiv& f, std::uint64_t x, std::uint64_t& remainder) {
    // Signed conversions: one instruction each, where unsigned ones branch.
    const double estimate = static_cast<double>(static_cast<std::int64_t>(x)) * f.inverse;
    auto q = static_cast<std::uint64_t>(static_cast<std::int64_t>(estimate));
    auto r = static_cast<std::int64_t>(x - q * f.divisor);
    const auto d = static_cast<std::int64_t>(f.divisor);
    if (r < 0) {
        --q;
        r += d;
    } else if (r >= d) {
        ++q;
        r -= d;
    }
    remainder = static_cast<std::uint64_t>(r);
    return q;
}

inline std::uint64_t quotient(const FastDiv& f, std::uint64_t x) {
    std::uint64_t unused = 0;
    return divide(f, x, unused);
}

// Sorts a handful of squares in place (groups hold at most kMaxUnits).
inline void sort_small(std::uint8_t* a, int k) {
    for (int i = 1; i < k; ++i) {
        const std::uint8_t v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            --j;
        }
        a[j + 1] = v;
    }
}

}  // namespace tbf::index::detail
