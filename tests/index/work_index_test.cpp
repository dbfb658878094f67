#include "tbforge/index/work_index.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "tbforge/rules/symmetry.hpp"

namespace tbf::index {
namespace {

struct Pair {
    Indexer exact;
    WorkIndex work;
};

Pair make(std::string_view name) {
    auto m = parse_table(name, VariantId::Antichess);
    REQUIRE_MESSAGE(m.ok(), std::string(name));
    auto exact = Indexer::create(VariantId::Antichess, *m);
    REQUIRE(exact.ok());
    auto work = WorkIndex::create(VariantId::Antichess, *m);
    REQUIRE_MESSAGE(work.has_value(), std::string(name));
    return {*exact, *work};
}

// The work unit order as a permutation of the exact one.
std::vector<int> work_position(const Pair& p) {
    std::vector<int> position(static_cast<std::size_t>(p.exact.unit_count()));
    std::vector<bool> taken(static_cast<std::size_t>(p.work.unit_count()));
    for (int k = 0; k < p.exact.unit_count(); ++k) {
        for (int i = 0; i < p.work.unit_count(); ++i) {
            if (!taken[i] && p.work.unit(i) == p.exact.unit(k)) {
                taken[i] = true;
                position[k] = i;
                break;
            }
        }
    }
    return position;
}

// Used work slots and exact slots are in one-to-one correspondence, and every
// symmetric image or unit permutation of a placement encodes to its slot.
void check_bijection(std::string_view name) {
    CAPTURE(name);
    const Pair p = make(name);
    const auto position = work_position(p);
    const int n = p.exact.unit_count();
    std::vector<std::uint8_t> hit(p.work.size());
    std::mt19937_64 rng(7);
    for (Index i = 0; i < p.exact.size(); ++i) {
        Square squares[kMaxUnits], placed[kMaxUnits];
        REQUIRE(p.exact.decode(i, squares));
        for (int k = 0; k < n; ++k) placed[position[k]] = squares[k];
        const Index slot = p.work.encode(placed);
        REQUIRE(slot < p.work.size());
        REQUIRE(hit[slot] == 0);
        hit[slot] = 1;
        Square back[kMaxUnits];
        REQUIRE(p.work.decode(slot, back));
        CHECK(p.work.encode(back) == slot);
        if (i % 97 == 0) {
            // Any symmetric image of the placement names the same slot.
            const std::uint8_t group = symmetry_mask(p.work.symmetry_group());
            int sym = static_cast<int>(rng() % kSymmetryCount);
            while (!(group >> sym & 1)) sym = static_cast<int>(rng() % kSymmetryCount);
            Square image[kMaxUnits];
            for (int k = 0; k < n; ++k) image[k] = transform_square(placed[k], sym);
            CHECK(p.work.encode(image) == slot);
        }
    }
    std::uint64_t used = 0;
    for (Index s = 0; s < p.work.size(); ++s) {
        Square squares[kMaxUnits];
        const bool ok = p.work.decode(s, squares);
        CHECK(ok == (hit[s] != 0));
        used += ok;
    }
    CHECK(used == p.exact.size());
}

TEST_CASE("work index slots correspond one to one to exact index slots") {
    for (const char* name : {"KvK", "QvR", "BvP", "PvP", "KRvK", "NNvK", "QBvN", "KPvK", "PPvK", "KPvP",
                             "BNvR", "KNvRB", "BBvN"}) {
        check_bijection(name);
    }
}

TEST_CASE("a moved unit's slot equals the full encoding") {
    for (const char* name : {"QRvN", "KNvBP", "RRvB", "KPPvK", "RBNvKN", "KNvRB", "KvP", "KRRvK", "QQQvB", "NPPvPP", "BBBvN"}) {
        CAPTURE(name);
        const Pair p = make(name);
        std::mt19937_64 rng(11);
        int checked = 0;
        while (checked < 20000) {
            const Index slot = rng() % p.work.size();
            Square squares[kMaxUnits];
            if (!p.work.decode(slot, squares)) continue;
            Bitboard occ = 0;
            for (int i = 0; i < p.work.unit_count(); ++i) occ |= bit(squares[i]);
            // Several moves of one position share the cached images.
            WorkIndex::Neighbours neighbours(p.work, slot, squares);
            for (int k = 0; k < 12; ++k) {
                const int moved = static_cast<int>(rng() % static_cast<unsigned>(p.work.unit_count()));
                const auto to = static_cast<Square>(rng() % 64);
                if (occ & bit(to)) continue;
                Square copy[kMaxUnits];
                std::copy(squares, squares + p.work.unit_count(), copy);
                copy[moved] = to;
                CHECK(neighbours.moved(moved, to) == p.work.encode(copy));
                ++checked;
            }
        }
    }
}

TEST_CASE("a cursor's slots equal the full encoding along the exact index and random walks") {
    for (const char* name : {"QRvN", "KNvBP", "RRvB", "KPPvK", "RBNvKN", "KNvRB", "KvP", "BNvR"}) {
        CAPTURE(name);
        const Pair p = make(name);
        const auto position = work_position(p);
        const int n = p.exact.unit_count();
        std::mt19937_64 rng(13);
        // Runs of consecutive exact slots, as the renumbering reads them.
        for (int run = 0; run < 40; ++run) {
            WorkIndex::Cursor cursor(p.work);
            const Index first = rng() % p.exact.size();
            Square squares[kMaxUnits], placed[kMaxUnits];
            for (Index i = first; i < std::min(p.exact.size(), first + 3000); ++i) {
                REQUIRE((i == first ? p.exact.decode(i, squares) : p.exact.decode_next(i, squares)));
                for (int k = 0; k < n; ++k) placed[position[k]] = squares[k];
                REQUIRE(cursor.encode(placed) == p.work.encode(placed));
            }
        }
        // Random walks: one unit to any empty square (root and group moves,
        // pawns onto the back ranks, kNoIndex placements), sometimes two.
        WorkIndex::Cursor cursor(p.work);
        Square placed[kMaxUnits];
        Square start[kMaxUnits];
        while (!p.work.decode(rng() % p.work.size(), start)) {
        }
        std::copy(start, start + n, placed);
        for (int step = 0; step < 50000; ++step) {
            Bitboard occ = 0;
            for (int k = 0; k < n; ++k) occ |= bit(placed[k]);
            const int moves = rng() % 8 == 0 ? 2 : 1;
            for (int m = 0; m < moves; ++m) {
                const int moved = static_cast<int>(rng() % static_cast<unsigned>(n));
                const auto to = static_cast<Square>(rng() % 64);
                if (occ & bit(to)) continue;
                occ ^= bit(placed[moved]) | bit(to);
                placed[moved] = to;
            }
            REQUIRE(cursor.encode(placed) == p.work.encode(placed));
        }
    }
}

TEST_CASE("tables without a unit alone of its kind and Four File have no work index") {
    for (const char* name : {"RRvBB", "PPvPP", "KKvNN"}) {
        auto m = parse_table(name, VariantId::Antichess);
        REQUIRE(m.ok());
        CHECK_FALSE(WorkIndex::create(VariantId::Antichess, *m).has_value());
    }
    auto m = parse_table("KRvK", VariantId::FourFile);
    REQUIRE(m.ok());
    CHECK_FALSE(WorkIndex::create(VariantId::FourFile, *m).has_value());
}

TEST_CASE("work index symmetries: all 8 without pawns, the file mirror with pawns") {
    for (const VariantId v : {VariantId::Antichess, VariantId::AntichessFics, VariantId::AntichessJoint}) {
        const auto pawnless = WorkIndex::create(v, *parse_table("KQvR", v));
        REQUIRE(pawnless.has_value());
        CHECK(pawnless->symmetry_group() == SymmetryGroup::Full);
        CHECK(pawnless->symmetry_count() == 8);
        const auto pawns = WorkIndex::create(v, *parse_table("KPvR", v));
        REQUIRE(pawns.has_value());
        CHECK(pawns->symmetry_group() == SymmetryGroup::FileMirror);
        CHECK(pawns->symmetry_count() == 2);
    }
}

}  // namespace
}  // namespace tbf::index
