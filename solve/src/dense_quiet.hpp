#pragma once
// The quiet game (region.hpp, RegionGame::Quiet without exchanges) solved
// over a dense index instead of a hash table (docs/fourfile.md, "Dense
// quiet games"). In that game no capture is ever played (the opponent's
// ends it as a loss for X, X's is not made) and no pawn of X's promotes
// (the opponent's promotion is a loss), so the material never changes and
// each pawn stays on its file. A position is then its pawn structure (one
// rank per pawn) and the places of the kings (a rank: kings keep to their
// file), of the other pieces (a square each) and the side to move. Pawns
// only step forward, so the structures reachable from a start form an
// acyclic graph: they are solved one at a time, most advanced first, each
// by a retrograde attractor over its own positions, with the pawn steps
// leading into structures already solved. A value takes one bit instead of
// the ~90 bytes a hash-table exploration spends on a position, and the
// values are exact in the quiet game, so they answer every later position
// of the same material whose structure was reached.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tbforge/rules/movegen.hpp"

namespace tbf::solve::detail {

class DenseQuietGame {
public:
    // Pieces besides the kings and pawns the index takes: each one
    // multiplies a structure's positions by 32.
    static constexpr int kMaxPieces = 3;

    // `memory_cap`: bytes all solved structures may take together;
    // `threads`: structures of the same advance are solved in parallel.
    DenseQuietGame(Color x, std::uint64_t memory_cap, int threads);
    ~DenseQuietGame();
    DenseQuietGame(const DenseQuietGame&) = delete;
    DenseQuietGame& operator=(const DenseQuietGame&) = delete;

    // Stops a solve at the next structure; the structures of that call are
    // dropped, so the same call later gives the unstopped answer.
    void set_interrupt(const std::atomic<bool>* flag) { interrupt_ = flag; }
    bool interrupted() const { return interrupted_; }

    // True if the index takes `pos`'s material (at most kMaxPieces pieces
    // besides the kings and pawns, at most three pawns of a colour on a
    // file, at most three pieces of a kind and colour).
    bool fits(const Position& pos) const;

    // `pos`'s value (either side to move): true safe for X, false not.
    // Solves every structure reachable from `pos`'s that is not solved yet;
    // nullopt if they would not fit the memory cap, or if interrupted.
    std::optional<bool> solve(const Position& pos);

    // The value if `pos`'s structure is solved already, without solving.
    std::optional<bool> known(const Position& pos) const;

    // X's move at a safe X-to-move position: a quiet move into a position
    // the game calls safe (the first in move-generation order).
    std::optional<Move> move_at(const Position& pos) const;

    std::uint64_t memory_bytes() const { return bytes_; }
    std::uint64_t structures_solved() const { return structures_solved_; }
    // Legal positions of the solved structures, both sides to move.
    std::uint64_t positions_solved() const { return positions_solved_; }

    struct Material;

private:
    struct Table;
    struct Scratch;
    Table* table_of(const Position& pos, bool create);
    const Table* table_of(const Position& pos) const;
    void solve_structure(Table& table, std::uint32_t id, Scratch& scratch, std::uint64_t& positions) const;

    Color x_;
    std::uint64_t memory_cap_;
    int threads_;
    const std::atomic<bool>* interrupt_ = nullptr;
    bool interrupted_ = false;
    std::unordered_map<std::uint64_t, std::unique_ptr<Table>> tables_;
    std::uint64_t bytes_ = 0;
    std::uint64_t structures_solved_ = 0;
    std::uint64_t positions_solved_ = 0;
};

}  // namespace tbf::solve::detail
