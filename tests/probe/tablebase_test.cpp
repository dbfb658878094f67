// The C++ API beyond single values: the block cache and its limit, probing
// from several threads, resident tables, table names, the value encoding.
#include <doctest/doctest.h>

#include <thread>

#include "probe_fixture.hpp"

using namespace tbf;
using namespace tbf::test;

namespace {

std::vector<Position> mixed_sample() {
    std::vector<Position> out;
    for (const char* table : {"KQvK", "KPvK", "KRvK", "PvP", "QvN", "KvB"}) {
        const auto part = sample_positions(VariantId::Antichess, table, kSanitized ? 100 : 1000, 3);
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

std::vector<probe::Value> probe_all(const probe::Tablebase& tb,
                                    const std::vector<Position>& positions) {
    std::vector<probe::Value> out;
    for (const auto& pos : positions) {
        auto v = tb.probe(VariantId::Antichess, pos);
        REQUIRE_MESSAGE(v.ok(), v.status().message());
        out.push_back(*v);
    }
    return out;
}

}  // namespace

TEST_CASE("value encoding: 0 draw, 1 + 2d win in d, 2 + 2d loss in d") {
    CHECK(probe::encode_value(draw()) == 0);
    CHECK(probe::encode_value(win(0)) == 1);
    CHECK(probe::encode_value(loss(0)) == 2);
    CHECK(probe::encode_value(win(7)) == 15);
    CHECK(probe::encode_value(loss(7)) == 16);
    CHECK(probe::encode_value(loss(probe::kMaxDtc)) == 0xFFFE);
    for (std::uint32_t code = 0; code <= 0xFFFE; ++code) {
        REQUIRE(probe::encode_value(probe::decode_value(static_cast<std::uint16_t>(code))) == code);
    }
    CHECK(probe::move_value(loss(4), false) == win(5));
    CHECK(probe::move_value(loss(4), true) == win(1));
    CHECK(probe::move_value(win(0), true) == loss(1));
    CHECK(probe::move_value(draw(), true) == draw());
    CHECK(probe::better_for_mover(win(3), win(5)));
    CHECK(probe::better_for_mover(win(99), draw()));
    CHECK(probe::better_for_mover(draw(), loss(99)));
    CHECK(probe::better_for_mover(loss(9), loss(3)));
    CHECK_FALSE(probe::better_for_mover(draw(), draw()));
}

TEST_CASE("table names: either orientation parses to the canonical table") {
    auto id = probe::parse_table_name("antichess/KvKQ");
    REQUIRE(id.ok());
    CHECK(id->variant == VariantId::Antichess);
    CHECK(probe::table_name(id->variant, id->material) == "antichess/KQvK");
    CHECK(probe::parse_table_name("fourfile/KvKR")->material.name() == "KRvK");
    CHECK(probe::parse_table_name("KQvK").status().code() == StatusCode::InvalidArgument);
    CHECK(probe::parse_table_name("chess/KQvK").status().code() == StatusCode::InvalidArgument);
    CHECK(probe::parse_table_name("antichess/KQv").status().code() == StatusCode::InvalidArgument);
}

TEST_CASE("a tiny block cache stays within its limit and answers the same") {
    const auto& db = BuiltDb::antichess();
    const auto positions = mixed_sample();
    const auto expected = probe_all(db.tablebase(), positions);

    probe::TablebaseOptions options;
    options.cache_bytes = 96 << 10;  // about two KQvK blocks
    auto small = probe::Tablebase::open(db.path(), options);
    REQUIRE(small.ok());
    CHECK(probe_all(*small, positions) == expected);
    const auto stats = small->database().block_cache_stats();
    CHECK(stats.capacity == options.cache_bytes - options.cache_bytes / 8);  // an eighth holds resolved values
    CHECK(stats.bytes <= stats.capacity);
    CHECK(stats.misses > 20);  // blocks were evicted and read again

    // No cache at all: every probe decodes its block.
    options.cache_bytes = 0;
    auto none = probe::Tablebase::open(db.path(), options);
    REQUIRE(none.ok());
    CHECK(probe_all(*none, positions) == expected);
    CHECK(none->database().block_cache_stats().blocks == 0);
}

TEST_CASE("many threads probe one Tablebase") {
    const auto& db = BuiltDb::antichess();
    const auto positions = mixed_sample();
    const auto expected = probe_all(db.tablebase(), positions);
    probe::TablebaseOptions options;
    options.cache_bytes = 64 << 10;  // evictions while other threads read
    auto shared = probe::Tablebase::open(db.path(), options);
    REQUIRE(shared.ok());
    constexpr int kThreads = 4;
    std::vector<int> mismatches(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            // Each thread walks the sample from its own starting point, so
            // tables are opened and blocks evicted concurrently.
            for (std::size_t k = 0; k < positions.size(); ++k) {
                const std::size_t i = (k + t * positions.size() / kThreads) % positions.size();
                auto v = shared->probe(VariantId::Antichess, positions[i]);
                if (!v.ok() || !(*v == expected[i])) ++mismatches[t];
                if (i % 50 == 0) {
                    auto moves = shared->probe_moves(VariantId::Antichess, positions[i]);
                    if (!moves.ok() ||
                        (!moves->empty() && !(moves->front().for_mover == expected[i]))) {
                        ++mismatches[t];
                    }
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) CHECK(mismatches[t] == 0);
}

TEST_CASE("a resident table answers like the stored one") {
    const auto& db = BuiltDb::antichess();
    auto tb = probe::Tablebase::open(db.path());
    REQUIRE(tb.ok());
    const auto kpk = table_material(VariantId::Antichess, "KPvK");
    auto stored = tb->table(VariantId::Antichess, kpk);
    REQUIRE(stored.ok());
    CHECK_FALSE((*stored)->resident());
    auto resident = tb->load_resident(VariantId::Antichess, kpk);
    REQUIRE(resident.ok());
    CHECK((*resident)->resident());
    auto again = tb->table(VariantId::Antichess, kpk);
    CHECK(again->get() == resident->get());
    for (const Position& pos : sample_positions(VariantId::Antichess, "KPvK", 500, 5)) {
        auto a = tb->value_in(**stored, pos);
        auto b = tb->value_in(**resident, pos.color_flipped());
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(*a == *b);
        CHECK(*a == db.value(pos));
    }
    // read_codes: the same codes through both paths, and bounds.
    const std::uint64_t slots = (*stored)->info().spec.slot_count;
    std::vector<std::uint16_t> x(slots), y(slots);
    REQUIRE((*stored)->read_codes(0, slots, x.data()).ok());
    REQUIRE((*resident)->read_codes(0, slots, y.data()).ok());
    CHECK(x == y);
    CHECK((*stored)->read_codes(slots - 1, 2, x.data()).status().code() == StatusCode::InvalidArgument);
    // A position of another table is bad input for value_in.
    auto other = tb->value_in(**stored, db.fen("8/8/8/8/8/8/8/KQ3k2 b - - 0 1"));
    CHECK(other.status().code() == StatusCode::InvalidArgument);
}
