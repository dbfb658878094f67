#include "strategy_line.hpp"

#include <string>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/uci.hpp"

namespace tbf::gen {
namespace {

// "FEN<TAB>move" split into its two fields, blanks around each removed.
bool split_line(std::string_view line, std::string_view& fen, std::string_view& move) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos || line.find('\t', tab + 1) != std::string_view::npos) {
        return false;
    }
    const auto trim = [](std::string_view s) {
        const std::size_t a = s.find_first_not_of(" \r");
        if (a == std::string_view::npos) return std::string_view();
        return s.substr(a, s.find_last_not_of(" \r") - a + 1);
    };
    fen = trim(line.substr(0, tab));
    move = trim(line.substr(tab + 1));
    return !fen.empty() && !move.empty();
}

const char* side_name(Color c) { return c == Color::White ? "white" : "black"; }

}  // namespace

Result<std::optional<StrategyLine>> parse_strategy_line(std::string_view line, VariantId variant,
                                                        Color side) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') {
        return std::optional<StrategyLine>();
    }
    std::string_view fen_text, move_text;
    if (!split_line(line, fen_text, move_text)) {
        return invalid_argument("expected 'FEN<TAB>uci-move'");
    }
    auto pos = parse_fen(fen_text, variant);
    if (!pos.ok()) return invalid_argument(pos.status().message());
    if (pos->side_to_move() != side) {
        return invalid_argument(std::string(side_name(pos->side_to_move())) + " to move in " +
                                std::string(fen_text) + ", but the strategy plays " +
                                side_name(side));
    }
    const auto move = parse_uci(*pos, variant, move_text);
    if (!move) {
        return invalid_argument("move '" + std::string(move_text) + "' is not legal in " +
                                std::string(fen_text));
    }
    return std::optional<StrategyLine>(StrategyLine{*pos, *move});
}

}  // namespace tbf::gen
