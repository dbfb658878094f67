// Tables built by tbgen's driver into a real database: values against the
// Syzygy giveaway samples, against the naive indexer, against their own
// children; determinism across thread counts; the antichess rule sets.
#include <doctest/doctest.h>

#include <omp.h>

#include <map>
#include <set>
#include <memory>

#include "free_slots.hpp"
#include "group_order.hpp"
#include "naive_tables.hpp"
#include "syzygy_check.hpp"
#include "table_build.hpp"
#include "table_check.hpp"
#include "tbforge/gen/generate.hpp"
#include "wdl_table.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

// One database per variant per test run, grown on demand.
class Built {
public:
    static Built& get(VariantId variant) {
        auto& b = all()[variant];
        if (!b) b.reset(new Built(variant));
        return *b;
    }
    // Closes every database; called when the test run ends, while RocksDB's
    // own static objects are still alive.
    static void close_all() { all().clear(); }

    probe::Tablebase& tablebase() { return *tablebase_; }

    void build(const std::vector<index::Material>& tables, int threads = 2) {
        gen::GenerateOptions options;
        options.threads = threads;
        auto result = gen::generate(*tablebase_, variant_, tables, options);
        if (!result.ok()) FAIL(result.status().message());
    }
    void build_upto(int units) { build(index::enumerate_tables(variant_, units)); }
    void build(const std::string& name) { build({index::canonical(*index::parse_table(name, variant_))}); }

private:
    static std::map<VariantId, std::unique_ptr<Built>>& all() {
        static std::map<VariantId, std::unique_ptr<Built>> databases;
        return databases;
    }

    explicit Built(VariantId variant) : variant_(variant) {
        tablebase_ = std::make_unique<probe::Tablebase>(test::open_rw(dir_.sub("db")));
    }

    VariantId variant_;
    test::ScratchDir dir_;
    std::unique_ptr<probe::Tablebase> tablebase_;
};

// Closes the shared databases at the end of the run, before static destruction.
using CloseDatabases = test::RunEndListener<&Built::close_all>;
REGISTER_LISTENER("close-databases", 1, CloseDatabases);

probe::Value probe_or_fail(const probe::Tablebase& tb, VariantId v, const Position& pos) {
    auto value = tb.probe(v, pos);
    REQUIRE_MESSAGE(value.ok(), to_fen(pos) << ": " << value.status().message());
    return *value;
}

template <Ruleset R>
void check_all_tables(VariantId variant, int max_units) {
    auto& built = Built::get(variant);
    built.build_upto(max_units);
    std::uint64_t positions = 0;
    for (const auto& m : index::enumerate_tables(variant, max_units)) {
        const auto result = test::check_table<R>(built.tablebase(), m);
        INFO(m.name() << ": " << result.first_error);
        CHECK(result.errors == 0);
        positions += result.positions;
    }
    MESSAGE(variant_name(variant) << " up to " << max_units << " units: " << positions
                                  << " positions equal the minimax of their children");
}

// Builds the listed tables (and their sub-tables) and compares all their
// sample rows with Syzygy.
void check_tables_with_syzygy(const std::vector<std::string>& tables) {
    auto& built = Built::get(VariantId::Antichess);
    for (const auto& t : tables) built.build(t);
    const auto result = test::compare_with_syzygy(
        "syzygy/giveaway_samples_34.tsv",
        [&](const std::string& t) { return std::find(tables.begin(), tables.end(), t) != tables.end(); },
        [&](const Position& pos) { return probe_or_fail(built.tablebase(), VariantId::Antichess, pos); });
    CHECK(result.wdl_compared == 150 * static_cast<int>(tables.size()));
}

std::string table_digest(const probe::Tablebase& tb, const std::string& name) {
    auto info = tb.database().table_info(name);
    REQUIRE(info.ok());
    return std::to_string(info->values_checksum) + "/" + std::to_string(info->stored_bytes);
}

}  // namespace

TEST_CASE("antichess tables up to 3 units agree with Syzygy") {
    // Sanitizer builds run about ten times slower: 2-unit tables only there.
    const std::size_t units = test::kSanitized ? 2 : 3;
    auto& built = Built::get(VariantId::Antichess);
    built.build_upto(static_cast<int>(units));
    for (const char* file : {"syzygy/giveaway_samples_2.tsv", "syzygy/giveaway_samples_34.tsv"}) {
        if (units == 2 && std::string(file).find("34") != std::string::npos) continue;
        const auto result = test::compare_with_syzygy(
            file, [&](const std::string& t) { return t.size() <= units + 1; },
            [&](const Position& pos) { return probe_or_fail(built.tablebase(), VariantId::Antichess, pos); });
        CHECK(result.wdl_compared > 1000);
    }
}

TEST_CASE("some 4-unit antichess tables agree with Syzygy") {
    if (test::kSanitized) return;
    // Pawnless: their sub-tables have at most 3 units, so they build quickly.
    check_tables_with_syzygy({"KRvKN", "KBvRN"});
}

TEST_CASE("values equal the minimax of their children, up to 3 units") {
    check_all_tables<Antichess>(VariantId::Antichess, test::kSanitized ? 2 : 3);
    check_all_tables<AntichessFics>(VariantId::AntichessFics, 2);
    check_all_tables<AntichessJoint>(VariantId::AntichessJoint, 2);
    check_all_tables<FourFile>(VariantId::FourFile, test::kSanitized ? 3 : 4);
}

TEST_CASE("symmetry-reduced tables equal naive full-board tables") {
    if (test::kSanitized) return;
    auto& built = Built::get(VariantId::Antichess);
    built.build_upto(3);
    test::NaiveTables<Antichess> naive;
    for (const char* name : {"KvK", "QvP", "PvP", "BBvN", "KQvR", "KPvK"}) {
        const auto m = index::canonical(*index::parse_table(name, VariantId::Antichess));
        auto table = built.tablebase().table(VariantId::Antichess, m);
        REQUIRE(table.ok());
        const auto& ix = (*table)->indexer();
        std::uint64_t compared = 0;
        for (Color side : {Color::White, Color::Black}) {
            for (std::uint64_t i = 0; i < ix.size(); ++i) {
                auto pos = ix.position(i, side);
                if (!pos) continue;
                INFO(name << " " << to_fen(*pos));
                REQUIRE(probe_or_fail(built.tablebase(), VariantId::Antichess, *pos) == naive.value(*pos));
                ++compared;
            }
        }
        CHECK(compared > 0);
    }
}

// A build values its conversions in the initial pass and then releases its
// sub-tables (ChildValue's release): released once, never asked a value
// after it, and the values are the stored table's. Tables with captures,
// promotions and en passant, through both indexers.
TEST_CASE("a build asks no sub-table value after releasing its sub-tables") {
    Built& built = Built::get(VariantId::Antichess);
    for (const char* name : {"NPvB", "PvP", "KQvR", "BBvN"}) {
        CAPTURE(name);
        const index::Material m = index::canonical(*index::parse_table(name, VariantId::Antichess));
        built.build({m});
        int releases = 0;
        std::uint64_t asked = 0, asked_after = 0;
        const gen::ChildValue child_value(
            [&](const Position& child) {
                ++asked;
                asked_after += releases > 0;
                if (child.units(child.side_to_move()) == 0) return probe::Value{Wdl::Win, 0};
                if (child.units(~child.side_to_move()) == 0) return probe::Value{Wdl::Loss, 0};
                return probe_or_fail(built.tablebase(), VariantId::Antichess, child);
            },
            [](const index::Material&) { return gen::ResidentSubtable{}; }, [&] { ++releases; });
        auto exact = index::Indexer::create(VariantId::Antichess, m);
        REQUIRE(exact.ok());
        gen::ExactValues values = gen::build_table_values<Antichess>(*exact, child_value, {});
        CHECK(releases == 1);
        CHECK(asked > 0);
        CHECK(asked_after == 0);
        auto stored = built.tablebase().decode_table(VariantId::Antichess, m);
        REQUIRE(stored.ok());
        std::uint64_t mismatches = 0;
        std::vector<std::uint16_t> codes(exact->size());
        for (const Color side : {Color::White, Color::Black}) {
            values.read(side, 0, codes);
            for (std::uint64_t i = 0; i < exact->size(); ++i) mismatches += codes[i] != *(*stored)->code(side, i);
        }
        CHECK(mismatches == 0);
    }
}

// The state bytes hold short distances and small counters, the rest goes
// through the far lists and the escaped words (gen/src/state_word.hpp,
// StateByte). Layouts narrowed to a far level of 1-3 and counters of 1-8
// send most of a table through those paths, including the pulls; every slot
// must keep the value of the default layout, and that of the stored table.
TEST_CASE("narrowed state bytes give the same value for every slot") {
    Built& built = Built::get(VariantId::Antichess);
    const std::vector<std::string> names = {"KQvR", "NPvB", "BBvN", "PvP", "RvPP", "KPvK"};
    std::vector<index::Material> tables;
    for (const auto& name : names) tables.push_back(index::canonical(*index::parse_table(name, VariantId::Antichess)));
    built.build(tables);
    const gen::ChildValue child_value([&](const Position& child) {
        if (child.units(child.side_to_move()) == 0) return probe::Value{Wdl::Win, 0};
        if (child.units(~child.side_to_move()) == 0) return probe::Value{Wdl::Loss, 0};
        return probe_or_fail(built.tablebase(), VariantId::Antichess, child);
    });
    std::uint64_t far_codes = 0, escaped_open = 0, exceptions = 0;
    for (const auto& m : tables) {
        auto exact = index::Indexer::create(VariantId::Antichess, m);
        REQUIRE(exact.ok());
        auto stored = built.tablebase().decode_table(VariantId::Antichess, m);
        REQUIRE(stored.ok());
        auto check = [&](const auto& ix, auto to_exact) {
            using Ix = std::remove_cvref_t<decltype(ix)>;
            const gen::TableValues reference = gen::RetrogradeBuilder<Antichess, Ix>(ix, child_value).build();
            for (const gen::StateByte layout : {gen::StateByte(1, 1), gen::StateByte(2, 2), gen::StateByte(3, 8)}) {
                const gen::TableValues narrow = gen::RetrogradeBuilder<Antichess, Ix>(ix, child_value, {}, layout).build();
                exceptions += narrow.exception_ids.size();
                std::uint64_t mismatches = 0, stored_mismatches = 0;
                for (const Color side : {Color::White, Color::Black}) {
                    for (std::uint64_t i = 0; i < ix.size(); ++i) {
                        const std::uint16_t code = narrow.code(side, i);
                        mismatches += code != reference.code(side, i);
                        far_codes += probe::decode_value(code).dtc >= layout.far_level();
                        escaped_open += narrow.bytes[to_index(side)][i] == gen::StateByte::kEscaped && code == 0;
                        const std::uint64_t e = to_exact(i);
                        if (e != index::kNoIndex) stored_mismatches += code != *(*stored)->code(side, e);
                    }
                }
                const std::string table_name = m.name();
                CAPTURE(table_name);
                CAPTURE(layout.far_level());
                CHECK(mismatches == 0);
                CHECK(stored_mismatches == 0);
            }
        };
        if (auto work = gen::work_index_for(*exact)) {
            // Work slots reach the stored (exact) slot of their position.
            check(*work, [&](std::uint64_t i) {
                Square squares[gen::kMaxTableUnits];
                Square placed[gen::kMaxTableUnits];
                if (!work->decode(i, squares)) return index::kNoIndex;
                std::array<bool, gen::kMaxTableUnits> taken{};
                for (int k = 0; k < exact->unit_count(); ++k) {
                    for (int u = 0; u < work->unit_count(); ++u) {
                        if (!taken[u] && work->unit(u) == exact->unit(k)) {
                            taken[u] = true;
                            placed[k] = squares[u];
                            break;
                        }
                    }
                }
                return exact->encode(placed);
            });
        } else {
            check(*exact, [](std::uint64_t i) { return i; });
        }
    }
    // The narrowed paths were taken: far distances, open words kept whole to
    // the end (draws), and exceptions beside the bytes.
    CHECK(far_codes > 1000);
    CHECK(escaped_open > 100);
    CHECK(exceptions > 1000);
}

// Level passes push from the decided positions or pull into the open ones,
// slot by slot or, on the work index, a block of 64 slots (the last unit on
// every square) at a time (RetrogradeBuilder::pull_block). Forced onto every
// level, each kind must give every slot the value of the chosen mix: pawns
// of both sides (double pushes beside an enemy pawn), sliders whose path the
// last unit blocks, roots that land on the a1-h8 diagonal, a last unit of a
// pair (no block pulls), and narrowed state bytes (escaped children).
TEST_CASE("pushed, slot-pulled and block-pulled level passes give the same value for every slot") {
    Built& built = Built::get(VariantId::Antichess);
    std::vector<std::string> names = {"KQvR", "NPvP", "PvP", "RvPP"};
    if (!test::kSanitized) names.insert(names.end(), {"KPvP", "PPvP", "BvNP", "QvB", "KPvK"});
    std::vector<index::Material> tables;
    for (const auto& name : names) tables.push_back(index::canonical(*index::parse_table(name, VariantId::Antichess)));
    built.build(tables);
    const gen::ChildValue child_value([&](const Position& child) {
        if (child.units(child.side_to_move()) == 0) return probe::Value{Wdl::Win, 0};
        if (child.units(~child.side_to_move()) == 0) return probe::Value{Wdl::Loss, 0};
        return probe_or_fail(built.tablebase(), VariantId::Antichess, child);
    });
    using Builder = gen::RetrogradeBuilder<Antichess, index::WorkIndex>;
    std::uint64_t compared = 0;
    for (const auto& m : tables) {
        auto exact = index::Indexer::create(VariantId::Antichess, m);
        REQUIRE(exact.ok());
        const auto work = gen::work_index_for(*exact);
        REQUIRE(work.has_value());
        const gen::TableValues chosen = Builder(*work, child_value).build();
        for (const gen::StateByte layout : {gen::StateByte(), gen::StateByte(3, 4)}) {
            for (const Builder::Passes passes :
                 {Builder::Passes::Push, Builder::Passes::PullSlots, Builder::Passes::PullBlocks}) {
                const gen::TableValues forced = Builder(*work, child_value, {}, layout, passes).build();
                std::uint64_t mismatches = 0;
                for (const Color side : {Color::White, Color::Black}) {
                    for (std::uint64_t i = 0; i < work->size(); ++i) {
                        mismatches += forced.code(side, i) != chosen.code(side, i);
                    }
                }
                compared += 2 * work->size();
                const std::string table_name = m.name();
                CAPTURE(table_name);
                CAPTURE(static_cast<int>(passes));
                CAPTURE(layout.max_count());
                CHECK(mismatches == 0);
            }
        }
    }
    MESSAGE(compared << " slots compared across pass kinds");
}

TEST_CASE("a sub-table kept by its WDL gives the WDL of every stored code") {
    Built& built = Built::get(VariantId::Antichess);
    // Draws, wins and losses at many distances, both sides, and a table with
    // pawns (invalid slots stored as 0).
    std::map<Wdl, std::uint64_t> seen;
    // Four units: a pair (RRvKN, KNvBB) and a table with a pawn (KNvKP),
    // whose map leaves the pawn's last ranks unplaced.
    std::vector<std::string> names = {"KQvR", "NPvB", "BBvN", "RRvKN", "KNvKP"};
    if (!test::kSanitized) names.push_back("KNvBB");
    for (const std::string& name : names) {
        built.build(name);
        const auto m = index::canonical(*index::parse_table(name, VariantId::Antichess));
        auto decoded = built.tablebase().decode_table(VariantId::Antichess, m);
        REQUIRE(decoded.ok());
        auto wdl = gen::WdlTable::from(**decoded);
        REQUIRE(wdl.ok());
        // Three or four units: a placement map per side besides the slots'
        // bits.
        const int units = (*decoded)->indexer().unit_count();
        const bool pawns = name.find('P') != std::string::npos;
        const bool mapped = units == 3 || units == 4;
        CHECK(gen::WdlTable::maps_units(units) == mapped);
        CHECK(wdl->bytes() == gen::WdlTable::bytes_for(2 * (*decoded)->indexer().size()) +
                                  2 * gen::WdlTable::map_bytes(units));
        CHECK((gen::WdlTable::map_bytes(units) > 0) == mapped);
        // Not asked for: no map.
        auto unmapped = gen::WdlTable::from(**decoded, nullptr, gen::WdlTable::kBothSides, false);
        REQUIRE(unmapped.ok());
        CHECK_FALSE(unmapped->maps_placements(Color::White));
        CHECK(unmapped->bytes() == gen::WdlTable::bytes_for(2 * (*decoded)->indexer().size()));
        std::uint64_t mismatches = 0;
        for (const Color side : {Color::White, Color::Black}) {
            for (std::uint64_t i = 0; i < (*decoded)->indexer().size(); ++i) {
                const probe::Value full = probe::decode_value(*(*decoded)->code(side, i));
                const probe::Value kept = wdl->value(side, i);
                mismatches += kept.wdl != full.wdl || kept.dtc != 0;
                ++seen[full.wdl];
            }
        }
        CAPTURE(name);
        CHECK(mismatches == 0);
        // Every placement, by the map: the slot's value, or none where
        // encode() finds no slot (pawns on the last ranks).
        std::uint64_t placed_mismatches = 0, unplaced = 0;
        const index::Indexer& ix = (*decoded)->indexer();
        for (const Color side : {Color::White, Color::Black}) {
            CHECK(wdl->maps_placements(side) == mapped);
            if (!mapped) continue;
            for (std::uint32_t key = 0; key < std::uint32_t{1} << (6 * units); ++key) {
                Square placed[4];
                Bitboard used = 0;
                for (int u = 0; u < units; ++u) {
                    placed[u] = static_cast<Square>(key >> (6 * (units - 1 - u)) & 63);
                    used |= bit(placed[u]);
                }
                if (popcount(used) != units) continue;
                const index::Index slot = ix.encode(placed);
                probe::Value by_map;
                const bool found = wdl->mapped_value(side, placed, by_map);
                if (slot == index::kNoIndex) {
                    ++unplaced;
                    placed_mismatches += found;
                    continue;
                }
                placed_mismatches += !found || by_map.wdl != probe::decode_value(*(*decoded)->code(side, slot)).wdl;
            }
        }
        CHECK(placed_mismatches == 0);
        CHECK((unplaced > 0) == (mapped && pawns));
        // One side kept: the same values in half the bytes; the other side
        // reads as an error, not as a value.
        for (const Color kept : {Color::White, Color::Black}) {
            auto half = gen::WdlTable::from(**decoded, nullptr, gen::WdlTable::side_bit(kept));
            REQUIRE(half.ok());
            const std::uint64_t n = (*decoded)->indexer().size();
            CHECK(half->sides() == gen::WdlTable::side_bit(kept));
            CHECK(half->bytes() == gen::WdlTable::bytes_for(n) + gen::WdlTable::map_bytes(units));
            std::uint64_t half_mismatches = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                half_mismatches += half->value(kept, i).wdl != wdl->value(kept, i).wdl;
            }
            CHECK(half_mismatches == 0);
            CHECK(half->maps_placements(kept) == mapped);
            CHECK_FALSE(half->maps_placements(~kept));
            CHECK(half->error().empty());
            CHECK(half->value(~kept, 0).wdl == Wdl::Draw);
            CHECK_FALSE(half->error().empty());
        }
    }
    CHECK(seen.size() == 3);
}

TEST_CASE("a wdl-dtc/2 sub-table valued slot by slot when read gives the WDL of the whole resolution") {
    Built& built = Built::get(VariantId::Antichess);
    // The same tables stored as wdl-dtc/2 in a database of their own.
    test::ScratchDir dir;
    probe::Tablebase compact(test::open_rw(dir.sub("db")));
    gen::GenerateOptions options;
    options.threads = 2;
    options.value_encoding = std::string(probe::kCompactValueEncoding);
    const std::vector<const char*> names = {"KQvR", "NPvB", "BBvN", "PvP", "KPvK"};
    std::vector<index::Material> materials;
    for (const char* name : names) materials.push_back(index::canonical(*index::parse_table(name, VariantId::Antichess)));
    auto generated = gen::generate(compact, VariantId::Antichess, materials, options);
    REQUIRE_MESSAGE(generated.ok(), generated.status().to_string());
    std::map<Wdl, std::uint64_t> seen;
    std::uint64_t resolved_outside = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
        CAPTURE(names[k]);
        built.build(names[k]);
        auto codes = built.tablebase().decode_table(VariantId::Antichess, materials[k]);  // wdl-dtc/1
        auto decoded = compact.decode_table(VariantId::Antichess, materials[k]);
        auto opened = compact.table(VariantId::Antichess, materials[k]);
        REQUIRE(codes.ok());
        REQUIRE(decoded.ok());
        REQUIRE(opened.ok());
        REQUIRE((*opened)->compact());
        auto lazy = gen::WdlTable::from(**decoded, *opened);
        REQUIRE(lazy.ok());
        const std::uint64_t n = (*decoded)->indexer().size();
        CHECK(lazy->bytes() == gen::WdlTable::bytes_for(2 * n, true));
        // Every slot read twice from two threads at once, in opposite
        // orders, so that first reads race and later ones hit the kept bits.
        const auto slots = static_cast<std::int64_t>(2 * n);
        std::uint64_t mismatches = 0;
#pragma omp parallel for num_threads(2) schedule(static, 1) reduction(+ : mismatches)
        for (std::int64_t pass = 0; pass < 2; ++pass) {
            for (std::int64_t j = 0; j < slots; ++j) {
                const std::uint64_t slot = static_cast<std::uint64_t>(pass == 0 ? j : slots - 1 - j);
                const Color side = slot < n ? Color::White : Color::Black;
                const std::uint64_t i = slot < n ? slot : slot - n;
                const probe::Value kept = lazy->value(side, i);
                mismatches += kept.wdl != probe::decode_value(*(*codes)->code(side, i)).wdl || kept.dtc != 0;
            }
        }
        CHECK(lazy->error().empty());
        CHECK(mismatches == 0);
        // ...and the same WDL as the probe's whole resolution of the table.
        for (const Color side : {Color::White, Color::Black}) {
            for (std::uint64_t i = 0; i < n; ++i) {
                auto whole = (*opened)->wdl(side, i);
                REQUIRE(whole.ok());
                const Wdl stored = probe::decode_value(*(*decoded)->code(side, i)).wdl;
                resolved_outside += stored != *whole;  // a slot the stored code does not give
                if (lazy->value(side, i).wdl != *whole) ++mismatches;
                ++seen[*whole];
            }
        }
        CHECK(mismatches == 0);
    }
    CHECK(seen.size() == 3);
    // The stored codes alone would not do: the reads valued some slots.
    CHECK(resolved_outside > 0);
}

TEST_CASE("an order keeps a one-ply search's children near when the side off the DTC side comes last") {
    const Unit wk = make_unit(Color::White, UnitType::King), wr = make_unit(Color::White, UnitType::Rook);
    const Unit wq = make_unit(Color::White, UnitType::Queen), wb = make_unit(Color::White, UnitType::Bishop);
    const Unit wp = make_unit(Color::White, UnitType::Pawn), bp = make_unit(Color::Black, UnitType::Pawn);
    const Unit bk = make_unit(Color::Black, UnitType::King), bn = make_unit(Color::Black, UnitType::Knight);
    const std::vector<Unit> krkn_size = {wk, bn, wr, bk};  // KRvKN's order chosen for size alone
    const std::vector<Unit> black_last = {wk, wr, bn, bk};
    CHECK_FALSE(gen::keeps_children_near(krkn_size, Color::White));
    CHECK_FALSE(gen::keeps_children_near(krkn_size, Color::Black));
    CHECK(gen::keeps_children_near(black_last, Color::White));  // Black searched, its units last
    CHECK_FALSE(gen::keeps_children_near(black_last, Color::Black));
    // Pawns count as any unit (KPvNN: Black stored, White's pawn and king last).
    CHECK(gen::keeps_children_near({bn, wk, wp}, Color::Black));
    CHECK(gen::keeps_children_near({bn, wp, wk}, Color::Black));
    CHECK_FALSE(gen::keeps_children_near({wp, bn, wk}, Color::Black));
    CHECK_FALSE(gen::keeps_children_near({bp, wp, wk, bk}, Color::White));
    // One side's units only: any order.
    CHECK(gen::keeps_children_near({wq, wb}, Color::White));
    CHECK(gen::keeps_children_near({wq, wb}, Color::Black));
}

// The DTC side's sample of wdl-dtc/2 (gen/src/free_slots.hpp) read from
// values in RAM: a sampled block's part of a side starts from the code of
// the last free slot before it, read with the block when it is near and
// alone when it lies further back. Either way the sample equals the one a
// full survey in slot order gathers, and so does the side chosen. NPvN as
// wdl-dtc/9 samples both knights' colourings, whose free slots differ.
TEST_CASE("the DTC side's sample reads the last free slot before a block however far back it lies") {
    Built& built = Built::get(VariantId::Antichess);
    for (const auto& job : {std::pair{"KRvK", ""}, std::pair{"NPvB", ""}, std::pair{"BBvN", ""},
                            std::pair{"NPvN", "wdl-dtc/9"}}) {
        // Named copies: doctest's CAPTURE cannot take a structured binding under clang 14.
        const char* const name = job.first;
        const char* const encoding = job.second;
        CAPTURE(name);
        built.build(name);
        const index::Material material = index::canonical(*index::parse_table(name, VariantId::Antichess));
        auto table = built.tablebase().decode_table(VariantId::Antichess, material);  // wdl-dtc/1 codes
        REQUIRE(table.ok());
        const index::Indexer& ix = (*table)->indexer();
        const std::uint64_t n = ix.size();
        const auto code = [&](Color side, std::uint64_t i) { return *(*table)->code(side, i); };
        // 1024 slots: 16 evenly spaced blocks; 16 slots: a wide sample, one
        // block in kWideSampleShare at places a hash picks.
        for (const std::uint64_t kSlotsPerBlock : {std::uint64_t{1024}, std::uint64_t{16}}) {
        CAPTURE(kSlotsPerBlock);
        const gen::StoredSides sides = *encoding ? gen::stored_sides(encoding, material) : gen::StoredSides{};
        const auto colourings = {probe::KnightColouring::PawnFrame, probe::KnightColouring::MirrorKept};
        CHECK(sides.colourings == (*encoding ? 2 : 1));
        gen::FreeSlots<Antichess> survey(ix, kSlotsPerBlock, sides);
        for (const Color side : {Color::White, Color::Black}) {
            std::vector<std::uint16_t> codes(n);
            for (std::uint64_t i = 0; i < n; ++i) codes[i] = code(side, i);
            survey.add(side, 0, codes);
        }
        const storage::TableWriteOptions options = storage::compact_write_options();
        const Color surveyed_side = *survey.choose_dtc_side(options);
        if (sides.colourings == 2) {
            CHECK(survey.sampled(Color::White, probe::KnightColouring::MirrorKept) !=
                  survey.sampled(Color::White, probe::KnightColouring::PawnFrame));
        }
        // Reads by `near`: everything near makes one read per block and
        // side; each slot read alone (far) adds one.
        std::map<std::uint64_t, std::uint64_t> reads;
        const std::uint64_t all_near = std::uint64_t{1} << 40;
        for (const std::uint64_t near : {all_near, std::uint64_t{0}, gen::FreeSlots<Antichess>::kNearSlots}) {
            CAPTURE(near);
            gen::FreeSlots<Antichess> sampled(ix, kSlotsPerBlock, sides, near);
            std::uint64_t slots_read = 0;
            sampled.sample([&](Color side, std::uint64_t first, std::span<std::uint16_t> out) {
                ++reads[near];
                slots_read += out.size();
                for (std::size_t k = 0; k < out.size(); ++k) out[k] = code(side, first + k);
            });
            for (const Color candidate : {Color::White, Color::Black}) {
                for (const auto k : colourings) CHECK(sampled.sampled(candidate, k) == survey.sampled(candidate, k));
            }
            CHECK_FALSE(sampled.sampled(Color::White).empty());
            auto side = sampled.choose_dtc_side(options);
            // Without a survey a tie of the sample is left open.
            if (side) {
                CHECK(*side == surveyed_side);
                CHECK(sampled.colouring() == survey.colouring());
            }
            CHECK(slots_read <= 2 * n);
        }
        // Reading alone is the path taken: every block but the first of
        // each side has a free slot before it.
        CHECK(reads[0] > reads[all_near]);
        MESSAGE(std::string(name) << ": " << reads[gen::FreeSlots<Antichess>::kNearSlots] - reads[all_near]
                                  << " slots read alone at the default distance");
        }
    }
}

// Large tables' samples (gen/src/free_slots.hpp): evenly spaced without a
// seed, as every table of up to 4 units is sampled; with one, a block in
// each equal stretch at a place of its own, the same in every build.
TEST_CASE("a wide sample takes one block in each stretch of a large table") {
    // A table of up to 4 units (at most about 800 blocks) keeps its 16.
    CHECK(gen::wide_sample_count(800, 16) == 0);
    CHECK(gen::wide_sample_count(1024, 16) == 0);
    CHECK(gen::wide_sample_count(1088, 16) == 17);
    CHECK(gen::wide_sample_count(13961, 64) == 218);  // RBNvKN's blocks of 16384 slots
    CHECK(gen::wide_sample_count(41883, 16) == 256);  // RBPvKN's
    CHECK(gen::wide_sample_count(8192, 256) == 0);
    const std::vector<std::uint64_t> even = gen::sample_block_numbers(41883, 16, 0);
    REQUIRE(even.size() == 16);
    for (std::uint64_t i = 0; i < 16; ++i) CHECK(even[i] == i * 41883 / 16);
    const std::vector<std::uint64_t> wide = gen::sample_block_numbers(41883, 256, 2);
    REQUIRE(wide.size() == 256);
    std::set<std::uint64_t> offsets;
    for (std::uint64_t i = 0; i < 256; ++i) {
        CHECK(wide[i] >= i * 41883 / 256);
        CHECK(wide[i] < (i + 1) * 41883 / 256);
        offsets.insert(wide[i] - i * 41883 / 256);
    }
    // Not in step with anything: the places within the stretches vary.
    CHECK(offsets.size() > 128);
    CHECK(gen::sample_block_numbers(41883, 256, 2) == wide);
    CHECK(gen::sample_block_numbers(41883, 256, 1) != wide);
    // A table of fewer blocks than asked: every block once.
    const std::vector<std::uint64_t> all = gen::sample_block_numbers(5, 16, 1);
    CHECK(all == std::vector<std::uint64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("one and two threads store identical bytes and statistics") {
    const int before = omp_get_max_threads();
    // wdl-dtc/3 to /9 too: their group order and DTC side come from
    // samples compressed on every thread (wdl-dtc/4 to /9 on tables storing
    // one side to move; wdl-dtc/7's PPvN deriving pawn structures, wdl-dtc/8's
    // NPvN knights' squares, wdl-dtc/9's with the colouring chosen too).
    const std::string plain = test::kSanitized ? "KPvP" : "KRvKN";
    const std::string same_units = test::kSanitized ? "NvN" : "KNvKN";
    for (const auto& job : {std::pair{probe::kValueEncoding, plain}, std::pair{probe::kOrderedCompactValueEncoding, plain},
                            std::pair{probe::kMirroredCompactValueEncoding, same_units},
                            std::pair{probe::kOneSideCompactValueEncoding, plain},
                            std::pair{probe::kSearchedWinsCompactValueEncoding, same_units},
                            std::pair{probe::kDerivedStructuresCompactValueEncoding, std::string("PPvN")},
                            std::pair{probe::kDerivedKnightsCompactValueEncoding, std::string("NPvN")},
                            std::pair{probe::kChosenColouringCompactValueEncoding, std::string("NPvN")}}) {
        const std::string_view encoding = job.first;
        const std::string& table = job.second;
        CAPTURE(encoding);
        test::ScratchDir dir;
        std::vector<std::string> digests;
        for (int threads : {1, 2}) {
            probe::Tablebase tb(test::open_rw(dir.sub("db" + std::to_string(threads))));
            gen::GenerateOptions gen_options;
            gen_options.threads = threads;
            gen_options.value_encoding = std::string(encoding);
            const auto m = index::canonical(*index::parse_table(table, VariantId::Antichess));
            auto result = gen::generate(tb, VariantId::Antichess, {m}, gen_options);
            REQUIRE(result.ok());
            // The statistics too: with two threads they are counted over
            // split ranges and merged (the longest win's first slot among them).
            std::string all;
            for (const auto& t : *result) {
                auto info = tb.database().table_info(t.name);
                REQUIRE(info.ok());
                all += t.name + "=" + table_digest(tb, t.name) + " " + info->statistics.json;
                for (const storage::Counter& counter : info->statistics.counters) {
                    all += " " + counter.name + "=" + std::to_string(counter.value);
                }
                all += ";";
            }
            CHECK(all.find("longest_win") != std::string::npos);
            digests.push_back(all);
        }
        CHECK(digests[0] == digests[1]);
    }
    omp_set_num_threads(before);
}

TEST_CASE("compact sub-tables handed over in RAM value a parent as when read back from storage") {
    // Built in one run, a compact sub-table reaches its parents as the WDL
    // of its values in RAM (ResidentTables::offer); built in an earlier
    // run, it is read back from storage and its slots valued one ply at a
    // time. KPvK's promotions land in 3-unit tables off their DTC side,
    // its captures in 2-unit ones; PvP's promotions in 2-unit ones. As
    // wdl-dtc/7, NPvP's captures land in NvP and its promotions in tables
    // such as NQvP, which derive pawn structures: read back, their derived
    // slots are searched. As wdl-dtc/8 NvP derives knights' squares too, and
    // PvP (the same units) both sides' pawn structures.
    const std::string plain = test::kSanitized ? "PvP" : "KPvK";
    for (const auto& job : {std::pair{probe::kOneSideCompactValueEncoding, plain},
                            std::pair{probe::kSearchedWinsCompactValueEncoding, plain},
                            std::pair{probe::kDerivedStructuresCompactValueEncoding, std::string("NPvP")},
                            std::pair{probe::kDerivedKnightsCompactValueEncoding, std::string("NPvP")},
                            std::pair{probe::kChosenColouringCompactValueEncoding, std::string("NPvP")}}) {
        const std::string_view encoding = job.first;
        const std::string& table = job.second;
        CAPTURE(encoding);
        const auto m = index::canonical(*index::parse_table(table, VariantId::Antichess));
        test::ScratchDir dir;
        gen::GenerateOptions options;
        options.value_encoding = std::string(encoding);
        probe::Tablebase one_run(test::open_rw(dir.sub("one")));
        REQUIRE(gen::generate(one_run, VariantId::Antichess, {m}, options).ok());
        probe::Tablebase two_runs(test::open_rw(dir.sub("two")));
        REQUIRE(gen::generate(two_runs, VariantId::Antichess, index::sub_tables(m, VariantId::Antichess), options).ok());
        auto parent = gen::generate(two_runs, VariantId::Antichess, {m}, options);
        REQUIRE(parent.ok());
        // The second run built the parent alone, over stored sub-tables.
        std::size_t built = 0;
        for (const auto& t : *parent) built += t.built ? 1 : 0;
        REQUIRE(built == 1);
        const std::string name = probe::table_name(VariantId::Antichess, m);
        CHECK(table_digest(one_run, name) == table_digest(two_runs, name));
        auto info = one_run.database().table_info(name);
        REQUIRE(info.ok());
        CHECK(info->spec.value_encoding == encoding);
        const bool knights = encoding == probe::kDerivedKnightsCompactValueEncoding ||
                             encoding == probe::kChosenColouringCompactValueEncoding;
        if (encoding == probe::kDerivedStructuresCompactValueEncoding || knights) {
            std::size_t deriving = 0, deriving_knights = 0;
            for (const index::Material& sub : index::sub_tables(m, VariantId::Antichess)) {
                auto t = two_runs.table(VariantId::Antichess, sub);
                REQUIRE(t.ok());
                if (!(*t)->derives_slots()) continue;
                ++deriving;
                const Color off = ~(*t)->dtc_side();
                deriving_knights += sub.count(off, UnitType::Knight) > 0 || sub == sub.flipped() ? 1 : 0;
            }
            CHECK(deriving > 0);
            CHECK((deriving_knights > 0) == knights);
        }
    }
}

TEST_CASE("an unknown value encoding is refused before anything is built") {
    test::ScratchDir dir;
    probe::Tablebase tb(test::open_rw(dir.sub("db")));
    gen::GenerateOptions options;
    options.value_encoding = "wdl-dtc/10";
    const auto m = index::canonical(*index::parse_table("KvK", VariantId::Antichess));
    auto result = gen::generate(tb, VariantId::Antichess, {m}, options);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::InvalidArgument);
    CHECK(result.status().message().find("wdl-dtc/10") != std::string::npos);
    auto listed = tb.database().list_tables();
    REQUIRE(listed.ok());
    CHECK(listed->empty());
}

TEST_CASE("the antichess rule sets differ only through stalemates") {
    // Every 2-unit table and a few 3-unit ones, with and without pawns.
    std::vector<index::Material> tables = index::enumerate_tables(VariantId::Antichess, 2);
    if (!test::kSanitized) {
        for (const char* name : {"KQvR", "BNvK", "NNvB", "PPvP", "KPvP", "PvBN"}) {
            tables.push_back(index::canonical(*index::parse_table(name, VariantId::Antichess)));
        }
    }
    for (VariantId v : {VariantId::Antichess, VariantId::AntichessFics, VariantId::AntichessJoint}) {
        Built::get(v).build(tables);
    }
    auto& international = Built::get(VariantId::Antichess).tablebase();
    auto& fics = Built::get(VariantId::AntichessFics).tablebase();
    auto& joint = Built::get(VariantId::AntichessJoint).tablebase();
    // Without pawns no unit can be blocked, so no stalemate exists and the
    // tables are identical.
    int pawnless = 0, with_pawns_differing = 0;
    for (const auto& m : index::dependency_order(VariantId::Antichess, tables)) {
        auto digest = [&](const probe::Tablebase& tb, VariantId v) {
            return table_digest(tb, probe::table_name(v, m));
        };
        const auto a = digest(international, VariantId::Antichess);
        if (!m.has_pawns()) {
            CHECK(a == digest(fics, VariantId::AntichessFics));
            CHECK(a == digest(joint, VariantId::AntichessJoint));
            ++pawnless;
        } else {
            with_pawns_differing += a != digest(fics, VariantId::AntichessFics);
        }
    }
    CHECK(pawnless > 0);
    CHECK(with_pawns_differing > 0);
    // A stalemate with equal unit counts: the side to move wins, draws, draws.
    auto equal = *parse_fen("8/8/8/8/8/p7/P7/8 w - - 0 1", VariantId::Antichess);
    CHECK(probe_or_fail(international, VariantId::Antichess, equal) == probe::Value{Wdl::Win, 0});
    CHECK(probe_or_fail(fics, VariantId::AntichessFics, equal) == probe::Value{Wdl::Draw, 0});
    CHECK(probe_or_fail(joint, VariantId::AntichessJoint, equal) == probe::Value{Wdl::Draw, 0});
    if (!test::kSanitized) {
        // The stalemated side has more units: win, loss, draw.
        auto more = *parse_fen("8/8/8/8/p7/P7/P7/8 w - - 0 1", VariantId::Antichess);
        CHECK(probe_or_fail(international, VariantId::Antichess, more) == probe::Value{Wdl::Win, 0});
        CHECK(probe_or_fail(fics, VariantId::AntichessFics, more) == probe::Value{Wdl::Loss, 0});
        CHECK(probe_or_fail(joint, VariantId::AntichessJoint, more) == probe::Value{Wdl::Draw, 0});
        // One move before: Black pushes into the stalemate, or not.
        auto before = *parse_fen("8/8/8/p7/8/P7/P7/8 b - - 0 1", VariantId::Antichess);
        CHECK(probe_or_fail(international, VariantId::Antichess, before).wdl == Wdl::Loss);
        CHECK(probe_or_fail(fics, VariantId::AntichessFics, before) == probe::Value{Wdl::Win, 1});
    }
}

TEST_SUITE("slow") {
    TEST_CASE("all antichess tables up to 4 units agree with Syzygy and with their children") {
        auto& built = Built::get(VariantId::Antichess);
        built.build_upto(4);
        for (const char* file : {"syzygy/giveaway_samples_2.tsv", "syzygy/giveaway_samples_34.tsv"}) {
            test::compare_with_syzygy(
                file, [](const std::string&) { return true; },
                [&](const Position& pos) { return probe_or_fail(built.tablebase(), VariantId::Antichess, pos); });
        }
        check_all_tables<Antichess>(VariantId::Antichess, 4);
    }

    TEST_CASE("4-unit tables with pawns agree with Syzygy") {
        check_tables_with_syzygy({"KPvKP", "BNvPP", "KRvKP"});
    }

    TEST_CASE("RBNvKN and RBPvKN agree with Syzygy") {
        auto& built = Built::get(VariantId::Antichess);
        built.build("RBNvKN");
        built.build("RBPvKN");
        test::compare_with_syzygy(
            "syzygy/giveaway_samples_5.tsv", [](const std::string&) { return true; },
            [&](const Position& pos) { return probe_or_fail(built.tablebase(), VariantId::Antichess, pos); });
    }
}
