// Storage formats 5 and 1 through the prober: the generator builds every
// antichess table of at most 3 units once with LZ4 blocks (format 1) and
// once with its default zstd blocks, 8 a record (format 5); a full decode of each
// table gives the same code for every slot and both sides, the single-slot
// reads agree, and the values checksums are equal (sanitizer builds: every
// third table, test::sanitized_sample). Format 6 (pair-coded blocks) against
// format 5 on tables whose probes search.

#include <doctest/doctest.h>

#include <string>

#include "probe_fixture.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/probe/tablebase.hpp"

using namespace tbf;

TEST_CASE("format 5 answers every code of every table up to 3 units as format 1 does") {
    test::ScratchDir dir;
    const auto all = index::enumerate_tables(VariantId::Antichess, 3);
    REQUIRE(all.size() > 100);
    const auto tables = test::sanitized_sample(all);
    test::build_tables(dir.sub("lz4"), VariantId::Antichess, tables, storage::Compression::Lz4);
    test::build_tables(dir.sub("zstd"), VariantId::Antichess, tables, storage::Compression::Zstd);
    auto lz4 = probe::Tablebase::open(dir.sub("lz4"));
    auto zstd = probe::Tablebase::open(dir.sub("zstd"), {.cache_bytes = 0});
    REQUIRE(lz4.ok());
    REQUIRE(zstd.ok());
    std::uint64_t slots = 0;
    for (const index::Material& material : tables) {
        CAPTURE(material.name());
        auto a = lz4->decode_table(VariantId::Antichess, material);
        auto b = zstd->decode_table(VariantId::Antichess, material);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK((*a)->info().format_version == 1);
        CHECK((*b)->info().format_version == 5);  // zstd blocks, grouped 8 a record, bare frames, fills in the directory
        CHECK((*a)->info().values_checksum == (*b)->info().values_checksum);
        CHECK((*b)->info().stored_bytes < (*a)->info().stored_bytes + 64);
        auto single = zstd->table(VariantId::Antichess, material);
        REQUIRE(single.ok());
        const std::uint64_t n = (*a)->indexer().size();
        std::uint64_t wrong = 0;
        for (const Color side : {Color::White, Color::Black}) {
            for (std::uint64_t i = 0; i < n; i += test::kSlotStride) {
                ++slots;
                auto x = (*a)->code(side, i);
                auto y = (*b)->code(side, i);
                REQUIRE(x.ok());
                REQUIRE(y.ok());
                wrong += *x != *y;
                // Uncached single reads on a sample of slots.
                if (i % 97 == 0) {
                    auto z = (*single)->code(side, i);
                    REQUIRE(z.ok());
                    wrong += *z != *x;
                }
            }
        }
        CHECK(wrong == 0);
    }
    MESSAGE(slots << " slots compared");
}

TEST_CASE("format 6: pair-coded tables answer every probe as their zstd form, with and without a cache") {
    // Tables built twice, their blocks as zstd frames and as pair codes
    // (storage format 6): wdl-dtc/1, and wdl-dtc/8 tables whose probes
    // search (one side stored, derived knights' squares and pawn
    // structures), so that a probe without a cache reads many single
    // values of one record through its read scope.
    const std::vector<std::string> names = test::kSanitized
                                               ? std::vector<std::string>{"NvP", "PvP"}
                                               : std::vector<std::string>{"NvP", "PvP", "PPvK", "NPvN", "BPvN", "KRvK"};
    std::vector<index::Material> tables;
    for (const std::string& name : names) tables.push_back(test::table_material(VariantId::Antichess, name));
    for (const std::string& encoding : {std::string(probe::kValueEncoding), std::string("wdl-dtc/8")}) {
        CAPTURE(encoding);
        test::ScratchDir dir;
        for (const bool pairs : {false, true}) {
            probe::Tablebase writer(test::open_rw(dir.sub(pairs ? "pairs" : "zstd")));
            gen::GenerateOptions options;
            options.value_encoding = encoding;
            options.pair_coding = pairs ? storage::PairCoding::Always : storage::PairCoding::Off;
            REQUIRE(gen::generate(writer, VariantId::Antichess, tables, options).ok());
        }
        auto zstd = probe::Tablebase::open(dir.sub("zstd"));
        auto cold = probe::Tablebase::open(dir.sub("pairs"), {.cache_bytes = 0});
        auto warm = probe::Tablebase::open(dir.sub("pairs"));
        REQUIRE(zstd.ok());
        REQUIRE(cold.ok());
        REQUIRE(warm.ok());
        std::uint64_t positions = 0, wrong = 0;
        for (const index::Material& material : tables) {
            CAPTURE(material.name());
            auto a = zstd->table(VariantId::Antichess, material);
            auto b = cold->table(VariantId::Antichess, material);
            REQUIRE(a.ok());
            REQUIRE(b.ok());
            CHECK((*a)->info().format_version == 5);
            CHECK((*b)->info().format_version == 6);
            CHECK((*a)->info().values_checksum == (*b)->info().values_checksum);
            const index::Indexer& ix = (*b)->indexer();
            // Every slot of the two small tables a sanitized build takes, every
            // third of the larger ones.
            for (std::uint64_t i = 0; i < ix.size(); i += test::kSanitized ? 1 : 3) {
                for (const Color side : {Color::White, Color::Black}) {
                    const auto pos = ix.position(i, side);
                    if (!pos) continue;
                    auto x = zstd->probe(VariantId::Antichess, *pos);
                    auto y = cold->probe(VariantId::Antichess, *pos);
                    auto z = warm->probe(VariantId::Antichess, *pos);
                    auto w = cold->probe_wdl(VariantId::Antichess, *pos);
                    REQUIRE(x.ok() == y.ok());
                    REQUIRE(x.ok() == z.ok());
                    if (!x.ok()) continue;
                    ++positions;
                    wrong += !(*x == *y) + !(*x == *z) + !(w.ok() && *w == x->wdl);
                }
            }
            for (const Position& pos : test::sample_positions(VariantId::Antichess, material.name(), 20)) {
                auto m1 = zstd->probe_moves(VariantId::Antichess, pos);
                auto m2 = cold->probe_moves(VariantId::Antichess, pos);
                REQUIRE(m1.ok());
                REQUIRE(m2.ok());
                REQUIRE(m1->size() == m2->size());
                for (std::size_t k = 0; k < m1->size(); ++k) wrong += !((*m1)[k].child == (*m2)[k].child);
            }
        }
        CHECK(positions > (test::kSanitized ? 2000u : 10000u));
        CHECK(wrong == 0);
        MESSAGE(positions << " positions compared (" << encoding << ")");
    }
}
