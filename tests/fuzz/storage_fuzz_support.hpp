#pragma once
// What the storage fuzz targets share: how byte 0 of an input reads. The
// records' checksums come from tests/support/record_seal.hpp.

#include <cstdint>

#include "record_seal.hpp"

namespace tbf::fuzz {

// Byte 0 of a storage fuzz input: the value width the table expects (bits
// 0-1: 1, 2, 4, or the invalid 3) and whether the record's checksum is to
// be made to fit (bit 2), so that the fuzzer reaches what lies behind it.
inline std::uint32_t input_width(std::uint8_t byte) { return (byte & 3) == 3 ? 3 : 1u << (byte & 3); }
inline bool input_resealed(std::uint8_t byte) { return (byte & 4) != 0; }

}  // namespace tbf::fuzz
