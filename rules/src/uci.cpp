#include "tbforge/rules/uci.hpp"

#include <cctype>

#include "tbforge/rules/movegen.hpp"

namespace tbf {

std::string to_uci(Move m) {
    std::string s = square_name(m.from()) + square_name(m.to());
    if (m.is_promotion()) {
        s += static_cast<char>(std::tolower(unit_type_char(m.promotion())));
    }
    return s;
}

std::optional<Move> parse_uci(const Position& pos, VariantId variant, std::string_view text) {
    return with_variant(variant, [&]<class R>() -> std::optional<Move> {
        MoveList list;
        generate_legal<R>(pos, list);
        for (Move m : list) {
            if (to_uci(m) == text) return m;
        }
        return std::nullopt;
    });
}

}  // namespace tbf
