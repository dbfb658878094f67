#include "tbforge/rules/variant.hpp"

namespace tbf {

std::optional<VariantId> parse_variant(std::string_view name) {
    for (VariantId id : {VariantId::Antichess, VariantId::AntichessFics, VariantId::AntichessJoint,
                         VariantId::FourFile}) {
        if (variant_name(id) == name) return id;
    }
    return std::nullopt;
}

std::string_view variant_name(VariantId id) {
    return with_variant(id, []<class R>() { return R::kName; });
}

std::string_view variant_list() { return "antichess, antichess-fics, antichess-joint, fourfile"; }

}  // namespace tbf
