// The "position/1 move/1" entry codec (docs/storage-format.md section 16).

#include "tbforge/storage/position_key.hpp"

#include <bit>

namespace tbf::storage {
namespace {

Status bad_input(const std::string& what) {
    return {StatusCode::InvalidArgument, "cannot encode " + what};
}

Status bad_key(const std::string& what) {
    return {StatusCode::Corruption, "bad position key: " + what};
}

}  // namespace

Result<std::size_t> encode_position_key(const PlainPosition& position, std::uint8_t* key) {
    if (position.side_to_move > 1) {
        return bad_input("side to move " + std::to_string(position.side_to_move));
    }
    if (position.ep_square > kNoEpSquare) {
        return bad_input("en-passant square " + std::to_string(position.ep_square));
    }
    key[0] = static_cast<std::uint8_t>(position.side_to_move << 7 | position.ep_square);
    std::uint64_t occupancy = 0;
    std::size_t nibbles = 0;
    std::size_t at = 9;
    for (int sq = 0; sq < 64; ++sq) {
        const std::uint8_t code = position.units[static_cast<std::size_t>(sq)];
        if (code == kEmptySquare) continue;
        if (!valid_unit_code(code)) {
            return bad_input("unit code " + std::to_string(code) + " on square " +
                             std::to_string(sq));
        }
        occupancy |= std::uint64_t{1} << sq;
        // High nibble first, so that key order follows square order.
        if (nibbles % 2 == 0) {
            key[at] = static_cast<std::uint8_t>(code << 4);
        } else {
            key[at++] |= code;
        }
        ++nibbles;
    }
    if (nibbles % 2 == 1) ++at;
    for (int b = 0; b < 8; ++b) key[1 + b] = static_cast<std::uint8_t>(occupancy >> (56 - 8 * b));
    return at;
}

Result<std::string> encode_position_key(const PlainPosition& position) {
    std::uint8_t key[kMaxPositionKeyBytes];
    auto n = encode_position_key(position, key);
    if (!n.ok()) return n.status();
    return std::string(reinterpret_cast<const char*>(key), *n);
}

Result<PlainPosition> decode_position_key(std::string_view key) {
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(key[i]); };
    if (key.size() < 9) return bad_key(std::to_string(key.size()) + " bytes, at least 9 needed");
    PlainPosition position;
    position.side_to_move = static_cast<std::uint8_t>(byte(0) >> 7);
    position.ep_square = static_cast<std::uint8_t>(byte(0) & 0x7F);
    if (position.ep_square > kNoEpSquare) {
        return bad_key("en-passant field " + std::to_string(position.ep_square));
    }
    std::uint64_t occupancy = 0;
    for (std::size_t b = 0; b < 8; ++b) occupancy = occupancy << 8 | byte(1 + b);
    const auto count = static_cast<std::size_t>(std::popcount(occupancy));
    const std::size_t expected = 9 + (count + 1) / 2;
    if (key.size() != expected) {
        return bad_key(std::to_string(key.size()) + " bytes for " + std::to_string(count) +
                       " units (expected " + std::to_string(expected) + ")");
    }
    std::size_t nibble = 0;
    for (std::uint64_t rest = occupancy; rest != 0; rest &= rest - 1, ++nibble) {
        const int sq = std::countr_zero(rest);
        const std::uint8_t b = byte(9 + nibble / 2);
        const auto code = static_cast<std::uint8_t>(nibble % 2 == 0 ? b >> 4 : b & 0x0F);
        if (!valid_unit_code(code)) {
            return bad_key("unit code " + std::to_string(code) + " on square " +
                           std::to_string(sq));
        }
        position.units[static_cast<std::size_t>(sq)] = code;
    }
    if (count % 2 == 1 && (byte(key.size() - 1) & 0x0F) != 0) {
        return bad_key("padding nibble is not 0");
    }
    return position;
}

Result<std::string> encode_move_value(const PlainMove& move) {
    if (move.from > 63 || move.to > 63 || move.promotion > 5) {
        return Status(StatusCode::InvalidArgument,
                      "cannot encode move " + std::to_string(move.from) + "-" +
                          std::to_string(move.to) + " promotion " + std::to_string(move.promotion));
    }
    const auto bits = static_cast<std::uint16_t>(move.from | move.to << 6 | move.promotion << 12);
    std::string value(kMoveValueBytes, '\0');
    value[0] = static_cast<char>(bits & 0xFF);
    value[1] = static_cast<char>(bits >> 8);
    return value;
}

Result<PlainMove> decode_move_value(std::string_view value) {
    if (value.size() != kMoveValueBytes) {
        return Status(StatusCode::Corruption,
                      "bad move value: " + std::to_string(value.size()) + " bytes (expected 2)");
    }
    const auto bits = static_cast<std::uint16_t>(static_cast<std::uint8_t>(value[0]) |
                                                 static_cast<std::uint8_t>(value[1]) << 8);
    PlainMove move;
    move.from = static_cast<std::uint8_t>(bits & 63);
    move.to = static_cast<std::uint8_t>(bits >> 6 & 63);
    move.promotion = static_cast<std::uint8_t>(bits >> 12);
    if (move.promotion > 5) {
        return Status(StatusCode::Corruption,
                      "bad move value: promotion code " + std::to_string(move.promotion));
    }
    return move;
}

}  // namespace tbf::storage
