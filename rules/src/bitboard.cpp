#include "tbforge/rules/bitboard.hpp"

#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace tbf {

Bitboard sliding_attacks_slow(bool rook, Square s, Bitboard occupied) {
    static constexpr int kRookDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    static constexpr int kBishopDirs[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    const auto& dirs = rook ? kRookDirs : kBishopDirs;
    Bitboard attacks = 0;
    for (const auto& d : dirs) {
        int f = file_of(s) + d[0];
        int r = rank_of(s) + d[1];
        while (f >= 0 && f < 8 && r >= 0 && r < 8) {
            const Square t = make_square(f, r);
            attacks |= bit(t);
            if (occupied & bit(t)) break;
            f += d[0];
            r += d[1];
        }
    }
    return attacks;
}

namespace {

Bitboard step_attacks(Square s, const int (*deltas)[2], int count) {
    Bitboard attacks = 0;
    for (int i = 0; i < count; ++i) {
        const int f = file_of(s) + deltas[i][0];
        const int r = rank_of(s) + deltas[i][1];
        if (f >= 0 && f < 8 && r >= 0 && r < 8) attacks |= bit(make_square(f, r));
    }
    return attacks;
}

// Relevant occupancy: the ray squares except the board edge at each ray's end.
Bitboard relevant_mask(bool rook, Square s) {
    Bitboard edges = ((rank_bb(0) | rank_bb(7)) & ~rank_bb(rank_of(s))) |
                     ((file_bb(0) | file_bb(7)) & ~file_bb(file_of(s)));
    return sliding_attacks_slow(rook, s, 0) & ~edges;
}

void init_magics(bool rook, std::array<detail::Magic, 64>& magics, std::vector<Bitboard>& storage) {
    // Fixed seed: the same magics on every run and machine.
    std::mt19937_64 rng(rook ? 0x9E3779B97F4A7C15ULL : 0xD1B54A32D192ED03ULL);
    std::vector<std::size_t> offsets(64);
    std::size_t total = 0;
    for (int s = 0; s < 64; ++s) {
        offsets[s] = total;
        total += std::size_t{1} << popcount(relevant_mask(rook, static_cast<Square>(s)));
    }
    storage.assign(total, 0);
    std::vector<Bitboard> occupancy;
    std::vector<Bitboard> reference;
    std::vector<int> epoch;
    for (int si = 0; si < 64; ++si) {
        const auto s = static_cast<Square>(si);
        detail::Magic& m = magics[s];
        m.mask = relevant_mask(rook, s);
        const int bits = popcount(m.mask);
        m.shift = static_cast<unsigned>(64 - bits);
        m.table = storage.data() + offsets[s];
        occupancy.clear();
        reference.clear();
        // Carry-Rippler enumeration of all subsets of the mask.
        Bitboard subset = 0;
        do {
            occupancy.push_back(subset);
            reference.push_back(sliding_attacks_slow(rook, s, subset));
            subset = (subset - m.mask) & m.mask;
        } while (subset != 0);
        const std::size_t size = occupancy.size();
        epoch.assign(size, 0);
        Bitboard* table = storage.data() + offsets[s];
        for (int attempt = 1;; ++attempt) {
            m.magic = rng() & rng() & rng();
            if (popcount((m.mask * m.magic) >> 56) < 6) continue;
            bool ok = true;
            for (std::size_t i = 0; i < size && ok; ++i) {
                const unsigned idx = m.offset(occupancy[i]);
                if (epoch[idx] != attempt) {
                    epoch[idx] = attempt;
                    table[idx] = reference[i];
                } else if (table[idx] != reference[i]) {
                    ok = false;
                }
            }
            if (ok) break;
        }
    }
}

struct Tables {
    detail::AttackTables attacks{};
    std::vector<Bitboard> rook_storage;
    std::vector<Bitboard> bishop_storage;

    Tables() {
        static constexpr int kKnight[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2},
                                              {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
        static constexpr int kKing[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1},
                                            {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
        static constexpr int kWhitePawn[2][2] = {{-1, 1}, {1, 1}};
        static constexpr int kBlackPawn[2][2] = {{-1, -1}, {1, -1}};
        for (int si = 0; si < 64; ++si) {
            const auto s = static_cast<Square>(si);
            attacks.knight[s] = step_attacks(s, kKnight, 8);
            attacks.king[s] = step_attacks(s, kKing, 8);
            attacks.pawn[0][s] = step_attacks(s, kWhitePawn, 2);
            attacks.pawn[1][s] = step_attacks(s, kBlackPawn, 2);
        }
        init_magics(true, attacks.rook, rook_storage);
        init_magics(false, attacks.bishop, bishop_storage);
    }
};

const Tables& tables() {
    static const Tables instance;
    return instance;
}

}  // namespace

namespace detail {
const AttackTables& kAttacks = tables().attacks;
}  // namespace detail

}  // namespace tbf
