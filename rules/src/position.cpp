#include "tbforge/rules/position.hpp"

#include "tbforge/rules/bitboard.hpp"

namespace tbf {

Position Position::after(Move m) const {
    Position next = *this;
    const Square from = m.from();
    const Square to = m.to();
    const Unit moving = board_[from];
    const Color us = side_;
    if (is_en_passant(m)) {
        next.remove(us == Color::White ? static_cast<Square>(to - 8) : static_cast<Square>(to + 8));
    } else if (board_[to] != Unit::None) {
        next.remove(to);
    }
    next.remove(from);
    next.put(to, m.is_promotion() ? make_unit(us, m.promotion()) : moving);
    next.ep_ = kNoSquare;
    // The en-passant square is recorded only when an enemy pawn can use it, so
    // equal positions compare equal. (Four File pawns never capture: their
    // diagonal squares are off the board, so this never fires there.)
    if (unit_type(moving) == UnitType::Pawn && (from ^ to) == 16) {
        const auto skipped = static_cast<Square>((from + to) / 2);
        if (pawn_attacks(us, skipped) & units(~us, UnitType::Pawn)) next.ep_ = skipped;
    }
    next.side_ = ~us;
    return next;
}

Position Position::color_flipped() const {
    Position flipped;
    for (int s = 0; s < 64; ++s) {
        const Unit u = board_[s];
        if (u == Unit::None) continue;
        flipped.put(static_cast<Square>(s ^ 56), make_unit(~unit_color(u), unit_type(u)));
    }
    flipped.side_ = ~side_;
    flipped.ep_ = ep_ == kNoSquare ? kNoSquare : static_cast<Square>(ep_ ^ 56);
    return flipped;
}

}  // namespace tbf
