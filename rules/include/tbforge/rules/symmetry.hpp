#pragma once
// The eight symmetries of the square board, as square maps. Symmetry k is a
// composition of: bit 0 mirror files (a<->h), bit 1 flip ranks (1<->8),
// bit 2 transpose (a1-h8 diagonal). Pawnless 8x8 tables use all eight; tables
// with pawns only the file mirror; colour flip is flip ranks plus swapping
// colours and side to move.

#include "tbforge/rules/position.hpp"

namespace tbf {

inline constexpr int kSymmetryCount = 8;
inline constexpr int kMirrorFiles = 1;
inline constexpr int kFlipRanks = 2;
inline constexpr int kTranspose = 4;

constexpr Square transform_square(Square s, int symmetry) {
    int f = file_of(s);
    int r = rank_of(s);
    if (symmetry & kTranspose) {
        const int t = f;
        f = r;
        r = t;
    }
    if (symmetry & kMirrorFiles) f = 7 - f;
    if (symmetry & kFlipRanks) r = 7 - r;
    return make_square(f, r);
}

// Applies a board symmetry to every unit (and the en-passant square).
Position transform(const Position& pos, int symmetry);

}  // namespace tbf
