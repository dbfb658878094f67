#pragma once
// `tbgen solve`: the whole command (options, progress, storing the strategy).
// Exit codes: 0 a closed strategy was stored, 1 not proven (nothing stored),
// 2 bad usage or input, 3 database or I/O error.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tbf::solve {

// Parses "4G", "512M", ... into bytes (nullopt if malformed); tbgen passes
// the parser its other commands use, so --memory reads the same everywhere.
using ByteSizeParser = std::function<std::optional<std::uint64_t>(std::string_view)>;

// argv[0] is the command name ("solve"); the options follow.
int run_cli(int argc, char** argv, const ByteSizeParser& parse_byte_size);

}  // namespace tbf::solve
