#pragma once
// Basic vocabulary shared by every ruleset: colours, unit types, squares,
// bitboards and moves. Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63.

#include <bit>
#include <cstdint>
#include <string>

namespace tbf {

enum class Color : std::uint8_t { White = 0, Black = 1 };

constexpr Color operator~(Color c) { return static_cast<Color>(static_cast<int>(c) ^ 1); }
constexpr int to_index(Color c) { return static_cast<int>(c); }

// Order is Syzygy's naming order (K Q R B N P), used by material names too.
enum class UnitType : std::uint8_t { King = 0, Queen, Rook, Bishop, Knight, Pawn };
inline constexpr int kUnitTypeCount = 6;

constexpr int to_index(UnitType t) { return static_cast<int>(t); }

// A unit with its colour; 0 is "no unit". Encoded as 1 + colour * 8 + type.
enum class Unit : std::uint8_t { None = 0 };

constexpr Unit make_unit(Color c, UnitType t) {
    return static_cast<Unit>(1 + to_index(c) * 8 + to_index(t));
}
constexpr UnitType unit_type(Unit u) { return static_cast<UnitType>((static_cast<int>(u) - 1) & 7); }
constexpr Color unit_color(Unit u) { return static_cast<Color>((static_cast<int>(u) - 1) >> 3); }

// 'K','Q','R','B','N','P' (upper case for White, lower case for Black).
char unit_char(Unit u);
char unit_type_char(UnitType t);  // upper case
bool unit_from_char(char c, Unit& out);

using Square = std::uint8_t;
inline constexpr Square kNoSquare = 64;

constexpr int file_of(Square s) { return s & 7; }
constexpr int rank_of(Square s) { return s >> 3; }
constexpr Square make_square(int file, int rank) { return static_cast<Square>(rank * 8 + file); }
std::string square_name(Square s);  // "e4"; "-" for kNoSquare

using Bitboard = std::uint64_t;

constexpr Bitboard bit(Square s) { return Bitboard{1} << s; }
constexpr int popcount(Bitboard b) { return std::popcount(b); }
constexpr Square lsb(Bitboard b) { return static_cast<Square>(std::countr_zero(b)); }
inline Square pop_lsb(Bitboard& b) {
    const Square s = lsb(b);
    b &= b - 1;
    return s;
}

inline constexpr Bitboard kFileA = 0x0101010101010101ULL;
inline constexpr Bitboard kRank1 = 0xFFULL;
constexpr Bitboard file_bb(int file) { return kFileA << file; }
constexpr Bitboard rank_bb(int rank) { return kRank1 << (8 * rank); }

// A move: from, to and promotion type. En passant is recognised from the
// position (a pawn moving diagonally onto the en-passant square).
class Move {
public:
    constexpr Move() = default;
    constexpr Move(Square from, Square to) : bits_(static_cast<std::uint16_t>(from | (to << 6))) {}
    constexpr Move(Square from, Square to, UnitType promotion)
        : bits_(static_cast<std::uint16_t>(from | (to << 6) | ((to_index(promotion) + 1) << 12))) {}

    constexpr Square from() const { return static_cast<Square>(bits_ & 63); }
    constexpr Square to() const { return static_cast<Square>((bits_ >> 6) & 63); }
    constexpr bool is_promotion() const { return (bits_ >> 12) != 0; }
    constexpr UnitType promotion() const { return static_cast<UnitType>((bits_ >> 12) - 1); }
    constexpr std::uint16_t raw() const { return bits_; }
    constexpr bool is_null() const { return bits_ == 0; }

    friend constexpr bool operator==(Move a, Move b) { return a.bits_ == b.bits_; }
    friend constexpr bool operator<(Move a, Move b) { return a.bits_ < b.bits_; }

private:
    std::uint16_t bits_ = 0;
};

// Game-theoretic result for the side to move.
enum class Wdl : std::int8_t { Loss = -1, Draw = 0, Win = 1 };
constexpr Wdl operator-(Wdl w) { return static_cast<Wdl>(-static_cast<int>(w)); }

}  // namespace tbf
