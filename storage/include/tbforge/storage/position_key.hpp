#pragma once
// The exact, compact encoding of strategy entries ("position/1 move/1",
// docs/storage-format.md section 16): a position as key bytes, a move as
// value bytes. It works on a plain description of a board (64 unit codes,
// side to move, en-passant square) so that the generator (rules/) and the
// independent verifier (its own board) encode the same position to the same
// bytes without sharing a position type. Storage itself attaches no meaning
// to the codes beyond their range; legality is the caller's business.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tbforge/base/status.hpp"

namespace tbf::storage {

// Value of StrategySpec::entry_encoding for entries written with this codec.
inline constexpr std::string_view kPositionMoveEncoding = "position/1 move/1";

// Unit codes (4 bits): 1 + colour * 8 + type, colour 0 white / 1 black, type
// 0 king, 1 queen, 2 rook, 3 bishop, 4 knight, 5 pawn. White K..P are 1..6,
// black k..p are 9..14; 0 is an empty square; 7, 8 and 15 are invalid.
inline constexpr std::uint8_t kEmptySquare = 0;
inline constexpr std::uint8_t kNoEpSquare = 64;
inline constexpr int kUnitTypes = 6;

constexpr std::uint8_t unit_code(int colour, int type) {
    return static_cast<std::uint8_t>(1 + colour * 8 + type);
}
constexpr bool valid_unit_code(std::uint8_t code) {
    return (code >= 1 && code <= 6) || (code >= 9 && code <= 14);
}

// A position as plain data. Squares: a1 = 0, b1 = 1, ..., h8 = 63.
struct PlainPosition {
    std::array<std::uint8_t, 64> units{};  // unit code per square, 0 = empty
    std::uint8_t side_to_move = 0;         // 0 white, 1 black
    std::uint8_t ep_square = kNoEpSquare;  // square skipped by a double push, or 64

    friend bool operator==(const PlainPosition&, const PlainPosition&) = default;
};

// Longest key: 64 occupied squares (the codec itself has no unit limit).
inline constexpr std::size_t kMaxPositionKeyBytes = 9 + 32;

// Key bytes: 1 byte side/ep, 8 bytes occupancy (big-endian), then one nibble
// per occupied square in square order. `key` must hold kMaxPositionKeyBytes;
// returns the length written. Errors: InvalidArgument for a unit code, side
// or en-passant square out of range.
[[nodiscard]] Result<std::size_t> encode_position_key(const PlainPosition& position,
                                                      std::uint8_t* key);
[[nodiscard]] Result<std::string> encode_position_key(const PlainPosition& position);

// The position of a key. Strict: the length must match the occupancy, the
// padding nibble must be 0, codes and the side/ep byte must be in range.
// Errors: Corruption, naming what is wrong.
[[nodiscard]] Result<PlainPosition> decode_position_key(std::string_view key);

// A move. promotion: 0 none, else 1 + unit type (1 king, 2 queen, 3 rook,
// 4 bishop, 5 knight).
struct PlainMove {
    std::uint8_t from = 0;
    std::uint8_t to = 0;
    std::uint8_t promotion = 0;

    friend bool operator==(const PlainMove&, const PlainMove&) = default;
};

inline constexpr std::size_t kMoveValueBytes = 2;

// Value bytes: u16 little-endian, from | to << 6 | promotion << 12.
[[nodiscard]] Result<std::string> encode_move_value(const PlainMove& move);
// Errors: Corruption for a length other than 2 or a promotion code above 5.
[[nodiscard]] Result<PlainMove> decode_move_value(std::string_view value);

}  // namespace tbf::storage
