#pragma once
// The verifier's own position type and move generator: a plain 8x8 mailbox,
// written from the rules text of docs/ARCHITECTURE.md section 3 and sharing no code with
// rules/. Everything a caller sees is neutral: plain enums, square numbers,
// FEN and UCI strings.
//
// Thread safety: a Board is a value; const member functions may be called
// from many threads at once. Hot loops (perft, the table check) make and
// unmake moves on one board instead (src/movegen.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/verify/variant.hpp"

namespace tbf::verify {

enum class Color : unsigned char { White, Black };

constexpr Color opposite(Color c) { return c == Color::White ? Color::Black : Color::White; }

enum class Piece : unsigned char { None, King, Queen, Rook, Bishop, Knight, Pawn };

// A unit with its colour; piece None means an empty square.
struct Unit {
    Piece piece = Piece::None;
    Color color = Color::White;

    [[nodiscard]] constexpr bool empty() const { return piece == Piece::None; }
    friend constexpr bool operator==(const Unit&, const Unit&) = default;
};

// Value of a position for the side to move. NotTerminal: it has a legal move.
enum class Outcome : unsigned char { NotTerminal, Win, Draw, Loss };

std::string_view outcome_name(Outcome o);  // "not-terminal", "win", "draw", "loss"

// Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63.
inline constexpr int kNoSquare = -1;

constexpr int file_of(int square) { return square % 8; }
constexpr int rank_of(int square) { return square / 8; }
constexpr int square_at(int file, int rank) { return rank * 8 + file; }

std::string square_name(int square);  // "e4"; "-" for kNoSquare
std::optional<int> square_from_name(std::string_view name);

// A move. En passant is not flagged: it is a pawn moving diagonally onto the
// en-passant square, recognised from the position.
struct Move {
    std::int8_t from = 0;
    std::int8_t to = 0;
    Piece promotion = Piece::None;

    friend constexpr bool operator==(const Move&, const Move&) = default;
};

std::string to_uci(const Move& m);  // "e7e8q"; promotion to king is "e7e8k"

namespace detail {
class BoardEditor;  // move generation, make and unmake (src/movegen.hpp)
}  // namespace detail

class Board {
public:
    // An empty antichess board, White to move. Real positions come from
    // parse_fen or make_board, which check them.
    Board() = default;

    [[nodiscard]] Variant variant() const { return variant_; }
    [[nodiscard]] Color side_to_move() const { return side_; }
    // The square a pawn skipped with a double push, or kNoSquare.
    [[nodiscard]] int ep_square() const { return ep_; }
    // square in 0..63.
    [[nodiscard]] Unit unit_on(int square) const {
        return cells_[static_cast<std::size_t>(square)];
    }
    [[nodiscard]] int unit_count(Color c) const { return counts_[c == Color::White ? 0 : 1]; }

    // Legal moves in generation order (empty when terminal).
    [[nodiscard]] std::vector<Move> legal_moves() const;
    // Legal moves as UCI strings, sorted ascending.
    [[nodiscard]] std::vector<std::string> legal_moves_uci() const;

    // The position after a move, which must be legal here.
    [[nodiscard]] Board after(const Move& m) const;
    // The position after a UCI move, or nothing if the move is not legal here.
    [[nodiscard]] std::optional<Board> after_uci(std::string_view uci) const;

    [[nodiscard]] bool is_capture(const Move& m) const;
    // Conversion in DTC terms: a capture or a promotion (the move leaves the table).
    [[nodiscard]] bool is_conversion(const Move& m) const;

    // Whether the king of `c` is attacked. Always false without royal kings.
    [[nodiscard]] bool in_check(Color c) const;
    // Whether `square` is attacked by a unit of colour `by`.
    [[nodiscard]] bool is_attacked(int square, Color by) const;

    // Terminal or not, and if terminal the result for the side to move.
    [[nodiscard]] Outcome outcome() const;

    // FEN with castling "-" and move counters "0 1" (the board keeps neither).
    [[nodiscard]] std::string fen() const;

    // Equal positions: units, side to move, en-passant square and variant
    // (the order of the unit lists does not count).
    friend bool operator==(const Board& a, const Board& b) {
        return a.cells_ == b.cells_ && a.variant_ == b.variant_ && a.side_ == b.side_ &&
               a.ep_ == b.ep_;
    }

private:
    friend Result<Board> make_board(Variant, const std::array<Unit, 64>&, Color, int);
    friend class detail::BoardEditor;

    // Puts `u` (not empty) on the empty square `square`, keeping the lists.
    void put(int square, Unit u);

    std::array<Unit, 64> cells_{};
    // Each colour's occupied squares in no particular order (at most 16, as
    // make_board requires), and each occupied square's place in its list:
    // moves visit the units instead of the 64 squares.
    std::array<std::array<std::int8_t, 16>, 2> squares_{};
    std::array<std::int8_t, 64> place_{};
    std::array<int, 2> counts_{};
    Variant variant_ = Variant::Antichess;
    Ruleset rules_ = ruleset(Variant::Antichess);
    Color side_ = Color::White;
    int ep_ = kNoSquare;
};

// A checked board from a unit placement, side to move and en-passant square
// (kNoSquare for none). Errors: pawns on rank 1 or 8, an impossible
// en-passant square, an empty board; in Four File also units off the a/c/e/g
// files, not exactly one king per side on the e-file, and the side not to
// move in check. Four File has no en passant: a possible square is accepted
// and dropped. Errors are InvalidArgument with a one-line message.
[[nodiscard]] Result<Board> make_board(Variant variant, const std::array<Unit, 64>& units,
                                       Color side_to_move, int ep_square);

// A board from FEN (4 to 6 fields; castling rights are checked for syntax and
// ignored; move counters, when present, must be numbers and are ignored).
[[nodiscard]] Result<Board> parse_fen(Variant variant, std::string_view fen);

}  // namespace tbf::verify
