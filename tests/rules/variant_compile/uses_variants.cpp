// Compiled by variant_compile.cmake against edited copies of variant.hpp:
// dispatches every id to its ruleset and generates moves under each.
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/variant.hpp"

int main() {
    const tbf::Position empty;
    int royal = 0;
    for (const tbf::VariantTraits& traits : tbf::kVariantTraits) {
        royal += tbf::with_variant(traits.id, [&]<class R>() {
            tbf::MoveList list;
            tbf::generate_legal<R>(empty, list);
            return R::kRoyalKing ? 1 : 0;
        });
    }
    return royal == 0 ? 1 : 0;
}
