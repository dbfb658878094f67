#pragma once
// Independent reference for the indexer tests: enumerates placements by
// brute force, computes canonical forms by trying every symmetry, and counts
// orbits with Burnside's lemma. Uses only rules/ and the rules of docs/ARCHITECTURE.md section 3,
// never the indexer.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "tbforge/index/material.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/symmetry.hpp"

namespace tbf::index::test {

inline constexpr Bitboard kPawnRanks = 0x00FFFFFFFFFFFF00ULL;

struct Reference {
    VariantId variant = VariantId::Antichess;
    bool four_file = false;       // royal kings on the e-file, units on files a, c, e, g
    std::vector<Unit> units;      // White K..P, then Black K..P
    std::vector<int> run_start;   // first unit of each run of identical units
    std::vector<int> symmetries;  // the symmetry group of the table

    // The reference's own description of the variants, independent of the
    // rules' traits it checks: a new VariantId must be described here.
    static bool is_four_file(VariantId v) {
        switch (v) {
            case VariantId::Antichess:
            case VariantId::AntichessFics:
            case VariantId::AntichessJoint: return false;
            case VariantId::FourFile: return true;
        }
        return false;
    }

    Reference(VariantId v, const Material& m) : variant(v), four_file(is_four_file(v)) {
        for (const Color c : {Color::White, Color::Black}) {
            for (int t = 0; t < kUnitTypeCount; ++t) {
                const auto type = static_cast<UnitType>(t);
                if (m.count(c, type) == 0) continue;
                run_start.push_back(static_cast<int>(units.size()));
                for (int i = 0; i < m.count(c, type); ++i) units.push_back(make_unit(c, type));
            }
        }
        if (four_file) {
            symmetries = {0};
        } else if (m.has_pawns()) {
            symmetries = {0, kMirrorFiles};
        } else {
            symmetries = {0, 1, 2, 3, 4, 5, 6, 7};
        }
    }

    int size() const { return static_cast<int>(units.size()); }

    bool allowed(Unit u, Square s) const {
        const UnitType t = unit_type(u);
        if (t == UnitType::Pawn && !(kPawnRanks & bit(s))) return false;
        if (!four_file) return true;
        if (file_of(s) % 2 != 0) return false;
        return t != UnitType::King || file_of(s) == 4;
    }

    bool same_run(int i) const {
        return i > 0 &&
               units[static_cast<std::size_t>(i)] == units[static_cast<std::size_t>(i - 1)];
    }

    // Every placement: identical units in ascending squares, distinct squares,
    // allowed squares, Four File kings not on the same or adjacent squares.
    template <class F>
    void for_each_placement(F&& f) const {
        std::array<Square, kMaxUnits> sq{};
        place(0, 0, sq, f);
    }

    template <class F>
    void place(int i, Bitboard occ, std::array<Square, kMaxUnits>& sq, F& f) const {
        if (i == size()) {
            if (four_file) {
                const Square wk = sq[0];
                const Square bk = sq[static_cast<std::size_t>(run_start[units_of(Color::White)])];
                if (std::abs(rank_of(wk) - rank_of(bk)) < 2) return;
            }
            f(sq);
            return;
        }
        const int from = same_run(i) ? sq[static_cast<std::size_t>(i - 1)] + 1 : 0;
        for (int s = from; s < 64; ++s) {
            const auto square = static_cast<Square>(s);
            if ((occ & bit(square)) || !allowed(units[static_cast<std::size_t>(i)], square))
                continue;
            sq[static_cast<std::size_t>(i)] = square;
            place(i + 1, occ | bit(square), sq, f);
        }
    }

    // Number of runs of White units (the index of Black's first run).
    int units_of(Color c) const {
        int runs = 0;
        for (const int start : run_start) {
            if (unit_color(units[static_cast<std::size_t>(start)]) == c) ++runs;
        }
        return runs;
    }

    // Squares of a placement under a symmetry, each run re-sorted, packed.
    std::uint64_t pack(const std::array<Square, kMaxUnits>& sq, int sym) const {
        static const auto table = [] {
            std::array<std::array<Square, 64>, kSymmetryCount> t{};
            for (int s = 0; s < kSymmetryCount; ++s) {
                for (int x = 0; x < 64; ++x)
                    t[static_cast<std::size_t>(s)][static_cast<std::size_t>(x)] =
                        transform_square(static_cast<Square>(x), s);
            }
            return t;
        }();
        std::array<Square, kMaxUnits> t{};
        for (int i = 0; i < size(); ++i) {
            t[static_cast<std::size_t>(i)] =
                table[static_cast<std::size_t>(sym)][sq[static_cast<std::size_t>(i)]];
        }
        for (std::size_t r = 0; r < run_start.size(); ++r) {
            const int end = r + 1 < run_start.size() ? run_start[r + 1] : size();
            for (int i = run_start[r] + 1; i < end; ++i) {
                for (int j = i; j > run_start[r] &&
                                t[static_cast<std::size_t>(j - 1)] > t[static_cast<std::size_t>(j)];
                     --j) {
                    std::swap(t[static_cast<std::size_t>(j - 1)], t[static_cast<std::size_t>(j)]);
                }
            }
        }
        std::uint64_t key = 0;
        for (int i = 0; i < size(); ++i) key = key << 8 | t[static_cast<std::size_t>(i)];
        return key;
    }

    std::uint64_t canonical_key(const std::array<Square, kMaxUnits>& sq) const {
        std::uint64_t best = ~std::uint64_t{0};
        for (const int s : symmetries) best = std::min(best, pack(sq, s));
        return best;
    }

    Position position(const std::array<Square, kMaxUnits>& sq, Color stm) const {
        Position pos;
        for (int i = 0; i < size(); ++i)
            pos.put(sq[static_cast<std::size_t>(i)], units[static_cast<std::size_t>(i)]);
        pos.set_side_to_move(stm);
        return pos;
    }

    // Squares of a position in this unit order (runs ascending).
    std::array<Square, kMaxUnits> squares_of(const Position& pos) const {
        std::array<Square, kMaxUnits> sq{};
        std::size_t i = 0;
        for (const int start : run_start) {
            const Unit u = units[static_cast<std::size_t>(start)];
            Bitboard b = pos.units(unit_color(u), unit_type(u));
            while (b) sq[i++] = pop_lsb(b);
        }
        return sq;
    }

    // A random placement (same rules as for_each_placement).
    template <class Rng>
    std::array<Square, kMaxUnits> random_placement(Rng& rng) const {
        std::uniform_int_distribution<int> square(0, 63);
        for (;;) {
            std::array<Square, kMaxUnits> sq{};
            Bitboard occ = 0;
            bool ok = true;
            for (int i = 0; i < size() && ok; ++i) {
                const auto s = static_cast<Square>(square(rng));
                ok = !(occ & bit(s)) && allowed(units[static_cast<std::size_t>(i)], s);
                occ |= bit(s);
                sq[static_cast<std::size_t>(i)] = s;
            }
            if (!ok) continue;
            if (four_file) {
                const Square bk = sq[static_cast<std::size_t>(run_start[units_of(Color::White)])];
                if (std::abs(rank_of(sq[0]) - rank_of(bk)) < 2) continue;
            }
            return sq;
        }
    }

    // Legal for a side to move: Four File forbids the side not to move being
    // in check; losing chess has no such rule.
    bool legal(const Position& pos) const {
        if (!four_file) return true;
        return !king_attacked<FourFile>(pos, ~pos.side_to_move());
    }

    // Orbits of placements under the symmetry group (Burnside's lemma): the
    // average number of placements each symmetry leaves unchanged. Only for
    // losing chess, whose placement set has no pairwise constraint.
    std::uint64_t orbit_count() const {
        std::uint64_t sum = 0;
        for (const int s : symmetries) sum += fixed_placements(s);
        return sum / symmetries.size();
    }

    // Placements with every run mapped onto itself by symmetry s: each run is
    // a union of cycles of the square permutation, runs disjoint.
    std::uint64_t fixed_placements(int sym) const {
        // Cycle classes: (length, inside the pawn ranks?) -> count.
        std::map<std::pair<int, bool>, int> classes;
        Bitboard seen = 0;
        for (int s = 0; s < 64; ++s) {
            if (seen & bit(static_cast<Square>(s))) continue;
            int len = 0;
            Square x = static_cast<Square>(s);
            do {
                seen |= bit(x);
                x = transform_square(x, sym);
                ++len;
            } while (x != s);
            ++classes[{len, (kPawnRanks & bit(static_cast<Square>(s))) != 0}];
        }
        std::vector<std::pair<std::pair<int, bool>, int>> avail(classes.begin(), classes.end());
        return assign_runs(0, avail);
    }

    std::uint64_t assign_runs(std::size_t run,
                              std::vector<std::pair<std::pair<int, bool>, int>>& avail) const {
        if (run == run_start.size()) return 1;
        const int end = run + 1 < run_start.size() ? run_start[run + 1] : size();
        const int k = end - run_start[run];
        const bool pawn =
            unit_type(units[static_cast<std::size_t>(run_start[run])]) == UnitType::Pawn;
        return choose_cycles(run, 0, k, pawn, avail);
    }

    std::uint64_t choose_cycles(std::size_t run, std::size_t cls, int left, bool pawn,
                                std::vector<std::pair<std::pair<int, bool>, int>>& avail) const {
        if (left == 0) return assign_runs(run + 1, avail);
        if (cls == avail.size()) return 0;
        const auto [len, in_pawn_ranks] = avail[cls].first;
        std::uint64_t total = choose_cycles(run, cls + 1, left, pawn, avail);
        if (pawn && !in_pawn_ranks) return total;
        const int have = avail[cls].second;
        std::uint64_t ways = 1;
        for (int x = 1; x <= have && x * len <= left; ++x) {
            ways = ways * static_cast<std::uint64_t>(have - x + 1) / static_cast<std::uint64_t>(x);
            avail[cls].second = have - x;
            total += ways * choose_cycles(run, cls + 1, left - x * len, pawn, avail);
            avail[cls].second = have;
        }
        return total;
    }
};

}  // namespace tbf::index::test
