// Formats 3, 4 and 5: several consecutive blocks in one record
// (docs/storage-format.md section 4). Each block keeps the payload it has in
// its own record (format 4: a zstd block without the frame's magic number and
// content size; format 5: a block of one value is that value in the
// directory), so a grouped table holds the same values and the same payload
// bytes or fewer, under one key, header and checksum per group.

#include <doctest/doctest.h>

#include <algorithm>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "raw_db.hpp"
#include "record_seal.hpp"
#include "scratch_db.hpp"
#include "storage_support.hpp"
#include "synthetic_checks.hpp"
#include "test_support.hpp"
#include "tbforge/storage/database.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::block_key;
using tbf::test::numbered;
using tbf::test::RawDb;
using tbf::test::TempDir;
using tbf::test::check_synthetic_table;
using tbf::test::open_db;
using tbf::test::write_synthetic;

namespace {

TableWriteOptions grouped(Compression compression, std::uint32_t blocks_per_record, bool bare_frames = true,
                          bool fills_in_directory = true) {
    TableWriteOptions o;
    o.bare_zstd_frames = bare_frames;
    o.fills_in_directory = fills_in_directory;
    o.compression = compression;
    o.zstd_level = 5;
    o.dictionary_bytes = 0;
    o.slots_per_block = 1024;
    o.blocks_per_record = blocks_per_record;
    return o;
}

}  // namespace

TEST_CASE("grouped tables round-trip with the payloads of single-block records") {
    TempDir dir;
    const std::string path = dir.sub("db");
    struct Case {
        std::string name;
        std::string single;  // the same values, one block a record
        std::uint64_t slots;
        std::uint32_t width;
        std::uint64_t seed;
        Compression compression;
        bool bare_frames;
    };
    std::vector<Case> cases;
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        std::uint64_t seed = 300;
        for (const Compression compression : {Compression::Zstd, Compression::Lz4, Compression::None}) {
            for (const std::uint32_t width : {1u, 2u, 4u}) {
                // Within one record, exactly one, a partial last record.
                for (const std::uint64_t slots : {1ull, 1025ull, 4 * 1024ull, 4 * 1024ull + 1, 21 * 1024ull + 17}) {
                    for (const std::uint64_t parity : {0u, 1u}) {  // compressible and noise
                        const std::uint64_t s = seed++ * 2 + parity;
                        const std::string base = numbered("c", static_cast<int>(compression)) +
                                                 numbered("/w", width) + numbered("/n", slots) +
                                                 numbered("/", parity);
                        REQUIRE(write_synthetic(db, base + "/g1", slots, width, s, grouped(compression, 1)).ok());
                        for (const std::uint32_t g : {2u, 4u, 16u}) {
                            // Format 4, and format 3 (full zstd frames) for 4 a record.
                            for (const bool bare : {true, false}) {
                                if (!bare && g != 4) continue;
                                const std::string name = base + numbered("/g", g) + (bare ? "" : "/f3");
                                CAPTURE(name);
                                REQUIRE(write_synthetic(db, name, slots, width, s, grouped(compression, g, bare)).ok());
                                cases.push_back({name, base + "/g1", slots, width, s, compression, bare});
                            }
                        }
                    }
                }
            }
        }
        for (const Case& c : cases) {
            CAPTURE(c.name);
            const TableInfo info = *db.table_info(c.name);
            const TableInfo single = *db.table_info(c.single);
            // Bare frames (and with them fills in the directory, format 5)
            // only where there are zstd blocks.
            const bool bare = c.bare_frames && c.compression == Compression::Zstd;
            CHECK(info.format_version == (bare ? 5u : 3u));
            // Ungrouped tables keep the oldest format that holds them.
            CHECK(single.format_version == (c.compression == Compression::Zstd ? 2u : 1u));
            CHECK(single.blocks_per_record == 1);
            CHECK(info.block_count == (c.slots + 1023) / 1024);
            CHECK(info.values_checksum == single.values_checksum);
            // Each block keeps its payload; only the headers and keys go, and
            // in format 4 5 bytes of each zstd frame (a block may then pay
            // as zstd where it was stored raw).
            if (bare) {
                CHECK(info.payload_bytes <= single.stored_bytes - 16 * single.block_count);
                if (c.seed % 2 == 0 && c.slots > 1) CHECK(info.payload_bytes < single.stored_bytes - 16 * single.block_count);
            } else {
                CHECK(info.payload_bytes == single.stored_bytes - 16 * single.block_count);
            }
            CHECK(info.stored_bytes >= info.payload_bytes + 16 * record_count(info) + info.block_count);
            // A directory entry: 1-3 bytes, or up to 5 for a 4-byte fill value.
            CHECK(info.stored_bytes <= info.payload_bytes + 16 * record_count(info) + 5 * info.block_count);
            if (info.block_count > 1) CHECK(info.stored_bytes < single.stored_bytes);
            check_synthetic_table(db, c.name, c.seed);
            // Record by record: the blocks in order, as read one by one.
            auto reader = db.open_table(c.name);
            REQUIRE(reader.ok());
            std::uint64_t next_block = 0;
            for (std::uint64_t r = 0; r < reader->record_count(); ++r) {
                auto blocks = reader->read_record(r);
                REQUIRE_MESSAGE(blocks.ok(), blocks.status().to_string());
                // Full records of g blocks, the last one holding the rest.
                const std::uint64_t left = info.block_count - next_block;
                CHECK(blocks->size() == std::min<std::uint64_t>(left, info.blocks_per_record));
                for (const BlockRef& block : *blocks) {
                    CHECK(block->block_no() == next_block);
                    auto single_read = reader->read_block(next_block++);
                    REQUIRE(single_read.ok());
                    CHECK(std::ranges::equal(block->bytes(), (*single_read)->bytes()));
                }
            }
            CHECK(next_block == info.block_count);
            CHECK(reader->read_record(reader->record_count()).status().code() ==
                  StatusCode::InvalidArgument);
        }
    }
    // Read-only, through memory maps: with a cache, and without one (each
    // value decoded from its record into a scratch buffer).
    for (const std::size_t cache : {std::size_t{1} << 20, std::size_t{0}}) {
        CAPTURE(cache);
        Database ro = open_db(path, OpenMode::ReadOnly, cache);
        for (const Case& c : cases) {
            CAPTURE(c.name);
            check_synthetic_table(ro, c.name, c.seed);
        }
        if (cache == 0) {
            CHECK(ro.block_cache_stats().blocks == 0);
            CHECK(ro.block_cache_stats().misses == 0);  // the cache is not even asked
        }
    }
}

TEST_CASE("a block of one repeated value is stored as that value in a group") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    // Blocks 0-4 all 0x0207 (2-byte values), 5-9 all 0, then varied values.
    const std::uint64_t slots = 12 * 1024 + 100;
    std::vector<std::uint16_t> values(slots);
    for (std::uint64_t i = 0; i < slots; ++i) {
        values[i] = i < 5 * 1024 ? 0x0207 : i < 10 * 1024 ? 0 : static_cast<std::uint16_t>(i % 5 + i / 7);
    }
    // One block a record, 4 a record in format 3 (full zstd frames), 4 and 5
    // (fills in the directory).
    for (const auto& [name, g, bare, in_directory] :
         {std::tuple{"fill/g1", 1u, false, false}, std::tuple{"fill/g4", 4u, false, false},
          std::tuple{"fill/g4bare", 4u, true, false}, std::tuple{"fill/g4f5", 4u, true, true}}) {
        auto writer = db.create_table(tbf::test::synthetic_spec(name, slots, 2),
                                      grouped(Compression::Zstd, g, bare, in_directory));
        REQUIRE(writer.ok());
        REQUIRE(writer->append(std::span<const std::uint16_t>(values)).ok());
        REQUIRE(writer->commit().ok());
    }
    const TableInfo single = *db.table_info("fill/g1");
    const TableInfo info = *db.table_info("fill/g4");
    const TableInfo bare = *db.table_info("fill/g4bare");
    const TableInfo f5 = *db.table_info("fill/g4f5");
    CHECK(info.format_version == 3);
    CHECK(bare.format_version == 4);
    CHECK(f5.format_version == 5);
    // Format 5: the 10 fills lose their 2-byte payloads; the directory entry
    // of 0x0207 (0x0207 * 4 + 3) takes two bytes where a size of 2 took one,
    // that of 0 one byte as before.
    CHECK(f5.payload_bytes == bare.payload_bytes - 10 * 2);
    CHECK(f5.stored_bytes == bare.stored_bytes - 10 * 2 + 5);
    CHECK(f5.values_checksum == single.values_checksum);
    // Format 4: the three zstd blocks lose the magic number (4 bytes) and
    // the content size, which a bare frame replaces by one window byte when
    // the size takes two (the full blocks), not when it takes one (the last).
    CHECK(bare.payload_bytes == info.payload_bytes - 5 - 5 - 4);
    CHECK(bare.values_checksum == single.values_checksum);
    CHECK(info.values_checksum == single.values_checksum);
    // Each of the 10 uniform blocks: 2 bytes instead of its zstd frame.
    std::vector<std::uint8_t> block(2 * 1024);
    for (std::size_t i = 0; i < block.size(); i += 2) {
        block[i] = 0x07;
        block[i + 1] = 0x02;
    }
    const std::size_t frame_7 = block_record_bytes(block, 2, grouped(Compression::Zstd, 1)) - 16;
    std::fill(block.begin(), block.end(), 0);
    const std::size_t frame_0 = block_record_bytes(block, 2, grouped(Compression::Zstd, 1)) - 16;
    CHECK(info.payload_bytes == single.stored_bytes - 16 * single.block_count - 5 * (frame_7 - 2) -
                                    5 * (frame_0 - 2));
    for (const char* name : {"fill/g4", "fill/g4bare", "fill/g4f5"}) {
        CAPTURE(name);
        auto reader = db.open_table(name);
        REQUIRE(reader.ok());
        for (const std::uint64_t slot : {std::uint64_t{0}, std::uint64_t{1023}, std::uint64_t{4000}, std::uint64_t{5 * 1024},
                                         std::uint64_t{7777}, std::uint64_t{10 * 1024 - 1}, std::uint64_t{10 * 1024}, slots - 1}) {
            CAPTURE(slot);
            auto v = reader->get(slot);
            REQUIRE(v.ok());
            CHECK(*v == values[slot]);
        }
        CHECK(reader->verify().ok());
    }
    // block_payload_bytes measures each block as the writer stores it: the
    // payloads of every format add up to the table's payload bytes (format
    // 1's record headers aside).
    for (const auto& layout : {std::tuple{"fill/g1", 1u, false, false}, std::tuple{"fill/g4", 4u, false, false},
                               std::tuple{"fill/g4bare", 4u, true, false}, std::tuple{"fill/g4f5", 4u, true, true}}) {
        // Plain names rather than structured bindings: CAPTURE takes them by reference.
        const char* name = std::get<0>(layout);
        const std::uint32_t g = std::get<1>(layout);
        CAPTURE(name);
        const TableWriteOptions options =
            grouped(Compression::Zstd, g, std::get<2>(layout), std::get<3>(layout));
        std::uint64_t measured = 0;
        for (std::uint64_t first = 0; first < slots; first += 1024) {
            const std::uint64_t count = std::min<std::uint64_t>(1024, slots - first);
            std::vector<std::uint8_t> raw(2 * count);
            for (std::uint64_t i = 0; i < count; ++i) {
                raw[2 * i] = static_cast<std::uint8_t>(values[first + i]);
                raw[2 * i + 1] = static_cast<std::uint8_t>(values[first + i] >> 8);
            }
            measured += block_payload_bytes(raw, 2, options);
        }
        const TableInfo t = *db.table_info(name);
        CHECK(measured == (g == 1 ? t.stored_bytes - 16 * t.block_count : t.payload_bytes));
    }
}

TEST_CASE("format 5: a fill value wider than the table's values is an error naming table and block") {
    TempDir dir;
    const std::string path = dir.sub("db");
    const std::uint64_t slots = 5 * 1024;
    std::uint64_t id = 0;
    {
        auto db = test::open_rw(path);
        // Blocks 0-3 (record 0) all 0x0207: four fills, no payload.
        std::vector<std::uint16_t> values(slots, 0x0207);
        for (std::uint64_t i = 4 * 1024; i < slots; ++i) values[i] = static_cast<std::uint16_t>(i % 7);
        auto writer = db.create_table(tbf::test::synthetic_spec("antichess/KRvK", slots, 2),
                                      grouped(Compression::Zstd, 4));
        REQUIRE(writer.ok());
        REQUIRE(writer->append(std::span<const std::uint16_t>(values)).ok());
        REQUIRE(writer->commit().ok());
        REQUIRE(db.table_info("antichess/KRvK")->format_version == 5);
        id = db.table_info("antichess/KRvK")->storage_id;
    }
    const std::string key = block_key(id, 0);
    {
        RawDb raw(path);
        std::string record = raw.get("blocks", key);
        // The header, four 2-byte directory entries (0x0207 * 4 + 3), nothing after.
        REQUIRE(record.size() == 16 + 4 * 2);
        // Block 2's entry becomes 0x10000 * 4 + 3, a value no 2-byte slot holds,
        // and the record is sealed again: only the directory's check can tell.
        record.replace(16 + 2 * 2, 2, std::string{'\x83', '\x80', '\x10'});
        tbf::test::reseal_record(key, record);
        raw.put("blocks", key, record);
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    auto reader = db->open_table("antichess/KRvK");
    REQUIRE(reader.ok());
    const Status damaged = reader->get(2 * 1024 + 5).status();
    CHECK(damaged.code() == StatusCode::Corruption);
    CHECK(damaged.message().find("antichess/KRvK") != std::string::npos);
    CHECK(damaged.message().find("block 2 ") != std::string::npos);
    CHECK(damaged.message().find("fill value") != std::string::npos);
    CHECK_FALSE(reader->verify().ok());
    // Blocks of other records still read.
    auto v = reader->get(4 * 1024 + 3);
    REQUIRE(v.ok());
    CHECK(*v == (4 * 1024 + 3) % 7);
}

TEST_CASE("blocks per record: a power of two up to 256") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    for (const std::uint32_t g : {0u, 3u, 12u, 512u}) {
        CAPTURE(g);
        const auto w = db.create_table(tbf::test::synthetic_spec("t", 10, 1), grouped(Compression::Zstd, g));
        CHECK(w.status().code() == StatusCode::InvalidArgument);
    }
    REQUIRE(write_synthetic(db, "t", 5000, 1, 2, grouped(Compression::Zstd, 256)).ok());
    check_synthetic_table(db, "t", 2);
}

TEST_CASE("a copied grouped table has the same values and bytes") {
    TempDir dir;
    Database from = open_db(dir.sub("from"), OpenMode::ReadWrite, 0);
    REQUIRE(write_synthetic(from, "antichess/KRvK", 37 * 1024 + 3, 2, 8, grouped(Compression::Zstd, 8)).ok());
    Database to = open_db(dir.sub("to"), OpenMode::ReadWrite, 0);
    auto source = from.open_table("antichess/KRvK");
    REQUIRE(source.ok());
    auto copy = to.copy_table(*source);
    REQUIRE_MESSAGE(copy.ok(), copy.status().to_string());
    CHECK(copy->blocks_per_record == 8);
    CHECK(copy->stored_bytes == source->info().stored_bytes);
    CHECK(copy->payload_bytes == source->info().payload_bytes);
    check_synthetic_table(to, "antichess/KRvK", 8);
}

TEST_CASE("a damaged group record is an error naming table and block, never a wrong value") {
    TempDir dir;
    const std::string path = dir.sub("db");
    std::uint64_t id = 0;
    {
        auto db = test::open_rw(path);
        REQUIRE(write_synthetic(db, "antichess/KRvK", 20 * 1024 + 5, 2, 2, grouped(Compression::Zstd, 4)).ok());
        id = db.table_info("antichess/KRvK")->storage_id;
    }
    // Record 1 holds blocks 4-7; block 6 is read.
    const std::string key = block_key(id, 1);
    std::string original;
    {
        RawDb raw(path);
        original = raw.get("blocks", key);
    }
    REQUIRE(original.size() > 40);
    REQUIRE(original[0] == 3);  // a group
    const std::uint64_t slot = 6 * 1024 + 7;
    // Every byte (sanitizer builds: the header, directory and every seventh
    // after); block 2 is in record 0.
    tbf::test::check_flipped_record(path, key, original, 7, {"antichess/KRvK", slot, "block 6", 2 * 1024 + 7, 2});
    {
        RawDb raw(path);
        raw.put("blocks", key, original.substr(0, original.size() / 2));
        // Record 2 under record 3's key: the key is in the checksum.
        raw.put("blocks", block_key(id, 3), raw.get("blocks", block_key(id, 2)));
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    auto reader = db->open_table("antichess/KRvK");
    REQUIRE(reader.ok());
    const Status truncated = reader->get(slot).status();
    CHECK(truncated.code() == StatusCode::ChecksumMismatch);
    CHECK(truncated.message().find("block 6 ") != std::string::npos);
    const Status moved = reader->get(13 * 1024).status();
    CHECK(moved.code() == StatusCode::ChecksumMismatch);
    CHECK(moved.message().find("block 13 ") != std::string::npos);
    Database to = open_db(dir.sub("to"), OpenMode::ReadWrite, 0);
    CHECK(!to.copy_table(*reader).ok());
}

TEST_CASE("grouped zstd blocks compressed with a table's dictionary read back in formats 3 and 4") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        for (const bool bare : {false, true}) {
            TableWriteOptions o = grouped(Compression::Zstd, 4, bare);
            o.dictionary_bytes = 1024;
            o.dictionary_sample_bytes = 16 * 1024;  // trained mid-table
            const std::string name = bare ? "dict/f4" : "dict/f3";
            CAPTURE(name);
            REQUIRE(write_synthetic(db, name, 40 * 1024 + 17, 2, 700, o).ok());
            const TableInfo info = *db.table_info(name);
            CHECK(info.format_version == (bare ? 5u : 3u));
            CHECK_FALSE(info.dictionary.empty());
            check_synthetic_table(db, name, 700);
        }
    }
    // Read-only: the dictionary comes from the metadata record.
    Database ro = open_db(path, OpenMode::ReadOnly, 0);
    for (const char* name : {"dict/f3", "dict/f4"}) {
        CAPTURE(name);
        check_synthetic_table(ro, name, 700);
    }
}
