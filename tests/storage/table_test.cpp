#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <thread>

#include "storage_support.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::numbered;
using tbf::test::synthetic_value;
using tbf::test::TempDir;
using tbf::test::write_synthetic;

namespace {

Database open_cached_rw(const std::string& path, std::size_t cache_bytes = std::size_t{64} << 20) {
    DatabaseOptions o;
    o.block_cache_bytes = cache_bytes;
    return test::open_rw(path, o);
}

Database open_ro(const std::string& path, std::size_t cache_bytes = std::size_t{64} << 20) {
    DatabaseOptions o;
    o.block_cache_bytes = cache_bytes;
    auto db = Database::open(path, o);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    return std::move(*db);
}

TableReader open_table(const Database& db, const std::string& name) {
    auto reader = db.open_table(name);
    REQUIRE_MESSAGE(reader.ok(), reader.status().to_string());
    return *reader;
}

// Every slot through get(), every block through read_block(), and verify().
void check_all(const TableReader& reader, std::uint64_t seed) {
    const TableInfo& info = reader.info();
    std::uint64_t wrong = 0;
    for (std::uint64_t slot = 0; slot < info.spec.slot_count; ++slot) {
        auto v = reader.get(slot);
        REQUIRE_MESSAGE(v.ok(), v.status().to_string());
        if (*v != synthetic_value(seed, slot, info.spec.value_width)) ++wrong;
    }
    CHECK(wrong == 0);
    auto mismatches = tbf::test::count_mismatches(reader, seed);
    REQUIRE(mismatches.ok());
    CHECK(*mismatches == 0);
    const Status s = reader.verify();
    CHECK_MESSAGE(s.ok(), s.to_string());
}

// XXH64 of the little-endian values, computed here independently of storage.
std::uint64_t expected_checksum(std::uint64_t seed, std::uint64_t slots, std::uint32_t width) {
    Xxh64 h;
    for (std::uint64_t slot = 0; slot < slots; ++slot) {
        const std::uint32_t v = synthetic_value(seed, slot, width);
        std::uint8_t le[4] = {static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8),
                              static_cast<std::uint8_t>(v >> 16),
                              static_cast<std::uint8_t>(v >> 24)};
        h.update(std::span<const std::uint8_t>(le, width));
    }
    return h.digest();
}

TableWriteOptions small_blocks() {
    TableWriteOptions o;
    o.slots_per_block = 1024;
    return o;
}

std::uintmax_t sst_bytes(const std::string& dir) {
    std::uintmax_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().extension() == ".sst") n += e.file_size();
    }
    return n;
}

std::size_t files_in(const std::string& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}

}  // namespace

TEST_CASE("status and result") {
    const Status ok;
    CHECK(ok.ok());
    CHECK(ok.to_string() == "ok");
    const Status bad(StatusCode::ChecksumMismatch, "table 't' block 3: checksum mismatch");
    CHECK(!bad.ok());
    CHECK(bad.to_string() == "checksum-mismatch: table 't' block 3: checksum mismatch");
    CHECK(status_code_name(StatusCode::NotADatabase) == "not-a-database");

    const Result<int> value(7);
    REQUIRE(value.ok());
    CHECK(*value == 7);
    CHECK(value.status().ok());
    const Result<int> error(Status(StatusCode::NotFound, "gone"));
    CHECK(!error.ok());
    CHECK(error.status().code() == StatusCode::NotFound);
    // A Result must not claim failure with an ok status.
    const Result<int> misuse{Status{}};
    CHECK(misuse.status().code() == StatusCode::Internal);
}

TEST_CASE("tables round-trip across block boundaries, 1, 2 and 4 byte values") {
    TempDir dir;
    const std::string path = dir.sub("db");
    // Sizes around multiples of the block size, and one block exactly.
    const std::uint64_t sizes[] = {1, 1023, 1024, 1025, 3 * 1024 + 17, 20000};
    std::vector<std::tuple<std::string, std::uint64_t, std::uint32_t, std::uint64_t>> tables;
    {
        Database db = open_cached_rw(path);
        std::uint64_t seed = 10;
        for (std::uint32_t width : {1u, 2u, 4u}) {
            for (std::uint64_t slots : sizes) {
                for (std::uint64_t parity : {0u, 1u}) {  // compressible and noise
                    const std::string name =
                        numbered("w", width) + numbered("/n", slots) + numbered("/", parity);
                    const std::uint64_t s = seed++ * 2 + parity;
                    REQUIRE(write_synthetic(db, name, slots, width, s, small_blocks()).ok());
                    tables.emplace_back(name, slots, width, s);
                }
            }
        }
        for (const auto& entry : tables) {
            const std::string& name = std::get<0>(entry);
            const std::uint64_t slots = std::get<1>(entry);
            const std::uint64_t seed_ = std::get<3>(entry);
            CAPTURE(name);
            const TableReader reader = open_table(db, name);
            CHECK(reader.info().spec.slot_count == slots);
            CHECK(reader.info().block_count == (slots + 1023) / 1024);
            check_all(reader, seed_);
        }
    }
    // A fresh read-only open of the closed database sees the same values,
    // read through memory maps or with file reads, with a cache or without
    // one (values decoded straight from their records).
    for (const bool mmap : {true, false}) {
        for (const std::size_t cache : {std::size_t{64} << 20, std::size_t{0}}) {
            CAPTURE(mmap);
            CAPTURE(cache);
            DatabaseOptions o;
            o.block_cache_bytes = cache;
            o.mmap_reads = mmap;
            auto ro = Database::open(path, o);
            REQUIRE_MESSAGE(ro.ok(), ro.status().to_string());
            CHECK(ro->read_only());
            for (const auto& entry : tables) {
                const std::string& name = std::get<0>(entry);
                const std::uint64_t seed_ = std::get<3>(entry);
                CAPTURE(name);
                check_all(open_table(*ro, name), seed_);
            }
            if (cache == 0) CHECK(ro->block_cache_stats().misses == 0);
        }
    }
}

TEST_CASE("default block size: a table of several blocks round-trips") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    const std::uint64_t slots = 2 * kDefaultSlotsPerBlock + 12345;
    REQUIRE(write_synthetic(db, "big", slots, 2, 42).ok());
    const TableReader reader = open_table(db, "big");
    CHECK(reader.info().slots_per_block == kDefaultSlotsPerBlock);
    CHECK(reader.info().block_count == 3);
    check_all(reader, 42);
}

TEST_CASE("many tables in one database: listing and metadata") {
    TempDir dir;
    const std::string path = dir.sub("db");
    constexpr int kTables = 30;
    {
        Database db = open_cached_rw(path);
        for (int i = 0; i < kTables; ++i) {
            TableStatistics stats;
            stats.counters = {{"white.win", 1000u + i}, {"black.loss", 7u * i}};
            stats.json = R"({"max_dtc":)" + std::to_string(i) + R"(,"note":"ünïcode ♞"})";
            char name[16];
            std::snprintf(name, sizeof name, "t%02d", i);
            const auto width = static_cast<std::uint32_t>(1 + i % 2);
            REQUIRE(write_synthetic(db, name, 5000 + 333 * i, width, 100 + i, small_blocks(), stats)
                        .ok());
        }
    }
    Database db = open_ro(path);
    auto tables = db.list_tables();
    REQUIRE(tables.ok());
    REQUIRE(tables->size() == kTables);
    for (int i = 0; i < kTables; ++i) {
        const TableInfo& info = (*tables)[i];
        char name[16];
        std::snprintf(name, sizeof name, "t%02d", i);
        CAPTURE(name);
        CHECK(info.spec.name == name);
        CHECK(info.spec.variant == "antichess");
        CHECK(info.spec.material == "KQvK");
        CHECK(info.spec.value_encoding == "synthetic/1");
        CHECK(info.spec.generator_version == "storage-test");
        CHECK(info.spec.slot_count == 5000u + 333u * i);
        CHECK(info.spec.value_width == static_cast<std::uint32_t>(1 + i % 2));
        CHECK(info.format_version == 1);  // LZ4 tables are written as format 1
        CHECK(info.slots_per_block == 1024);
        CHECK(info.block_count == (info.spec.slot_count + 1023) / 1024);
        CHECK(info.stored_bytes > 0);
        CHECK(info.values_checksum ==
              expected_checksum(100 + i, info.spec.slot_count, info.spec.value_width));
        REQUIRE(info.statistics.counters.size() == 2);
        CHECK(info.statistics.counters[0] == Counter{"white.win", 1000u + i});
        CHECK(info.statistics.counters[1] == Counter{"black.loss", 7u * i});
        CHECK(info.statistics.json ==
              R"({"max_dtc":)" + std::to_string(i) + R"(,"note":"ünïcode ♞"})");
        auto single = db.table_info(name);
        REQUIRE(single.ok());
        CHECK(*single == info);
        check_all(open_table(db, name), 100 + i);
    }
}

TEST_CASE("values checksum depends only on the values") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    const std::uint64_t slots = 70000;
    std::vector<std::pair<std::string, TableWriteOptions>> variants;
    for (std::uint32_t spb : {1024u, 4096u, 65536u}) {
        for (Compression c : {Compression::None, Compression::Lz4, Compression::Lz4Hc}) {
            TableWriteOptions o;
            o.slots_per_block = spb;
            o.compression = c;
            variants.emplace_back(numbered("c", spb) + numbered("-", int(c)), o);
        }
    }
    for (const auto& entry : variants) {
        const auto& name = entry.first;
        const auto& options = entry.second;
        REQUIRE(write_synthetic(db, name, slots, 2, 8, options).ok());
    }
    const std::uint64_t expected = expected_checksum(8, slots, 2);
    std::uint64_t raw_bytes = 0;
    std::uint64_t lz4_bytes = 0;
    std::uint64_t hc_bytes = 0;
    for (const auto& entry : variants) {
        const auto& name = entry.first;
        const auto& options = entry.second;
        CAPTURE(name);
        const TableReader reader = open_table(db, name);
        CHECK(reader.info().values_checksum == expected);
        check_all(reader, 8);
        if (options.slots_per_block == 4096) {
            const std::uint64_t bytes = reader.info().stored_bytes;
            if (options.compression == Compression::None) raw_bytes = bytes;
            if (options.compression == Compression::Lz4) lz4_bytes = bytes;
            if (options.compression == Compression::Lz4Hc) hc_bytes = bytes;
        }
    }
    // Uncompressed: the values plus one 16-byte header per block.
    CHECK(raw_bytes == slots * 2 + 18 * 16);
    CHECK(lz4_bytes < raw_bytes / 3);
    CHECK(hc_bytes <= lz4_bytes);
}

TEST_CASE("parallel compression stores exactly what one thread stores") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    // 37 full blocks and a partial one: batches end mid-table and at commit.
    const std::uint64_t slots = 37 * 1024 + 100;
    for (int threads : {1, 2, 3}) {
        for (Compression c : {Compression::Lz4, Compression::Lz4Hc}) {
            TableWriteOptions o = small_blocks();
            o.compression = c;
            o.lz4hc_level = 4;
            o.compression_threads = threads;
            const std::string name = numbered("t", threads) + numbered("-", int(c));
            REQUIRE(write_synthetic(db, name, slots, 2, 12, o).ok());
        }
    }
    for (Compression c : {Compression::Lz4, Compression::Lz4Hc}) {
        const TableInfo one = *db.table_info(numbered("t", 1) + numbered("-", int(c)));
        for (int threads : {2, 3}) {
            const TableReader r = open_table(db, numbered("t", threads) + numbered("-", int(c)));
            CHECK(r.info().stored_bytes == one.stored_bytes);
            CHECK(r.info().values_checksum == one.values_checksum);
            check_all(r, 12);
        }
    }
    TableWriteOptions bad;
    bad.compression_threads = 0;
    CHECK(db.create_table(tbf::test::synthetic_spec("x", 1, 1), bad).status().code() ==
          StatusCode::InvalidArgument);
}

TEST_CASE("noise that LZ4 cannot shrink is stored raw") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    REQUIRE(write_synthetic(db, "noise", 10000, 1, 3, small_blocks()).ok());
    const TableReader reader = open_table(db, "noise");
    CHECK(reader.info().stored_bytes == 10000 + 10 * 16);
    check_all(reader, 3);
}

TEST_CASE("writer errors leave the database unchanged") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    REQUIRE(write_synthetic(db, "keep", 3000, 1, 2, small_blocks()).ok());
    const std::string staging = dir.sub("db") + "/tbf-staging";

    SUBCASE("wrong value width") {
        auto w = db.create_table(tbf::test::synthetic_spec("x", 10, 2));
        REQUIRE(w.ok());
        const std::vector<std::uint8_t> v(10);
        CHECK(w->append(std::span<const std::uint8_t>(v)).code() == StatusCode::InvalidArgument);
        const std::vector<std::uint16_t> v2(10);
        CHECK(w->append(std::span<const std::uint16_t>(v2)).ok());
        CHECK(w->commit().ok());
    }
    SUBCASE("more values than slots, then the writer is failed") {
        auto w = db.create_table(tbf::test::synthetic_spec("x", 10, 1));
        REQUIRE(w.ok());
        const std::vector<std::uint8_t> v(11);
        CHECK(w->append(std::span<const std::uint8_t>(v)).code() == StatusCode::InvalidArgument);
        CHECK(w->append(std::span<const std::uint8_t>(v).first(1)).code() == StatusCode::Aborted);
        CHECK(w->commit().code() == StatusCode::Aborted);
        CHECK(db.table_info("x").status().code() == StatusCode::NotFound);
    }
    SUBCASE("commit before every slot is written") {
        auto w = db.create_table(tbf::test::synthetic_spec("x", 5000, 1), small_blocks());
        REQUIRE(w.ok());
        REQUIRE(tbf::test::append_synthetic(*w, 1, 0, 4999).ok());
        CHECK(w->slots_written() == 4999);
        CHECK(w->commit().code() == StatusCode::InvalidArgument);
        CHECK(db.table_info("x").status().code() == StatusCode::NotFound);
    }
    SUBCASE("abandoned writers publish nothing and leave no files") {
        {
            auto w = db.create_table(tbf::test::synthetic_spec("x", 5000, 1), small_blocks());
            REQUIRE(w.ok());
            REQUIRE(tbf::test::append_synthetic(*w, 1, 0, 4000).ok());
            CHECK(files_in(staging) == 1);
        }
        auto w = db.create_table(tbf::test::synthetic_spec("y", 5000, 1), small_blocks());
        REQUIRE(w.ok());
        REQUIRE(tbf::test::append_synthetic(*w, 1, 0, 4000).ok());
        w->abort();
        CHECK(w->commit().code() == StatusCode::Aborted);
        CHECK(db.table_info("x").status().code() == StatusCode::NotFound);
        CHECK(db.table_info("y").status().code() == StatusCode::NotFound);
        CHECK(files_in(staging) == 0);
    }
    SUBCASE("existing table without replace") {
        CHECK(db.create_table(tbf::test::synthetic_spec("keep", 10, 1)).status().code() ==
              StatusCode::AlreadyExists);
        // Two writers of one new name: the second commit finds it taken.
        auto a = db.create_table(tbf::test::synthetic_spec("x", 10, 1));
        auto b = db.create_table(tbf::test::synthetic_spec("x", 10, 1));
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        REQUIRE(tbf::test::append_synthetic(*a, 5, 0, 10).ok());
        REQUIRE(tbf::test::append_synthetic(*b, 6, 0, 10).ok());
        CHECK(a->commit().ok());
        CHECK(b->commit().code() == StatusCode::AlreadyExists);
        check_all(open_table(db, "x"), 5);
    }
    SUBCASE("invalid specs and options") {
        CHECK(db.create_table(tbf::test::synthetic_spec("", 10, 1)).status().code() ==
              StatusCode::InvalidArgument);
        CHECK(db.create_table(tbf::test::synthetic_spec(std::string("a\0b", 3), 10, 1))
                  .status()
                  .code() == StatusCode::InvalidArgument);
        CHECK(db.create_table(tbf::test::synthetic_spec("bad\xff", 10, 1)).status().code() ==
              StatusCode::InvalidArgument);
        CHECK(db.create_table(tbf::test::synthetic_spec("x", 10, 3)).status().code() ==
              StatusCode::InvalidArgument);
        TableWriteOptions o;
        o.slots_per_block = 3000;
        CHECK(db.create_table(tbf::test::synthetic_spec("x", 10, 1), o).status().code() ==
              StatusCode::InvalidArgument);
        o.slots_per_block = 512;
        CHECK(db.create_table(tbf::test::synthetic_spec("x", 10, 1), o).status().code() ==
              StatusCode::InvalidArgument);
        TableStatistics bad;
        bad.json = "\xc0\xaf";  // overlong encoding of '/'
        auto w = db.create_table(tbf::test::synthetic_spec("x", 1, 1));
        REQUIRE(w.ok());
        REQUIRE(tbf::test::append_synthetic(*w, 1, 0, 1).ok());
        CHECK(w->commit(bad).code() == StatusCode::InvalidArgument);
    }
    check_all(open_table(db, "keep"), 2);
}

TEST_CASE("a read-only open refuses writes") {
    TempDir dir;
    {
        Database db = open_cached_rw(dir.sub("db"));
        REQUIRE(write_synthetic(db, "t", 10, 1, 2).ok());
    }
    Database db = open_ro(dir.sub("db"));
    CHECK(db.create_table(tbf::test::synthetic_spec("x", 10, 1)).status().code() ==
          StatusCode::ReadOnly);
    CHECK(db.delete_table("t").code() == StatusCode::ReadOnly);
    StrategySpec strategy;
    strategy.name = "s";
    CHECK(db.create_strategy(strategy).status().code() == StatusCode::ReadOnly);
    check_all(open_table(db, "t"), 2);
}

TEST_CASE("replace is explicit and switches versions atomically") {
    TempDir dir;
    const std::string path = dir.sub("db");
    Database db = open_cached_rw(path);
    REQUIRE(write_synthetic(db, "t", 9000, 2, 20, small_blocks()).ok());
    REQUIRE(write_synthetic(db, "other", 4000, 1, 21, small_blocks()).ok());
    const TableReader old_reader = open_table(db, "t");
    REQUIRE(old_reader.get(5).ok());  // block 0 is now cached

    TableWriteOptions replace = small_blocks();
    replace.replace = true;
    REQUIRE(write_synthetic(db, "t", 5000, 2, 22, replace).ok());
    const TableReader reader = open_table(db, "t");
    CHECK(reader.info().storage_id != old_reader.info().storage_id);
    check_all(reader, 22);
    check_all(open_table(db, "other"), 21);
    auto list = db.list_tables();
    REQUIRE(list.ok());
    CHECK(list->size() == 2);

    // The old version's data is gone: its cached block still answers, an
    // uncached one reports the table was replaced.
    CHECK(old_reader.get(5).ok());
    CHECK(old_reader.get(8000).status().code() == StatusCode::NotFound);
}

TEST_CASE("delete a table") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        Database db = open_cached_rw(path);
        REQUIRE(write_synthetic(db, "a", 9000, 2, 30, small_blocks()).ok());
        REQUIRE(write_synthetic(db, "c", 9000, 2, 32, small_blocks()).ok());
        // Noise does not compress: "b" takes about 18 KB of files.
        REQUIRE(write_synthetic(db, "b", 9000, 2, 31, small_blocks()).ok());
        const std::uintmax_t before = sst_bytes(path);
        CHECK(db.delete_table("b").ok());
        CHECK(db.delete_table("b").code() == StatusCode::NotFound);
        CHECK(sst_bytes(path) < before - 17000);  // its file is gone at once
        CHECK(db.open_table("b").status().code() == StatusCode::NotFound);
        // The name can be used again.
        REQUIRE(write_synthetic(db, "b", 100, 1, 33).ok());
        check_all(open_table(db, "b"), 33);
        CHECK(db.delete_table("b").ok());
    }
    Database db = open_ro(path);
    auto list = db.list_tables();
    REQUIRE(list.ok());
    REQUIRE(list->size() == 2);
    CHECK((*list)[0].spec.name == "a");
    CHECK((*list)[1].spec.name == "c");
    check_all(open_table(db, "a"), 30);
    check_all(open_table(db, "c"), 32);
    const auto missing = db.open_table("b");
    CHECK(missing.status().code() == StatusCode::NotFound);
    CHECK(missing.status().message().find("'b'") != std::string::npos);
}

TEST_CASE("edge cases: empty table, slot out of range, block out of range") {
    TempDir dir;
    Database db = open_cached_rw(dir.sub("db"));
    REQUIRE(write_synthetic(db, "empty", 0, 2, 1).ok());
    const TableReader empty = open_table(db, "empty");
    CHECK(empty.info().block_count == 0);
    CHECK(empty.info().values_checksum == xxh64(std::string_view()));
    CHECK(empty.get(0).status().code() == StatusCode::InvalidArgument);
    CHECK(empty.verify().ok());

    REQUIRE(write_synthetic(db, "t", 1500, 1, 4, small_blocks()).ok());
    const TableReader t = open_table(db, "t");
    CHECK(t.get(1499).ok());
    CHECK(t.get(1500).status().code() == StatusCode::InvalidArgument);
    CHECK(t.read_block(2).status().code() == StatusCode::InvalidArgument);
    auto last = t.read_block(1);
    REQUIRE(last.ok());
    CHECK((*last)->first_slot() == 1024);
    CHECK((*last)->size() == 476);
    CHECK((*last)->bytes().size() == 476);
}

TEST_CASE("block cache honours its byte limit and counts hits") {
    TempDir dir;
    // 1024 slots * 2 bytes per block: a 64 KiB cache holds fewer than 32 blocks.
    Database db = open_cached_rw(dir.sub("db"), 64 * 1024);
    REQUIRE(write_synthetic(db, "t", 100 * 1024, 2, 6, small_blocks()).ok());
    const TableReader t = open_table(db, "t");
    REQUIRE(t.get(0).ok());
    REQUIRE(t.get(1).ok());
    CacheStats s = db.block_cache_stats();
    CHECK(s.misses == 1);
    CHECK(s.hits == 1);
    CHECK(s.blocks == 1);
    check_all(t, 6);
    s = db.block_cache_stats();
    CHECK(s.capacity == 64 * 1024);
    CHECK(s.bytes <= s.capacity);
    CHECK(s.blocks > 10);
    CHECK(s.blocks < 32);
    db.clear_block_cache();
    CHECK(db.block_cache_stats().blocks == 0);

    // A cache of 0 bytes caches nothing and still answers.
    Database none = open_ro(dir.sub("db"), 0);
    check_all(open_table(none, "t"), 6);
    CHECK(none.block_cache_stats().blocks == 0);
}

TEST_CASE("without a cache, a read scope keeps the blocks read until it ends") {
    TempDir dir;
    {
        Database db = open_cached_rw(dir.sub("db"));
        REQUIRE(write_synthetic(db, "t", 40 * 1024, 1, 6, small_blocks()).ok());
        REQUIRE(write_synthetic(db, "u", 40 * 1024, 2, 7, small_blocks()).ok());
    }
    Database none = open_ro(dir.sub("db"), 0);
    Database other = open_ro(dir.sub("db"), 0);
    const TableReader t = open_table(none, "t"), u = open_table(none, "u"), t_other = open_table(other, "t");
    // Outside a scope every read decodes anew.
    CHECK(t.read_block(3)->get() != t.read_block(3)->get());
    {
        ReadScope scope;
        const BlockRef first = *t.read_block(3);
        CHECK(t.read_block(3)->get() == first.get());
        CHECK(u.read_block(3)->get() != first.get());        // another table's block 3
        CHECK(t_other.read_block(3)->get() != first.get());  // the same table through another handle
        {
            ReadScope nested;  // shares the outer scope's blocks
            CHECK(t.read_block(3)->get() == first.get());
        }
        CHECK(t.read_block(3)->get() == first.get());
        // Values through get() across more blocks than a scope keeps, the
        // two tables interleaved, oldest blocks replaced.
        std::uint64_t wrong = 0;
        for (std::uint64_t k = 0; k < 3 * 40 * 1024; k += 97) {
            const std::uint64_t slot = (k * 7919) % (40 * 1024);
            const TableReader& r = k % 2 ? t : u;
            auto v = r.get(slot);
            REQUIRE(v.ok());
            wrong += *v != synthetic_value(k % 2 ? 6 : 7, slot, r.info().spec.value_width);
        }
        CHECK(wrong == 0);
    }
    // Ended: nothing kept.
    const BlockRef again = *t.read_block(3);
    CHECK(t.read_block(3)->get() != again.get());
    CHECK(none.block_cache_stats().blocks == 0);
}

TEST_CASE("concurrent readers in threads get the right values") {
    TempDir dir;
    const std::string path = dir.sub("db");
    const std::uint64_t slots = tbf::test::kSanitized ? 60000 : 400000;
    {
        Database db = open_cached_rw(path);
        for (int t = 0; t < 3; ++t) {
            const auto width = static_cast<std::uint32_t>(1 + t % 2);
            REQUIRE(write_synthetic(db, numbered("t", t), slots + t, width, 50 + t, small_blocks())
                        .ok());
        }
    }
    // A small cache, so that threads keep evicting each other's blocks.
    Database db = open_ro(path, std::size_t{256} << 10);
    std::vector<TableReader> readers;
    for (int t = 0; t < 3; ++t) readers.push_back(open_table(db, numbered("t", t)));
    constexpr int kThreads = 4;
    const int lookups = tbf::test::kSanitized ? 5000 : 50000;
    std::vector<std::uint64_t> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            std::mt19937_64 rng(1234 + i);
            for (int k = 0; k < lookups; ++k) {
                const int t = static_cast<int>(rng() % 3);
                const TableReader& r = readers[t];
                const std::uint64_t slot = rng() % r.info().spec.slot_count;
                auto v = r.get(slot);
                if (!v.ok() || *v != synthetic_value(50 + t, slot, r.info().spec.value_width)) {
                    ++wrong[i];
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int i = 0; i < kThreads; ++i) CHECK(wrong[i] == 0);
    const CacheStats s = db.block_cache_stats();
    CHECK(s.hits + s.misses == static_cast<std::uint64_t>(kThreads) * lookups);
    CHECK(s.bytes <= s.capacity);
}
