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

// Magics found once by the search below (seeded, so reproducible). They are
// only a head start: each is checked against ray walking at start-up and
// searched for again if it collides.
constexpr Bitboard kRookMagics[64] = {
    0x0080102040008000ULL, 0x0100210040008010ULL, 0x0200102200804008ULL, 0x81000a2100041000ULL,
    0x3480020400080080ULL, 0x6200080200041081ULL, 0x8200010082000804ULL, 0xc08008c300002080ULL,
    0x0201800080400022ULL, 0x0800400020005000ULL, 0x0809004100200010ULL, 0x0000801000080080ULL,
    0x0402800800800402ULL, 0x0981000900040002ULL, 0x0044001004010208ULL, 0x0060800100004080ULL,
    0x008d010020428000ULL, 0x4000908020004000ULL, 0x8c11010040102000ULL, 0x0210010010090321ULL,
    0x000800800a040080ULL, 0x0010808004000200ULL, 0xa424040002019008ULL, 0x00400600084100a4ULL,
    0x0040400080102082ULL, 0x01201001400040a1ULL, 0x2110802200401202ULL, 0x1090010100201008ULL,
    0x0008040080080080ULL, 0x8218a02801401004ULL, 0x0095888400021001ULL, 0x3804144200290084ULL,
    0x5100400026800884ULL, 0x0020005000400021ULL, 0x0000401101002002ULL, 0xc000080080801000ULL,
    0x400c050011000800ULL, 0x00a4800200800400ULL, 0x0101100224000168ULL, 0x0209208042000421ULL,
    0x0000800040008020ULL, 0x0010004020004002ULL, 0x0100200108410010ULL, 0x4040080010008080ULL,
    0x1018000400088080ULL, 0x0002001008020004ULL, 0x0080020001008080ULL, 0x0000851040aa0004ULL,
    0x2280004000200040ULL, 0x0408308102004200ULL, 0x0024402001190100ULL, 0x0010080010008080ULL,
    0x0144040280080080ULL, 0x0202040002008080ULL, 0x0005102122084400ULL, 0x9004111040840200ULL,
    0x4301011180442202ULL, 0x0004804010260106ULL, 0x4048a1104082022aULL, 0x0080200570001901ULL,
    0xc001001088000205ULL, 0x0402000804011002ULL, 0x0001000200008421ULL, 0x0000003400804502ULL};
constexpr Bitboard kBishopMagics[64] = {
    0x8540010a2c010020ULL, 0x00180204040a3010ULL, 0x2011810202000100ULL, 0x0004106200a80008ULL,
    0x0004152001000000ULL, 0x0002080404040800ULL, 0x0402180c24051008ULL, 0x0080250508014020ULL,
    0x0000100428680448ULL, 0x0000200102620344ULL, 0x0408e88801002010ULL, 0x8086484481000000ULL,
    0x10241202111020a3ULL, 0x0080061202200000ULL, 0x0800008804110428ULL, 0xc400020098841000ULL,
    0x0851104044084484ULL, 0x0002000908010410ULL, 0x0020401000802044ULL, 0x0070234802802003ULL,
    0x2204080a80a00000ULL, 0x534d00a210008400ULL, 0x0a9a040101100260ULL, 0x2001080080809000ULL,
    0x0010640040140400ULL, 0x0201600008020400ULL, 0x4414020091180101ULL, 0x0289090008004100ULL,
    0x40810040c4004041ULL, 0x0000810000806002ULL, 0x08880100029c8822ULL, 0x1084820480250400ULL,
    0x0824108480400405ULL, 0x8008014808300218ULL, 0x0004680800050200ULL, 0x0028e00800210810ULL,
    0x2004280200102008ULL, 0x1101420200818802ULL, 0xa0022202002400a0ULL, 0x04a8004888ed0c81ULL,
    0x408104104204249cULL, 0x804480d808002002ULL, 0x0258402411001008ULL, 0x0150006013000800ULL,
    0x102c020202010414ULL, 0x0050200084200500ULL, 0x6220040400508092ULL, 0x0010008a95808900ULL,
    0x0242080404042000ULL, 0x5002010141502000ULL, 0x1800019248080710ULL, 0x0300200104090008ULL,
    0x3808001322020140ULL, 0x0801046004210002ULL, 0x0010840108020110ULL, 0x0011040820802005ULL,
    0x0400841401040200ULL, 0x0a00a08048083410ULL, 0x0002480022091010ULL, 0x0410848100840402ULL,
    0x2086b00030120880ULL, 0x2100044931100081ULL, 0x2800420448008100ULL, 0x0410200101220410ULL};

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
            if (attempt == 1) {
                m.magic = rook ? kRookMagics[s] : kBishopMagics[s];
            } else {
                m.magic = rng() & rng() & rng();
                if (popcount((m.mask * m.magic) >> 56) < 6) continue;
            }
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
