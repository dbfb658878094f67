#pragma once
// The checksum of stored block and group records, computed apart from the
// storage library (docs/storage-format.md section 4: XXH64 of the key,
// header bytes 0-7 and everything after the 16-byte header), for tests and
// fuzz targets to check what the decoder accepts and to give damaged
// records a checksum that fits them.

#include <cstdint>
#include <string>
#include <string_view>

#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"

namespace tbf::test {

inline constexpr std::size_t kRecordHeaderBytes = 16;

inline std::uint64_t record_checksum(std::string_view key, std::string_view record) {
    Xxh64 hash;
    hash.update(key);
    hash.update(record.substr(0, 8));
    hash.update(record.substr(kRecordHeaderBytes));
    return hash.digest();
}

// Replaces the record's checksum field by the one that fits its content:
// damage that only the decoder's own checks can find.
inline void reseal_record(std::string_view key, std::string& record) {
    if (record.size() < kRecordHeaderBytes) return;
    std::string sum;
    put_le<std::uint64_t>(sum, record_checksum(key, record));
    record.replace(8, 8, sum);
}

}  // namespace tbf::test
