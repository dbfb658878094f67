#pragma once
// FEN parsing with validation, and printing. Castling rights are accepted and
// ignored (no variant here castles); the en-passant field is honoured and kept
// only when an en-passant capture is possible, as Syzygy and lichess print it.

#include <string>
#include <string_view>

#include "tbforge/rules/position.hpp"
#include "tbforge/rules/result.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf {

// Accepts 2 to 6 fields (board, side, castling, en passant, halfmove,
// fullmove); missing trailing fields take their usual defaults. Errors name
// the problem, e.g. "bad piece letter 'x' in rank 8".
Result<Position> parse_fen(std::string_view fen, VariantId variant);

// Six fields, counters "0 1".
std::string to_fen(const Position& pos);

}  // namespace tbf
