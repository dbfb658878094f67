// Value encodings wdl-dtc/2 to /7 against wdl-dtc/1 (docs/values.md):
// the generator builds the same tables in two encodings; every slot of every
// table reads back the same value (Table::read_codes and Table::value; a
// wdl-dtc/3 slot compared with the wdl-dtc/1 slot of the same placement), and
// probe(), probe_wdl(), probe_moves() and the C API agree on sampled
// positions. A stored WDL that disagrees with the moves is Corruption. The
// wdl-dtc/7 tables of up to 3 units are held to the size of Syzygy's files.

#include <algorithm>
#include <bit>
#include <functional>
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "compact_checks.hpp"
#include "probe_fixture.hpp"
#include "resolved_cache.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"

using namespace tbf;

namespace {

using tbf::test::contains;

const std::string kV1(probe::kValueEncoding);
const std::string kV2(probe::kCompactValueEncoding);
const std::string kV3(probe::kOrderedCompactValueEncoding);
const std::string kV4(probe::kMirroredCompactValueEncoding);
const std::string kV5(probe::kOneSideCompactValueEncoding);
const std::string kV6(probe::kSearchedWinsCompactValueEncoding);
const std::string kV7(probe::kDerivedStructuresCompactValueEncoding);
const std::string kV8(probe::kDerivedKnightsCompactValueEncoding);
const std::string kV9(probe::kChosenColouringCompactValueEncoding);

// The same tables built as wdl-dtc/1 and in a compact encoding, opened read-only.
struct Pair {
    Pair(VariantId v, const std::vector<index::Material>& tables, const std::string& compact = kV2)
        : variant(v), encoding(compact) {
        test::build_tables(dir.sub("v1"), variant, tables, gen::GenerateOptions{}.compression, kV1);
        test::build_tables(dir.sub("v2"), variant, tables, gen::GenerateOptions{}.compression, compact);
        auto a = probe::Tablebase::open(dir.sub("v1"));
        auto b = probe::Tablebase::open(dir.sub("v2"));
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        v1 = std::make_unique<probe::Tablebase>(std::move(*a));
        v2 = std::make_unique<probe::Tablebase>(std::move(*b));
    }

    VariantId variant;
    std::string encoding;
    test::ScratchDir dir;
    std::unique_ptr<probe::Tablebase> v1, v2;
};

std::uint64_t counter(const storage::TableInfo& info, const std::string& name) {
    for (const auto& c : info.statistics.counters)
        if (c.name == name) return c.value;
    FAIL("no counter " << name);
    return 0;
}

// Every slot of every table of both databases: the same values, the same
// statistics; and sampled positions through every probe path.
// Returns how many tables are stored in another group order than the rule's.
std::size_t check_every_slot(const Pair& p, const std::vector<index::Material>& tables, std::size_t samples) {
    std::size_t reordered_tables = 0;
    std::uint64_t slots = 0, visited = 0, stored_v1 = 0, stored_v2 = 0, differing_codes = 0;
    tbf_db* c1 = nullptr;
    tbf_db* c2 = nullptr;
    REQUIRE(tbf_open(p.dir.sub("v1").c_str(), 0, &c1) == TBF_OK);
    REQUIRE(tbf_open(p.dir.sub("v2").c_str(), 0, &c2) == TBF_OK);
    const std::string variant(variant_name(p.variant));
    for (const index::Material& material : tables) {
        const std::string name = probe::table_name(p.variant, material);
        CAPTURE(name);
        auto a = p.v1->table(p.variant, material);
        auto b = p.v2->table(p.variant, material);
        REQUIRE(a.ok());
        REQUIRE_MESSAGE(b.ok(), b.status().to_string());
        const probe::Table& t1 = **a;
        const probe::Table& t2 = **b;
        CHECK_FALSE(t1.compact());
        REQUIRE(t2.compact());
        CHECK(t1.info().spec.value_encoding == kV1);
        CHECK(t2.info().spec.value_encoding == p.encoding);
        CHECK(counter(t2.info(), "dtc_side") == static_cast<std::uint64_t>(to_index(t2.dtc_side())));
        const std::uint64_t n = t1.indexer().size();
        REQUIRE(t2.indexer().size() == n);
        std::vector<std::uint16_t> x1(2 * n), x(2 * n), y(2 * n);
        REQUIRE(t1.read_codes(0, 2 * n, x1.data()).ok());
        auto read = t2.read_codes(0, 2 * n, y.data());
        REQUIRE_MESSAGE(read.ok(), read.status().to_string());
        // x: the wdl-dtc/1 codes laid out in t2's slots (its group order).
        const bool reordered = t2.indexer().group_order() != t1.indexer().group_order();
        // wdl-dtc/4 stores one side exactly when both sides have the same
        // units, wdl-dtc/5 always.
        const bool derives = p.encoding == kV7 || p.encoding == kV8 || p.encoding == kV9;
        const bool derives_knights = p.encoding == kV8 || p.encoding == kV9;
        CHECK(t2.dtc_side_alone() == (p.encoding == kV5 || p.encoding == kV6 || derives ||
                                      (p.encoding == kV4 && material == material.flipped())));
        CHECK(t2.wins_as_wdl() == ((p.encoding == kV6 || derives) && material == material.flipped()));
        // wdl-dtc/7 derives pawn structures exactly where the side off the
        // DTC side has pawns alone and the units differ; wdl-dtc/8 also
        // where that side has knights and pawns alone in a table with a
        // pawn, and where both sides have the same units, pawns alone.
        const Color off = ~t2.dtc_side();
        const int off_pawns = material.count(off, UnitType::Pawn);
        const int off_knights = material.count(off, UnitType::Knight);
        const bool pawns_alone = off_pawns > 0 && off_pawns == material.count(off);
        const bool knights_and_pawns_alone = material.has_pawns() && off_pawns + off_knights == material.count(off);
        const bool same_units = material == material.flipped();
        CHECK(t2.derives_slots() == (same_units ? derives_knights && pawns_alone
                                                : (p.encoding == kV7 && pawns_alone) ||
                                                      (derives_knights && knights_and_pawns_alone)));
        // wdl-dtc/9 names the knights' colouring exactly where it derives
        // knights' squares off the DTC side.
        const bool names_colouring = std::ranges::any_of(
            t2.info().statistics.counters, [](const storage::Counter& c) { return c.name == "knight_colouring"; });
        CHECK(names_colouring == (p.encoding == kV9 && !same_units && knights_and_pawns_alone && off_knights > 0));
        if (p.encoding == kV3 || p.encoding == kV4 || p.encoding == kV5 || p.encoding == kV6 || derives) {
            CHECK(counter(t2.info(), "index_order") == probe::pack_group_order(t2.indexer().group_order()));
            std::string labels;  // as tbprobe info shows the order
            for (const Unit u : t2.indexer().group_order()) {
                if (!labels.empty()) labels += ' ';
                labels += index::unit_label(u);
            }
            CHECK(probe::index_order_name(t2.info()) == labels);
            // The checksum a wdl-dtc/1 build records, in the rule's order.
            CHECK(counter(t2.info(), "wdl-dtc/1.rule_order_checksum") == t1.info().values_checksum);
        } else {
            CHECK_FALSE(reordered);
        }
        reordered_tables += reordered;
        std::uint64_t unplaced = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            Square squares[index::kMaxUnits];
            t2.indexer().decode(i, squares);
            Position placed;
            for (int u = 0; u < t2.indexer().unit_count(); ++u) placed.put(squares[u], t2.indexer().unit(u));
            const index::Index j = t1.indexer().index(placed);  // regrouped into t1's order
            if (j >= n) {
                ++unplaced;
                continue;
            }
            x[i] = x1[j];
            x[n + i] = x1[n + j];
        }
        REQUIRE(unplaced == 0);
        // The statistics do not depend on the order, except the longest
        // win's example position (the first in slot order).
        if (!reordered) CHECK(t1.info().statistics.json == t2.info().statistics.json);
        // The checksum a resolving reader recomputes: of wdl-dtc/1's codes in
        // t2's slot order.
        const unsigned width = t1.info().spec.value_width;
        std::vector<std::uint8_t> bytes;
        for (const std::uint16_t code : x) {
            bytes.push_back(static_cast<std::uint8_t>(code));
            if (width == 2) bytes.push_back(static_cast<std::uint8_t>(code >> 8));
        }
        Xxh64 own_order;
        own_order.update(bytes);
        CHECK(counter(t2.info(), "wdl-dtc/1.checksum") == own_order.digest());
        if (!reordered) CHECK(own_order.digest() == t1.info().values_checksum);
        std::uint64_t wrong = 0;
        for (std::uint64_t s = 0; s < 2 * n; s += test::kSlotStride) {
            ++visited;
            const Color side = s < n ? Color::White : Color::Black;
            auto stored = t2.code(side, s % n);
            REQUIRE(stored.ok());
            differing_codes += *stored != x[s];
            // Slot by slot: the value and the WDL alone.
            if (s % 7 == 0) {
                auto v = t2.value(side, s % n);
                auto w = t2.wdl(side, s % n);
                REQUIRE(v.ok());
                REQUIRE(w.ok());
                wrong += probe::encode_value(*v) != x[s];
                wrong += *w != probe::decode_value(x[s]).wdl;
            }
        }
        CHECK(wrong == 0);
        // Every slot, as read_codes resolves it.
        CHECK(x == y);
        // A range that starts mid-table, through the C API as tbverify reads it.
        const std::uint64_t first = n / 3, count = std::min<std::uint64_t>(n, 5000);
        std::vector<tbf_value> cy(count);
        REQUIRE(tbf_table_values(c2, name.c_str(), first, count, cy.data()) == TBF_OK);
        std::uint64_t c_wrong = 0;
        for (std::uint64_t k = 0; k < count; ++k) {
            const probe::Value v = probe::decode_value(x[first + k]);
            const int wdl = v.wdl == Wdl::Win ? 1 : v.wdl == Wdl::Loss ? -1 : 0;
            c_wrong += cy[k].wdl != wdl || cy[k].dtc != static_cast<unsigned>(v.dtc);
        }
        CHECK(c_wrong == 0);

        for (const Position& pos : test::sample_positions(p.variant, material.name(), samples)) {
            CAPTURE(to_fen(pos));
            auto v1 = p.v1->probe(p.variant, pos);
            auto v2 = p.v2->probe(p.variant, pos);
            auto w2 = p.v2->probe_wdl(p.variant, pos);
            REQUIRE(v1.ok());
            REQUIRE(v2.ok());
            REQUIRE(w2.ok());
            CHECK(*v1 == *v2);
            CHECK(*w2 == v1->wdl);
            auto m1 = p.v1->probe_moves(p.variant, pos);
            auto m2 = p.v2->probe_moves(p.variant, pos);
            REQUIRE(m1.ok());
            REQUIRE(m2.ok());
            REQUIRE(m1->size() == m2->size());
            for (std::size_t k = 0; k < m1->size(); ++k) {
                CHECK((*m1)[k].uci == (*m2)[k].uci);
                CHECK((*m1)[k].child == (*m2)[k].child);
            }
            const std::string fen = to_fen(pos);
            tbf_value cv1{}, cv2{};
            int cw = 9;
            REQUIRE(tbf_probe_fen(c1, variant.c_str(), fen.c_str(), &cv1) == TBF_OK);
            REQUIRE(tbf_probe_fen(c2, variant.c_str(), fen.c_str(), &cv2) == TBF_OK);
            REQUIRE(tbf_probe_wdl_fen(c2, variant.c_str(), fen.c_str(), &cw) == TBF_OK);
            CHECK(cv1.wdl == cv2.wdl);
            CHECK(cv1.dtc == cv2.dtc);
            CHECK(cw == cv1.wdl);
        }
        slots += 2 * n;
        stored_v1 += t1.info().stored_bytes;
        stored_v2 += t2.info().stored_bytes;
    }
    // The C API describes a wdl-dtc/2 table as tbf_table_values reads it:
    // the checksum and width of its wdl-dtc/1 codes.
    std::size_t count1 = 0, count2 = 0;
    REQUIRE(tbf_table_count(c1, &count1) == TBF_OK);
    REQUIRE(tbf_table_count(c2, &count2) == TBF_OK);
    REQUIRE(count1 == count2);
    for (std::size_t i = 0; i < count1; ++i) {
        tbf_table_info i1{}, i2{};
        REQUIRE(tbf_table_info_at(c1, i, &i1) == TBF_OK);
        REQUIRE(tbf_table_info_at(c2, i, &i2) == TBF_OK);
        CHECK(std::string(i1.name) == std::string(i2.name));
        if (p.encoding == kV2) CHECK(i1.checksum == i2.checksum);
        CHECK(i1.value_width == i2.value_width);
    }
    tbf_close(c1);
    tbf_close(c2);
    // The encoding is not wdl-dtc/1 under another name.
    CHECK(differing_codes > visited / 10);
    CHECK(stored_v2 < stored_v1);
    MESSAGE(slots << " slots compared, " << visited << " of them also read one by one; stored bytes " << stored_v1 << " (wdl-dtc/1), " << stored_v2
                  << " (" << p.encoding << "); " << reordered_tables << " tables in another group order");
    return reordered_tables;
}

// Builds the antichess table `name` in `encoding` into `db_dir` and plants
// one wrong code in it, rewritten through the storage writer so that its
// block checksums are right. `pick(table, codes)` (every slot's stored
// code) names the slot to change and its new code. Returns the slot and
// its position.
std::pair<std::uint64_t, Position> plant_code(
    const std::string& db_dir, const char* name, const std::string& encoding,
    const std::function<std::pair<std::uint64_t, std::uint16_t>(const probe::Table&,
                                                                const std::vector<std::uint16_t>&)>& pick) {
    const VariantId variant = VariantId::Antichess;
    const index::Material material = test::table_material(variant, name);
    test::build_tables(db_dir, variant, {material}, gen::GenerateOptions{}.compression, encoding);
    storage::DatabaseOptions rw;
    rw.mode = storage::OpenMode::ReadWrite;
    auto db = storage::Database::open(db_dir, rw);
    REQUIRE(db.ok());
    probe::Tablebase tb(std::move(*db));
    auto t = tb.decode_table(variant, material);
    REQUIRE(t.ok());
    const probe::Table& table = **t;
    const std::uint64_t n = table.indexer().size();
    std::vector<std::uint16_t> codes(2 * n);
    for (std::uint64_t s = 0; s < 2 * n; ++s) {
        auto c = table.code(s < n ? Color::White : Color::Black, s % n);
        REQUIRE(c.ok());
        codes[s] = *c;
    }
    const auto [slot, code] = pick(table, codes);
    REQUIRE(slot < 2 * n);
    codes[slot] = code;
    auto position = table.indexer().position(slot % n, slot < n ? Color::White : Color::Black);
    REQUIRE(position.has_value());
    storage::TableWriteOptions options = storage::compact_write_options();
    options.replace = true;
    auto writer = tb.database().create_table(table.info().spec, options);
    REQUIRE(writer.ok());
    REQUIRE(table.info().spec.value_width == 1);
    std::vector<std::uint8_t> bytes(codes.begin(), codes.end());
    REQUIRE(writer->append(std::span<const std::uint8_t>(bytes)).ok());
    REQUIRE(writer->commit(table.info().statistics).ok());
    return {slot, *position};
}

// The compact database's table of `material`, which must store its DTC side
// alone: every slot of the other side repeats 0.
const probe::Table& one_side_table(const Pair& p, const index::Material& material) {
    auto t = p.v2->table(p.variant, material);
    REQUIRE(t.ok());
    REQUIRE((*t)->dtc_side_alone());
    CHECK(test::codes_off_dtc_side(**t) == 0);
    return **t;
}

// Whether a side of `m` has pawns and nothing else: wdl-dtc/7 may then
// derive pawn structures of the other side's positions.
bool side_of_pawns_alone(const index::Material& m) {
    for (const Color c : {Color::White, Color::Black}) {
        if (m.count(c) > 0 && m.count(c) == m.count(c, UnitType::Pawn)) return true;
    }
    return false;
}

// Whether `m` has a pawn and a side of at least one knight with nothing but
// knights and pawns: wdl-dtc/8 may then derive slots where /7 does not.
bool side_of_knights_and_pawns(const index::Material& m) {
    if (!m.has_pawns()) return false;
    for (const Color c : {Color::White, Color::Black}) {
        const int knights = m.count(c, UnitType::Knight);
        if (knights > 0 && knights + m.count(c, UnitType::Pawn) == m.count(c)) return true;
    }
    return false;
}

// A probe of `position` is Corruption naming `slot` ("antichess/NvN slot 12").
void check_corrupt(const probe::Tablebase& tb, const Position& position, const std::string& slot) {
    auto v = tb.probe(VariantId::Antichess, position);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code() == StatusCode::Corruption);
    CHECK(contains(v.status().message(), slot));
}

// The first free slot of `side` whose stored code satisfies `wanted`.
std::uint64_t first_free_slot(const probe::Table& table, const std::vector<std::uint16_t>& codes, Color side,
                              const std::function<bool(std::uint16_t)>& wanted) {
    const std::uint64_t n = table.indexer().size();
    for (std::uint64_t i = 0; i < n; ++i) {
        auto pos = table.indexer().position(i, side);
        MoveList moves;
        const std::uint64_t slot = to_index(side) * n + i;
        if (pos && probe::slot_kind<Antichess>(*pos, moves) == probe::SlotKind::Free && wanted(codes[slot])) return slot;
    }
    FAIL("no such free slot");
    return 0;
}

}  // namespace

TEST_CASE("wdl-dtc/2 answers every value of every antichess table up to 3 units as wdl-dtc/1") {
    const auto all = index::enumerate_tables(VariantId::Antichess, 3);
    REQUIRE(all.size() > 100);
    const auto tables = test::sanitized_sample(all);
    const Pair p(VariantId::Antichess, tables);
    check_every_slot(p, tables, test::kSanitized ? 5 : 40);
}

TEST_CASE("wdl-dtc/3 answers every value as wdl-dtc/1, its tables in the group order stored") {
    // Every third table up to 3 units (sanitized: every ninth) and two
    // 4-unit tables whose best order is not the rule's
    // (bench/storage/README.md).
    std::vector<index::Material> tables;
    const auto all = test::sanitized_sample(index::enumerate_tables(VariantId::Antichess, 3));
    for (std::size_t k = 0; k < all.size(); k += 3) tables.push_back(all[k]);
    if (!tbf::test::kSanitized) {
        for (const char* name : {"KNvP", "BNvK"}) tables.push_back(test::table_material(VariantId::Antichess, name));
    }
    const Pair p(VariantId::Antichess, tables, kV3);
    CHECK(check_every_slot(p, tables, test::kSanitized ? 5 : 20) > tables.size() / 4);
    // Four File: the kings lead every order (sanitized: a third of the tables).
    const auto ff = test::sanitized_sample(index::enumerate_tables(VariantId::FourFile, 3));
    const Pair q(VariantId::FourFile, ff, kV3);
    check_every_slot(q, ff, 10);
}

TEST_CASE("wdl-dtc/4 answers every value as wdl-dtc/1, one side stored where both have the same units") {
    // Every 2-unit table (six with the same units on both sides), a third of
    // the 3-unit ones (none has) and BBvBB, under every stalemate rule
    // (sanitized: the 2-unit tables); Four File's KvK with checkmates.
    std::uint32_t largest_group = 0;
    std::set<std::uint32_t> block_sizes;
    for (const VariantId variant : {VariantId::Antichess, VariantId::AntichessFics, VariantId::AntichessJoint}) {
        CAPTURE(variant_name(variant));
        std::vector<index::Material> tables = index::enumerate_tables(variant, 2);
        if (!tbf::test::kSanitized && variant == VariantId::Antichess) {
            const auto three = index::enumerate_tables(variant, 3);
            for (std::size_t k = tables.size(); k < three.size(); k += 3) tables.push_back(three[k]);
            tables.push_back(test::table_material(variant, "BBvBB"));
        }
        const Pair p(variant, tables, kV4);
        check_every_slot(p, tables, test::kSanitized ? 5 : 20);
        // Tables of 16 blocks or more whose blocks compress small take 2 or
        // 4 times the slots a block (BBvBB here), smaller tables keep
        // 16384, and small blocks share larger records (a power of two from
        // 8 to 256): such layouts occur here, and their values read back
        // above.
        for (const index::Material& material : tables) {
            CAPTURE(material.name());
            auto t = p.v2->table(variant, material);
            REQUIRE(t.ok());
            const std::uint32_t g = (*t)->info().blocks_per_record;
            CHECK(std::has_single_bit(g));
            CHECK(g >= 8);
            CHECK(g <= 256);
            largest_group = std::max(largest_group, g);
            const std::uint32_t slots_per_block = (*t)->info().slots_per_block;
            block_sizes.insert(slots_per_block);
            if ((*t)->info().spec.slot_count < 16 * 16384) CHECK(slots_per_block == 16384);
            if (material.name() == "BBvBB") CHECK(slots_per_block > 16384);
        }
        // The side stored alone: every slot of the other side repeats 0.
        for (const index::Material& material : tables) {
            if (material != material.flipped()) continue;
            CAPTURE(material.name());
            one_side_table(p, material);
        }
    }
    CHECK(largest_group > 8);
    for (const std::uint32_t size : block_sizes) CHECK((size == 16384 || size == 32768 || size == 65536));
    const auto ff = index::enumerate_tables(VariantId::FourFile, 3);
    const Pair q(VariantId::FourFile, ff, kV4);
    check_every_slot(q, ff, 10);
}

namespace {

// The blocks a one-ply search off the DTC side reads in `t`: the distinct
// blocks of the in-table children of sampled free positions off the DTC
// side, on average.
double child_blocks(const probe::Table& t) {
    const index::Indexer& ix = t.indexer();
    const std::uint64_t n = ix.size();
    const std::uint64_t per_block = t.info().slots_per_block;
    std::mt19937_64 rng(7);
    double blocks_read = 0;
    int searched = 0;
    for (int tries = 0; searched < 2000 && tries < 200000; ++tries) {
        const auto pos = ix.position(rng() % n, ~t.dtc_side());
        if (!pos) continue;
        MoveList moves;
        generate_legal<Antichess>(*pos, moves);
        if (std::any_of(moves.begin(), moves.end(), [&](Move m) { return pos->is_capture(m); })) continue;
        std::set<std::uint64_t> blocks;
        for (const Move m : moves) {
            if (m.is_promotion()) continue;
            const auto slot = ix.locate(pos->after(m));
            if (slot) blocks.insert((to_index(slot->side_to_move) * n + slot->index) / per_block);
        }
        if (blocks.empty()) continue;
        blocks_read += static_cast<double>(blocks.size());
        ++searched;
    }
    REQUIRE(searched > 0);
    return blocks_read / searched;
}

}  // namespace

TEST_CASE("wdl-dtc/5 answers every value as wdl-dtc/1, every table storing one side to move") {
    // Every 2-unit table and a third of the 3-unit ones under every
    // stalemate rule (sanitized: the 2-unit tables), with two 4-unit tables
    // whose sides differ; Four File up to 3 units, with checkmates. The
    // side not stored is valued by one ply everywhere its units differ.
    for (const VariantId variant : {VariantId::Antichess, VariantId::AntichessFics, VariantId::AntichessJoint}) {
        CAPTURE(variant_name(variant));
        std::vector<index::Material> tables = index::enumerate_tables(variant, 2);
        if (!tbf::test::kSanitized) {
            const auto three = index::enumerate_tables(variant, 3);
            for (std::size_t k = tables.size() + 1; k < three.size(); k += 3) tables.push_back(three[k]);
            if (variant == VariantId::Antichess) {
                for (const char* name : {"KRvKN", "KPvK"}) tables.push_back(test::table_material(variant, name));
            }
        }
        const Pair p(variant, tables, kV5);
        check_every_slot(p, tables, test::kSanitized ? 5 : 20);
        for (const index::Material& material : tables) {
            CAPTURE(material.name());
            one_side_table(p, material);
        }
        // KRvKN's order and DTC side keep a search's children in about one
        // block (in the order chosen for size alone, 3.7 of its blocks).
        if (!tbf::test::kSanitized && variant == VariantId::Antichess) {
            auto krkn = p.v2->table(variant, test::table_material(variant, "KRvKN"));
            REQUIRE(krkn.ok());
            const double blocks = child_blocks(**krkn);
            MESSAGE("KRvKN: a search off the DTC side reads " << blocks << " blocks");
            CHECK(blocks < 1.5);
        }
    }
    const auto ff = test::sanitized_sample(index::enumerate_tables(VariantId::FourFile, 3));
    const Pair q(VariantId::FourFile, ff, kV5);
    check_every_slot(q, ff, 10);
}

TEST_CASE("wdl-dtc/6 answers every value as wdl-dtc/1, the wins of tables with the same units searched") {
    // Tables with the same units on both sides store their wins as the WDL
    // alone, their DTC searched over the colour-swapped image's moves; the
    // others are stored as wdl-dtc/5. Every 2-unit table (six with the same
    // units) and, unsanitized, KNvKN and KPvKP of losing chess and Four
    // File's KPvKP (checkmates, positions that are none).
    for (const VariantId variant : {VariantId::Antichess, VariantId::FourFile}) {
        // Sanitized, Four File's only table is KvK, all draws: nothing to search.
        if (variant == VariantId::FourFile && tbf::test::kSanitized) continue;
        CAPTURE(variant_name(variant));
        std::vector<index::Material> tables = index::enumerate_tables(variant, 2);
        if (!tbf::test::kSanitized) {
            for (const char* name : {"KPvKP", "KNvKN"}) {
                if (variant == VariantId::FourFile && std::string(name) == "KNvKN") continue;
                tables.push_back(test::table_material(variant, name));
            }
        }
        const Pair p(variant, tables, kV6);
        check_every_slot(p, tables, test::kSanitized ? 5 : 20);
        std::uint64_t searched_wins = 0;
        for (const index::Material& material : tables) {
            CAPTURE(material.name());
            const probe::Table& table = one_side_table(p, material);
            // No win of the DTC side keeps its DTC where the units are the
            // same: every odd code there is 1.
            const std::uint64_t n = table.indexer().size();
            std::vector<std::uint16_t> codes(n);
            for (std::uint64_t i = 0; i < n; ++i) {
                auto c = table.code(table.dtc_side(), i);
                REQUIRE(c.ok());
                codes[i] = *c;
            }
            std::uint64_t kept_wins = 0;
            for (const std::uint16_t c : codes) {
                searched_wins += c == 1;
                kept_wins += (c & 1) && c > 1;
            }
            if (material == material.flipped()) {
                CHECK(kept_wins == 0);
            } else {
                CHECK(table.wins_as_wdl() == false);
            }
        }
        CHECK(searched_wins > 0);
    }
}

namespace {

// The antichess tables of up to 3 units whose sides have different units,
// neither empty, with a side `wanted` accepts (sanitized: a sample).
std::vector<index::Material> tables_up_to_3_units_with(bool (*wanted)(const index::Material&)) {
    std::vector<index::Material> tables;
    for (const index::Material& m : index::enumerate_tables(VariantId::Antichess, 3)) {
        if (wanted(m) && m != m.flipped() && m.count(Color::White) > 0 && m.count(Color::Black) > 0) tables.push_back(m);
    }
    return test::sanitized_sample(tables);
}

// The derived-slot rule's promise on every table of `p` that derives: no
// in-table grandchild of a derived slot lies in a derived placement, whatever
// the two moves (with the same units on both sides: no in-table child's
// colour-swapped image, which is what a reader reads), and only the DTC side
// derives. Returns the tables that derive; `knight_moves` counts the
// grandchildren reached by a knight move of the other side.
std::uint64_t check_derived_grandchildren(const Pair& p, const std::vector<index::Material>& tables,
                                          std::uint64_t& knight_moves) {
    std::uint64_t deriving = 0;
    for (const index::Material& material : tables) {
        CAPTURE(material.name());
        const probe::Table& table = one_side_table(p, material);
        if (!table.derives_slots()) continue;
        ++deriving;
        const index::Indexer& ix = table.indexer();
        const Color dtc = table.dtc_side();
        std::uint64_t derived = 0, grandchildren = 0, derived_grandchildren = 0, off_side = 0, unplaced = 0;
        for (std::uint64_t i = 0; i < ix.size(); ++i) {
            Square squares[index::kMaxUnits];
            if (!ix.decode(i, squares)) {
                ++unplaced;
                continue;
            }
            off_side += table.derived_slot(~dtc, squares) ? 1 : 0;
            if (!table.derived_slot(dtc, squares)) continue;
            ++derived;
            const auto pos = ix.position(i, dtc);
            if (!pos) {
                ++unplaced;
                continue;
            }
            MoveList moves;
            generate_legal<Antichess>(*pos, moves);
            for (const Move m : moves) {
                if (!probe::stays_in_table(*pos, m)) continue;
                const Position child = pos->after(m);
                if (table.same_units()) {
                    Square placed[index::kMaxUnits];
                    const index::Index image = ix.index(child.color_flipped());
                    if (image == index::kNoIndex || !ix.decode(image, placed)) {
                        ++unplaced;
                        continue;
                    }
                    ++grandchildren;
                    derived_grandchildren += table.derived_slot(dtc, placed) ? 1 : 0;
                    continue;
                }
                MoveList replies;
                generate_legal<Antichess>(child, replies);
                for (const Move r : replies) {
                    if (!probe::stays_in_table(child, r)) continue;
                    const Position grandchild = child.after(r);
                    // The placement its slot holds: the canonical image,
                    // which is what a reader classifies.
                    Square placed[index::kMaxUnits];
                    const index::Index g = ix.index(grandchild);
                    if (g == index::kNoIndex || !ix.decode(g, placed)) {
                        ++unplaced;
                        continue;
                    }
                    ++grandchildren;
                    knight_moves += unit_type(child.unit_on(r.from())) == UnitType::Knight ? 1 : 0;
                    derived_grandchildren += table.derived_slot(dtc, placed) ? 1 : 0;
                }
            }
        }
        CHECK(unplaced == 0);
        CHECK(off_side == 0);  // only the DTC side derives
        CHECK(derived > 0);
        CHECK(grandchildren > 0);
        CHECK(derived_grandchildren == 0);
    }
    return deriving;
}

}  // namespace

TEST_CASE("wdl-dtc/7 answers every value as wdl-dtc/1, the derived pawn structures searched") {
    // Every table of up to 3 units with a side of pawns alone and different
    // units on the other (sanitized: a sample), and PvP (the same units:
    // stored as wdl-dtc/6). Tables of three pawns are 4-unit tables whose
    // promotions reach dozens of others: the ≤4 set checks them
    // (bench/storage/README.md, tbverify tables).
    std::vector<index::Material> tables = tables_up_to_3_units_with(side_of_pawns_alone);
    tables.push_back(test::table_material(VariantId::Antichess, "PvP"));
    const Pair p(VariantId::Antichess, tables, kV7);
    check_every_slot(p, tables, test::kSanitized ? 5 : 20);
    std::uint64_t knight_moves = 0;
    CHECK(check_derived_grandchildren(p, tables, knight_moves) > 0);
    CHECK(knight_moves == 0);
}

TEST_CASE("wdl-dtc/8's knight worth: every knight move changes it, the file mirror keeps it") {
    // In each frame the pawns' files fix (-1 symmetric, 0 as placed, 1
    // mirrored), and read in the mirror frame at the mirror square.
    for (const int frame : {-1, 0, 1}) {
        int zeros = 0;
        for (int s = 0; s < 64; ++s) {
            const auto square = static_cast<Square>(s);
            CAPTURE(frame);
            CAPTURE(s);
            const unsigned worth = probe::knight_worth(frame, square);
            CHECK(worth < 4);
            zeros += worth == 0 ? 1 : 0;
            const Square mirrored = make_square(7 - file_of(square), rank_of(square));
            CHECK(probe::knight_worth(frame < 0 ? -1 : 1 - frame, mirrored) == worth);
            for (const int df : {-2, -1, 1, 2}) {
                for (const int dr : {-2, -1, 1, 2}) {
                    if (df * df == dr * dr) continue;
                    const int f = file_of(square) + df, r = rank_of(square) + dr;
                    if (f < 0 || f > 7 || r < 0 || r > 7) continue;
                    CHECK(probe::knight_worth(frame, make_square(f, r)) != worth);
                }
            }
        }
        CHECK(zeros == (frame < 0 ? 24 : 32));
    }
    // The frame of a placement and of its mirror image: opposite, or both
    // symmetric; and so the rule is the same for both.
    const index::Material material = test::table_material(VariantId::Antichess, "NPPvN");
    auto ix = index::Indexer::create(VariantId::Antichess, material);
    REQUIRE(ix.ok());
    std::uint64_t symmetric = 0, framed = 0, derived = 0;
    for (std::uint64_t i = 0; i < ix->size(); i += 7) {
        Square squares[index::kMaxUnits], mirrored[index::kMaxUnits];
        if (!ix->decode(i, squares)) continue;
        for (int u = 0; u < ix->unit_count(); ++u) mirrored[u] = make_square(7 - file_of(squares[u]), rank_of(squares[u]));
        const int frame = probe::pawn_files_frame(*ix, squares);
        CAPTURE(i);
        CHECK(probe::pawn_files_frame(*ix, mirrored) == (frame < 0 ? -1 : 1 - frame));
        (frame < 0 ? symmetric : framed) += 1;
        for (const auto colouring : {probe::KnightColouring::PawnFrame, probe::KnightColouring::MirrorKept}) {
            for (const Color dtc : {Color::White, Color::Black}) {
                const bool d = probe::derived_placement(*ix, probe::DerivedWorths::OffSide, colouring, dtc, squares);
                CHECK(probe::derived_placement(*ix, probe::DerivedWorths::OffSide, colouring, dtc, mirrored) == d);
                derived += d ? 1 : 0;
            }
        }
    }
    CHECK(symmetric > 0);
    CHECK(framed > symmetric);
    CHECK(derived > 0);
}

namespace {

// Every table of up to 3 units with a pawn and a side of knights and pawns
// alone, at least one knight (where /7 derives nothing), and different
// units on the other (sanitized: a sample); PPvK, whose side of pawns alone
// derives as in /7; and PvP, the same units on both sides, pawns alone
// (both sides' worths): built in `encoding` (wdl-dtc/8 or /9) and checked
// slot by slot against wdl-dtc/1, derived positions through their
// grandchildren.
std::unique_ptr<Pair> check_knights_tables(const std::string& encoding, std::vector<index::Material>& tables) {
    tables = tables_up_to_3_units_with(side_of_knights_and_pawns);
    tables.push_back(test::table_material(VariantId::Antichess, "PPvK"));
    tables.push_back(test::table_material(VariantId::Antichess, "PvP"));
    auto p = std::make_unique<Pair>(VariantId::Antichess, tables, encoding);
    check_every_slot(*p, tables, test::kSanitized ? 5 : 20);
    std::uint64_t knight_moves = 0;
    CHECK(check_derived_grandchildren(*p, tables, knight_moves) > 2);
    CHECK(knight_moves > 0);
    CHECK(one_side_table(*p, test::table_material(VariantId::Antichess, "PvP")).derives_slots());
    return p;
}

}  // namespace

TEST_CASE("wdl-dtc/8 answers every value as wdl-dtc/1, the derived knight squares searched") {
    std::vector<index::Material> tables;
    check_knights_tables(kV8, tables);
}

TEST_CASE("wdl-dtc/9 answers every value as wdl-dtc/1, each table's knights' colouring its own") {
    // The tables of wdl-dtc/8's case; each that derives knights' squares
    // chooses the pawns' frame or the mirror-kept colouring by its sample,
    // and both must occur.
    std::vector<index::Material> tables;
    const std::unique_ptr<Pair> built = check_knights_tables(kV9, tables);
    const Pair& p = *built;
    std::map<std::uint64_t, std::vector<std::string>> by_colouring;
    for (const index::Material& material : tables) {
        auto t = p.v2->table(p.variant, material);
        REQUIRE(t.ok());
        for (const storage::Counter& c : (*t)->info().statistics.counters)
            if (c.name == "knight_colouring") by_colouring[c.value].push_back(material.name());
    }
    std::string listed;
    for (const auto& [colouring, names] : by_colouring) {
        listed += std::to_string(colouring) + ":";
        for (const std::string& name : names) listed += " " + name;
        listed += "; ";
    }
    INFO("tables by knights' colouring: " << listed);
    CHECK(by_colouring.size() == (test::kSanitized ? by_colouring.size() : 2));
    for (const auto& entry : by_colouring) CHECK(entry.first <= 1);
}

TEST_CASE("wdl-dtc/7 and /8 store the antichess tables up to 3 units in no more bytes than Syzygy's files") {
    // Syzygy's WDL and DTZ files of the same tables (tests/reference/syzygy,
    // giveaway_sizes.tsv). As wdl-dtc/6 PPvN is larger: its DTC counts
    // through pawn moves, which Syzygy's DTZ does not. wdl-dtc/7 stores
    // Black's side and leaves 40 % of its positions to a search, and changes
    // nothing in a table without a side of pawns alone; wdl-dtc/8 changes
    // only tables with a pawn and a side of knights and pawns.
    std::map<std::string, std::uint64_t> syzygy;
    {
        std::ifstream in(std::string(TBF_REFERENCE_DIR) + "/syzygy/giveaway_sizes.tsv");
        REQUIRE(in);
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#' || line.rfind("table\t", 0) == 0) continue;
            std::istringstream fields(line);
            std::string name;
            std::uint64_t wdl = 0, dtz = 0;
            REQUIRE(static_cast<bool>(fields >> name >> wdl >> dtz));
            syzygy[name] = wdl + dtz;
        }
    }
    REQUIRE(syzygy.size() == 714);
    const auto tables = test::sanitized_sample(index::enumerate_tables(VariantId::Antichess, 3));
    test::ScratchDir dir;
    const std::vector<std::string> encodings{kV6, kV7, kV8};
    std::vector<probe::Tablebase> built;
    for (const std::string& encoding : encodings) {
        test::build_tables(dir.sub(encoding.substr(encoding.size() - 1)), VariantId::Antichess, tables,
                           gen::GenerateOptions{}.compression, encoding);
        auto tb = probe::Tablebase::open(dir.sub(encoding.substr(encoding.size() - 1)));
        REQUIRE(tb.ok());
        built.push_back(std::move(*tb));
    }
    std::vector<std::vector<std::string>> larger(encodings.size());
    std::vector<std::uint64_t> ours(encodings.size(), 0);
    std::uint64_t theirs = 0, unchanged7 = 0, unchanged8 = 0, smaller8 = 0, larger8 = 0;
    for (const index::Material& material : tables) {
        CAPTURE(material.name());
        const auto found = syzygy.find(material.name());
        REQUIRE((found != syzygy.end()));
        theirs += found->second;
        std::vector<std::shared_ptr<const probe::Table>> t;
        for (std::size_t e = 0; e < encodings.size(); ++e) {
            auto opened = built[e].table(VariantId::Antichess, material);
            REQUIRE(opened.ok());
            t.push_back(*opened);
            ours[e] += t[e]->info().stored_bytes;
            if (t[e]->info().stored_bytes > found->second) larger[e].push_back(material.name());
        }
        // /7 is /6 but where a side has pawns alone, /8 is /7 but where a
        // side has knights and pawns: elsewhere byte for byte the same.
        const bool differs = material != material.flipped();
        for (std::size_t e = 1; e < encodings.size(); ++e) {
            const bool pawns_alone = material.count(Color::White) == material.count(Color::White, UnitType::Pawn) &&
                                     material.has_pawns();
            const bool may_change = differs ? (e == 1 ? side_of_pawns_alone(material) : side_of_knights_and_pawns(material))
                                            : e == 2 && pawns_alone;
            const bool same = t[e]->info().stored_bytes == t[e - 1]->info().stored_bytes &&
                              t[e]->info().values_checksum == t[e - 1]->info().values_checksum;
            if (!may_change) {
                CHECK(same);
                (e == 1 ? unchanged7 : unchanged8) += 1;
            } else if (e == 2 && !same) {
                // Derived slots scattered through a block can cost more than
                // they save in a few small tables (NPvR, NNvP).
                (t[e]->info().stored_bytes < t[e - 1]->info().stored_bytes ? smaller8 : larger8) += 1;
            }
        }
    }
    MESSAGE(tables.size() << " tables: " << ours[2] << " B (wdl-dtc/8), " << ours[1] << " B (wdl-dtc/7), " << ours[0]
                          << " B (wdl-dtc/6) against Syzygy's " << theirs << " B; /8 against /7: " << smaller8
                          << " tables smaller, " << larger8 << " larger");
    const bool ppvn_built = std::ranges::any_of(tables, [](const index::Material& m) { return m.name() == "PPvN"; });
    const std::vector<std::string> expected6 = ppvn_built ? std::vector<std::string>{"PPvN"} : std::vector<std::string>{};
    std::string listed;
    for (const auto& names : larger) {
        for (const std::string& name : names) listed += name + " ";
        listed += "| ";
    }
    INFO("larger than Syzygy's as wdl-dtc/6 | /7 | /8: " << listed);
    CHECK(larger[0] == expected6);
    CHECK(larger[1].empty());
    CHECK(larger[2].empty());
    CHECK(unchanged7 > 0);
    CHECK(unchanged8 > 0);
    CHECK(smaller8 > 3 * larger8);
    CHECK(ours[1] < ours[0]);
    CHECK(ours[2] < ours[1]);
    CHECK(ours[2] < theirs / 2);
}

TEST_CASE("wdl-dtc/6: a stored win that none of its moves wins is Corruption naming table and slot") {
    test::ScratchDir dir;
    // A free loss of the DTC side, stored as a win to be searched.
    const auto [planted, position] = plant_code(dir.sub("db"), "NvN", kV6,
                                                [](const probe::Table& table, const std::vector<std::uint16_t>& codes) {
        REQUIRE(table.wins_as_wdl());
        const auto loss = [](std::uint16_t code) { return code > 2 && code % 2 == 0; };
        return std::pair{first_free_slot(table, codes, table.dtc_side(), loss), std::uint16_t{1}};
    });
    auto tb = probe::Tablebase::open(dir.sub("db"));
    REQUIRE(tb.ok());
    const std::string slot = "antichess/NvN slot " + std::to_string(planted);
    check_corrupt(*tb, position, slot);
    // Its colour-swapped image reads the same slot.
    check_corrupt(*tb, position.color_flipped(), slot);
    // The WDL alone is what is stored: a win, read without a search.
    auto w = tb->probe_wdl(VariantId::Antichess, position);
    REQUIRE(w.ok());
    CHECK(*w == Wdl::Win);
}

TEST_CASE("the cache of resolved values keeps each slot's answer under its full key") {
    probe::detail::ResolvedCache cache(8 << 10);  // 1024 entries
    REQUIRE(cache.enabled());
    CHECK(cache.bytes() == 8 << 10);
    CHECK_FALSE(probe::detail::ResolvedCache(8 << 10 >> 1).enabled());  // too small to keep anything
    const probe::Value win{Wdl::Win, 7}, loss{Wdl::Loss, 12};
    CHECK_FALSE(cache.find(1, 5, false));
    cache.keep(1, 5, win, true);
    CHECK(cache.find(1, 5, true) == win);
    CHECK(cache.find(1, 5, false) == win);
    CHECK_FALSE(cache.find(2, 5, false));  // another table's slot 5
    CHECK_FALSE(cache.find(1, 5 + 1024, false));  // the same entry, another slot
    cache.keep(1, 5 + 1024, loss, true);  // replaces slot 5's answer
    CHECK_FALSE(cache.find(1, 5, false));
    CHECK(cache.find(1, 5 + 1024, true) == loss);
    // The WDL alone answers only what asks for the WDL alone.
    cache.keep(3, 40, loss, false);
    CHECK_FALSE(cache.find(3, 40, true));
    CHECK(cache.find(3, 40, false) == probe::Value{Wdl::Loss, 0});
    // Draws and the largest distance keep apart from an empty entry.
    cache.keep(4, 0, probe::Value{}, true);
    CHECK(cache.find(4, 0, true) == probe::Value{});
    cache.keep(4, 1, probe::Value{Wdl::Loss, probe::kMaxDtc}, true);
    CHECK(cache.find(4, 1, true) == probe::Value{Wdl::Loss, probe::kMaxDtc});
    // Ordinal 0 (a table no Tablebase named) is never kept.
    cache.keep(0, 9, win, true);
    CHECK_FALSE(cache.find(0, 9, false));
}

TEST_CASE("wdl-dtc/5 answers through the cache of resolved values as without it") {
    // The answers a search or a sub-table gives are kept beside the decoded
    // blocks. Slot by slot, against a tablebase without caches: the WDL
    // alone first (an entry without the DTC), the full value (which that
    // entry does not answer), then both again (answered from the entries);
    // in the default cache and in one of 1024 entries, where slots keep
    // replacing each other.
    std::vector<index::Material> tables;
    for (const char* name : {"KPvK", "NvB", "RvK"}) tables.push_back(test::table_material(VariantId::Antichess, name));
    const Pair p(VariantId::Antichess, tables, kV5);
    probe::TablebaseOptions none_options, tiny_options;
    none_options.cache_bytes = 0;
    tiny_options.cache_bytes = 64 << 10;  // an eighth, 8 KiB: 1024 entries
    auto none = probe::Tablebase::open(p.dir.sub("v2"), none_options);
    auto tiny = probe::Tablebase::open(p.dir.sub("v2"), tiny_options);
    REQUIRE(none.ok());
    REQUIRE(tiny.ok());
    std::uint64_t compared = 0, wrong = 0, searched = 0;
    for (const index::Material& material : tables) {
        CAPTURE(material.name());
        auto reference = none->table(VariantId::Antichess, material);
        REQUIRE(reference.ok());
        const std::uint64_t n = (*reference)->indexer().size();
        for (const probe::Tablebase* tb : {p.v2.get(), &*tiny}) {
            auto t = tb->table(VariantId::Antichess, material);
            REQUIRE(t.ok());
            for (std::uint64_t s = 0; s < 2 * n; s += 3) {
                const Color side = s < n ? Color::White : Color::Black;
                const std::uint64_t idx = s % n;
                auto expected = (*reference)->value(side, idx);
                REQUIRE(expected.ok());
                searched += side != (*t)->dtc_side();
                for (int round = 0; round < 2; ++round) {
                    auto w = (*t)->wdl(side, idx);
                    auto v = (*t)->value(side, idx);
                    REQUIRE(w.ok());
                    REQUIRE(v.ok());
                    wrong += *w != expected->wdl;
                    wrong += *v != *expected;
                    ++compared;
                }
            }
        }
    }
    CHECK(wrong == 0);
    CHECK(searched > compared / 8);  // the side not stored is a good part of them
    MESSAGE(compared << " slots compared twice, " << searched << " of them off the DTC side");
}

TEST_CASE("compact tables: blocks per record as given, the block size still chosen per table") {
    // KQvK and its sub-tables, once with the generator's layout, once with
    // 2 blocks a record: the same values and block sizes, the count given.
    test::ScratchDir dir;
    const std::vector<index::Material> tables{test::table_material(VariantId::Antichess, "KQvK")};
    test::build_tables(dir.sub("chosen"), VariantId::Antichess, tables, gen::GenerateOptions{}.compression, kV4);
    {
        probe::Tablebase writer(test::open_rw(dir.sub("given")));
        gen::GenerateOptions options;
        options.value_encoding = kV4;
        options.blocks_per_record = 2;
        auto result = gen::generate(writer, VariantId::Antichess, tables, options);
        REQUIRE_MESSAGE(result.ok(), result.status().message());
    }
    auto chosen = probe::Tablebase::open(dir.sub("chosen"));
    auto given = probe::Tablebase::open(dir.sub("given"));
    REQUIRE(chosen.ok());
    REQUIRE(given.ok());
    auto infos = chosen->database().list_tables();
    REQUIRE(infos.ok());
    REQUIRE(infos->size() >= 3);  // KQvK and what it converts into
    bool any_larger_group = false;
    for (const storage::TableInfo& a : *infos) {
        CAPTURE(a.spec.name);
        auto b = given->database().table_info(a.spec.name);
        REQUIRE(b.ok());
        CHECK(b->blocks_per_record == 2);
        CHECK(b->slots_per_block == a.slots_per_block);
        CHECK(b->values_checksum == a.values_checksum);
        any_larger_group = any_larger_group || a.blocks_per_record > 2;
    }
    CHECK(any_larger_group);
}

TEST_CASE("wdl-dtc/2 answers as wdl-dtc/1 on 4-unit antichess tables" * doctest::test_suite("slow")) {
    std::vector<index::Material> tables;
    for (const char* name : test::kSanitized ? std::vector<const char*>{"KQvKR"}
                                             : std::vector<const char*>{"KQvKR", "RNvKB", "BBvNN"})
        tables.push_back(test::table_material(VariantId::Antichess, name));
    const Pair p(VariantId::Antichess, tables);
    check_every_slot(p, tables, 200);
}

TEST_CASE("wdl-dtc/2 answers as wdl-dtc/1 under the other stalemate rules and in Four File") {
    for (const VariantId variant : {VariantId::AntichessFics, VariantId::AntichessJoint}) {
        CAPTURE(variant_name(variant));
        std::vector<index::Material> tables{test::table_material(variant, "PvP"),
                                            test::table_material(variant, "KvPP"),
                                            test::table_material(variant, "NvB")};
        const Pair p(variant, tables);
        check_every_slot(p, tables, 50);
    }
    // Four File: slots holding no position, no compulsory captures, checkmate.
    const auto tables = index::enumerate_tables(VariantId::FourFile, 3);
    const Pair p(VariantId::FourFile, tables);
    check_every_slot(p, tables, 20);
}

TEST_CASE("a stored WDL that its moves contradict is Corruption naming table and slot") {
    test::ScratchDir dir;
    // A free position off the DTC side that is won or lost: win <-> loss.
    const auto [planted, position] = plant_code(dir.sub("db"), "KQvK", kV2,
                                                [](const probe::Table& table, const std::vector<std::uint16_t>& codes) {
        const std::uint64_t slot =
            first_free_slot(table, codes, ~table.dtc_side(), [](std::uint16_t code) { return code != 0; });
        return std::pair{slot, static_cast<std::uint16_t>(codes[slot] == 1 ? 2 : 1)};
    });
    auto tb = probe::Tablebase::open(dir.sub("db"));
    REQUIRE(tb.ok());
    const std::string slot = "antichess/KQvK slot " + std::to_string(planted);
    check_corrupt(*tb, position, slot);
    auto t = tb->table(VariantId::Antichess, test::table_material(VariantId::Antichess, "KQvK"));
    REQUIRE(t.ok());
    std::vector<std::uint16_t> all((*t)->info().spec.slot_count);
    auto read = (*t)->read_codes(0, all.size(), all.data());
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == StatusCode::Corruption);
    CHECK(contains(read.status().message(), slot));
    // The WDL-only path reads the stored WDL without looking at the moves.
    auto w = tb->probe_wdl(VariantId::Antichess, position);
    REQUIRE(w.ok());
}

TEST_CASE("an unknown value encoding is refused naming it") {
    test::ScratchDir dir;
    const auto kvk = test::table_material(VariantId::Antichess, "KvK");
    test::build_tables(dir.sub("db"), VariantId::Antichess, {kvk});
    {
        storage::DatabaseOptions rw;
        rw.mode = storage::OpenMode::ReadWrite;
        auto db = storage::Database::open(dir.sub("db"), rw);
        REQUIRE(db.ok());
        auto reader = db->open_table("antichess/KvK");
        REQUIRE(reader.ok());
        storage::TableSpec spec = reader->info().spec;
        spec.value_encoding = "wdl-dtc/10";
        auto options = storage::compact_write_options();
        options.replace = true;
        auto writer = db->create_table(spec, options);
        REQUIRE(writer.ok());
        std::vector<std::uint8_t> zeros(spec.slot_count, 0);
        REQUIRE(writer->append(std::span<const std::uint8_t>(zeros)).ok());
        REQUIRE(writer->commit(reader->info().statistics).ok());
    }
    auto tb = probe::Tablebase::open(dir.sub("db"));
    REQUIRE(tb.ok());
    auto t = tb->table(VariantId::Antichess, kvk);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == StatusCode::Corruption);
    CHECK(contains(t.status().message(), "wdl-dtc/10"));
    CHECK(contains(t.status().message(), "antichess/KvK"));
    // It names what this version reads, the newest encoding among them.
    CHECK(contains(t.status().message(), "wdl-dtc/9"));
}

namespace {

// Rewrites table `name` of the database in `db_dir` with the same stored
// bytes (one a slot) and counter `counter` set to `value`, or removed.
void rewrite_counter(const std::string& db_dir, const std::string& name, const std::string& counter,
                     std::optional<std::uint64_t> value) {
    storage::DatabaseOptions rw;
    rw.mode = storage::OpenMode::ReadWrite;
    auto db = storage::Database::open(db_dir, rw);
    REQUIRE(db.ok());
    auto reader = db->open_table(name);
    REQUIRE(reader.ok());
    REQUIRE(reader->info().spec.value_width == 1);
    storage::TableStatistics stats = reader->info().statistics;
    REQUIRE(std::erase_if(stats.counters, [&](const storage::Counter& c) { return c.name == counter; }) <= 1);
    if (value) stats.counters.push_back({counter, *value});
    std::vector<std::uint8_t> bytes(reader->info().spec.slot_count);
    for (std::uint64_t slot = 0; slot < bytes.size(); ++slot) {
        auto v = reader->get(slot);
        REQUIRE(v.ok());
        bytes[slot] = static_cast<std::uint8_t>(*v);
    }
    auto options = storage::compact_write_options();
    options.replace = true;
    auto writer = db->create_table(reader->info().spec, options);
    REQUIRE(writer.ok());
    REQUIRE(writer->append(std::span<const std::uint8_t>(bytes)).ok());
    REQUIRE(writer->commit(stats).ok());
}

// Opening `material` fails as Corruption naming the table and `counter`.
void check_refused(const std::string& db_dir, const index::Material& material, const std::string& counter) {
    auto tb = probe::Tablebase::open(db_dir);
    REQUIRE(tb.ok());
    auto t = tb->table(VariantId::Antichess, material);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == StatusCode::Corruption);
    CHECK(contains(t.status().message(), "antichess/" + material.name()));
    CHECK(contains(t.status().message(), counter));
}

}  // namespace

TEST_CASE("a wdl-dtc/3 table without a valid group order is refused naming it") {
    test::ScratchDir dir;
    const auto kvn = test::table_material(VariantId::Antichess, "KvN");
    test::build_tables(dir.sub("db"), VariantId::Antichess, {kvn}, gen::GenerateOptions{}.compression, kV3);
    const Unit wk = make_unit(Color::White, UnitType::King);
    const Unit bq = make_unit(Color::Black, UnitType::Queen);
    // Rewritten with each bad counter: none, a nibble that is no unit, a
    // unit the table does not have, a unit missing.
    const std::vector<std::optional<std::uint64_t>> bad = {std::nullopt, 0x7, probe::pack_group_order(std::vector{wk, bq}),
                                                           probe::pack_group_order(std::vector{wk})};
    for (const auto& counter : bad) {
        rewrite_counter(dir.sub("db"), "antichess/KvN", "index_order", counter);
        check_refused(dir.sub("db"), kvn, "index_order");
    }
}

TEST_CASE("a wdl-dtc/9 table deriving knights' squares without a valid colouring is refused naming it") {
    test::ScratchDir dir;
    const auto npvn = test::table_material(VariantId::Antichess, "NPvN");
    test::build_tables(dir.sub("db"), VariantId::Antichess, {npvn}, gen::GenerateOptions{}.compression, kV9);
    {
        auto tb = probe::Tablebase::open(dir.sub("db"));
        REQUIRE(tb.ok());
        auto t = tb->table(VariantId::Antichess, npvn);
        REQUIRE(t.ok());
        // The counter exists only where the table derives knights' squares.
        REQUIRE(probe::chooses_knight_colouring(kV9, npvn, (*t)->dtc_side()));
    }
    // Rewritten with each bad counter: none, a colouring that does not exist.
    for (const auto& counter : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{2}}) {
        rewrite_counter(dir.sub("db"), "antichess/NPvN", "knight_colouring", counter);
        check_refused(dir.sub("db"), npvn, "knight_colouring");
    }
}

// The attack-set classification (has_capture, quick_slot_kind,
// quick_slot_kind_after) against full move generation on every slot of
// every table up to 3 units, both sides to move, and every move that stays
// in the table. (The antichess stalemate rules share antichess's moves.)
TEST_CASE("the capture test and the quick slot kinds agree with move generation") {
    for (const VariantId variant : {VariantId::Antichess, VariantId::FourFile}) {
        CAPTURE(variant_name(variant));
        with_variant(variant, [&]<class R>() {
            std::uint64_t positions = 0, quick = 0, children = 0, quick_children = 0, wrong = 0;
            for (const index::Material& material : index::enumerate_tables(variant, 3)) {
                auto ix = index::Indexer::create(variant, material);
                REQUIRE(ix.ok());
                for (std::uint64_t i = 0; i < ix->size(); i += test::kSlotStride) {
                    for (const Color side : {Color::White, Color::Black}) {
                        auto pos = ix->position(i, side);
                        if (!pos) continue;
                        ++positions;
                        MoveList moves;
                        const probe::SlotKind kind = probe::slot_kind<R>(*pos, moves);
                        bool captures = false;
                        for (Move m : moves) captures |= pos->is_capture(m);
                        if constexpr (R::kCapturesCompulsory) wrong += probe::has_capture<R>(*pos) != captures;
                        if (auto q = probe::quick_slot_kind<R>(*pos)) {
                            ++quick;
                            wrong += *q != kind;
                        }
                        for (Move m : moves) {
                            if (!probe::stays_in_table(*pos, m)) continue;
                            ++children;
                            const Position child = pos->after(m);
                            MoveList child_moves;
                            const probe::SlotKind child_kind = probe::slot_kind<R>(child, child_moves);
                            if (auto q = probe::quick_slot_kind_after<R>(*pos, m)) {
                                ++quick_children;
                                wrong += *q != child_kind;
                            }
                        }
                    }
                }
            }
            CHECK(wrong == 0);
            CHECK(positions > 10000 / test::kSlotStride);
            // Attack sets decide most losing-chess positions (86 % and 80 % of
            // the children: the others have pawn moves alone); Four File
            // always takes the move list.
            if constexpr (R::kCapturesCompulsory) {
                CHECK(quick * 5 > positions * 4);
                CHECK(quick_children * 4 > children * 3);
            } else {
                CHECK(quick == 0);
            }
            MESSAGE(positions << " positions, " << quick << " classified by attack sets; " << children
                              << " in-table children, " << quick_children << " of them");
        });
    }
}
