#pragma once
// Strategy entries in rules/ terms: positions and moves to and from the
// storage codec "position/1 move/1" (tbforge/storage/position_key.hpp), and
// the text interchange format (one "FEN<TAB>uci-move" per line, '#'
// comments) written by `tbprobe strategy-export` and read by
// `tbgen strategy-import`.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/storage/database.hpp"
#include "tbforge/storage/position_key.hpp"

namespace tbf::probe {

storage::PlainPosition plain_position(const Position& pos);
// No legality check: the caller validates (e.g. through to_fen + parse_fen).
Position position_from_plain(const storage::PlainPosition& plain);

storage::PlainMove plain_move(Move m);
Move move_from_plain(const storage::PlainMove& m);

// The entry key of a position; `pos` must be a valid position.
std::string position_key(const Position& pos);
// The entry value of a move.
std::string move_value_bytes(Move m);

// Writes every entry of strategy `name` as "FEN<TAB>uci" lines in key order,
// after a '#' header naming the strategy, variant, side, kind, roots and
// entry count. Returns the number of entries written. Errors: MissingTable
// (no such strategy), Corrupt (an entry that does not decode, an unknown
// entry encoding), IoError (the database or the output failed).
Result<std::uint64_t> export_strategy(const storage::Database& db, std::string_view name,
                                      std::ostream& out);

}  // namespace tbf::probe
