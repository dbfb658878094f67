#pragma once
// Checks shared by the storage format tests: a database opened with a given
// block cache, and a synthetic table read back every way a reader can.

#include <doctest/doctest.h>

#include <string>

#include "raw_db.hpp"
#include "storage_support.hpp"
#include "test_support.hpp"
#include "tbforge/base/xxh64.hpp"
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

// Gives a damaged block or group record stored under `key` the checksum
// that fits its content (XXH64 of key, header bytes 0-7 and everything
// after the header): damage that only the decoder's own checks can find.
inline void reseal_record(std::string_view key, std::string& record) {
    Xxh64 h;
    h.update(key);
    h.update(std::string_view(record).substr(0, 8));
    h.update(std::string_view(record).substr(16));
    const std::uint64_t sum = h.digest();
    for (int i = 0; i < 8; ++i) record[8 + i] = static_cast<char>(sum >> (8 * i));
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

}  // namespace tbf::test
