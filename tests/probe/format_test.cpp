// Storage formats 5 and 1 through the prober: the generator builds every
// antichess table of at most 3 units once with LZ4 blocks (format 1) and
// once with its default zstd blocks, 8 a record (format 5); a full decode of each
// table gives the same code for every slot and both sides, the single-slot
// reads agree, and the values checksums are equal (sanitizer builds: every
// third table, test::sanitized_sample).

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
