#pragma once
// JSON output of the tools: nlohmann::ordered_json (keys stay in the order
// they were set), printed compactly as one line.

#include <string>

#include <nlohmann/json.hpp>

namespace tbf {

using Json = nlohmann::ordered_json;

// Compact JSON text without a newline. Strings that are not UTF-8 get U+FFFD
// for each bad byte, so every output line stays valid JSON.
[[nodiscard]] std::string to_json_line(const Json& value);

// `seconds` rounded to milliseconds: timings without noise digits.
[[nodiscard]] double rounded_seconds(double seconds);

}  // namespace tbf
