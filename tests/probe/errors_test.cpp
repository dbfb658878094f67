// Failures a prober must report rather than answer: missing tables (of the
// position or of a child), damaged blocks and files, bad database paths.
#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "probe_fixture.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/probe/tbforge.h"

using namespace tbf;
using namespace tbf::test;
namespace fs = std::filesystem;

namespace {

// A private copy of a database holding KQvK and everything it converts
// into (built once, copied for each test that damages it).
struct SmallDb {
    ScratchDir dir;
    std::string path = dir.sub("db");
    explicit SmallDb(const std::string& encoding = std::string(probe::kValueEncoding)) {
        static ScratchDir pristine;
        static std::map<std::string, bool> built;
        const std::string source = pristine.sub(encoding == probe::kValueEncoding ? "db" : "compact");
        if (!built[encoding]) {
            // KQvK has 4 blocks: 2 a record give two records, a damaged
            // record beside an intact one (format 4, as generated tables).
            probe::Tablebase writer(test::open_rw(source));
            gen::GenerateOptions options;
            options.threads = 2;
            options.value_encoding = encoding;
            options.blocks_per_record = 2;
            auto result = gen::generate(writer, VariantId::Antichess,
                                        {table_material(VariantId::Antichess, "KQvK")}, options);
            REQUIRE_MESSAGE(result.ok(), result.status().message());
            built[encoding] = true;
        }
        fs::copy(source, path, fs::copy_options::recursive);
    }
};

// Every stored value of a table, read through a fresh read-only open.
std::vector<std::uint16_t> all_codes(const std::string& path, const std::string& table) {
    auto tb = probe::Tablebase::open(path);
    REQUIRE(tb.ok());
    auto t = tb->table(VariantId::Antichess, table_material(VariantId::Antichess, table));
    REQUIRE(t.ok());
    std::vector<std::uint16_t> codes((*t)->info().spec.slot_count);
    REQUIRE((*t)->read_codes(0, codes.size(), codes.data()).ok());
    return codes;
}

// The largest file of a RocksDB directory with the given suffix.
std::string largest_file(const std::string& dir, const std::string& suffix) {
    std::string best;
    std::uintmax_t best_size = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.size() > suffix.size() && name.ends_with(suffix) && e.file_size() > best_size) {
            best = e.path().string();
            best_size = e.file_size();
        }
    }
    REQUIRE(!best.empty());
    return best;
}

void flip_byte(const std::string& file, std::uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x20);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
    REQUIRE(f);
}

// Probes every KQvK position and checks that each answer is either the value
// stored before the damage or a Corrupt error; returns the number of errors.
std::size_t probe_all_after_damage(const std::string& path,
                                   const std::vector<std::uint16_t>& before) {
    auto tb = probe::Tablebase::open(path);
    if (!tb.ok()) {
        CHECK(tb.status().code() == StatusCode::Corruption);
        return before.size();
    }
    auto ix =
        index::Indexer::create(VariantId::Antichess, table_material(VariantId::Antichess, "KQvK"));
    REQUIRE(ix.ok());
    std::size_t errors = 0;
    for (int side = 0; side < 2; ++side) {
        for (std::uint64_t i = 0; i < ix->size(); ++i) {
            auto pos = ix->position(i, static_cast<Color>(side));
            if (!pos) continue;
            auto v = tb->probe(VariantId::Antichess, *pos);
            if (v.ok()) {
                CHECK(probe::encode_value(*v) ==
                      before[static_cast<std::uint64_t>(side) * ix->size() + i]);
            } else {
                CHECK(v.status().code() == StatusCode::Corruption);
                ++errors;
            }
        }
    }
    return errors;
}

std::string be64(std::uint64_t v) {
    std::string s;
    for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
    return s;
}

enum class Damage { FlipByte, Delete };

// Rewrites the record that holds block `block_no` of a table (its own, or
// its group's: format 4) with one payload byte flipped, or deletes it,
// through plain RocksDB (key layout of docs/storage-format.md).
void damage_block(const std::string& path, const storage::TableInfo& info, std::uint64_t block_no,
                  Damage damage) {
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), path, families, &handles, &raw).ok());
    rocksdb::ColumnFamilyHandle* blocks = nullptr;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == "blocks") blocks = handles[i];
    }
    REQUIRE(blocks != nullptr);
    const std::string key = be64(info.storage_id) + be64(block_no / info.blocks_per_record);
    std::string record;
    REQUIRE(raw->Get(rocksdb::ReadOptions(), blocks, key, &record).ok());
    REQUIRE(record.size() > 20);
    record[20] =
        static_cast<char>(record[20] ^ 0x01);  // inside the payload, past the 16-byte header
    rocksdb::WriteOptions sync;
    sync.sync = true;
    if (damage == Damage::Delete) {
        REQUIRE(raw->Delete(sync, blocks, key).ok());
    } else {
        REQUIRE(raw->Put(sync, blocks, key, record).ok());
    }
    for (auto* h : handles) REQUIRE(raw->DestroyColumnFamilyHandle(h).ok());
    delete raw;
}

}  // namespace

TEST_CASE("a missing table is MissingTable naming it, in canonical orientation") {
    const auto& db = BuiltDb::antichess();
    auto expect_missing = [&](const std::string& fen, const std::string& name) {
        CAPTURE(fen);
        auto v = db.tablebase().probe(VariantId::Antichess, db.fen(fen));
        REQUIRE_FALSE(v.ok());
        CHECK(v.status().code() == StatusCode::NotFound);
        CHECK(contains(v.status().message(), "missing table " + name));
        auto m = db.tablebase().probe_moves(VariantId::Antichess, db.fen(fen));
        REQUIRE_FALSE(m.ok());
        CHECK(m.status().code() == StatusCode::NotFound);
    };
    expect_missing("8/8/8/8/8/8/8/KQR2kr1 w - - 0 1", "antichess/KQRvKR");   // 5 units
    expect_missing("kqr5/8/8/8/8/8/8/5KR1 b - - 0 1", "antichess/KQRvKR");   // its colour flip
    expect_missing("8/8/8/8/8/8/8/BB3n2 w - - 0 1", "antichess/BBvN");       // 3 units, not built
    expect_missing("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",  // beyond any table
                   "antichess/KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP");
}

TEST_CASE("a missing child table: the position still probes, its moves name the child's table") {
    SmallDb small;
    {
        storage::DatabaseOptions rw;
        rw.mode = storage::OpenMode::ReadWrite;
        auto db = storage::Database::open(small.path, rw);
        REQUIRE(db.ok());
        REQUIRE(db->delete_table("antichess/KvK").ok());
    }
    auto tb = probe::Tablebase::open(small.path);
    REQUIRE(tb.ok());
    // Black's king must take the queen on b1 (its only capture), which
    // leaves a KvK position: that table was deleted.
    auto pos = parse_fen("8/8/8/8/8/8/8/KQk5 b - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    CHECK(tb->probe(VariantId::Antichess, *pos).ok());
    auto moves = tb->probe_moves(VariantId::Antichess, *pos);
    REQUIRE_FALSE(moves.ok());
    CHECK(moves.status().code() == StatusCode::NotFound);
    CHECK(contains(moves.status().message(), "antichess/KvK"));
}

namespace {

storage::TableInfo stored_info(const std::string& path, const std::string& table) {
    auto tb = probe::Tablebase::open(path);
    REQUIRE(tb.ok());
    auto info = tb->database().table_info(table);
    REQUIRE(info.ok());
    return *info;
}

void check_damaged_block(Damage damage) {
    SmallDb small;
    const auto before = all_codes(small.path, "KQvK");
    const storage::TableInfo info = stored_info(small.path, "antichess/KQvK");
    // The second record (blocks g to 2g - 1 with g blocks a record).
    const std::uint64_t g = info.blocks_per_record;
    REQUIRE(g == 2);
    REQUIRE(info.block_count >= 2 * g);
    damage_block(small.path, info, g, damage);

    const std::size_t errors = probe_all_after_damage(small.path, before);
    // Every valid slot of the damaged record's blocks fails and no other does.
    const std::uint64_t first = g * info.slots_per_block;
    const std::uint64_t last = std::min<std::uint64_t>(info.spec.slot_count, 2 * first);
    auto ix =
        index::Indexer::create(VariantId::Antichess, table_material(VariantId::Antichess, "KQvK"));
    REQUIRE(ix.ok());
    std::size_t in_block = 0;
    for (std::uint64_t slot = first; slot < last; ++slot) {
        in_block += ix->is_valid(slot % ix->size(), static_cast<Color>(slot / ix->size()));
    }
    CHECK(errors == in_block);

    // The same through the C API: a checksum error naming table and block.
    tbf_db* handle = nullptr;
    REQUIRE(tbf_open(small.path.c_str(), 0, &handle) == TBF_OK);
    // A position whose slot is in the damaged record (whatever the block size).
    std::optional<Position> pos;
    for (std::uint64_t slot = first; slot < last && !pos; ++slot) {
        pos = ix->position(slot % ix->size(), static_cast<Color>(slot / ix->size()));
    }
    REQUIRE(pos.has_value());
    tbf_value v{};
    CHECK(tbf_probe_fen(handle, "antichess", to_fen(*pos).c_str(), &v) == TBF_ERR_CORRUPT);
    const std::string message = tbf_last_error();
    CAPTURE(message);
    CHECK(contains(message, damage == Damage::Delete ? "not-found" : "checksum"));
    CHECK(contains(message, "antichess/KQvK"));
    tbf_close(handle);
}

}  // namespace

TEST_CASE("a flipped byte in a stored block is Corrupt, never a wrong value") {
    check_damaged_block(Damage::FlipByte);
}

TEST_CASE("a deleted block of a published table is Corrupt, not a missing table") {
    check_damaged_block(Damage::Delete);
}

TEST_CASE("a table decoded whole: its stored codes, and the first damaged block named, whatever the thread") {
    SmallDb small;
    const auto before = all_codes(small.path, "KQvK");
    const storage::TableInfo info = stored_info(small.path, "antichess/KQvK");
    const std::uint64_t g = info.blocks_per_record;
    REQUIRE(info.block_count >= 2 * g);
    const index::Material kqvk = table_material(VariantId::Antichess, "KQvK");
    {
        auto tb = probe::Tablebase::open(small.path);
        REQUIRE(tb.ok());
        auto decoded = tb->decode_table(VariantId::Antichess, kqvk);
        REQUIRE(decoded.ok());
        const std::uint64_t n = (*decoded)->indexer().size();
        std::uint64_t mismatches = 0;
        for (std::uint64_t slot = 0; slot < before.size(); ++slot) {
            mismatches += *(*decoded)->code(static_cast<Color>(slot / n), slot % n) != before[slot];
        }
        CHECK(mismatches == 0);
    }
    // Records decode on several threads; the error is the lowest damaged
    // record's (named by its first block), every time.
    damage_block(small.path, info, g, Damage::FlipByte);
    damage_block(small.path, info, 0, Damage::Delete);
    for (int round = 0; round < 8; ++round) {
        auto tb = probe::Tablebase::open(small.path);
        REQUIRE(tb.ok());
        auto decoded = tb->decode_table(VariantId::Antichess, kqvk);
        REQUIRE_FALSE(decoded.ok());
        const std::string message = decoded.status().message();
        CAPTURE(message);
        CHECK(decoded.status().code() == StatusCode::Corruption);
        CHECK(contains(message, "antichess/KQvK"));
        CHECK(contains(message, "block 0 "));
        CHECK_FALSE(contains(message, "block " + std::to_string(g) + " "));
    }
}

TEST_CASE("a flipped byte in a wdl-dtc/2 block is Corrupt naming table and block, never a wrong value") {
    SmallDb small{std::string(probe::kCompactValueEncoding)};
    const auto before = all_codes(small.path, "KQvK");
    const storage::TableInfo info = stored_info(small.path, "antichess/KQvK");
    REQUIRE(info.spec.value_encoding == probe::kCompactValueEncoding);
    REQUIRE(info.block_count >= 2);
    damage_block(small.path, info, 1, Damage::FlipByte);
    // Positions that read block 1 (their own stored value, or a child's
    // through the one-ply search) fail; every other answer is as before.
    CHECK(probe_all_after_damage(small.path, before) > 0);
    // A free position of block 1 reads its stored value: the C API names
    // the table and the block.
    auto ix = index::Indexer::create(VariantId::Antichess, table_material(VariantId::Antichess, "KQvK"));
    REQUIRE(ix.ok());
    std::optional<Position> pos;
    for (std::uint64_t slot = info.slots_per_block; slot < 2 * info.slots_per_block && !pos; ++slot) {
        auto p = ix->position(slot % ix->size(), static_cast<Color>(slot / ix->size()));
        MoveList moves;
        if (p && probe::slot_kind<Antichess>(*p, moves) == probe::SlotKind::Free) pos = p;
    }
    REQUIRE(pos.has_value());
    tbf_db* handle = nullptr;
    REQUIRE(tbf_open(small.path.c_str(), 0, &handle) == TBF_OK);
    tbf_value v{};
    CHECK(tbf_probe_fen(handle, "antichess", to_fen(*pos).c_str(), &v) == TBF_ERR_CORRUPT);
    const std::string message = tbf_last_error();
    CAPTURE(message);
    CHECK(contains(message, "checksum"));
    CHECK(contains(message, "antichess/KQvK"));
    CHECK(contains(message, "block 1"));
    tbf_close(handle);
}

TEST_CASE("a flipped byte inside an SST file is Corrupt, never a wrong value") {
    SmallDb small;
    const auto before = all_codes(small.path, "KQvK");
    // KQvK's blocks are the largest file; its middle lies in a data block.
    const std::string sst = largest_file(small.path, ".sst");
    flip_byte(sst, fs::file_size(sst) / 2);
    CHECK(probe_all_after_damage(small.path, before) > 0);
}

TEST_CASE("a truncated database or a wrong path: clear errors from open") {
    SmallDb small;
    {
        const std::string sst = largest_file(small.path, ".sst");
        fs::resize_file(sst, fs::file_size(sst) / 2);
    }
    auto truncated = probe::Tablebase::open(small.path);
    REQUIRE_FALSE(truncated.ok());
    CHECK(truncated.status().code() == StatusCode::Corruption);
    CHECK(contains(truncated.status().message(), "cannot open database " + small.path));

    ScratchDir empty;
    const std::string missing = empty.sub("no-such-db");
    auto absent = probe::Tablebase::open(missing);
    REQUIRE_FALSE(absent.ok());
    CHECK(absent.status().code() == StatusCode::IoError);
    CHECK(contains(absent.status().message(), missing));
    CHECK(contains(absent.status().message(), "does not exist"));

    auto not_db = probe::Tablebase::open(empty.path());
    REQUIRE_FALSE(not_db.ok());
    CHECK(not_db.status().code() == StatusCode::IoError);
    CHECK(contains(not_db.status().message(), "not a tbforge database"));

    tbf_db* handle = reinterpret_cast<tbf_db*>(&empty);  // must be reset to NULL
    CHECK(tbf_open(missing.c_str(), 0, &handle) == TBF_ERR_IO);
    CHECK(handle == nullptr);
    CHECK(contains(tbf_last_error(), missing));
    CHECK(tbf_open(small.path.c_str(), 0, &handle) == TBF_ERR_CORRUPT);
    CHECK(contains(tbf_last_error(), "cannot open database"));
    CHECK(tbf_open(nullptr, 0, &handle) == TBF_ERR_BAD_INPUT);
}
