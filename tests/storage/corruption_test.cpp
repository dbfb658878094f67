// Damaged databases: every failure is a typed error, never a wrong value or
// a crash. Raw RocksDB access (the documented key layout) plants the damage.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <tuple>

#include "raw_db.hpp"
#include "scratch_db.hpp"
#include "storage_support.hpp"
#include "synthetic_checks.hpp"
#include "test_support.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"

using namespace tbf;
using namespace tbf::storage;
using tbf::test::TempDir;
using tbf::test::write_synthetic;
namespace fs = std::filesystem;

namespace {

using tbf::test::be64;
using tbf::test::block_key;
using tbf::test::RawDb;

void make_db(const std::string& path) {
    auto db = test::open_rw(path);
    TableWriteOptions w;
    w.slots_per_block = 1024;
    REQUIRE(write_synthetic(db, "antichess/KRvK", 10 * 1024 + 5, 2, 2, w).ok());
    REQUIRE(write_synthetic(db, "noise", 5000, 1, 3, w).ok());
}

StatusCode open_code(const std::string& path, OpenMode mode = OpenMode::ReadOnly, bool mmap_reads = true) {
    DatabaseOptions o;
    o.mode = mode;
    o.mmap_reads = mmap_reads;
    return Database::open(path, o).status().code();
}

std::string le32(std::uint32_t v) {
    std::string s;
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    return s;
}

// Replaces the 8-byte trailer of a metadata record with the XXH64 of the
// rest: a record whose checksum is right but whose content was altered.
std::string reseal(std::string record) {
    record.resize(record.size() - 8);
    const std::uint64_t h = xxh64(record);
    for (int i = 0; i < 8; ++i) record.push_back(static_cast<char>(h >> (8 * i)));
    return record;
}

std::string largest_file_with_suffix(const std::string& dir, const std::string& suffix) {
    std::string best;
    std::uintmax_t best_size = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            e.file_size() >= best_size) {
            best = e.path().string();
            best_size = e.file_size();
        }
    }
    REQUIRE(!best.empty());
    return best;
}

// XORs the byte at `at` of file `path` with `mask`.
void flip_byte(const std::string& path, std::streamoff at, char mask) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    const char c = static_cast<char>(f.get() ^ mask);
    f.seekp(at);
    f.put(c);
    REQUIRE(f.good());
}

}  // namespace

TEST_CASE("a flipped byte in a stored block is a checksum error naming table and block") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    std::uint64_t id = 0;
    {
        auto db = Database::open(path);
        REQUIRE(db.ok());
        id = db->table_info("antichess/KRvK")->storage_id;
    }
    const std::string key = block_key(id, 3);
    std::string original;
    {
        RawDb raw(path);
        original = raw.get("blocks", key);
    }
    REQUIRE(original.size() > 40);
    // Header fields (codec, width, slot count, checksum) and the payload.
    for (std::size_t pos : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{9},
                            std::size_t{16}, original.size() / 2, original.size() - 1}) {
        CAPTURE(pos);
        std::string damaged = original;
        damaged[pos] = static_cast<char>(damaged[pos] ^ 0x10);
        {
            RawDb raw(path);
            raw.put("blocks", key, damaged);
        }
        auto db = Database::open(path);
        REQUIRE(db.ok());
        auto reader = db->open_table("antichess/KRvK");
        REQUIRE(reader.ok());
        const auto bad = reader->get(3 * 1024 + 7);
        CHECK(bad.status().code() == StatusCode::ChecksumMismatch);
        CHECK(bad.status().message().find("table 'antichess/KRvK'") != std::string::npos);
        CHECK(bad.status().message().find("block 3") != std::string::npos);
        CHECK(reader->read_block(3).status().code() == StatusCode::ChecksumMismatch);
        CHECK(reader->verify().code() == StatusCode::ChecksumMismatch);
        // Neighbouring blocks and other tables are unaffected.
        auto fine = reader->get(2 * 1024 + 7);
        REQUIRE(fine.ok());
        CHECK(*fine == tbf::test::synthetic_value(2, 2 * 1024 + 7, 2));
        auto noise = db->open_table("noise");
        REQUIRE(noise.ok());
        CHECK(noise->verify().ok());
    }
    {
        RawDb raw(path);
        raw.put("blocks", key, original);
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    CHECK(db->open_table("antichess/KRvK")->verify().ok());
}

TEST_CASE("format 2: a flipped byte in a zstd block is an error naming table and block") {
    TempDir dir;
    const std::string path = dir.sub("db");
    std::uint64_t id = 0;
    {
        auto db = test::open_rw(path);
        TableWriteOptions w;
        w.compression = Compression::Zstd;
        w.slots_per_block = 1024;
        w.dictionary_bytes = 1024;
        REQUIRE(write_synthetic(db, "antichess/KRvK", 40 * 1024 + 5, 2, 2, w).ok());
        id = db.table_info("antichess/KRvK")->storage_id;
        CHECK(!db.table_info("antichess/KRvK")->dictionary.empty());
    }
    const std::string key = block_key(id, 3);
    std::string original;
    {
        RawDb raw(path);
        original = raw.get("blocks", key);
    }
    REQUIRE(original.size() > 20);
    REQUIRE(original[0] == 2);  // codec 2: zstd
    // Every byte (sanitizer builds: the headers and every fifth after).
    tbf::test::check_flipped_record(path, key, original, 5,
                                    {"antichess/KRvK", 3 * 1024 + 7, "block 3", 2 * 1024 + 7, 2});
    {
        RawDb raw(path);
        raw.put("blocks", key, original.substr(0, original.size() / 2));
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    auto reader = db->open_table("antichess/KRvK");
    REQUIRE(reader.ok());
    const Status truncated = reader->get(3 * 1024).status();
    CHECK(truncated.code() == StatusCode::ChecksumMismatch);
    CHECK(truncated.message().find("block 3") != std::string::npos);
}

TEST_CASE("a format-1 database opens; a read-write open upgrades its marker") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);  // LZ4 tables: format 1 records
    {
        RawDb raw(path);
        std::string marker = raw.get("default", "tbforge.format");
        marker.replace(4, 4, le32(1));
        raw.put("default", "tbforge.format", reseal(marker));
    }
    {
        auto db = Database::open(path);
        REQUIRE_MESSAGE(db.ok(), db.status().to_string());
        auto reader = db->open_table("antichess/KRvK");
        REQUIRE(reader.ok());
        CHECK(reader->info().format_version == 1);
        CHECK(reader->verify().ok());
    }
    {
        RawDb raw(path);
        CHECK(raw.get("default", "tbforge.format").substr(4, 4) == le32(1));
    }
    CHECK(open_code(path, OpenMode::ReadWrite) == StatusCode::Ok);
    RawDb raw(path);
    CHECK(raw.get("default", "tbforge.format").substr(4, 4) == le32(kFormatVersion));
}

TEST_CASE("a flipped byte inside an SST file is an error, never a wrong value") {
    TempDir dir;
    const std::string path = dir.sub("db");
    {
        auto db = test::open_rw(path);
        TableWriteOptions w;
        w.slots_per_block = 1024;
        w.compression = Compression::None;  // 20 blocks of 2 KiB: the middle of the file is data
        REQUIRE(write_synthetic(db, "t", 20 * 1024, 2, 3, w).ok());
    }
    const std::string sst = largest_file_with_suffix(path, ".sst");
    flip_byte(sst, static_cast<std::streamoff>(fs::file_size(sst) / 2), 0x01);
    auto db = Database::open(path);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    auto reader = db->open_table("t");
    REQUIRE(reader.ok());
    std::uint64_t failed = 0;
    std::uint64_t wrong = 0;
    for (std::uint64_t slot = 0; slot < 20 * 1024; ++slot) {
        auto v = reader->get(slot);
        if (!v.ok()) {
            ++failed;
            CHECK(v.status().code() == StatusCode::Corruption);
            CHECK(v.status().message().find("table 't' block") != std::string::npos);
        } else if (*v != tbf::test::synthetic_value(3, slot, 2)) {
            ++wrong;
        }
    }
    CHECK(failed > 0);
    CHECK(wrong == 0);
    CHECK(reader->verify().code() == StatusCode::Corruption);
}

// Reads fetch a record without RocksDB's SST block checksum first and
// fetch it again with the check only when the record's own check fails:
// damage anywhere in the file is still an error or the right value, for
// every way a value is read (decoded-block cache, none, inside a ReadScope).
TEST_CASE("flipped bytes across an SST file: an error or the right value, read every way") {
    TempDir dir;
    const std::string pristine = dir.sub("pristine");
    constexpr std::uint64_t kSlots = 16 * 1024;
    {
        auto db = test::open_rw(pristine);
        TableWriteOptions zstd;
        zstd.compression = Compression::Zstd;
        zstd.slots_per_block = 1024;
        zstd.blocks_per_record = 2;
        REQUIRE(write_synthetic(db, "z", kSlots, 2, 11, zstd).ok());
        TableWriteOptions pairs = zstd;
        pairs.dictionary_bytes = 0;
        pairs.pair_coding = PairCoding::Always;
        REQUIRE(write_synthetic(db, "p", kSlots, 1, 12, pairs).ok());
    }
    const std::string sst_name = fs::path(largest_file_with_suffix(pristine, ".sst")).filename().string();
    const auto sst_size = static_cast<std::streamoff>(fs::file_size(fs::path(pristine) / sst_name));
    constexpr int kOffsets = 48;
    std::uint64_t failed = 0;
    for (int k = 0; k < kOffsets; ++k) {
        const std::string path = dir.sub("damaged-" + std::to_string(k));
        fs::copy(pristine, path, fs::copy_options::recursive);
        const std::streamoff at = sst_size * k / kOffsets + k;
        flip_byte((fs::path(path) / sst_name).string(), at, 0x10);
        for (const std::size_t cache : {std::size_t{0}, std::size_t{1} << 20}) {
            DatabaseOptions o;
            o.block_cache_bytes = cache;
            auto db = Database::open(path, o);
            if (!db.ok()) continue;  // the index or footer: refused at open
            for (const auto& table : {std::tuple{"z", std::uint64_t{11}, 2u}, std::tuple{"p", std::uint64_t{12}, 1u}}) {
                const std::string name = std::get<0>(table);
                const std::uint64_t seed = std::get<1>(table);
                const std::uint32_t width = std::get<2>(table);
                auto reader = db->open_table(name);
                if (!reader.ok()) continue;
                std::uint64_t wrong = 0;
                const auto read = [&](std::uint64_t slot) {
                    auto v = reader->get(slot);
                    if (!v.ok()) {
                        ++failed;
                        const StatusCode code = v.status().code();
                        CHECK((code == StatusCode::Corruption || code == StatusCode::ChecksumMismatch));
                        CHECK(v.status().message().find("table '" + name + "'") != std::string::npos);
                    } else if (*v != tbf::test::synthetic_value(seed, slot, width)) {
                        ++wrong;
                    }
                };
                for (std::uint64_t slot = 0; slot < kSlots; slot += 5) read(slot);
                {
                    ReadScope scope;
                    for (std::uint64_t slot = 1; slot < kSlots; slot += 5) read(slot);
                }
                CHECK_MESSAGE(wrong == 0, "offset " << at << " table " << name << " cache " << cache);
            }
        }
    }
    CHECK(failed > 0);
}

// Damage RocksDB's check alone sees: the checksum trailer of an SST data
// block. Reads need only the records' own checks and stay right; verify()
// vouches for the stored files and reports it.
TEST_CASE("a flipped byte in an SST block's checksum: values still read, verify() reports it") {
    TempDir dir;
    const std::string path = dir.sub("db");
    std::uint64_t storage_id = 0;
    {
        auto db = test::open_rw(path);
        TableWriteOptions w;
        w.slots_per_block = 1024;
        w.compression = Compression::None;  // 2 KiB records, two to a 4 KiB data block
        REQUIRE(write_synthetic(db, "t", 20 * 1024, 2, 3, w).ok());
        storage_id = db.open_table("t")->info().storage_id;
    }
    const std::string sst = largest_file_with_suffix(path, ".sst");
    std::string bytes;
    {
        std::ifstream in(sst, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    // A data block starts with a whole key (later entries share a prefix):
    // varints 0 (shared), 24 (the key and RocksDB's 8-byte sequence and
    // type) and the record's length (two bytes), then the key. Its
    // predecessor's 5-byte trailer ends just before: block type, checksum.
    std::size_t trailer_end = std::string::npos;
    for (std::uint64_t b = 1; b < 20 && trailer_end == std::string::npos; ++b) {
        const std::size_t at = bytes.find(block_key(storage_id, b));
        if (at != std::string::npos && at >= 9 && bytes[at - 4] == 0 && bytes[at - 3] == 24) trailer_end = at - 4;
    }
    REQUIRE(trailer_end != std::string::npos);
    flip_byte(sst, static_cast<std::streamoff>(trailer_end - 1), 0x01);
    for (const std::size_t cache : {std::size_t{0}, std::size_t{1} << 20}) {
        DatabaseOptions o;
        o.block_cache_bytes = cache;
        auto db = Database::open(path, o);
        REQUIRE_MESSAGE(db.ok(), db.status().to_string());
        auto reader = db->open_table("t");
        REQUIRE(reader.ok());
        std::uint64_t wrong = 0;
        for (std::uint64_t slot = 0; slot < 20 * 1024; ++slot) {
            auto v = reader->get(slot);
            REQUIRE_MESSAGE(v.ok(), v.status().to_string());
            wrong += *v != tbf::test::synthetic_value(3, slot, 2);
        }
        CHECK(wrong == 0);
        const Status verified = reader->verify();
        CHECK(verified.code() == StatusCode::Corruption);
        CHECK(verified.message().find("table 't' block") != std::string::npos);
    }
}

TEST_CASE("a block stored under another block's key is detected") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    std::uint64_t id = 0;
    {
        auto db = Database::open(path);
        REQUIRE(db.ok());
        id = db->table_info("antichess/KRvK")->storage_id;
    }
    {
        RawDb raw(path);
        raw.put("blocks", block_key(id, 4), raw.get("blocks", block_key(id, 5)));
        raw.put("blocks", block_key(id, 6), raw.get("blocks", block_key(id, 6)).substr(0, 10));
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    auto reader = db->open_table("antichess/KRvK");
    REQUIRE(reader.ok());
    CHECK(reader->get(4 * 1024).status().code() == StatusCode::ChecksumMismatch);
    const Status truncated = reader->get(6 * 1024).status();
    CHECK(truncated.code() == StatusCode::Corruption);
    CHECK(truncated.message().find("block 6") != std::string::npos);
}

TEST_CASE("a damaged metadata record is a clear error") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    const std::string key = "Tantichess/KRvK";
    std::string original;
    {
        RawDb raw(path);
        original = raw.get("catalog", key);
    }
    // Offset of the slot count: magic, version, then three length-prefixed
    // strings (name, variant, material).
    const std::size_t slot_count_at = 8 + (4 + 14) + (4 + 9) + (4 + 4);

    struct Damage {
        const char* what;
        std::string record;
        StatusCode expected;
    };
    std::string flipped = original;
    flipped[20] = static_cast<char>(flipped[20] ^ 1);
    std::string more_slots = original;
    more_slots[slot_count_at + 2] = static_cast<char>(more_slots[slot_count_at + 2] + 1);
    std::string newer = original;
    newer.replace(4, 4, le32(5));  // table records: 1 to 4 (formats 1 to 6)
    std::string wrong_name = original;
    wrong_name[12] = 'b';
    const Damage damages[] = {
        {"flipped byte", flipped, StatusCode::ChecksumMismatch},
        {"truncated", original.substr(0, original.size() - 3), StatusCode::ChecksumMismatch},
        {"too short", original.substr(0, 10), StatusCode::Corruption},
        {"empty", std::string(), StatusCode::Corruption},
        {"bad magic", reseal("XXXX" + original.substr(4)), StatusCode::Corruption},
        {"trailing bytes", reseal(original.substr(0, original.size() - 8) + "junk" + "12345678"),
         StatusCode::Corruption},
        {"cut inside a field", reseal(original.substr(0, 40) + "12345678"), StatusCode::Corruption},
        {"slot count disagrees with block count", reseal(more_slots), StatusCode::Corruption},
        {"newer record version", reseal(newer), StatusCode::UnsupportedVersion},
        {"record names another table", reseal(wrong_name), StatusCode::Corruption},
    };
    for (const Damage& d : damages) {
        CAPTURE(d.what);
        {
            RawDb raw(path);
            raw.put("catalog", key, d.record);
        }
        auto db = Database::open(path);
        REQUIRE(db.ok());
        const Status info = db->table_info("antichess/KRvK").status();
        CHECK(info.code() == d.expected);
        CHECK(info.message().find("'antichess/KRvK'") != std::string::npos);
        CHECK(db->open_table("antichess/KRvK").status().code() == d.expected);
        CHECK(db->list_tables().status().code() == d.expected);
        CHECK(db->open_table("noise").ok());
    }
    {
        RawDb raw(path);
        raw.put("catalog", key, original);
    }
    auto db = Database::open(path);
    REQUIRE(db.ok());
    CHECK(db->list_tables().ok());
}

TEST_CASE("missing, foreign and garbage directories") {
    TempDir dir;
    SUBCASE("missing directory") {
        const auto r = Database::open(dir.sub("nope"));
        CHECK(r.status().code() == StatusCode::NotFound);
        CHECK(r.status().message().find(dir.sub("nope")) != std::string::npos);
        CHECK(open_code(dir.sub("nope"), OpenMode::ReadWrite) == StatusCode::NotFound);
        CHECK(!fs::exists(dir.sub("nope")));
    }
    SUBCASE("a file, not a directory") {
        std::ofstream(dir.sub("file")) << "hello";
        CHECK(open_code(dir.sub("file")) == StatusCode::NotADatabase);
    }
    SUBCASE("empty directory") {
        fs::create_directory(dir.sub("empty"));
        CHECK(open_code(dir.sub("empty")) == StatusCode::NotADatabase);
        CHECK(open_code(dir.sub("empty"), OpenMode::ReadWrite) == StatusCode::NotADatabase);
        DatabaseOptions o;
        o.mode = OpenMode::ReadWrite;
        o.create_if_missing = true;
        CHECK(Database::open(dir.sub("empty"), o).ok());
        CHECK(Database::open(dir.sub("empty")).ok());
    }
    SUBCASE("garbage directory") {
        fs::create_directory(dir.sub("garbage"));
        std::ofstream(dir.sub("garbage/notes.txt")) << "not a database";
        std::ofstream(dir.sub("garbage/000001.sst")) << std::string(5000, 'x');
        CHECK(open_code(dir.sub("garbage")) == StatusCode::NotADatabase);
        DatabaseOptions o;
        o.mode = OpenMode::ReadWrite;
        o.create_if_missing = true;
        // Never turned into a database behind the user's back.
        CHECK(Database::open(dir.sub("garbage"), o).status().code() == StatusCode::NotADatabase);
        CHECK(!fs::exists(dir.sub("garbage/CURRENT")));
    }
    SUBCASE("garbage CURRENT file") {
        fs::create_directory(dir.sub("g2"));
        std::ofstream(dir.sub("g2/CURRENT")) << "MANIFEST-000042\n";
        CHECK(open_code(dir.sub("g2")) == StatusCode::Corruption);
        std::ofstream(dir.sub("g2/CURRENT")) << "\x01\x02garbage";
        CHECK(open_code(dir.sub("g2")) == StatusCode::Corruption);
    }
    SUBCASE("a RocksDB database that is not a tbforge one") {
        rocksdb::Options o;
        o.create_if_missing = true;
        rocksdb::DB* raw = nullptr;
        REQUIRE(rocksdb::DB::Open(o, dir.sub("plain"), &raw).ok());
        REQUIRE(raw->Put(rocksdb::WriteOptions(), "k", "v").ok());
        delete raw;
        const auto r = Database::open(dir.sub("plain"));
        CHECK(r.status().code() == StatusCode::NotADatabase);
        CHECK(open_code(dir.sub("plain"), OpenMode::ReadWrite) == StatusCode::NotADatabase);
    }
}

TEST_CASE("format marker: missing or from a newer version") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    std::string marker;
    {
        RawDb raw(path);
        marker = raw.get("default", "tbforge.format");
        std::string newer = marker;
        newer.replace(4, 4, le32(kFormatVersion + 1));
        raw.put("default", "tbforge.format", reseal(newer));
    }
    CHECK(open_code(path) == StatusCode::UnsupportedVersion);
    CHECK(open_code(path, OpenMode::ReadWrite) == StatusCode::UnsupportedVersion);
    {
        RawDb raw(path);
        raw.put("default", "tbforge.format", marker.substr(1));
    }
    CHECK(open_code(path) == StatusCode::Corruption);
    {
        RawDb raw(path);
        raw.put("default", "tbforge.format", marker);
    }
    CHECK(open_code(path) == StatusCode::Ok);
}

TEST_CASE("truncated or missing database files") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    const std::string copy = dir.sub("pristine");
    fs::copy(path, copy, fs::copy_options::recursive);
    const auto restore = [&] {
        fs::remove_all(path);
        fs::copy(copy, path, fs::copy_options::recursive);
    };

    SUBCASE("CURRENT deleted") {
        fs::remove(path + "/CURRENT");
        CHECK(open_code(path) == StatusCode::NotADatabase);
    }
    SUBCASE("MANIFEST damaged") {
        for (const auto& e : fs::directory_iterator(path)) {
            if (e.path().filename().string().rfind("MANIFEST-", 0) == 0) {
                flip_byte(e.path().string(), static_cast<std::streamoff>(fs::file_size(e.path()) / 2), 0x20);
            }
        }
        CHECK(open_code(path) == StatusCode::Corruption);
        CHECK(open_code(path, OpenMode::ReadWrite) == StatusCode::Corruption);
    }
    SUBCASE("MANIFEST truncated") {
        // RocksDB reads a cut MANIFEST as a crash at that point: the database
        // opens as it was earlier, with every table whole, or is refused. Cut
        // short enough, nothing says it was ever a tbforge database.
        for (int percent : {90, 75, 50, 25, 5}) {
            CAPTURE(percent);
            restore();
            for (const auto& e : fs::directory_iterator(path)) {
                if (e.path().filename().string().rfind("MANIFEST-", 0) == 0) {
                    fs::resize_file(e.path(), fs::file_size(e.path()) * percent / 100);
                }
            }
            auto db = Database::open(path);
            if (!db.ok()) {
                const StatusCode code = db.status().code();
                CHECK((code == StatusCode::Corruption || code == StatusCode::NotADatabase));
                continue;
            }
            auto tables = db->list_tables();
            REQUIRE(tables.ok());
            for (const TableInfo& t : *tables) {
                CAPTURE(t.spec.name);
                CHECK(db->open_table(t.spec.name)->verify().ok());
            }
        }
    }
    SUBCASE("table file truncated") {
        const std::string sst = largest_file_with_suffix(path, ".sst");
        fs::resize_file(sst, fs::file_size(sst) - 100);
        CHECK(open_code(path) == StatusCode::Corruption);
        CHECK(open_code(path, OpenMode::ReadOnly, false) == StatusCode::Corruption);  // file reads
        CHECK(open_code(path, OpenMode::ReadWrite) == StatusCode::Corruption);
    }
    SUBCASE("table file deleted") {
        fs::remove(largest_file_with_suffix(path, ".sst"));
        CHECK(open_code(path) == StatusCode::Corruption);
    }
    restore();
    auto db = Database::open(path);
    REQUIRE(db.ok());
    CHECK(db->open_table("antichess/KRvK")->verify().ok());
}

TEST_CASE("a second read-write open is refused while the first is open") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    DatabaseOptions o;
    o.mode = OpenMode::ReadWrite;
    auto first = Database::open(path, o);
    REQUIRE(first.ok());
    CHECK(Database::open(path, o).status().code() == StatusCode::Busy);
    CHECK(Database::open(path).ok());  // read-only opens are still fine
}

TEST_CASE("orphaned data is swept by the next read-write open; ids are not reused") {
    TempDir dir;
    const std::string path = dir.sub("db");
    make_db(path);
    // Blocks and entries under an id no catalog entry names, as a crash
    // between publishing a replacement and retiring the old data leaves them.
    {
        RawDb raw(path);
        raw.put("blocks", block_key(1000, 0), "orphan block");
        raw.put("blocks", block_key(1000, 1), "orphan block");
        raw.put("strategy_entries", be64(1001) + "key", "orphan entry");
    }
    {
        auto ro = Database::open(path);  // read-only: leaves them alone
        REQUIRE(ro.ok());
    }
    {
        RawDb raw(path);
        CHECK(raw.ids("blocks").contains(1000));
        CHECK(raw.ids("strategy_entries").contains(1001));
    }
    {
        DatabaseOptions o;
        o.mode = OpenMode::ReadWrite;
        auto db = Database::open(path, o);
        REQUIRE(db.ok());
        REQUIRE(write_synthetic(*db, "new", 100, 1, 4).ok());
        CHECK(db->table_info("new")->storage_id > 1001);
    }
    RawDb raw(path);
    const auto blocks = raw.ids("blocks");
    CHECK(!blocks.contains(1000));
    CHECK(blocks.size() == 3);  // the two tables of make_db and "new"
    CHECK(raw.ids("strategy_entries").empty());
}
