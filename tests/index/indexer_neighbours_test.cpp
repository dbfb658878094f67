// Indexer::Neighbours against full encodes: for decoded slots, every unit
// moved to every empty square must give exactly encode()'s answer,
// kNoIndex included, whatever the order of the calls on one object.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "test_support.hpp"

namespace tbf::index {
namespace {

Indexer make_canonical(VariantId v, std::string_view name) {
    auto m = parse_table(name, v);
    REQUIRE_MESSAGE(m.ok(), std::string(name));
    auto ix = Indexer::create(v, canonical(*m));
    REQUIRE_MESSAGE(ix.ok(), ix.status().message());
    return *ix;
}

// Checks every (unit, empty square) move of one slot in a shuffled order,
// each move asked twice so that answers after other moves are covered too.
// Returns the number of mismatches.
int check_slot(const Indexer& ix, Index slot, std::mt19937_64& rng) {
    Square squares[kMaxUnits];
    REQUIRE(ix.decode(slot, squares));
    const int n = ix.unit_count();
    Bitboard occ = 0;
    for (int i = 0; i < n; ++i) occ |= bit(squares[i]);
    std::vector<std::pair<int, Square>> moves;
    for (int u = 0; u < n; ++u) {
        for (int s = 0; s < 64; ++s) {
            if (!(occ & bit(static_cast<Square>(s)))) moves.emplace_back(u, static_cast<Square>(s));
        }
    }
    const std::size_t distinct = moves.size();
    moves.insert(moves.end(), moves.begin(), moves.end());
    std::shuffle(moves.begin(), moves.end(), rng);
    Indexer::Neighbours neighbours(ix, slot, squares);
    int failures = 0;
    const auto [root_first, root_end] = ix.root_range(slot);
    CHECK(root_first <= slot);
    CHECK(slot < root_end);
    for (const auto& [u, to] : moves) {
        Square copy[kMaxUnits];
        std::copy(squares, squares + n, copy);
        copy[u] = to;
        const Index expected = ix.encode(copy);
        const Index got = neighbours.moved(u, to);
        if (got != expected && ++failures <= 3) {
            FAIL_CHECK("slot " << slot << ": unit " << u << " (" << unit_label(ix.unit(u))
                               << ") to square " << int{to} << " gives " << got
                               << ", encode gives " << expected);
        }
        // Out-of-core builds rely on tail moves staying in the root's slots.
        const bool leaves_root = u >= ix.root_unit_count() && expected != kNoIndex &&
                                 (expected < root_first || expected >= root_end);
        if (leaves_root && ++failures <= 3) {
            FAIL_CHECK("slot " << slot << ": tail unit " << u << " to square " << int{to} << " gives " << expected
                               << ", outside its root range [" << root_first << ", " << root_end << ")");
        }
    }
    CHECK(distinct > 0);
    return failures;
}

// Random slots: half uniform, half at a random distance from the end of the
// index, where the roots that keep a symmetry (listed choices and nodes)
// are laid out.
void check_sampled(VariantId v, std::string_view name, int slots) {
    CAPTURE(name);
    const Indexer ix = make_canonical(v, name);
    std::mt19937_64 rng(std::hash<std::string_view>{}(name));
    const Index size = ix.size();
    const int width = std::bit_width(size);
    int failures = 0;
    for (int k = 0; k < slots && failures == 0; ++k) {
        Index slot = rng() % size;
        if (k % 2 == 1) {
            const Index span = std::max<Index>(1, size >> (rng() % static_cast<unsigned>(width)));
            slot = size - 1 - rng() % span;
        }
        failures += check_slot(ix, slot, rng);
    }
    CHECK(failures == 0);
}

// Sanitized builds run ~20 times slower: a fifth of the slots, same tables.
int scaled(int slots) { return tbf::test::kSanitized ? std::max(4, slots / 5) : slots; }

}  // namespace

TEST_CASE("neighbours equal full encodes: every slot of the smallest tables") {
    // Whole roots (every move looks the root up again) and one-unit tails.
    const std::pair<VariantId, const char*> tables[] = {
        {VariantId::Antichess, "KvK"}, {VariantId::Antichess, "NvK"},
        {VariantId::Antichess, "PvP"}, {VariantId::FourFile, "KvK"},
        {VariantId::FourFile, "KPvK"}, {VariantId::FourFile, "KNvK"},
    };
    for (const auto& entry : tables) {
        const auto& v = entry.first;
        const auto& name = entry.second;
        CAPTURE(name);
        const Indexer ix = make_canonical(v, name);
        std::mt19937_64 rng(3);
        // Sanitized builds: every 7th slot.
        const Index step = tbf::test::kSanitized ? 7 : 1;
        int failures = 0;
        for (Index slot = 0; slot < ix.size() && failures == 0; slot += step)
            failures += check_slot(ix, slot, rng);
        CHECK(failures == 0);
    }
}

TEST_CASE("neighbours equal full encodes: losing chess") {
    // Distinct units, pawns, and groups of 2 to 5 identical units, in the
    // root and in the tail (after other tail groups: KKNNvKK, BBPPvPP).
    for (const char* name : {"KQRvKBN", "RBNvKN", "KRPvKBN", "KQvKB", "KKvKK", "BBvBB", "KKvKKN",
                             "KQQQvK", "QQQQvK", "RRRRvBB", "PPvPP", "NPvP", "KPPvKP", "PPPvPP",
                             "KRPvKP", "BBNvPP", "KKNNvKK", "BBPPvPP"}) {
        check_sampled(VariantId::Antichess, name, scaled(300));
    }
    // Five identical units: the largest root table (seconds to build).
    if (!tbf::test::kSanitized) check_sampled(VariantId::Antichess, "QQQQQvK", 300);
    check_sampled(VariantId::AntichessFics, "KRvKB", scaled(100));
}

TEST_CASE("neighbours equal full encodes: other group orders") {
    // Stored tables may use any permitted order (docs/index.md step 5):
    // pawns inside the root after other units, the weaker side leading.
    for (const char* name : {"KRvKN", "KNPvB", "BNvNP", "RBNvKN", "KNvBP", "BBvNN"}) {
        CAPTURE(name);
        const Material m = canonical(*parse_table(name, VariantId::Antichess));
        std::mt19937_64 rng(std::hash<std::string_view>{}(name));
        int tried = 0, failures = 0;
        for (GroupOrders orders(VariantId::Antichess, m); auto ix = orders.next();) {
            ++tried;
            for (int k = 0; k < scaled(20) && failures == 0; ++k) failures += check_slot(*ix, rng() % ix->size(), rng);
            if (failures != 0) break;
        }
        CHECK(tried >= 2);
        CHECK(failures == 0);
    }
}

TEST_CASE("neighbours equal full encodes: Four File") {
    // Kings touching or off the e-file, units off files a/c/e/g and pawns on
    // the last ranks all give kNoIndex.
    for (const char* name : {"KRvKN", "KPvKP", "KQvK", "KRPvKP", "KPPvKP", "KBPvKNP", "KQRvKBN",
                             "KNNvKB", "KRRvKN", "KRRvKP"}) {
        check_sampled(VariantId::FourFile, name, scaled(300));
    }
}

TEST_CASE("root ranges tile the index, one root placement each") {
    const std::pair<VariantId, const char*> tables[] = {
        {VariantId::Antichess, "KQRvKBN"}, {VariantId::Antichess, "RBNvKN"},  {VariantId::Antichess, "KRPvKBN"},
        {VariantId::Antichess, "KKvKKN"},  {VariantId::Antichess, "QQQQvK"},  {VariantId::Antichess, "BBPPvPP"},
        {VariantId::Antichess, "NvK"},     {VariantId::FourFile, "KRPvKP"},
    };
    for (const auto& entry : tables) {
        const auto& v = entry.first;
        const auto& name = entry.second;
        CAPTURE(name);
        const Indexer ix = make_canonical(v, name);
        const int roots = ix.root_unit_count();
        REQUIRE(roots >= 1);
        REQUIRE(roots <= ix.unit_count());
        Index at = 0;
        std::uint64_t ranges = 0;
        int failures = 0;
        while (at < ix.size() && failures == 0) {
            const auto [first, end] = ix.root_range(at);
            if (first != at || end <= first || end > ix.size()) {
                FAIL_CHECK("range of slot " << at << " is [" << first << ", " << end << ")");
                break;
            }
            // Its first and last slot stand on the same root squares.
            Square a[kMaxUnits], b[kMaxUnits];
            REQUIRE(ix.decode(first, a));
            REQUIRE(ix.decode(end - 1, b));
            if (!std::equal(a, a + roots, b)) {
                ++failures;
                FAIL_CHECK("slots " << first << " and " << end - 1 << " differ in the root");
            }
            if (ix.root_range(end - 1) != std::pair{first, end}) {
                ++failures;
                FAIL_CHECK("last slot " << end - 1 << " has another range");
            }
            ++ranges;
            at = end;
        }
        CHECK(at == ix.size());
        CHECK(ranges > 1);
    }
}

}  // namespace tbf::index
