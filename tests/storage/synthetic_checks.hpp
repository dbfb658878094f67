#pragma once
// Checks shared by the storage format tests: a database opened with a given
// block cache, and a synthetic table read back every way a reader can.

#include <doctest/doctest.h>

#include <string>

#include "raw_db.hpp"
#include "record_seal.hpp"
#include "storage_support.hpp"
#include "test_support.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::test {

inline storage::Database open_db(const std::string& path, storage::OpenMode mode,
                                 std::size_t cache_bytes) {
    storage::DatabaseOptions o;
    o.mode = mode;
    o.create_if_missing = mode == storage::OpenMode::ReadWrite;
    o.block_cache_bytes = cache_bytes;
    auto db = storage::Database::open(path, o);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    return std::move(*db);
}

// Every slot through whole-block reads, a sample with each block's first and
// last slot through get() (with the cache disabled each read decodes its
// block), and the whole table through verify().
inline void check_synthetic_table(const storage::Database& db, const std::string& name,
                                  std::uint64_t seed) {
    auto reader = db.open_table(name);
    REQUIRE_MESSAGE(reader.ok(), reader.status().to_string());
    const auto wrong = count_mismatches(*reader, seed);
    REQUIRE_MESSAGE(wrong.ok(), wrong.status().to_string());
    CHECK(*wrong == 0);
    const auto wrong_single = count_single_read_mismatches(*reader, seed);
    REQUIRE_MESSAGE(wrong_single.ok(), wrong_single.status().to_string());
    CHECK(*wrong_single == 0);
    const Status s = reader->verify();
    CHECK_MESSAGE(s.ok(), s.to_string());
}

// Every byte of `original`, the record stored under `key` in the blocks
// family of the database at `path`, flipped in turn: once as it is and once
// with a checksum that fits the damage (not for bytes of the checksum
// itself); `check(db, resealed)` runs on each damaged database. Sanitizer
// builds, where each reopen is slow, flip the first 24 bytes (headers) and
// every `sanitized_stride`-th after them. The record is left damaged.
template <class Check>
void for_each_flipped_byte(const std::string& path, const std::string& key,
                           const std::string& original, std::size_t sanitized_stride,
                           const Check& check) {
    constexpr std::size_t kHeaderBytes = 24;
    for (std::size_t pos = 0; pos < original.size();
         pos += kSanitized && pos >= kHeaderBytes ? sanitized_stride : 1) {
        CAPTURE(pos);
        for (const bool resealed : {false, true}) {
            if (resealed && pos >= 8 && pos < 16) continue;
            std::string damaged = original;
            damaged[pos] = static_cast<char>(damaged[pos] ^ 0x10);
            if (resealed) reseal_record(key, damaged);
            {
                RawDb raw(path);
                raw.put("blocks", key, damaged);
            }
            auto db = storage::Database::open(path);
            REQUIRE(db.ok());
            check(*db, resealed);
        }
    }
}

// A synthetic table (write_synthetic, 2-byte values, `seed`) with one record
// damaged byte by byte (for_each_flipped_byte). Reading `damaged_slot` is a
// checksum mismatch naming the table and `block` ("block 3"), and verify()
// one too; with a checksum that fits the damage the read decodes or is
// Corruption naming the block, and verify() answers without crashing.
// `intact_slot`, in another record, always reads its value.
struct FlippedRecord {
    std::string table;
    std::uint64_t damaged_slot = 0;
    std::string block;
    std::uint64_t intact_slot = 0;
    std::uint64_t seed = 0;
};

inline void check_flipped_record(const std::string& path, const std::string& key, const std::string& original,
                                 std::size_t sanitized_stride, const FlippedRecord& f) {
    for_each_flipped_byte(path, key, original, sanitized_stride, [&](const storage::Database& db, bool resealed) {
        auto reader = db.open_table(f.table);
        REQUIRE(reader.ok());
        const auto value = reader->get(f.damaged_slot);
        if (!resealed) {
            CHECK(value.status().code() == StatusCode::ChecksumMismatch);
            CHECK(value.status().message().find("table '" + f.table + "'") != std::string::npos);
            CHECK(value.status().message().find(f.block) != std::string::npos);
            CHECK(reader->verify().code() == StatusCode::ChecksumMismatch);
            // A record that failed its check is not kept: read again, again refused.
            CHECK(reader->get(f.damaged_slot).status().code() == StatusCode::ChecksumMismatch);
        } else {
            if (!value.ok()) {
                CHECK(value.status().code() == StatusCode::Corruption);
                CHECK(value.status().message().find(f.block) != std::string::npos);
            }
            (void)reader->verify();  // any answer, but no crash
        }
        auto fine = reader->get(f.intact_slot);
        REQUIRE(fine.ok());
        CHECK(*fine == synthetic_value(f.seed, f.intact_slot, 2));
    });
}

}  // namespace tbf::test
