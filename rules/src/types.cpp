#include "tbforge/rules/types.hpp"

#include <cctype>

namespace tbf {

namespace {
constexpr char kTypeChars[kUnitTypeCount] = {'K', 'Q', 'R', 'B', 'N', 'P'};
}  // namespace

char unit_type_char(UnitType t) { return kTypeChars[to_index(t)]; }

char unit_char(Unit u) {
    if (u == Unit::None) return '.';
    const char c = unit_type_char(unit_type(u));
    return unit_color(u) == Color::White ? c : static_cast<char>(std::tolower(c));
}

bool unit_from_char(char c, Unit& out) {
    const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (int t = 0; t < kUnitTypeCount; ++t) {
        if (kTypeChars[t] == upper) {
            const Color color = c == upper ? Color::White : Color::Black;
            out = make_unit(color, static_cast<UnitType>(t));
            return true;
        }
    }
    return false;
}

std::string square_name(Square s) {
    if (s >= 64) return "-";
    return {static_cast<char>('a' + file_of(s)), static_cast<char>('1' + rank_of(s))};
}

}  // namespace tbf
