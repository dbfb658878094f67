#pragma once
// One line of a strategy text file, "FEN<TAB>uci-move" (docs/strategy.md), as
// strategy-import reads it. Apart from the import so that tests and the fuzz
// targets reach it without a database; it needs rules/ and nothing else.

#include <optional>
#include <string_view>

#include "tbforge/base/status.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::gen {

struct StrategyLine {
    Position position;  // `side` to move
    Move move;          // legal there
};

// nullopt for a line the import skips (blank, or '#' as its first non-blank
// character). Errors: InvalidArgument with the message strategy-import
// reports after "line N: ".
Result<std::optional<StrategyLine>> parse_strategy_line(std::string_view line, VariantId variant,
                                                        Color side);

}  // namespace tbf::gen
