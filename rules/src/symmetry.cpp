#include "tbforge/rules/symmetry.hpp"

namespace tbf {

Position transform(const Position& pos, int symmetry) {
    Position out;
    Bitboard occ = pos.occupied();
    while (occ) {
        const Square s = pop_lsb(occ);
        out.put(transform_square(s, symmetry), pos.unit_on(s));
    }
    out.set_side_to_move(pos.side_to_move());
    const Square ep = pos.ep_square();
    out.set_ep_square(ep == kNoSquare ? kNoSquare : transform_square(ep, symmetry));
    return out;
}

}  // namespace tbf
