#pragma once
// The order of unit kinds shared by the indexers.

#include "tbforge/rules/types.hpp"

namespace tbf::index::detail {

// Fewer moves first, so the most mobile units become the low-order digits.
inline int mobility_rank(UnitType t) {
    switch (t) {
        case UnitType::Pawn: return 0;
        case UnitType::Knight: return 1;
        case UnitType::King: return 2;
        case UnitType::Bishop: return 3;
        case UnitType::Rook: return 4;
        case UnitType::Queen: return 5;
    }
    return 6;
}

}  // namespace tbf::index::detail
