#pragma once
// Options are parsed with tbforge/base/cli.hpp and JSON is written with
// tbforge/base/json.hpp. This name stays for gen/src/strategy.cpp until it
// uses the base header directly.

#include <string>

#include "tbforge/base/json.hpp"

namespace tbf::cli {

inline std::string json_string(const std::string& text) { return to_json_line(Json(text)); }

}  // namespace tbf::cli
