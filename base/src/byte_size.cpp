#include "tbforge/base/byte_size.hpp"

#include <string>

namespace tbf {

Result<std::uint64_t> parse_byte_size(std::string_view text) {
    const auto bad = [&] {
        return invalid_argument("bad byte size '" + std::string(text) +
                                "' (e.g. 4G, 4GiB, 512M, 1048576)");
    };
    std::uint64_t value = 0;
    std::size_t at = 0;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
        const auto digit = static_cast<std::uint64_t>(text[at] - '0');
        if (value > (~std::uint64_t{0} - digit) / 10) return bad();
        value = value * 10 + digit;
    }
    if (at == 0) return bad();
    std::string unit;
    for (char c : text.substr(at)) unit += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    int shift = 0;
    if (!unit.empty() && unit != "B") {
        constexpr std::string_view kUnits = "KMGT";
        const std::size_t found = kUnits.find(unit[0]);
        const std::string_view rest = std::string_view(unit).substr(1);
        if (found == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
            return bad();
        }
        shift = 10 * static_cast<int>(found + 1);
    }
    if (value > (~std::uint64_t{0} >> shift)) return bad();
    return value << shift;
}

}  // namespace tbf
