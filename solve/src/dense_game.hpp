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
//
// The same index also solves the whole game (DenseRules::Conversions):
// every capture and promotion is played, by both sides, and leads into the
// table of the material it leaves, solved first (a capture removes a unit,
// a promotion a pawn, so this ends). Only a promotion into a material
// beyond the index stays as in the quiet game: X's is not made, the
// opponent's is a loss for X. Everywhere else the values are the game's
// own (a non-loss for X or not), except where a material was too large for
// the memory cap (treated like a promotion beyond the index).
//
// X may be held to part of its moves (DenseLimits): its pieces to given
// squares, its pawns where they stand. A move of X's outside the limits is
// simply not made, so a safe value stays a non-loss in the real game while
// the opponent keeps every move; the index then spans only those squares,
// which is what lets a barrier with all six pieces on the board be solved
// exactly (docs/fourfile.md, "Barrier games").

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tbforge/rules/movegen.hpp"

namespace tbf::solve::detail {

enum class DenseRules : std::uint8_t {
    // No capture and no promotion: the opponent's is a loss for X, X's is
    // not made.
    Quiet,
    // Captures and promotions by both sides, into the tables of the
    // materials they leave.
    Conversions,
};

// What X is held to, and how many pieces the index takes.
struct DenseLimits {
    // Pieces besides the kings and pawns (at most kMaxPieces): each one
    // multiplies a structure's positions by the squares it may stand on
    // (32 for a rook or queen, 16 for a knight, 8 for a bishop: they
    // never leave their squares' class).
    int max_pieces = 3;
    // Squares X's pieces of each kind may move to, indexed by UnitType
    // (the king's entry is not used: kings keep to their file anyway).
    std::uint64_t x_squares[6] = {~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL};
    // False: X never moves a pawn.
    bool x_pawns_move = true;
    // True: a promotion of the opponent's counts as a loss for X instead of
    // leading into the material it makes (sound, and it spares the many
    // materials of promoted pieces).
    bool opponent_promotion_loses = false;
    // A capture of the opponent's that leaves X's material (pawn 1, knight
    // and bishop 3, rook 5, queen 9) below the opponent's by more than this
    // counts as a loss for X: also sound, and it spares the materials where
    // X is far behind.
    int max_deficit = 1000;
};

class DenseGame {
public:
    static constexpr int kMaxPieces = 6;

    // `memory_cap`: bytes all solved structures may take together;
    // `threads`: structures of the same advance are solved in parallel.
    DenseGame(Color x, std::uint64_t memory_cap, int threads, DenseRules rules = DenseRules::Quiet,
              const DenseLimits& limits = {});
    ~DenseGame();
    DenseGame(const DenseGame&) = delete;
    DenseGame& operator=(const DenseGame&) = delete;

    // Stops a solve at the next structure; the structures of that call are
    // dropped, so the same call later gives the unstopped answer.
    void set_interrupt(const std::atomic<bool>* flag) { interrupt_ = flag; }
    bool interrupted() const { return interrupted_; }

    // True if the index takes `pos` (at most `max_pieces` pieces besides
    // the kings and pawns, at most three pawns of a colour on a file, at
    // most three pieces of a kind and colour, both kings on one file, no
    // pawn on its last rank or behind its first, X's pieces within the
    // limits).
    bool fits(const Position& pos) const;
    DenseRules rules() const { return rules_; }
    const DenseLimits& limits() const { return limits_; }

    // `pos`'s value (either side to move): true safe for X, false not.
    // Solves every structure reachable from `pos`'s that is not solved yet;
    // nullopt if they would not fit the memory cap, or if interrupted.
    std::optional<bool> solve(const Position& pos);

    // The value if `pos`'s structure is solved already, without solving.
    std::optional<bool> known(const Position& pos) const;

    // X's move at a safe X-to-move position: a move of the game (a quiet
    // one under DenseRules::Quiet) into a position the game calls safe, the
    // first in move-generation order.
    std::optional<Move> move_at(const Position& pos) const;

    std::uint64_t memory_bytes() const { return bytes_; }
    std::uint64_t structures_solved() const { return structures_solved_; }
    // Legal positions of the solved structures, both sides to move.
    std::uint64_t positions_solved() const { return positions_solved_; }
    // Materials with a table (more than one only with captures).
    std::uint64_t tables() const { return tables_.size(); }

    struct Material;

private:
    std::optional<std::uint64_t> material_key(const Position& pos) const;
    // False for a move of X's outside the limits.
    bool within_limits(const Position& pos, Move m) const;
    // The squares a piece of colour c and kind t may stand on.
    Bitboard squares_of(Color c, UnitType t, int square_class_id) const;
    struct Table;
    struct Scratch;
    Table* table_of(const Position& pos, bool create);
    const Table* table_of(const Position& pos) const;
    // Solves one structure, its slots generated by `inner_threads`
    // threads; false if a capture leads into a structure of a smaller
    // material not solved yet (its child positions are appended to
    // `missing`, and nothing of this structure is kept).
    bool solve_structure(Table& table, std::uint32_t id, Scratch& scratch, std::uint64_t& positions,
                         std::vector<Position>& missing, int inner_threads) const;

    Color x_;
    DenseRules rules_;
    DenseLimits limits_;
    std::uint64_t memory_cap_;
    // Bytes of structures being solved, not yet in bytes_ (a solve with
    // captures solves smaller materials inside).
    std::uint64_t reserved_ = 0;
    int threads_;
    const std::atomic<bool>* interrupt_ = nullptr;
    bool interrupted_ = false;
    std::unordered_map<std::uint64_t, std::unique_ptr<Table>> tables_;
    // (material, structure) pairs a conversion leads into that did not fit
    // the memory cap: such a conversion is not followed (X's is not made,
    // the opponent's is a loss for X), which keeps every safe value sound.
    struct PairHash {
        std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& p) const {
            return std::hash<std::uint64_t>()(p.first * 0x9E3779B97F4A7C15ULL ^ p.second);
        }
    };
    std::unordered_set<std::pair<std::uint64_t, std::uint64_t>, PairHash> beyond_;
    std::uint64_t bytes_ = 0;
    std::uint64_t structures_solved_ = 0;
    std::uint64_t positions_solved_ = 0;
};

}  // namespace tbf::solve::detail
