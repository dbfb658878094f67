#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "storage_support.hpp"
#include "tbforge/storage/database.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::TempDir;

namespace {

using test::open_rw;

StrategySpec spec_named(const std::string& name) {
    StrategySpec s;
    s.name = name;
    s.variant = "fourfile";
    s.side = Side::White;
    s.kind = StrategyKind::NonLoss;
    s.roots = {"r1bqk1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"};
    s.entry_encoding = "test-key/1 test-move/1";
    s.json = R"({"source":"test"})";
    return s;
}

// Entry i: an 8-byte key spreading entries over the key space (binary,
// with zero bytes) and a value of varying length.
std::string entry_key(std::uint64_t i) {
    const std::uint64_t x = tbf::test::scramble(i);
    std::string k(8, '\0');
    for (int b = 0; b < 8; ++b) k[b] = static_cast<char>(x >> (56 - 8 * b));
    if (i % 5 == 0) k[3] = '\0';
    return k;
}

std::string entry_value(std::uint64_t i) {
    return std::string(1 + i % 4, static_cast<char>('a' + i % 26));
}

// The expected strategy: key -> value, in key order.
std::map<std::string, std::string> expected_entries(std::uint64_t n) {
    std::map<std::string, std::string> m;
    for (std::uint64_t i = 0; i < n; ++i) m.emplace(entry_key(i), entry_value(i));
    REQUIRE(m.size() == n);
    return m;
}

void check_strategy(const Database& db, const std::string& name,
                    const std::map<std::string, std::string>& expected) {
    CAPTURE(name);
    auto reader = db.open_strategy(name);
    REQUIRE_MESSAGE(reader.ok(), reader.status().to_string());
    CHECK(reader->info().entry_count == expected.size());
    std::uint64_t bytes = 0;
    for (const auto& [k, v] : expected) bytes += k.size() + v.size();
    CHECK(reader->info().entry_bytes == bytes);

    // Full iteration in key order.
    auto iterator = reader->iterator();
    REQUIRE(iterator.ok());
    StrategyIterator& it = *iterator;
    auto want = expected.begin();
    std::uint64_t seen = 0;
    bool same = true;
    for (it.seek_to_first(); it.valid(); it.next(), ++want, ++seen) {
        if (want == expected.end() || it.key() != want->first || it.value() != want->second) {
            same = false;
            break;
        }
    }
    CHECK(same);
    CHECK(it.status().ok());
    CHECK(seen == expected.size());

    // Point lookups: present keys, and absent ones next to them.
    std::uint64_t checked = 0;
    for (const auto& [k, v] : expected) {
        if (checked++ % 97 != 0) continue;
        auto got = reader->get(k);
        REQUIRE(got.ok());
        REQUIRE(got->has_value());
        CHECK(**got == v);
        auto absent = reader->get(k + '\0');
        REQUIRE(absent.ok());
        CHECK(!absent->has_value());
    }
}

}  // namespace

TEST_CASE("side and kind names") {
    CHECK(side_name(Side::White) == "white");
    CHECK(side_name(Side::Black) == "black");
    CHECK(strategy_kind_name(StrategyKind::NonLoss) == "non-loss");
    CHECK(strategy_kind_name(StrategyKind::Winning) == "winning");
    CHECK(parse_side("black") == Side::Black);
    CHECK(!parse_side("Black").has_value());
    CHECK(parse_strategy_kind("winning") == StrategyKind::Winning);
    CHECK(!parse_strategy_kind("draw").has_value());
}

TEST_CASE("strategy round trip with sorted input, metadata, ordered iteration, lookups") {
    TempDir dir;
    const std::string path = dir.sub("db");
    const std::uint64_t n = tbf::test::kSanitized ? 5000 : 50000;
    const auto expected = expected_entries(n);
    StrategySpec spec = spec_named("ff-white");
    spec.roots.push_back("8/8/8/8/8/8/8/4K3 w - - 0 1");
    {
        Database db = open_rw(path);
        auto w = db.create_strategy(spec);
        REQUIRE(w.ok());
        for (const auto& [k, v] : expected) REQUIRE(w->add(k, v).ok());
        CHECK(w->entries_added() == n);
        REQUIRE(w->commit().ok());
        check_strategy(db, "ff-white", expected);
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    auto info = db->strategy_info("ff-white");
    REQUIRE(info.ok());
    CHECK(info->spec == spec);
    CHECK(info->format_version == kFormatVersion);
    check_strategy(*db, "ff-white", expected);

    // seek() lands on the first key at or after its argument.
    auto reader = db->open_strategy("ff-white");
    REQUIRE(reader.ok());
    auto iterator = reader->iterator();
    REQUIRE(iterator.ok());
    StrategyIterator& it = *iterator;
    auto middle = std::next(expected.begin(), static_cast<long>(n / 2));
    it.seek(middle->first);
    REQUIRE(it.valid());
    CHECK(it.key() == middle->first);
    it.seek(middle->first + '\0');
    REQUIRE(it.valid());
    CHECK(it.key() == std::next(middle)->first);
    it.seek(std::string(9, '\xff'));
    CHECK(!it.valid());
    CHECK(it.status().ok());
}

TEST_CASE("unsorted input is sorted in bounded memory, spilling runs") {
    TempDir dir;
    Database db = open_rw(dir.sub("db"));
    const std::uint64_t n = tbf::test::kSanitized ? 6000 : 40000;
    const auto expected = expected_entries(n);
    for (std::size_t buffer : {std::size_t{1} << 30, std::size_t{64} << 10}) {
        CAPTURE(buffer);
        StrategyWriteOptions o;
        o.sorted_input = false;
        o.sort_buffer_bytes = buffer;  // 64 KiB: tens of spilled runs
        o.replace = true;
        auto w = db.create_strategy(spec_named("unsorted"), o);
        REQUIRE(w.ok());
        for (std::uint64_t i = 0; i < n; ++i) REQUIRE(w->add(entry_key(i), entry_value(i)).ok());
        REQUIRE(w->commit().ok());
        check_strategy(db, "unsorted", expected);
        CHECK(std::filesystem::is_empty(dir.sub("db") + "/tbf-staging"));
    }
}

TEST_CASE("a failed import leaves nothing behind") {
    TempDir dir;
    const std::string path = dir.sub("db");
    Database db = open_rw(path);
    const auto old_entries = expected_entries(300);
    {
        auto w = db.create_strategy(spec_named("kept"));
        REQUIRE(w.ok());
        for (const auto& [k, v] : old_entries) REQUIRE(w->add(k, v).ok());
        REQUIRE(w->commit().ok());
    }
    StrategyWriteOptions replace;
    replace.replace = true;

    SUBCASE("keys out of order") {
        auto w = db.create_strategy(spec_named("new"));
        REQUIRE(w.ok());
        REQUIRE(w->add("b", "1").ok());
        const Status s = w->add("a", "2");
        CHECK(s.code() == StatusCode::InvalidArgument);
        CHECK(s.message().find("increasing") != std::string::npos);
        CHECK(w->add("c", "3").code() == StatusCode::Aborted);
        CHECK(w->commit().code() == StatusCode::Aborted);
    }
    SUBCASE("duplicate key in sorted input") {
        auto w = db.create_strategy(spec_named("new"));
        REQUIRE(w.ok());
        REQUIRE(w->add("a", "1").ok());
        CHECK(w->add("a", "2").code() == StatusCode::InvalidArgument);
    }
    SUBCASE("duplicate key across spilled runs") {
        StrategyWriteOptions o;
        o.sorted_input = false;
        o.sort_buffer_bytes = 4096;
        auto w = db.create_strategy(spec_named("new"), o);
        REQUIRE(w.ok());
        for (std::uint64_t i = 0; i < 2000; ++i) REQUIRE(w->add(entry_key(i), "x").ok());
        REQUIRE(w->add(entry_key(7), "again").ok());
        const Status s = w->commit();
        CHECK(s.code() == StatusCode::InvalidArgument);
        CHECK(s.message().find("twice") != std::string::npos);
    }
    SUBCASE("empty key") {
        auto w = db.create_strategy(spec_named("new"));
        REQUIRE(w.ok());
        CHECK(w->add("", "x").code() == StatusCode::InvalidArgument);
    }
    SUBCASE("abandoned writer") {
        auto w = db.create_strategy(spec_named("new"));
        REQUIRE(w.ok());
        REQUIRE(w->add("a", "1").ok());
    }
    SUBCASE("a failed replace keeps the old version") {
        auto w = db.create_strategy(spec_named("kept"), replace);
        REQUIRE(w.ok());
        REQUIRE(w->add("z", "1").ok());
        CHECK(w->add("y", "1").code() == StatusCode::InvalidArgument);
    }
    SUBCASE("replace not requested") {
        CHECK(db.create_strategy(spec_named("kept")).status().code() == StatusCode::AlreadyExists);
    }
    SUBCASE("invalid spec") {
        StrategySpec bad = spec_named("bad");
        bad.roots.push_back("\xff");
        CHECK(db.create_strategy(bad).status().code() == StatusCode::InvalidArgument);
    }
    CHECK(db.strategy_info("new").status().code() == StatusCode::NotFound);
    auto list = db.list_strategies();
    REQUIRE(list.ok());
    REQUIRE(list->size() == 1);
    CHECK((*list)[0].spec.name == "kept");
    check_strategy(db, "kept", old_entries);
    CHECK(std::filesystem::is_empty(path + "/tbf-staging"));
}

TEST_CASE("replace, delete and list strategies; tables are separate") {
    TempDir dir;
    const std::string path = dir.sub("db");
    Database db = open_rw(path);
    REQUIRE(tbf::test::write_synthetic(db, "same-name", 1000, 1, 2).ok());
    for (const char* name : {"s1", "same-name", "s3"}) {
        StrategySpec spec = spec_named(name);
        spec.side = Side::Black;
        spec.kind = StrategyKind::Winning;
        auto w = db.create_strategy(spec);
        REQUIRE(w.ok());
        REQUIRE(w->add("k", name).ok());
        REQUIRE(w->commit().ok());
    }
    StrategyWriteOptions replace;
    replace.replace = true;
    auto w = db.create_strategy(spec_named("s1"), replace);
    REQUIRE(w.ok());
    REQUIRE(w->commit().ok());  // an empty strategy is allowed
    CHECK(db.delete_strategy("s3").ok());
    CHECK(db.delete_strategy("s3").code() == StatusCode::NotFound);

    auto list = db.list_strategies();
    REQUIRE(list.ok());
    REQUIRE(list->size() == 2);
    CHECK((*list)[0].spec.name == "s1");
    CHECK((*list)[0].entry_count == 0);
    CHECK((*list)[0].spec.side == Side::White);
    CHECK((*list)[1].spec.name == "same-name");
    CHECK((*list)[1].spec.side == Side::Black);
    CHECK((*list)[1].spec.kind == StrategyKind::Winning);
    check_strategy(db, "same-name", {{"k", "same-name"}});
    check_strategy(db, "s1", {});
    auto tables = db.list_tables();
    REQUIRE(tables.ok());
    CHECK(tables->size() == 1);
    CHECK(db.open_table("same-name")->verify().ok());
}
