#include "tbforge/index/indexer.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <random>
#include <thread>

#include "brute_force.hpp"
#include "tbforge/index/report.hpp"
#include "tbforge/rules/fen.hpp"
#include "test_support.hpp"

namespace tbf::index {
namespace {

using test::Reference;
using Squares = std::array<Square, kMaxUnits>;
constexpr std::uint64_t kUnset = ~std::uint64_t{0};

Indexer make(VariantId v, std::string_view name) {
    auto m = parse_table(name, v);
    REQUIRE_MESSAGE(m.ok(), std::string(name));
    auto ix = Indexer::create(v, *m);
    REQUIRE_MESSAGE(ix.ok(), ix.status().message());
    return *ix;
}

// Every placement of the reference encodes to a slot whose position is a
// symmetric image of it; a slot never holds two orbits and every slot holds
// one; the valid slots per side to move are exactly the legal positions.
void check_exhaustive(VariantId v, const Material& m, std::span<const Unit> order = {}) {
    const Reference ref(v, m);
    auto made = order.empty() ? Indexer::create(v, m) : Indexer::create(v, m, order);
    REQUIRE(made.ok());
    const Indexer& ix = *made;
    CAPTURE(m.name());
    CAPTURE(ix.describe());
    const Index n = ix.size();
    std::vector<std::uint64_t> key_of(n, kUnset);
    std::uint64_t orbits = 0;
    std::array<std::uint64_t, 2> legal{};
    std::uint64_t failures = 0;
    ref.for_each_placement([&](const Squares& sq) {
        if (failures > 5) return;
        const std::uint64_t key = ref.canonical_key(sq);
        const bool representative = key == ref.pack(sq, 0);
        const Position pos = ref.position(sq, Color::White);
        const Index idx = ix.index(pos);
        if (idx >= n) {
            ++failures;
            FAIL_CHECK("no slot for " << to_fen(pos));
            return;
        }
        if (key_of[idx] == kUnset) key_of[idx] = key;
        if (key_of[idx] != key) {
            ++failures;
            FAIL_CHECK("two orbits share slot " << idx << ": " << to_fen(pos));
        }
        if (!representative) return;
        ++orbits;
        for (const Color stm : {Color::White, Color::Black}) {
            Position p = pos;
            p.set_side_to_move(stm);
            // Legality does not change under symmetry: count orbits.
            if (ref.legal(p)) ++legal[static_cast<std::size_t>(to_index(stm))];
        }
    });
    REQUIRE(failures == 0);
    std::uint64_t used = 0;
    for (const auto k : key_of) used += k != kUnset ? 1 : 0;
    CHECK(used == orbits);
    CHECK(used == n);  // no slot is left without a placement
    // Each slot decodes to an image of the placements that encode to it,
    // which encodes back to it; it is valid exactly for the legal sides.
    std::array<std::uint64_t, 2> valid{};
    for (Index i = 0; i < n && failures < 5; ++i) {
        Squares fast{};
        if (!ix.decode(i, fast.data()) || ix.encode(fast.data()) != i) {
            ++failures;
            FAIL_CHECK("fast path: slot " << i << " does not encode back");
        }
        Position placed;
        for (int u = 0; u < ix.unit_count(); ++u)
            placed.put(fast[static_cast<std::size_t>(u)], ix.unit(u));
        for (const Color stm : {Color::White, Color::Black}) {
            placed.set_side_to_move(stm);
            const auto pos = ix.position(i, stm);
            if (ix.is_valid(i, stm) != pos.has_value() || pos.has_value() != ref.legal(placed)) {
                ++failures;
                FAIL_CHECK("slot " << i << " validity differs from the rules for "
                                   << to_fen(placed));
            }
            if (!pos) continue;
            ++valid[static_cast<std::size_t>(to_index(stm))];
            if (!(*pos == placed) || ix.index(*pos) != i ||
                ref.canonical_key(ref.squares_of(*pos)) != key_of[i]) {
                ++failures;
                FAIL_CHECK("slot " << i << " decodes to " << to_fen(*pos));
            }
        }
    }
    CHECK(failures == 0);
    CHECK(valid == legal);
    // Losing chess: every slot a position for both sides, which the
    // generator's statistics take for granted (every_slot_valid).
    CHECK(ix.every_slot_valid() == !ref.four_file);
    if (!ref.four_file) {
        CHECK(valid[0] == n);
        CHECK(valid[1] == n);
        CHECK(orbits == ref.orbit_count());
    }
}

// Random placements of a table: every symmetric image (and any order of
// identical units) maps to the same slot, whose position is an image of the
// placement and encodes back to it.
std::uint64_t check_sampled(VariantId v, const Material& m, int samples, std::mt19937_64& rng,
                            std::span<const Unit> order = {}) {
    const Reference ref(v, m);
    const Indexer ix = order.empty() ? *Indexer::create(v, m) : *Indexer::create(v, m, order);
    CAPTURE(m.name());
    CAPTURE(ix.describe());
    std::uniform_int_distribution<std::size_t> pick_sym(0, ref.symmetries.size() - 1);
    std::uint64_t failures = 0;
    for (int s = 0; s < samples && failures < 5; ++s) {
        const Squares sq = ref.random_placement(rng);
        const Position pos = ref.position(sq, Color::White);
        const Index idx = ix.index(pos);
        if (idx >= ix.size()) {
            ++failures;
            FAIL_CHECK("no slot for " << to_fen(pos));
            continue;
        }
        const int sym = ref.symmetries[pick_sym(rng)];
        const Position image = transform(pos, sym);
        Squares fast{};
        REQUIRE(ix.placement_of(image, fast.data()));
        // Identical units in reverse order must not matter.
        for (int i = 0; i + 1 < ix.unit_count(); ++i) {
            if (ix.unit(i) == ix.unit(i + 1) && (rng() & 1)) std::swap(fast[i], fast[i + 1]);
        }
        // A side to move for which the position is legal (Four File: the side
        // not to move must not be in check).
        Color stm = Color::White;
        if (!ref.legal(ref.position(sq, stm))) stm = Color::Black;
        if (!ref.legal(ref.position(sq, stm))) {
            CHECK_FALSE(ix.position(idx, Color::White).has_value());
            CHECK_FALSE(ix.position(idx, Color::Black).has_value());
            continue;
        }
        const auto back = ix.position(idx, stm);
        if (ix.index(image) != idx || ix.encode(fast.data()) != idx || !back ||
            ix.index(*back) != idx ||
            ref.canonical_key(ref.squares_of(*back)) != ref.canonical_key(sq)) {
            ++failures;
            FAIL_CHECK("round trip fails for " << to_fen(pos) << " (symmetry " << sym << ")");
        }
    }
    return failures;
}

std::vector<Material> tables_with(VariantId v, int units) {
    std::vector<Material> out;
    for (const Material& m : enumerate_tables(v, units)) {
        if (m.total() == units) out.push_back(m);
    }
    return out;
}

}  // namespace

TEST_CASE("exhaustive round trip: losing chess up to 3 units") {
    const auto tables = enumerate_tables(VariantId::Antichess, 3);
    REQUIRE(tables.size() == 21 + 126);
    // Sanitized builds check every 8th table: the same code paths, less time.
    const std::size_t step = tbf::test::kSanitized ? 8 : 1;
    for (std::size_t i = 0; i < tables.size(); i += step)
        check_exhaustive(VariantId::Antichess, tables[i]);
}

// Every order of a table's groups, permitted or not.
std::vector<std::vector<Unit>> every_order(const Indexer& ix) {
    std::vector<Unit> groups = ix.group_order();
    std::sort(groups.begin(), groups.end());
    std::vector<std::vector<Unit>> out;
    do {
        out.push_back(groups);
    } while (std::next_permutation(groups.begin(), groups.end()));
    return out;
}

TEST_CASE("every permitted group order is a bijection onto the same slots") {
    // Pawnless, pawns in and out of the root, a pair, Four File's kings: each
    // order the indexer accepts passes the exhaustive round trip.
    // Exhaustive up to 3 units (and Four File's small 4-unit tables),
    // sampled beyond.
    const std::vector<std::pair<VariantId, std::string>> tables = {
        {VariantId::Antichess, "KQvR"},  {VariantId::Antichess, "BvNN"},  {VariantId::Antichess, "KPvN"},
        {VariantId::Antichess, "PvPP"},  {VariantId::FourFile, "KRPvK"},  {VariantId::FourFile, "KNvKP"},
        {VariantId::Antichess, "QRvBN"}, {VariantId::Antichess, "KNvRP"}, {VariantId::Antichess, "QRBvNP"},
        {VariantId::Antichess, "RPvKP"}, {VariantId::Antichess, "KKvQN"}};
    std::mt19937_64 rng(20261127);
    const int samples = tbf::test::kSanitized ? 500 : 20'000;
    for (const auto& entry : tables) {
        const VariantId v = entry.first;
        const std::string& name = entry.second;
        const Material m = canonical(*parse_table(name, v));
        const Indexer base = *Indexer::create(v, m);
        std::vector<std::vector<Unit>> accepted;
        for (const auto& order : every_order(base)) {
            auto ix = Indexer::create(v, m, order);
            if (!ix.ok()) {
                // Refused only for a pawn group after another kind in the
                // tail, or (Four File) kings not leading.
                CHECK(ix.status().message().find("bad unit order") != std::string::npos);
                continue;
            }
            accepted.push_back(order);
            CHECK(ix->group_order() == order);
            CHECK(ix->size() == base.size());
            if (m.total() <= 3 || v == VariantId::FourFile) {
                check_exhaustive(v, m, order);
            } else {
                CHECK(check_sampled(v, m, samples, rng, order) == 0);
            }
        }
        CAPTURE(name);
        CHECK(accepted.size() >= 2);
        // GroupOrders lists exactly the orders accepted.
        std::vector<std::vector<Unit>> listed;
        for (GroupOrders orders(v, m); auto ix = orders.next();) listed.push_back(ix->group_order());
        CHECK(listed == accepted);
    }
}

TEST_CASE("group orders: the default is the rule, bad orders are refused") {
    const Material m = *parse_table("KRvKN", VariantId::Antichess);
    const Indexer base = *Indexer::create(VariantId::Antichess, m);
    const auto same = Indexer::create(VariantId::Antichess, m, base.group_order());
    REQUIRE(same.ok());
    CHECK(same->describe() == base.describe());
    for (Index i = 0; i < base.size(); i += 9973) {
        Squares a{}, b{};
        REQUIRE(base.decode(i, a.data()));
        REQUIRE(same->decode(i, b.data()));
        CHECK(a == b);
    }
    const Unit wk = make_unit(Color::White, UnitType::King), wr = make_unit(Color::White, UnitType::Rook);
    const Unit bk = make_unit(Color::Black, UnitType::King), bn = make_unit(Color::Black, UnitType::Knight);
    const Unit bq = make_unit(Color::Black, UnitType::Queen);
    const std::vector<Unit> missing = {wk, wr, bk};
    const std::vector<Unit> twice = {wk, wr, bk, bn, wk};
    const std::vector<Unit> foreign = {wk, wr, bk, bq};
    CHECK(Indexer::create(VariantId::Antichess, m, missing).status().message().find("named once") != std::string::npos);
    CHECK(Indexer::create(VariantId::Antichess, m, twice).status().message().find("named twice") != std::string::npos);
    CHECK(Indexer::create(VariantId::Antichess, m, foreign).status().message().find("not in the table") !=
          std::string::npos);
    // A pawn after a knight in the tail (the root is Q R B): the pawn's
    // radix would depend on the knight's square.
    const Material pawns = canonical(*parse_table("QRBvNP", VariantId::Antichess));
    const std::vector<Unit> pawn_last = {make_unit(Color::White, UnitType::Queen), wr,
                                         make_unit(Color::White, UnitType::Bishop), bn,
                                         make_unit(Color::Black, UnitType::Pawn)};
    const auto refused = Indexer::create(VariantId::Antichess, pawns, pawn_last);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("pawns") != std::string::npos);
    // Four File: the kings lead.
    const Material ff = *parse_table("KRvK", VariantId::FourFile);
    const std::vector<Unit> rook_first = {wr, wk, bk};
    CHECK_FALSE(Indexer::create(VariantId::FourFile, ff, rook_first).ok());
}

TEST_CASE("exhaustive round trip: hard losing-chess 4-unit tables") {
    // No unique unit, pairs on the diagonals, a pawn pair: the cases where
    // symmetry handling is hardest.
    std::vector<std::string> names = {"KKvKK", "PPvPP"};
    if (tbf::test::kSanitized) names = {"KKvK", "PPvP"};
    for (const auto& name : names) {
        check_exhaustive(VariantId::Antichess, *parse_table(name, VariantId::Antichess));
    }
}

TEST_CASE("exhaustive round trip: Four File up to 4 units") {
    const auto tables = enumerate_tables(VariantId::FourFile, 4);
    // KvK; KXvK for X in QRBNP; KXvKY and KXYvK up to colour flip.
    REQUIRE(tables.size() == 1 + 5 + 15 + 15);
    const std::size_t step = tbf::test::kSanitized ? 5 : 1;
    for (std::size_t i = 0; i < tables.size(); i += step)
        check_exhaustive(VariantId::FourFile, tables[i]);
}

TEST_CASE("sampled round trips: 4, 5 and 6 units") {
    std::mt19937_64 rng(20240611);
    // 10^6 samples in all (5% in sanitized builds).
    const int total = tbf::test::kSanitized ? 50'000 : 1'000'000;
    std::vector<std::pair<VariantId, Material>> tables;
    for (const VariantId v : {VariantId::Antichess, VariantId::FourFile}) {
        for (const int units : {4, 5}) {
            for (const Material& m : tables_with(v, units)) tables.emplace_back(v, m);
        }
    }
    // Table construction dominates for small sample counts: a spread of the
    // 4- and 5-unit tables, and every 6-unit table listed below.
    std::shuffle(tables.begin(), tables.end(), rng);
    tables.resize(std::min<std::size_t>(tables.size(), tbf::test::kSanitized ? 40 : 400));
    for (const char* name : {"KQRvKBN", "QRBvQRB", "KKvKKN", "BBBvNNN", "KPPvKR", "KRPvKP",
                             "PPPvPP", "KKKKvN", "RBPvKPP"}) {
        tables.emplace_back(VariantId::Antichess,
                            canonical(*parse_table(name, VariantId::Antichess)));
    }
    // Five identical units: the largest root (7.6M raw placements, seconds to
    // build), so not in sanitized builds.
    if (!tbf::test::kSanitized)
        tables.emplace_back(VariantId::Antichess, *parse_material("KKKKKvQ"));
    for (const char* name : {"KQRvKBN", "KPPvKPP", "KRPvKNP"}) {
        tables.emplace_back(VariantId::FourFile,
                            canonical(*parse_table(name, VariantId::FourFile)));
    }
    const int per_table = total / static_cast<int>(tables.size()) + 1;
    std::uint64_t failures = 0;
    for (const auto& [v, m] : tables) failures += check_sampled(v, m, per_table, rng);
    CHECK(failures == 0);
}

TEST_CASE("slot counts equal the number of positions up to symmetry: losing chess up to 4 units") {
    // Burnside's lemma gives the number of orbits independently; every slot is
    // a position, so slots/valid is exactly 1.
    const auto tables = enumerate_tables(VariantId::Antichess, 4);
    REQUIRE(tables.size() == 714);
    for (const Material& m : tables) {
        CAPTURE(m.name());
        const Indexer ix = *Indexer::create(VariantId::Antichess, m);
        const auto orbits = Reference(VariantId::Antichess, m).orbit_count();
        CHECK(ix.size() == orbits);
        CHECK(static_cast<double>(ix.size()) <= 1.10 * static_cast<double>(orbits));
    }
}

TEST_CASE("six distinct units: slots within 1.10 of 64*63*62*61*60*59/8") {
    const Indexer ix = make(VariantId::Antichess, "KQRvKBN");
    const double bound = 64.0 * 63 * 62 * 61 * 60 * 59 / 8;
    CHECK(static_cast<double>(ix.size()) <= 1.10 * bound);
    CHECK(ix.size() == Reference(VariantId::Antichess, ix.material()).orbit_count());
    MESSAGE(ix.describe() << ", ratio to 64*63*62*61*60*59/8: "
                          << static_cast<double>(ix.size()) / bound);
}

TEST_CASE("slot counts equal the number of positions up to symmetry: 6-unit tables") {
    // Identical units, diagonals and pawn pairs in 6-unit tables.
    std::vector<std::string> names = {"KKNvKK", "BBBvNNN", "KPPvKPP", "QRBvQRB", "KKKvQQQ"};
    if (!tbf::test::kSanitized) names.insert(names.end(), {"KKKKvKK", "PPPvPPP"});
    for (const auto& name : names) {
        CAPTURE(name);
        const Material m = canonical(*parse_material(name));
        const Indexer ix = *Indexer::create(VariantId::Antichess, m);
        CHECK(ix.size() == Reference(VariantId::Antichess, m).orbit_count());
    }
}

TEST_SUITE("slow") {
    TEST_CASE("every slot of some 5-unit tables decodes and encodes back") {
        for (const char* name : {"KQRvKB", "BBBvBB", "KKvKKN", "KRPvKP", "PPPvPP"}) {
            const Material m = canonical(*parse_material(name));
            const IndexReport r = count_valid(*Indexer::create(VariantId::Antichess, m));
            CHECK_MESSAGE(r.valid[0] == r.slots, name);
            CHECK(r.valid[1] == r.slots);
        }
        const Material ff = *parse_table("KBPvKNP", VariantId::FourFile);
        const IndexReport r = count_valid(*Indexer::create(VariantId::FourFile, ff));
        std::uint64_t placements = 0;
        Reference(VariantId::FourFile, ff).for_each_placement([&](const Squares&) {
            ++placements;
        });
        CHECK(r.slots == placements);
        CHECK(r.valid[0] > 0);
        CHECK(r.valid[0] <= r.slots);
    }

    TEST_CASE("slot counts equal the number of positions up to symmetry: losing chess 5 units") {
        const auto tables = tables_with(VariantId::Antichess, 5);
        REQUIRE(tables.size() == 6 * 126 + 21 * 56);
        for (const Material& m : tables) {
            CAPTURE(m.name());
            const Indexer ix = *Indexer::create(VariantId::Antichess, m);
            CHECK(ix.size() == Reference(VariantId::Antichess, m).orbit_count());
        }
    }

    TEST_CASE("exhaustive round trip: losing-chess 4-unit tables") {
        // Every table without a unique unit, and a spread of the others.
        const auto tables = tables_with(VariantId::Antichess, 4);
        for (std::size_t i = 0; i < tables.size(); ++i) {
            const Material& m = tables[i];
            bool unique = false;
            for (const Color c : {Color::White, Color::Black}) {
                for (int t = 0; t < kUnitTypeCount; ++t)
                    unique |= m.count(c, static_cast<UnitType>(t)) == 1;
            }
            if (!unique || i % 16 == 0) check_exhaustive(VariantId::Antichess, m);
        }
    }
}

TEST_CASE("decode_next from the previous slot's placement equals decode") {
    std::mt19937_64 rng(20261124);
    // Tables with a single last unit (the incremental case), a group last,
    // pawns, listed root choices and Four File; runs from random starts and
    // from the start and end of the table.
    for (const auto& entry : std::vector<std::pair<VariantId, const char*>>{
             {VariantId::Antichess, "KvQ"}, {VariantId::Antichess, "RBvKN"}, {VariantId::Antichess, "RBNvKN"},
             {VariantId::Antichess, "RBPvKN"}, {VariantId::Antichess, "KRRvB"}, {VariantId::Antichess, "NPvPP"},
             {VariantId::Antichess, "BBvNN"}, {VariantId::FourFile, "KRvKN"}, {VariantId::FourFile, "KPvKP"}}) {
        const VariantId v = entry.first;
        const char* const name = entry.second;
        const Indexer ix = *Indexer::create(v, canonical(*parse_table(name, v)));
        CAPTURE(name);
        std::vector<Index> starts{0, ix.size() > 5000 ? ix.size() - 5000 : 0};
        for (int k = 0; k < 20; ++k) starts.push_back(rng() % ix.size());
        std::uint64_t mismatches = 0;
        for (const Index start : starts) {
            Squares walked{};
            REQUIRE(ix.decode(start, walked.data()));
            for (Index i = start + 1; i < std::min(ix.size(), start + 5000); ++i) {
                Squares fresh{};
                REQUIRE(ix.decode(i, fresh.data()));
                REQUIRE(ix.decode_next(i, walked.data()));
                mismatches += fresh != walked;
                walked = fresh;
            }
        }
        CHECK(mismatches == 0);
    }
}

TEST_CASE("last_unit_run lists the slots where only the last unit moves, as decode gives them") {
    std::mt19937_64 rng(20261128);
    for (const auto& entry : std::vector<std::pair<VariantId, const char*>>{
             {VariantId::Antichess, "KvQ"}, {VariantId::Antichess, "RBvKN"}, {VariantId::Antichess, "RBPvKN"},
             {VariantId::Antichess, "KRRvB"}, {VariantId::Antichess, "NPvPP"}, {VariantId::Antichess, "NPvNP"},
             {VariantId::FourFile, "KRvKN"}}) {
        const VariantId v = entry.first;
        const char* const name = entry.second;
        const Indexer ix = *Indexer::create(v, canonical(*parse_table(name, v)));
        CAPTURE(name);
        const int last = ix.unit_count() - 1;
        std::uint64_t listed = 0, mismatches = 0;
        for (int k = 0; k < 200; ++k) {
            const Index start = rng() % ix.size();
            Squares at{};
            REQUIRE(ix.decode(start, at.data()));
            Square next[64];
            const int max = static_cast<int>(rng() % 70);
            const int count = ix.last_unit_run(start, at.data(), next, max);
            REQUIRE(count <= max);
            for (int j = 0; j < count; ++j) {
                Squares fresh{};
                REQUIRE(ix.decode(start + 1 + static_cast<Index>(j), fresh.data()));
                Squares expected = at;
                expected[static_cast<std::size_t>(last)] = next[j];
                mismatches += fresh != expected;
            }
            listed += static_cast<std::uint64_t>(count);
            // Maximal: the slot after the run moves another unit (or the run
            // stopped at max).
            const Index after = start + 1 + static_cast<Index>(count);
            if (count < max && after < ix.size()) {
                Squares fresh{};
                REQUIRE(ix.decode(after, fresh.data()));
                bool others_same = true;
                for (int u = 0; u < last; ++u) others_same = others_same && fresh[u] == at[u];
                if (ix.last_unit_run(start, at.data(), next, 1) == 1) CHECK_FALSE(others_same);
            }
        }
        CHECK(mismatches == 0);
        MESSAGE(std::string(name) << ": " << listed << " slots listed");
    }
}

TEST_CASE("fast path and position path agree; unit order") {
    const Indexer ix = make(VariantId::Antichess, "KQvR");
    CHECK(ix.unit_count() == 3);
    CHECK(ix.symmetry_count() == 8);
    // Least mobile first: the king leads, the queen is the low-order digit.
    CHECK(ix.unit(0) == make_unit(Color::White, UnitType::King));
    CHECK(ix.unit(1) == make_unit(Color::Black, UnitType::Rook));
    CHECK(ix.unit(2) == make_unit(Color::White, UnitType::Queen));
    const auto pos = parse_fen("8/8/8/3r4/8/8/1K6/6Q1 w - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    const Square sq[3] = {9, 35, 6};  // b2, d5, g1
    CHECK(ix.encode(sq) == ix.index(*pos));
    CHECK(make(VariantId::Antichess, "KPvK").symmetry_count() == 2);
    CHECK(make(VariantId::FourFile, "KPvK").symmetry_count() == 1);
}

TEST_CASE("the symmetry group of a table follows the variant and its pawns") {
    CHECK(make(VariantId::Antichess, "KQvR").symmetry_group() == SymmetryGroup::Full);
    CHECK(make(VariantId::AntichessFics, "NvN").symmetry_group() == SymmetryGroup::Full);
    CHECK(make(VariantId::AntichessJoint, "KPvK").symmetry_group() == SymmetryGroup::FileMirror);
    CHECK(make(VariantId::FourFile, "KNvK").symmetry_group() == SymmetryGroup::None);
    CHECK(make(VariantId::FourFile, "KPvK").symmetry_group() == SymmetryGroup::None);
    for (const char* name : {"KQvR", "KPvK", "NvN"}) {
        const Indexer ix = make(VariantId::Antichess, name);
        CHECK(ix.symmetry_count() == std::popcount(symmetry_mask(ix.symmetry_group())));
    }
}

TEST_CASE("encode rejects placements outside the table") {
    const Indexer pawns = make(VariantId::Antichess, "KPvK");
    // Unit order: wP, wK, bK.
    const Square on_rank_8[3] = {60, 0, 20};
    CHECK(pawns.encode(on_rank_8) == kNoIndex);
    const Indexer ff = make(VariantId::FourFile, "KNvK");
    // Unit order: wK, bK, wN.
    const Square touching[3] = {4, 12, 0};    // e1, e2
    const Square off_file[3] = {4, 36, 1};    // knight on b1
    const Square king_off_e[3] = {2, 36, 0};  // king on c1
    const Square fine[3] = {4, 36, 0};
    CHECK(ff.encode(touching) == kNoIndex);
    CHECK(ff.encode(off_file) == kNoIndex);
    CHECK(ff.encode(king_off_e) == kNoIndex);
    CHECK(ff.encode(fine) != kNoIndex);
    CHECK_FALSE(ff.decode(ff.size(), nullptr));
}

TEST_CASE("locate flips colours to the canonical table") {
    const Indexer ix = make(VariantId::Antichess, "KQvR");
    const auto pos = parse_fen("8/8/8/3R4/8/8/1k6/6q1 w - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    const auto slot = ix.locate(*pos);
    REQUIRE(slot.has_value());
    CHECK(slot->color_flipped);
    CHECK(slot->side_to_move == Color::Black);
    CHECK(slot->index == ix.index(pos->color_flipped()));
    const auto back = ix.position(slot->index, slot->side_to_move);
    REQUIRE(back.has_value());
    CHECK(back->side_to_move() == Color::Black);
    const auto other = parse_fen("8/8/8/3R4/8/8/1k6/6b1 w - - 0 1", VariantId::Antichess);
    CHECK_FALSE(ix.locate(*other).has_value());
}

TEST_CASE("indexers are built and used from several threads at once") {
    // The shared root tables are built on first use under a lock; indexers
    // are read-only afterwards.
    const std::vector<std::string> names = {"KRvKB", "QRvQN", "RBvKN", "BBvNN", "KPvKP"};
    std::vector<std::vector<Index>> sizes(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
        threads.emplace_back([&, t] {
            for (const auto& name : names) {
                const auto m = canonical(*parse_material(name));
                const Indexer ix = *Indexer::create(VariantId::Antichess, m);
                Placement p{};
                Index mismatches = 0;
                for (Index i = t; i < ix.size(); i += 997) {
                    mismatches += ix.decode(i, p.data()) && ix.encode(p.data()) == i ? 0 : 1;
                }
                sizes[t].push_back(mismatches == 0 ? ix.size() : 0);
            }
        });
    }
    for (auto& th : threads) th.join();
    for (const auto& s : sizes) {
        CHECK(s == sizes[0]);
        CHECK(std::find(s.begin(), s.end(), Index{0}) == s.end());
    }
}

TEST_CASE("create rejects bad tables") {
    CHECK_FALSE(Indexer::create(VariantId::Antichess, *parse_material("RvQ")).ok());
    CHECK_FALSE(Indexer::create(VariantId::Antichess, *parse_material("KQv")).ok());
    CHECK_FALSE(Indexer::create(VariantId::FourFile, *parse_material("QvK")).ok());
    const auto huge = Indexer::create(VariantId::Antichess, *parse_material("PPPPPPPvK"));
    REQUIRE_FALSE(huge.ok());
    CHECK(huge.status().message().find("too many identical units") != std::string::npos);
}

}  // namespace tbf::index
