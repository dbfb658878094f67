#include "tbforge/index/report.hpp"

#include <doctest/doctest.h>

#include "brute_force.hpp"
#include "test_support.hpp"

namespace tbf::index {

TEST_CASE("report: JSON and text lines") {
    // KvK: 64*63 placements, 56 + 56 fixed by the two diagonal reflections,
    // (4032 + 112) / 8 = 518 orbits, every one a position for both sides.
    const auto kk = index_report(VariantId::Antichess, "KvK");
    REQUIRE(kk.ok());
    CHECK(to_json(*kk) == R"({"variant":"antichess","table":"KvK","slots":518,"valid":[518,518]})");
    CHECK(
        to_text(*kk) ==
        "antichess KvK: 518 slots, valid 518 (w) 518 (b), slots/valid 1.0000 1.0000 (mean 1.0000)");
    // Four File KvK: 8*8 king placements less 8 shared and 14 adjacent.
    const auto ff = index_report(VariantId::FourFile, "KvK");
    REQUIRE(ff.ok());
    CHECK(to_json(*ff) == R"({"variant":"fourfile","table":"KvK","slots":42,"valid":[42,42]})");
    // Either orientation; reported under the canonical name.
    const auto flipped = index_report(VariantId::AntichessFics, "RvKQ");
    REQUIRE(flipped.ok());
    CHECK(flipped->material.name() == "KQvR");
    CHECK(to_json(*flipped).find(R"("variant":"antichess-fics","table":"KQvR")") !=
          std::string::npos);
    const auto bad = index_report(VariantId::Antichess, "KQx");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message().find("'KQx'") != std::string::npos);
    CHECK_FALSE(index_report(VariantId::FourFile, "QvK").ok());
}

TEST_CASE("report: Four File valid counts per side to move match brute force") {
    for (const char* name : {"KQvK", "KRvKN", "KBvKP", "KPvKP"}) {
        CAPTURE(name);
        const Material m = *parse_table(name, VariantId::FourFile);
        const test::Reference ref(VariantId::FourFile, m);
        std::array<std::uint64_t, 2> legal{};
        std::uint64_t placements = 0;
        ref.for_each_placement([&](const std::array<Square, kMaxUnits>& sq) {
            ++placements;
            for (const Color stm : {Color::White, Color::Black}) {
                if (ref.legal(ref.position(sq, stm)))
                    ++legal[static_cast<std::size_t>(to_index(stm))];
            }
        });
        const auto report = index_report(VariantId::FourFile, name);
        REQUIRE(report.ok());
        CHECK(report->slots == placements);
        CHECK(report->valid == legal);
        MESSAGE(to_text(*report));
    }
}

TEST_CASE("report: losing-chess valid counts are the orbit counts") {
    for (const char* name : {"QvR", "KPvK", "BBvB", "KRvKB"}) {
        CAPTURE(name);
        const auto report = index_report(VariantId::Antichess, name);
        REQUIRE(report.ok());
        const auto orbits = test::Reference(VariantId::Antichess, report->material).orbit_count();
        CHECK(report->slots == orbits);
        CHECK(report->valid[0] == orbits);
        CHECK(report->valid[1] == orbits);
    }
}

TEST_SUITE("slow") {
    TEST_CASE("report: Four File sizes up to 5 units") {
        // slots / valid per side and on the mean of both sides, printed for
        // docs/index.md; the exhaustive count is checked against the rules.
        double worst_mean = 0;
        std::string worst;
        for (const Material& m : enumerate_tables(VariantId::FourFile, 5)) {
            const auto report = count_valid(*Indexer::create(VariantId::FourFile, m));
            if (report.mean_ratio() > worst_mean) {
                worst_mean = report.mean_ratio();
                worst = to_text(report);
            }
        }
        MESSAGE("worst mean ratio: " << worst);
    }
}

}  // namespace tbf::index
