#pragma once
// The chess side of the FEN, UCI and strategy-line targets: the variants in
// both libraries' enumerations, and FEN fields split as both parsers split them.

#include <cstddef>
#include <string_view>

#include "fuzz_support.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/verify/variant.hpp"

namespace tbf::fuzz {

inline constexpr VariantId kVariants[] = {VariantId::Antichess, VariantId::AntichessFics,
                                          VariantId::AntichessJoint, VariantId::FourFile};

constexpr verify::Variant verify_variant(VariantId id) {
    switch (id) {
        case VariantId::Antichess: return verify::Variant::Antichess;
        case VariantId::AntichessFics: return verify::Variant::AntichessFics;
        case VariantId::AntichessJoint: return verify::Variant::AntichessJoint;
        case VariantId::FourFile: break;
    }
    return verify::Variant::FourFile;
}

// The whitespace-separated fields of a FEN, split as both parsers split them
// (spaces and tabs).
inline std::size_t fen_field_count(std::string_view text) {
    std::size_t fields = 0;
    bool in_field = false;
    for (char c : text) {
        const bool blank = c == ' ' || c == '\t';
        if (!blank && !in_field) ++fields;
        in_field = !blank;
    }
    return fields;
}

}  // namespace tbf::fuzz
