// Format 6: a table's blocks coded by a grammar of value pairs shared by the
// whole table and a Huffman code, in sub-blocks that decode on their own
// (docs/storage-format.md section 4). The same values as the table's zstd
// form, read every way a reader reads them; a value read without a cache
// decodes only its sub-block.

#include <doctest/doctest.h>

#include <span>
#include <string>
#include <thread>
#include <vector>

#include "raw_db.hpp"
#include "record_seal.hpp"
#include "records.hpp"
#include "scratch_db.hpp"
#include "storage_support.hpp"
#include "synthetic_checks.hpp"
#include "test_support.hpp"
#include "tbforge/storage/database.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::block_key;
using tbf::test::check_synthetic_table;
using tbf::test::numbered;
using tbf::test::open_db;
using tbf::test::RawDb;
using tbf::test::synthetic_value;
using tbf::test::TempDir;
using tbf::test::write_synthetic;

namespace {

TableWriteOptions paired(PairCoding coding, std::uint32_t blocks_per_record = 4) {
    TableWriteOptions o;
    o.compression = Compression::Zstd;
    o.zstd_level = 5;
    o.dictionary_bytes = 0;
    o.slots_per_block = 1024;
    o.blocks_per_record = blocks_per_record;
    o.pair_coding = coding;
    return o;
}

// Every slot through get() inside one ReadScope (records kept by the scope)
// and outside any (each read fetches its record).
void check_single_reads(const Database& db, const std::string& name, std::uint64_t seed) {
    auto reader = db.open_table(name);
    REQUIRE(reader.ok());
    const TableInfo& info = reader->info();
    const std::uint32_t width = info.spec.value_width;
    std::uint64_t wrong = 0;
    {
        ReadScope scope;
        for (std::uint64_t slot = 0; slot < info.spec.slot_count; ++slot) {
            auto v = reader->get(slot);
            REQUIRE_MESSAGE(v.ok(), v.status().to_string());
            wrong += *v != synthetic_value(seed, slot, width);
        }
    }
    for (std::uint64_t slot = 0; slot < info.spec.slot_count; slot += 7) {
        auto v = reader->get(slot);
        REQUIRE_MESSAGE(v.ok(), v.status().to_string());
        wrong += *v != synthetic_value(seed, slot, width);
    }
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("format 6: pair-coded tables hold the values of their zstd form, read with and without a cache") {
    TempDir dir;
    const std::string path = dir.sub("db");
    std::vector<std::pair<std::string, std::uint64_t>> written;
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        std::uint64_t seed = 600;
        for (const std::uint32_t width : {1u, 2u, 4u}) {
            for (const std::uint64_t slots : {1ull, 1025ull, 4 * 1024ull, 4 * 1024ull + 1, 21 * 1024ull + 17}) {
                const std::uint64_t s = 2 * seed++;  // runs of a few values
                const std::string name = numbered("w", width) + numbered("/n", slots);
                CAPTURE(name);
                REQUIRE(write_synthetic(db, name, slots, width, s, paired(PairCoding::Always)).ok());
                REQUIRE(write_synthetic(db, name + "/zstd", slots, width, s, paired(PairCoding::Off)).ok());
                const TableInfo info = *db.table_info(name);
                const TableInfo zstd = *db.table_info(name + "/zstd");
                CHECK(info.format_version == 6);
                CHECK_FALSE(info.pair_model.empty());
                CHECK(zstd.format_version == 5);
                CHECK(zstd.pair_model.empty());
                CHECK(info.values_checksum == zstd.values_checksum);
                // The model is part of what the table stores.
                CHECK(info.stored_bytes >= info.payload_bytes + info.pair_model.size() + 16 * record_count(info));
                written.emplace_back(name, s);
            }
        }
    }
    for (const std::size_t cache : {std::size_t{0}, std::size_t{64} << 20}) {
        CAPTURE(cache);
        Database db = open_db(path, OpenMode::ReadOnly, cache);
        for (const auto& table : written) {
            const std::string& name = table.first;
            const std::uint64_t seed = table.second;
            CAPTURE(name);
            check_synthetic_table(db, name, seed);
            check_single_reads(db, name, seed);
            auto reader = db.open_table(name);
            REQUIRE(reader.ok());
            CHECK(reader->reads_single_values() == (cache == 0));
        }
    }
    // A copy into another database keeps the model and the values.
    {
        Database source = open_db(path, OpenMode::ReadOnly, 0);
        Database target = open_db(dir.sub("copy"), OpenMode::ReadWrite, 0);
        const std::string& name = written.back().first;
        const std::uint64_t seed = written.back().second;
        auto reader = source.open_table(name);
        REQUIRE(reader.ok());
        auto copy = target.copy_table(*reader);
        REQUIRE_MESSAGE(copy.ok(), copy.status().to_string());
        CHECK(copy->pair_model == reader->info().pair_model);
        CHECK(copy->stored_bytes == reader->info().stored_bytes);
        check_synthetic_table(target, name, seed);
    }
}

TEST_CASE("format 6: auto codes pairs only within its tolerance of zstd; too many values stay zstd") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    // 4-byte noise: more distinct values (about 100,000) than the code has
    // symbols (65536).
    REQUIRE(write_synthetic(db, "noise", 100 * 1024, 4, 7, paired(PairCoding::Always)).ok());
    CHECK(db.table_info("noise")->format_version == 5);
    CHECK(db.table_info("noise")->pair_model.empty());
    check_synthetic_table(db, "noise", 7);
    // Synthetic runs and noise, and blocks that each repeat a stretch of 97
    // random values of their own: zstd copies each repeat whole, a grammar of
    // pairs must spell every block's stretch out in its model.
    const auto write = [&](const std::string& name, std::uint64_t seed, PairCoding coding) {
        if (seed != 0) return write_synthetic(db, name, 40 * 1024, 1, seed, paired(coding));
        std::vector<std::uint8_t> values(40 * 1024);
        for (std::size_t i = 0; i < values.size(); ++i) {
            values[i] = static_cast<std::uint8_t>(synthetic_value(11 + 2 * (i / 1024), i % 1024 % 97, 1));
        }
        auto writer = db.create_table(tbf::test::synthetic_spec(name, values.size(), 1), paired(coding));
        if (!writer.ok()) return writer.status();
        if (Status s = writer->append(std::span<const std::uint8_t>(values)); !s.ok()) return s;
        return writer->commit();
    };
    int paired_tables = 0;
    int zstd_tables = 0;
    for (const std::uint64_t seed : {2ull, 4ull, 5ull, 8ull, 40ull, 0ull}) {
        CAPTURE(seed);
        const std::string base = numbered("s", static_cast<int>(seed));
        REQUIRE(write(base + "/off", seed, PairCoding::Off).ok());
        REQUIRE(write(base + "/always", seed, PairCoding::Always).ok());
        REQUIRE(write(base + "/auto", seed, PairCoding::Auto).ok());
        const TableInfo off = *db.table_info(base + "/off");
        const TableInfo always = *db.table_info(base + "/always");
        const TableInfo automatic = *db.table_info(base + "/auto");
        REQUIRE(always.format_version == 6);
        CHECK(always.values_checksum == off.values_checksum);
        CHECK(automatic.values_checksum == off.values_checksum);
        const bool pairs_pay = static_cast<double>(always.payload_bytes + always.pair_model.size()) <=
                               1.10 * static_cast<double>(off.payload_bytes);
        CHECK(automatic.format_version == (pairs_pay ? 6u : 5u));
        CHECK(automatic.stored_bytes == (pairs_pay ? always.stored_bytes : off.stored_bytes));
        if (seed != 0) check_synthetic_table(db, base + "/auto", seed);
        (pairs_pay ? paired_tables : zstd_tables) += 1;
        // The repeated stretches cost a grammar far larger than zstd's copies.
        if (seed == 0) CHECK_FALSE(pairs_pay);
    }
    // Each way at least once.
    CHECK(paired_tables > 0);
    CHECK(zstd_tables > 0);
}

namespace {

Database open_keeping(const std::string& path, std::size_t cache_bytes, std::size_t kept_record_bytes) {
    DatabaseOptions o;
    o.block_cache_bytes = cache_bytes;
    o.kept_record_bytes = kept_record_bytes;
    auto db = Database::open(path, o);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    return std::move(*db);
}

// Every slot of `name` through get(), outside any ReadScope, on `threads`
// threads at once (each reads all of them); the slots read wrong.
std::uint64_t single_read_mismatches(const Database& db, const std::string& name, std::uint64_t seed,
                                     int threads) {
    auto reader = db.open_table(name);
    REQUIRE(reader.ok());
    const TableInfo& info = reader->info();
    std::vector<std::uint64_t> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (std::uint64_t slot = 0; slot < info.spec.slot_count; ++slot) {
                const auto v = reader->get((slot + t * 997) % info.spec.slot_count);
                wrong[t] += !v.ok() || *v != synthetic_value(seed, (slot + t * 997) % info.spec.slot_count,
                                                            info.spec.value_width);
            }
        });
    }
    for (std::thread& th : pool) th.join();
    std::uint64_t sum = 0;
    for (const std::uint64_t w : wrong) sum += w;
    return sum;
}

}  // namespace

TEST_CASE("kept records: read-only reads keep each checked record once, within their limit, same values") {
    TempDir dir;
    const std::string path = dir.sub("db");
    const std::uint64_t seed = 1500;
    const std::uint64_t slots = 21 * 1024 + 17;  // 22 blocks in 6 records of 4
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        REQUIRE(write_synthetic(db, "pairs", slots, 2, seed, paired(PairCoding::Always)).ok());
        REQUIRE(write_synthetic(db, "zstd", slots, 2, seed + 1, paired(PairCoding::Off)).ok());
        REQUIRE(record_count(*db.table_info("pairs")) == 6);
        // A writer's open keeps nothing: its compactions may unmap a file.
        CHECK(single_read_mismatches(db, "pairs", seed, 1) == 0);
        CHECK(db.kept_record_stats().records == 0);
        CHECK(db.kept_record_stats().limit == 0);
    }
    SUBCASE("both tables, with and without a block cache, one and two threads") {
        for (const std::size_t cache : {std::size_t{0}, std::size_t{64} << 20}) {
            for (const int threads : {1, 2}) {
                CAPTURE(cache);
                CAPTURE(threads);
                Database db = open_keeping(path, cache, std::size_t{1} << 20);
                CHECK(single_read_mismatches(db, "pairs", seed, threads) == 0);
                CHECK(db.kept_record_stats().records == 6);
                CHECK(single_read_mismatches(db, "zstd", seed + 1, threads) == 0);
                const KeptRecordStats stats = db.kept_record_stats();
                CHECK(stats.records == 12);
                CHECK(stats.bytes >= 12 * 512);
                CHECK(stats.bytes <= stats.limit);
                // Read again from the kept records alone.
                CHECK(single_read_mismatches(db, "pairs", seed, threads) == 0);
                CHECK(db.kept_record_stats().records == 12);
                // verify() reads the stored files, not what is kept.
                CHECK(db.open_table("pairs")->verify().ok());
            }
        }
    }
    SUBCASE("no limit keeps nothing; a small one keeps what fits") {
        Database none = open_keeping(path, 0, 0);
        CHECK(single_read_mismatches(none, "pairs", seed, 2) == 0);
        CHECK(none.kept_record_stats().records == 0);
        Database small = open_keeping(path, 0, 2 * 1024);
        CHECK(single_read_mismatches(small, "pairs", seed, 2) == 0);
        CHECK(single_read_mismatches(small, "zstd", seed + 1, 1) == 0);
        const KeptRecordStats stats = small.kept_record_stats();
        CHECK(stats.records >= 1);
        CHECK(stats.records < 6);
        CHECK(stats.bytes <= 2 * 1024);
    }
}

TEST_CASE("format 6: a damaged pair-coded record is an error naming table and block, read with or without a cache") {
    TempDir dir;
    const std::string path = dir.sub("db");
    const std::uint64_t seed = 1002;
    std::uint64_t id = 0;
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        REQUIRE(write_synthetic(db, "antichess/KRvK", 9 * 1024, 2, seed, paired(PairCoding::Always, 2)).ok());
        REQUIRE(db.table_info("antichess/KRvK")->format_version == 6);
        id = db.table_info("antichess/KRvK")->storage_id;
    }
    const std::string key = block_key(id, 0);
    const std::string original = RawDb(path).get("blocks", key);
    // Cached reads decode whole blocks; each damaged database is checked by
    // the shared helper (block 1 in record 0, slot 8197 in record 4).
    tbf::test::check_flipped_record(path, key, original, 7,
                                    {"antichess/KRvK", 1024 + 100, "block 1", 8 * 1024 + 5, seed});
    // Without a cache a value decodes its sub-block alone: every damage with
    // a checksum that fits is a value or an error naming a block of the
    // record, never a crash or a read outside it.
    for (std::size_t pos = 16; pos < original.size(); pos += tbf::test::kSanitized ? 11 : 2) {
        CAPTURE(pos);
        std::string damaged = original;
        damaged[pos] = static_cast<char>(damaged[pos] ^ 0x24);
        tbf::test::reseal_record(key, damaged);
        RawDb(path).put("blocks", key, damaged);
        Database db = open_db(path, OpenMode::ReadOnly, 0);
        auto reader = db.open_table("antichess/KRvK");
        REQUIRE(reader.ok());
        for (std::uint64_t slot = 0; slot < 2 * 1024; slot += 61) {
            const auto v = reader->get(slot);
            if (!v.ok()) {
                CHECK(v.status().code() == StatusCode::Corruption);
                CHECK(v.status().message().find("antichess/KRvK") != std::string::npos);
                CHECK(v.status().message().find("block " + std::to_string(slot / 1024)) != std::string::npos);
            }
        }
        auto intact = reader->get(8 * 1024 + 5);
        REQUIRE(intact.ok());
        CHECK(*intact == synthetic_value(seed, 8 * 1024 + 5, 2));
    }
}

TEST_CASE("format 6: a pair model that does not parse is refused when the table is opened") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        REQUIRE(write_synthetic(db, "antichess/KQvK", 5 * 1024, 1, 4, paired(PairCoding::Always)).ok());
    }
    const std::string catalog_key = detail::catalog_key(detail::kTableTag, "antichess/KQvK");
    TableInfo info;
    REQUIRE(detail::decode_table_info("antichess/KQvK", RawDb(path).get("catalog", catalog_key), info).ok());
    REQUIRE_FALSE(info.pair_model.empty());
    // Cut short, and a version no reader knows: a sealed record, so only the
    // model's own checks can tell.
    for (const std::string& model : {info.pair_model.substr(0, info.pair_model.size() / 2),
                                     std::string(1, '\x7f') + info.pair_model.substr(1)}) {
        TableInfo damaged = info;
        damaged.pair_model = model;
        RawDb(path).put("catalog", catalog_key, detail::encode_table_info(damaged));
        auto db = Database::open(path);
        const auto reader = db.ok() ? db->open_table("antichess/KQvK") : Result<TableReader>(db.status());
        REQUIRE_FALSE(reader.ok());
        CHECK(reader.status().code() == StatusCode::Corruption);
        CHECK(reader.status().message().find("antichess/KQvK") != std::string::npos);
        CHECK(reader.status().message().find("pair") != std::string::npos);
    }
}
