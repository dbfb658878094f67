#pragma once
// A Four File position in 128 bits: one nibble per playable square (files
// a, c, e, g; square i = rank * 4 + file / 2) holding the unit code of
// rules/ (1 + colour * 8 + type, 0 empty). Both kings are always on the
// board, so the side to move fits in the same bits: with Black to move the
// white king is written as code 7, a code no unit uses. Four File has no en
// passant (pawns never capture), so nothing else is needed.

#include <cstdint>
#include <functional>

#include "tbforge/base/mix64.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::solve::detail {

struct PackedPosition {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    friend bool operator==(const PackedPosition&, const PackedPosition&) = default;
};

inline constexpr std::uint64_t kWhiteKingCode = 1;
inline constexpr std::uint64_t kWhiteKingBlackToMove = 7;

constexpr int packed_index(Square s) { return rank_of(s) * 4 + file_of(s) / 2; }
constexpr Square packed_square(int i) { return make_square((i % 4) * 2, i / 4); }

inline PackedPosition pack(const Position& pos) {
    std::uint64_t words[2] = {0, 0};
    const bool black_to_move = pos.side_to_move() == Color::Black;
    Bitboard occupied = pos.occupied();
    while (occupied) {
        const Square s = pop_lsb(occupied);
        const int i = packed_index(s);
        auto code = static_cast<std::uint64_t>(pos.unit_on(s));
        if (black_to_move && code == kWhiteKingCode) code = kWhiteKingBlackToMove;
        words[i >> 4] |= code << ((i & 15) * 4);
    }
    return {words[0], words[1]};
}

inline Position unpack(const PackedPosition& packed) {
    Position pos;
    Color side = Color::White;
    const std::uint64_t words[2] = {packed.lo, packed.hi};
    for (int i = 0; i < 32; ++i) {
        std::uint64_t code = (words[i >> 4] >> ((i & 15) * 4)) & 15;
        if (code == 0) continue;
        if (code == kWhiteKingBlackToMove) {
            side = Color::Black;
            code = kWhiteKingCode;
        }
        pos.put(packed_square(i), static_cast<Unit>(code));
    }
    pos.set_side_to_move(side);
    return pos;
}

inline Color packed_side(const PackedPosition& packed) {
    // A nibble equal to 7 exists exactly when Black is to move.
    for (const std::uint64_t w : {packed.lo, packed.hi}) {
        const std::uint64_t x = w ^ 0x7777777777777777ULL;  // nibble 7 -> 0
        const std::uint64_t zero_nibbles =
            (x - 0x1111111111111111ULL) & ~x & 0x8888888888888888ULL;
        if (zero_nibbles) return Color::Black;
    }
    return Color::White;
}

// The placement of colour c's units alone (the side to move dropped).
inline PackedPosition placement_of(const PackedPosition& packed, Color c) {
    std::uint64_t words[2] = {packed.lo, packed.hi};
    for (auto& w : words) {
        std::uint64_t kept = 0;
        for (int i = 0; i < 16; ++i) {
            std::uint64_t code = (w >> (i * 4)) & 15;
            if (code == kWhiteKingBlackToMove) code = kWhiteKingCode;
            const bool white = code >= 1 && code <= 6;
            const bool black = code >= 9 && code <= 14;
            if ((c == Color::White && white) || (c == Color::Black && black)) kept |= code << (i * 4);
        }
        w = kept;
    }
    return {words[0], words[1]};
}

// Pieces besides kings and pawns (unit codes 2-5 and 10-13), counted
// without unpacking.
inline int packed_piece_count(const PackedPosition& packed) {
    int n = 0;
    for (const std::uint64_t w : {packed.lo, packed.hi}) {
        for (int i = 0; i < 16; ++i) {
            const std::uint64_t type = (w >> (i * 4)) & 7;
            n += type >= 2 && type <= 5;
        }
    }
    return n;
}

inline std::uint64_t packed_hash(const PackedPosition& p) {
    std::uint64_t h = p.lo * kGoldenGamma ^ (p.hi + 0x632BE59BD9B4E019ULL);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    return h;
}

}  // namespace tbf::solve::detail
