#pragma once
// Standard Algebraic Notation (SAN) of a legal move, written the way the
// lichess tablebase API writes it (docs/serve.md, "SAN"):
//   - a pawn move is its destination ("e4"), a pawn capture adds the file it
//     left ("exd5", en passant too); a promotion adds "=Q" ("=K" promotes to
//     a king in losing chess);
//   - any other unit is its letter, then the file, the rank or both of the
//     square it left when another legal move of a unit of the same type
//     reaches the same square ("Nbd2", "R1a3", "Qh4e1"), "x" for a capture,
//     the destination; kings are disambiguated too (losing chess has several);
//   - "#" when the move ends the game with a winner (checkmate; in losing
//     chess also a side left without units or a stalemate that decides the
//     game), else "+" when it gives check to a royal king (Four File only:
//     losing chess has no check, so never "+").

#include <string>

#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf {

// Precondition: `move` is legal in `pos` under `variant`.
std::string to_san(const Position& pos, VariantId variant, Move move);

}  // namespace tbf
