// Format 2: zstd blocks with per-table dictionaries (docs/storage-format.md
// sections 4 and 6). The same values as through LZ4, differently encoded;
// format-1 tables written beside them stay format 1.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "storage_support.hpp"
#include "synthetic_checks.hpp"
#include "tbforge/storage/database.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::numbered;
using tbf::test::synthetic_value;
using tbf::test::TempDir;
using tbf::test::check_synthetic_table;
using tbf::test::open_db;
using tbf::test::write_synthetic;

namespace {

TableWriteOptions zstd(std::uint32_t slots_per_block, std::uint32_t dictionary_bytes,
                       std::size_t sample_bytes) {
    TableWriteOptions o;
    o.compression = Compression::Zstd;
    o.zstd_level = 5;
    o.slots_per_block = slots_per_block;
    o.dictionary_bytes = dictionary_bytes;
    o.dictionary_sample_bytes = sample_bytes;
    return o;
}

// `count` codes in runs of 1 to 24 over `symbols` symbols, as wdl-dtc/2
// codes come.
std::vector<std::uint8_t> random_runs(std::size_t count, std::uint64_t seed, unsigned symbols) {
    std::vector<std::uint8_t> runs;
    std::uint64_t state = seed;
    while (runs.size() < count) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const auto length = static_cast<std::size_t>((state >> 40) % 24 + 1);
        const auto symbol = static_cast<std::uint8_t>((state >> 20) % symbols);
        runs.insert(runs.end(), std::min(length, count - runs.size()), symbol);
    }
    return runs;
}

}  // namespace

TEST_CASE("zstd tables round-trip: widths, block boundaries, dictionaries, noise") {
    TempDir dir;
    const std::string path = dir.sub("db");
    struct Case {
        std::string name;
        std::uint64_t slots;
        std::uint32_t width;
        std::uint64_t seed;
        TableWriteOptions options;
    };
    std::vector<Case> cases;
    std::uint64_t seed = 100;
    for (std::uint32_t width : {1u, 2u, 4u}) {
        for (std::uint64_t slots : {1ull, 1023ull, 1024ull, 1025ull, 40 * 1024ull + 17}) {
            for (std::uint64_t parity : {0u, 1u}) {  // compressible and noise
                // No dictionary; a dictionary trained when the writer's hold
                // fills mid-table; one trained at commit.
                const TableWriteOptions variants[] = {zstd(1024, 0, 0), zstd(1024, 1024, 16 * 1024),
                                                      zstd(1024, 1024, 64ull << 20)};
                for (std::size_t v = 0; v < 3; ++v) {
                    const std::string name = numbered("w", width) + numbered("/n", slots) +
                                             numbered("/", parity) + numbered("/d", v);
                    cases.push_back({name, slots, width, seed++ * 2 + parity, variants[v]});
                }
            }
        }
    }
    {
        Database db = open_db(path, OpenMode::ReadWrite, 0);
        for (const Case& c : cases) {
            CAPTURE(c.name);
            REQUIRE(write_synthetic(db, c.name, c.slots, c.width, c.seed, c.options).ok());
            const TableInfo info = *db.table_info(c.name);
            CHECK(info.format_version == 2);
            CHECK(info.block_count == (c.slots + 1023) / 1024);
            check_synthetic_table(db, c.name, c.seed);
        }
    }
    // A read-only open of the closed database: dictionaries come from the
    // metadata records.
    Database ro = open_db(path, OpenMode::ReadOnly, std::size_t{1} << 20);
    for (const Case& c : cases) {
        CAPTURE(c.name);
        check_synthetic_table(ro, c.name, c.seed);
    }
}

TEST_CASE("a dictionary is trained on large compressible tables and makes them smaller") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::uint64_t slots = 300 * 1024;
    REQUIRE(write_synthetic(db, "plain", slots, 1, 6, zstd(1024, 0, 0)).ok());
    REQUIRE(write_synthetic(db, "dict", slots, 1, 6, zstd(1024, 2048, 1 << 20)).ok());
    const TableInfo plain = *db.table_info("plain");
    const TableInfo dict = *db.table_info("dict");
    CHECK(plain.dictionary.empty());
    REQUIRE(!dict.dictionary.empty());
    CHECK(dict.dictionary.size() <= 2048);
    CHECK(dict.values_checksum == plain.values_checksum);
    CHECK(dict.stored_bytes + dict.dictionary.size() < plain.stored_bytes);
    check_synthetic_table(db, "dict", 6);
}

TEST_CASE("zstd, LZ4 and raw tables of the same values: one checksum, zstd smallest") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::uint64_t slots = 70000;
    TableWriteOptions lz4;
    lz4.slots_per_block = 4096;
    TableWriteOptions raw = lz4;
    raw.compression = Compression::None;
    for (std::uint32_t width : {1u, 2u}) {
        CAPTURE(width);
        REQUIRE(write_synthetic(db, numbered("lz4-", width), slots, width, 8, lz4).ok());
        REQUIRE(write_synthetic(db, numbered("raw-", width), slots, width, 8, raw).ok());
        REQUIRE(write_synthetic(db, numbered("zstd-", width), slots, width, 8, zstd(4096, 0, 0)).ok());
        const TableInfo a = *db.table_info(numbered("lz4-", width));
        const TableInfo b = *db.table_info(numbered("raw-", width));
        const TableInfo c = *db.table_info(numbered("zstd-", width));
        CHECK(a.values_checksum == c.values_checksum);
        CHECK(b.values_checksum == c.values_checksum);
        // LZ4 and raw tables are written exactly as format 1 wrote them.
        CHECK(a.format_version == 1);
        CHECK(b.format_version == 1);
        CHECK(c.format_version == 2);
        CHECK(c.stored_bytes < a.stored_bytes);
        check_synthetic_table(db, numbered("zstd-", width), 8);
        check_synthetic_table(db, numbered("lz4-", width), 8);
    }
}

TEST_CASE("parallel zstd compression stores exactly what one thread stores") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::uint64_t slots = 37 * 1024 + 100;
    for (int threads : {1, 2, 3}) {
        TableWriteOptions o = zstd(1024, 1024, 8 * 1024);
        o.compression_threads = threads;
        REQUIRE(write_synthetic(db, numbered("t", threads), slots, 2, 12, o).ok());
    }
    const TableInfo one = *db.table_info("t1");
    for (int threads : {2, 3}) {
        const TableInfo other = *db.table_info(numbered("t", threads));
        CHECK(other.stored_bytes == one.stored_bytes);
        CHECK(other.dictionary == one.dictionary);
        CHECK(other.values_checksum == one.values_checksum);
        check_synthetic_table(db, numbered("t", threads), 12);
    }
}

TEST_CASE("copying a zstd table keeps its dictionary, bytes and values") {
    TempDir dir;
    Database a = open_db(dir.sub("a"), OpenMode::ReadWrite, 0);
    Database b = open_db(dir.sub("b"), OpenMode::ReadWrite, 0);
    REQUIRE(write_synthetic(a, "t", 50 * 1024, 2, 14, zstd(1024, 1024, 1 << 20)).ok());
    auto source = a.open_table("t");
    REQUIRE(source.ok());
    auto copied = b.copy_table(*source);
    REQUIRE_MESSAGE(copied.ok(), copied.status().to_string());
    CHECK(copied->dictionary == source->info().dictionary);
    CHECK(copied->stored_bytes == source->info().stored_bytes);
    CHECK(copied->format_version == 2);
    check_synthetic_table(b, "t", 14);
}

TEST_CASE("compact_write_options: the generator's format-2 settings are valid and zstd") {
    const TableWriteOptions o = compact_write_options();
    CHECK(o.compression == Compression::Zstd);
    CHECK(o.slots_per_block >= kMinSlotsPerBlock);
    CHECK(o.slots_per_block <= kMaxSlotsPerBlock);
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    REQUIRE(write_synthetic(db, "t", 3 * o.slots_per_block + 5, 1, 4, o).ok());
    check_synthetic_table(db, "t", 4);
}

// The shortest zstd match is the writer's choice: any setting reads back the
// same values, a different one changes the bytes, and values out of zstd's
// range are refused before anything is written.
TEST_CASE("zstd minimum match: round-trips, changes the bytes, refused out of range") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::uint64_t slots = 5 * 16384 + 3;
    for (int min_match : {0, 3, 6, 7}) {
        CAPTURE(min_match);
        TableWriteOptions o = compact_write_options();
        o.zstd_min_match = min_match;
        const std::string name = numbered("m", static_cast<std::uint64_t>(min_match));
        REQUIRE(write_synthetic(db, name, slots, 1, 9, o).ok());
        check_synthetic_table(db, name, 9);
        CHECK(db.table_info(name)->values_checksum == db.table_info("m0")->values_checksum);
    }
    // Three symbols at random: short matches abound, so the setting shows.
    std::vector<std::uint8_t> symbols(16384);
    std::uint64_t state = 12345;
    for (auto& s : symbols) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        s = static_cast<std::uint8_t>((state >> 33) % 3);
    }
    TableWriteOptions three = compact_write_options(), six = compact_write_options();
    three.zstd_min_match = 3;
    six.zstd_min_match = 6;
    CHECK(block_record_bytes(symbols, 1, three) != block_record_bytes(symbols, 1, six));
    for (int bad : {-1, 1, 2, 8}) {
        TableWriteOptions o = compact_write_options();
        o.zstd_min_match = bad;
        CHECK(write_synthetic(db, numbered("bad", static_cast<std::uint64_t>(bad + 1)), 100, 1, 9, o).code() ==
              StatusCode::InvalidArgument);
    }
}

// The match finder and parser are the writer's choice as well (the optimal
// parser of wdl-dtc/2 blocks): any setting reads back the same values with
// the same checksum, the optimal parser stores runs with a random structure
// in fewer bytes, and values out of zstd's
// range are refused before anything is written.
TEST_CASE("zstd strategy, search log and target length: round-trip, smaller, refused out of range") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::uint64_t slots = 5 * 16384 + 3;
    struct Setting {
        int strategy, search_log, target_length;
    };
    int n = 0;
    for (const Setting s : {Setting{0, 0, 0}, Setting{7, 3, 256}, Setting{8, 4, 64}, Setting{6, 2, 16}}) {
        CAPTURE(s.strategy);
        TableWriteOptions o = compact_write_options();
        o.zstd_strategy = s.strategy;
        o.zstd_search_log = s.search_log;
        o.zstd_target_length = s.target_length;
        for (std::uint32_t width : {1u, 2u}) {
            const std::string name = numbered("s", static_cast<std::uint64_t>(n++));
            REQUIRE(write_synthetic(db, name, slots, width, 11, o).ok());
            check_synthetic_table(db, name, 11);
            CHECK(db.table_info(name)->values_checksum == db.table_info(numbered("s", width - 1))->values_checksum);
        }
    }
    const std::vector<std::uint8_t> runs = random_runs(16384, 99, 5);
    TableWriteOptions level = compact_write_options(), optimal = compact_write_options();
    level.zstd_min_match = optimal.zstd_min_match = 6;
    optimal.zstd_strategy = 7;
    optimal.zstd_search_log = 3;
    optimal.zstd_target_length = 256;
    CHECK(block_record_bytes(runs, 1, optimal) < block_record_bytes(runs, 1, level));
    for (const Setting bad : {Setting{10, 0, 0}, Setting{-1, 0, 0}, Setting{0, 40, 0}, Setting{0, 0, -5},
                              Setting{0, 0, 1 << 20}}) {
        TableWriteOptions o = compact_write_options();
        o.zstd_strategy = bad.strategy;
        o.zstd_search_log = bad.search_log;
        o.zstd_target_length = bad.target_length;
        CHECK(write_synthetic(db, "bad", 100, 1, 9, o).code() == StatusCode::InvalidArgument);
        CHECK_FALSE(db.table_info("bad").ok());
    }
}

// A block whose frame is large is compressed again at a stronger level and
// the smaller frame kept: never more bytes than without the retry, fewer on
// run-structured codes, the same bytes where no frame reaches the
// threshold, the same values read back; a level out of zstd's range is
// refused before anything is written.
TEST_CASE("zstd retry: large frames compressed again at a stronger level") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::vector<std::uint8_t> runs = random_runs(16384, 4242, 7);
    TableWriteOptions plain = compact_write_options();
    set_parser(kCompactCodesParser, plain);
    plain.zstd_retry_level = 0;
    TableWriteOptions retried = plain;
    retried.zstd_retry_level = 19;
    retried.zstd_retry_divisor = runs.size();  // every frame of a byte or more
    const std::size_t plain_bytes = block_record_bytes(runs, 1, plain);
    const std::size_t retried_bytes = block_record_bytes(runs, 1, retried);
    CAPTURE(plain_bytes);
    CAPTURE(retried_bytes);
    CHECK(retried_bytes < plain_bytes);
    TableWriteOptions above = retried;
    above.zstd_retry_divisor = 1;  // a frame as large as the values: never
    CHECK(block_record_bytes(runs, 1, above) == plain_bytes);
    // The generator's setting: a retry at level 19 from an eighth of the
    // values' bytes on.
    CHECK(kCompactCodesParser.retry_level == 19);
    CHECK(kCompactCodesParser.retry_divisor == 8);
    for (std::uint32_t width : {1u, 2u}) {
        CAPTURE(width);
        const std::string name = numbered("retry", width);
        REQUIRE(write_synthetic(db, name, 3 * 16384 + 5, width, 23, retried).ok());
        REQUIRE(write_synthetic(db, name + "/plain", 3 * 16384 + 5, width, 23, plain).ok());
        check_synthetic_table(db, name, 23);
        CHECK(db.table_info(name)->values_checksum == db.table_info(name + "/plain")->values_checksum);
        CHECK(db.table_info(name)->stored_bytes <= db.table_info(name + "/plain")->stored_bytes);
    }
    for (int bad : {-1, 23, 1000}) {
        TableWriteOptions o = retried;
        o.zstd_retry_level = bad;
        CHECK(write_synthetic(db, "bad", 100, 1, 9, o).code() == StatusCode::InvalidArgument);
        CHECK_FALSE(db.table_info("bad").ok());
    }
}

// A table with a dictionary compresses every block with it; the parser
// settings must hold there too (a dictionary prepared from the level alone
// silently dropped them, and every strategy stored the same bytes): zstd's
// fastest parser stores the same run-structured values in more bytes than
// its strongest, and both read back.
TEST_CASE("zstd parser settings apply to tables with a dictionary") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    const std::vector<std::uint8_t> values = random_runs(64 * 2048, 7, 5);
    std::uint64_t bytes[2] = {};
    std::uint64_t dictionary[2] = {};
    for (int optimal = 0; optimal < 2; ++optimal) {
        TableWriteOptions o = compact_write_options();
        o.slots_per_block = 2048;
        o.dictionary_bytes = 2048;
        o.zstd_strategy = optimal ? 9 : 1;  // ZSTD_btultra2, ZSTD_fast
        const std::string name = optimal ? "btultra2" : "fast";
        auto writer = db.create_table(test::synthetic_spec(name, values.size(), 1), o);
        REQUIRE(writer.ok());
        REQUIRE(writer->append(std::span<const std::uint8_t>(values)).ok());
        REQUIRE(writer->commit({}).ok());
        auto reader = db.open_table(name);
        REQUIRE(reader.ok());
        const TableInfo& info = reader->info();
        bytes[optimal] = info.stored_bytes;
        dictionary[optimal] = info.dictionary.size();
        std::uint64_t wrong = 0;
        for (std::uint64_t slot = 0; slot < values.size(); slot += 7) {
            auto v = reader->get(slot);
            REQUIRE(v.ok());
            wrong += *v != values[slot];
        }
        CHECK(wrong == 0);
        CHECK(reader->verify().ok());
    }
    CHECK(dictionary[0] > 0);
    CHECK(dictionary[1] > 0);
    CAPTURE(bytes[0]);
    CAPTURE(bytes[1]);
    CHECK(bytes[1] < bytes[0]);
}

// A writer choosing between candidate contents (the generator's DTC side of
// wdl-dtc/2) asks what one block would take: exactly what a one-block table
// written with the same options stores.
TEST_CASE("block_record_bytes is the stored size of a one-block table") {
    TempDir dir;
    Database db = open_db(dir.sub("db"), OpenMode::ReadWrite, 0);
    TableWriteOptions lz4;
    TableWriteOptions raw;
    raw.compression = Compression::None;
    // One block a record: the size block_record_bytes gives (a group record
    // adds its directory entry instead of a header of the block's own).
    TableWriteOptions compact = compact_write_options();
    compact.blocks_per_record = 1;
    TableWriteOptions min_match = compact;
    min_match.zstd_min_match = 6;
    int tables = 0;
    for (const TableWriteOptions& options : {compact, min_match, lz4, raw}) {
        for (std::uint32_t width : {1u, 2u}) {
            for (std::uint64_t seed : {4u, 5u}) {
                const std::uint64_t slots = 3000 + seed;
                CAPTURE(width);
                CAPTURE(seed);
                const std::string name = numbered("b", ++tables);
                REQUIRE(write_synthetic(db, name, slots, width, seed, options).ok());
                const TableInfo info = *db.table_info(name);
                REQUIRE(info.block_count == 1);
                std::vector<std::uint8_t> values(slots * width);
                for (std::uint64_t s = 0; s < slots; ++s) {
                    const std::uint32_t v = synthetic_value(seed, s, width);
                    values[s * width] = static_cast<std::uint8_t>(v);
                    if (width == 2) values[s * 2 + 1] = static_cast<std::uint8_t>(v >> 8);
                }
                CHECK(block_record_bytes(values, width, options) == info.stored_bytes);
            }
        }
    }
}
