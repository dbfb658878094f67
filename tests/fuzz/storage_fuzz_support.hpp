#pragma once
// The checksum of stored block and group records, computed apart from the
// decoder (docs/storage-format.md section 4: XXH64 of the key, header
// bytes 0-7 and everything after the 16-byte header), for the storage
// fuzz targets to check what the decoder accepts and to reseal inputs.

#include <cstdint>
#include <string>
#include <string_view>

#include "records.hpp"
#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"

namespace tbf::fuzz {

inline std::uint64_t record_checksum(std::string_view key, std::string_view record) {
    Xxh64 hash;
    hash.update(key);
    hash.update(record.substr(0, 8));
    hash.update(record.substr(storage::detail::kBlockHeaderBytes));
    return hash.digest();
}

// Byte 0 of a storage fuzz input: the value width the table expects (bits
// 0-1: 1, 2, 4, or the invalid 3) and whether the record's checksum is to
// be made to fit (bit 2), so that the fuzzer reaches what lies behind it.
inline std::uint32_t input_width(std::uint8_t byte) { return (byte & 3) == 3 ? 3 : 1u << (byte & 3); }
inline bool input_resealed(std::uint8_t byte) { return (byte & 4) != 0; }

// Replaces the record's checksum field by the one that fits its content.
inline void reseal(std::string_view key, std::string& record) {
    if (record.size() < storage::detail::kBlockHeaderBytes) return;
    std::string sum;
    put_le<std::uint64_t>(sum, record_checksum(key, record));
    record.replace(8, 8, sum);
}

}  // namespace tbf::fuzz
