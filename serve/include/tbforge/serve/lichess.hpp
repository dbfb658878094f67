#pragma once
// Answers in the shape of the lichess tablebase API (docs/serve.md): the
// value of a position with every legal move, sorted as lichess sorts them,
// and the best line to the next conversion. Values come from the probe API;
// this layer adds the game-end flags, SAN and the lichess field names.

#include <optional>
#include <string_view>
#include <vector>

#include "tbforge/base/json.hpp"
#include "tbforge/base/status.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::serve {

// What the rules say about a position, for its side to move.
struct GameEnd {
    bool checkmate = false;     // royal king in check, no legal move (Four File)
    bool stalemate = false;     // units left, no legal move, not in check
    bool variant_win = false;   // losing chess: the game is over and the side to move has won
    bool variant_loss = false;  // losing chess: the game is over and the side to move has lost
    // No sequence of moves can decide the game: losing chess with bishops
    // only, where neither side can ever lose all its units (every bishop of
    // one side on squares of a colour the other side has none on), or Four
    // File with the two kings alone.
    bool insufficient_material = false;
};
GameEnd game_end(VariantId variant, const Position& pos);

// "win", "draw" or "loss" (tbforge values ignore the 50-move rule, so the
// other lichess categories never apply: docs/serve.md, "Categories").
std::string_view category_name(Wdl wdl);
// A DTC with the lichess sign: positive when the side to move wins,
// negative when it loses, 0 for draws and finished games.
int signed_dtc(probe::Value value);

// One legal move with everything the answer says about it.
struct MoveAnswer {
    probe::MoveValue probe;  // move, uci, conversion, child value
    std::string san;
    bool zeroing = false;  // capture or pawn move: resets the 50-move counter
    std::optional<UnitType> captured;
    Position after;
    GameEnd after_end;
};

// Sorts moves best first for the side to move, with the keys lichess uses:
// the value after the move (loss for the opponent first), then checkmates
// and variant ends, stalemates, insufficient material, conversions first
// when winning or drawing (last when losing) and the DTC after the move,
// zeroing moves likewise, the value of the captured and the promoted unit;
// ties by UCI.
void sort_moves(std::vector<MoveAnswer>& moves);

// GET /{variant}: the position and its moves. Errors are the probe's:
// InvalidArgument (not a position of the variant), NotFound (missing
// table), Corruption, IoError.
Result<Json> probe_answer(const probe::Tablebase& tb, VariantId variant, const Position& pos);

// GET /{variant}/mainline: best moves until the next conversion (or the end
// of the game), none for a draw; `winner` is "w", "b" or null.
Result<Json> mainline_answer(const probe::Tablebase& tb, VariantId variant, const Position& pos);

}  // namespace tbf::serve
