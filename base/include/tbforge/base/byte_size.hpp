#pragma once
// Byte counts as every size option takes them: digits, then an optional unit
// K, M, G or T (powers of 1024), optionally followed by "B" or "iB", in either
// case; no unit or "B" means bytes. So 4G = 4GiB = 4gb = 4294967296, and
// 72M, 512MiB, 1048576 and 100B are all accepted.

#include <cstdint>
#include <string_view>

#include "tbforge/base/status.hpp"

namespace tbf {

// InvalidArgument naming `text` when it is not such a count or exceeds 2^64 - 1.
[[nodiscard]] Result<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace tbf
