#pragma once
// Internal: move generation into a fixed-size list, so perft allocates
// nothing per node.

#include <array>
#include <cassert>
#include <cstddef>

#include "tbforge/verify/board.hpp"

namespace tbf::verify::detail {

// make_board allows at most 16 units per side, and no unit has more than 27
// moves (a queen; a pawn has at most 3 targets x 5 promotions), so 16 x 27 =
// 432 moves fit.
inline constexpr std::size_t kMaxMoves = 512;

class MoveList {
public:
    void push(const Move& m) {
        assert(size_ < kMaxMoves);
        moves_[size_++] = m;
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    void clear() { size_ = 0; }
    const Move& operator[](std::size_t i) const { return moves_[i]; }
    Move& operator[](std::size_t i) { return moves_[i]; }
    void truncate(std::size_t n) { size_ = n; }
    [[nodiscard]] const Move* begin() const { return moves_.data(); }
    [[nodiscard]] const Move* end() const { return moves_.data() + size_; }

private:
    std::array<Move, kMaxMoves> moves_;
    std::size_t size_ = 0;
};

// Every legal move of the side to move; none in a terminal position.
void generate_legal(const Board& board, MoveList& moves);

}  // namespace tbf::verify::detail
