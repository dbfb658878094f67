#pragma once
// A position: unit placement, side to move, en-passant square. No castling
// and no move counters: no variant here has castling, and values ignore the
// 50-move rule.

#include <array>
#include <cstdint>
#include <string>

#include "tbforge/rules/types.hpp"

namespace tbf {

class Position {
public:
    Position() { board_.fill(Unit::None); }

    Unit unit_on(Square s) const { return board_[s]; }
    Bitboard units(Color c) const { return by_color_[to_index(c)]; }
    Bitboard units(UnitType t) const { return by_type_[to_index(t)]; }
    Bitboard units(Color c, UnitType t) const { return by_color_[to_index(c)] & by_type_[to_index(t)]; }
    Bitboard occupied() const { return by_color_[0] | by_color_[1]; }
    int unit_count(Color c) const { return popcount(by_color_[to_index(c)]); }
    Color side_to_move() const { return side_; }
    // The square a pawn skipped with a double push, or kNoSquare.
    Square ep_square() const { return ep_; }

    void put(Square s, Unit u) {
        board_[s] = u;
        by_color_[to_index(unit_color(u))] |= bit(s);
        by_type_[to_index(unit_type(u))] |= bit(s);
    }
    void remove(Square s) {
        const Unit u = board_[s];
        board_[s] = Unit::None;
        by_color_[to_index(unit_color(u))] &= ~bit(s);
        by_type_[to_index(unit_type(u))] &= ~bit(s);
    }
    void set_side_to_move(Color c) { side_ = c; }
    void set_ep_square(Square s) { ep_ = s; }

    // The position after a move; the move must be legal here.
    Position after(Move m) const;
    bool is_capture(Move m) const {
        return board_[m.to()] != Unit::None || is_en_passant(m);
    }
    bool is_en_passant(Move m) const {
        return ep_ != kNoSquare && m.to() == ep_ && unit_type(board_[m.from()]) == UnitType::Pawn &&
               board_[m.from()] != Unit::None && file_of(m.from()) != file_of(m.to());
    }
    // Conversion in DTC terms: the move leaves the table (capture or promotion).
    bool is_conversion(Move m) const { return m.is_promotion() || is_capture(m); }

    // Colours swapped and board flipped top to bottom: the same game seen from
    // the other side.
    Position color_flipped() const;

    friend bool operator==(const Position& a, const Position& b) {
        return a.board_ == b.board_ && a.side_ == b.side_ && a.ep_ == b.ep_;
    }

private:
    std::array<Bitboard, 2> by_color_{};
    std::array<Bitboard, kUnitTypeCount> by_type_{};
    std::array<Unit, 64> board_{};
    Color side_ = Color::White;
    Square ep_ = kNoSquare;
};

}  // namespace tbf
