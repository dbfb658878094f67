#pragma once
// UCI move notation: "e2e4", "e7e8q"; antichess promotion to king is "e7e8k".

#include <optional>
#include <string>
#include <string_view>

#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf {

std::string to_uci(Move m);

// The legal move of pos written as `text`, or nullopt if it is malformed or
// not legal here.
std::optional<Move> parse_uci(const Position& pos, VariantId variant, std::string_view text);

}  // namespace tbf
