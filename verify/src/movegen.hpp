#pragma once
// Internal: the verifier's move generator over a Board, with make and unmake
// so that hot loops (perft, the table check) change one board in place
// instead of copying it per move. Board::legal_moves, Board::after and
// Board::outcome go through the same code.

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "tbforge/verify/board.hpp"

namespace tbf::verify::detail {

// make_board allows at most 16 units per side, and no unit has more than 27
// moves (a queen; a pawn has at most 3 targets x 5 promotions), so 16 x 27 =
// 432 moves fit.
inline constexpr std::size_t kMaxMoves = 512;

class MoveList {
public:
    MoveList() {}  // NOLINT: the moves stay unset until pushed
    MoveList(const MoveList& other) : size_(other.size_) {
        std::copy(other.begin(), other.end(), storage_.moves);
    }
    MoveList& operator=(const MoveList& other) {
        size_ = other.size_;
        std::copy(other.begin(), other.end(), storage_.moves);
        return *this;
    }

    void push(const Move& m) {
        assert(size_ < kMaxMoves);
        storage_.moves[size_++] = m;
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    void clear() { size_ = 0; }
    const Move& operator[](std::size_t i) const { return storage_.moves[i]; }
    Move& operator[](std::size_t i) { return storage_.moves[i]; }
    void truncate(std::size_t n) { size_ = n; }
    [[nodiscard]] const Move* begin() const { return storage_.moves; }
    [[nodiscard]] const Move* end() const { return storage_.moves + size_; }

private:
    // Not value-initialised: a list is made per position (and per move in
    // perft), and zeroing 1.5 KB each time would cost more than generating.
    union Storage {
        Storage() {}  // NOLINT
        Move moves[kMaxMoves];
    } storage_;
    std::size_t size_ = 0;
};

// What unmake needs to restore: the captured unit and where it stood (an
// en-passant capture takes a pawn beside the target), and the en-passant
// square before the move.
struct Undo {
    Unit captured{};
    std::int8_t captured_square = -1;  // -1: nothing captured
    std::int8_t ep = kNoSquare;
};

// The operations on a Board that need its unit lists.
class BoardEditor {
public:
    // Every legal move of the side to move; none in a terminal position.
    // Four File legality is tested by making each move: `board` is changed
    // and restored.
    static void generate_legal(Board& board, MoveList& moves);

    // Plays a legal move (captures, en passant, promotion, the new
    // en-passant square) and returns what unmake needs.
    static Undo make(Board& board, const Move& m);
    // Takes back the move `m` made with `undo`; the board equals the one
    // before make (its unit lists may be in another order).
    static void unmake(Board& board, const Move& m, const Undo& undo);

    // The squares of one colour's units, in no particular order.
    static const std::int8_t* squares(const Board& board, Color c) {
        return board.squares_[c == Color::White ? 0 : 1].data();
    }

    // Whether `board` is a position under its variant's rules, as make_board
    // decides for a placement of units with no en-passant square: pawns off
    // ranks 1 and 8; Four File units on files a, c, e, g, one king a side on
    // the e-file and the side not to move not in check. For boards built by
    // place() whose unit counts are already known to be possible.
    static bool is_position(const Board& board);

    // Whether the move, a legal one, gives the opponent an en-passant right
    // (make() records the square then): a double push beside an enemy pawn.
    static bool gives_en_passant(const Board& board, const Move& m);

    // An empty board of `variant` with `side` to move, to be filled by place().
    static void clear(Board& board, Variant variant, Color side);
    static void place(Board& board, int square, Unit u) { board.put(square, u); }
};

inline void generate_legal(Board& board, MoveList& moves) {
    BoardEditor::generate_legal(board, moves);
}
// For callers holding a const board: a copy takes the make/unmake of the
// Four File legality test.
void generate_legal(const Board& board, MoveList& moves);

}  // namespace tbf::verify::detail
