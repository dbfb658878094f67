#include "tbforge/rules/variant.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tbforge/rules/movegen.hpp"

namespace tbf {

std::optional<VariantId> parse_variant(std::string_view name) {
    for (const VariantTraits& t : kVariantTraits) {
        if (t.name == name) return t.id;
    }
    return std::nullopt;
}

std::string_view variant_name(VariantId id) { return variant_traits(id).name; }

std::string_view variant_list() {
    static const std::string list = [] {
        std::string s;
        for (const VariantTraits& t : kVariantTraits) {
            if (!s.empty()) s += ", ";
            s += t.name;
        }
        return s;
    }();
    return list;
}

namespace detail {
// The king of the side not to move, under the variant's attack rules.
bool royal_king_attacked(VariantId id, const Position& pos) {
    return with_variant(id, [&]<class R>() {
        if constexpr (R::kRoyalKing) {
            return king_attacked<R>(pos, ~pos.side_to_move());
        } else {
            return false;
        }
    });
}

// Ids come from parse_variant() or a ruleset's kId: any other value is a
// programming error, not input.
void unknown_variant(VariantId id) {
    std::fprintf(stderr, "tbforge: unknown variant id %d\n", static_cast<int>(id));
    std::abort();
}
}  // namespace detail

}  // namespace tbf
