#pragma once
// A leaf solver for locked pawn structures and for quiet games
// (docs/fourfile.md, "Region leaves"). Pawns never capture in Four File, so once every pawn of X's
// faces an enemy pawn head-on, the structure changes only when a piece takes
// a pawn. From such a node X moves only its pieces and the opponent anything;
// the positions reached form a region, whose safety game (X must stay inside
// for ever; X checkmated, a promotion of the opponent's or X without a piece
// move is a loss for X) is solved retrogradely. A capture leaves the region
// for one with less material, valued by that region's own game up to a
// capture depth (beyond it: a loss for X if the opponent captures, no move
// for X). It is pessimistic, so a position it calls safe is safe in the real
// game, and its strategy keeps to positions it calls safe. The same
// machinery solves two larger games: the quiet game (X's pawns step too) and
// the pieces game (X's pawns stay, locked or not).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "dense_game.hpp"
#include "packed_map.hpp"
#include "packed_position.hpp"
#include "tbforge/rules/movegen.hpp"

namespace tbf::solve::detail {

// Which of X's moves a region game allows.
enum class RegionGame : std::uint8_t {
    // X moves its pieces only; tried where every pawn of X's is locked.
    LockedPawns,
    // X may also push its pawns (not promote): the whole quiet game, where
    // any capture leaves it. Tried where the opponent has at most one piece,
    // so that the game can fit the budget; a larger one is cut there. With
    // a capture depth of 1, a start the quiet game calls unsafe is tried
    // again in the game with exchanges: the opponent's captures are moves
    // of the game, and X may capture to win its lead in material back (a
    // recapture) but never keeps it below the start's after its own move.
    Quiet,
    // X moves its pieces only, its pawns stay where they are (walls), locked
    // or not; the opponent moves anything. Tried as a whole-game leaf where
    // X's pawns have not yet met the opponent's.
    Pieces,
};

class RegionSolver {
public:
    // `budget`: positions one exploration may hold before it is given up;
    // `cache_cap`: positions the cache of solved regions may hold in all
    // (no new exploration once it is full).
    // `max_capture_depth`: how many captures deep the values of the regions
    // a capture leads to are explored (0: every capture counts as a loss).
    RegionSolver(Color x, std::size_t budget, std::size_t cache_cap, int max_capture_depth,
                 RegionGame game = RegionGame::LockedPawns);
    ~RegionSolver();

    // Quiet game only: where the material fits a dense index
    // (dense_game.hpp), a start whose hash-table exploration overflows the
    // budget is solved there instead (the game without exchanges, every
    // structure reachable), and its values answer later starts before any
    // exploration. Such materials need no opponent-piece bound.
    void enable_dense(std::uint64_t memory_cap, int threads, DenseRules rules = DenseRules::Quiet);
    const DenseGame* dense() const { return dense_.get(); }

    // A flag (set from a signal handler) that stops an exploration where it
    // is: a game may take minutes, and a stopped run must not wait for it.
    // A stopped exploration keeps nothing and counts for nothing, so the
    // same call after a resume gives the answer an unstopped one would.
    void set_interrupt(const std::atomic<bool>* flag) {
        interrupt_ = flag;
        if (dense_) dense_->set_interrupt(flag);
    }
    // True once an exploration was stopped by the flag; solve() then
    // returns nullopt, which means nothing about the position.
    bool interrupted() const { return interrupted_; }

    // True if `pos` (X to move) is the kind of position this game is tried
    // on (see RegionGame), and the game has not been given up.
    bool applies(const Position& pos) const;

    // X's move at `pos` (X to move) in the region game if X stays inside for
    // ever from there; nullopt if not, or if the region is too large to
    // explore. Explores (and caches) the region when `pos` is not known yet.
    std::optional<Move> solve(const Position& pos);

    // What the cache already says about `pos` (either side to move), without
    // exploring: true safe, false unsafe, nullopt not explored.
    std::optional<bool> known(const Position& pos) const;

    // X's move at a position `solve` or an exploration proved safe.
    std::optional<Move> move_at(const Position& pos) const;

    // Cached values at or above it are unsafe ones (region.cpp).
    static constexpr std::uint16_t kUnsafeMark = 0xFF00;
    // Calls fn(position) for every cached position the game calls safe.
    template <class Fn>
    void for_each_safe(Fn&& fn) const {
        values_.for_each([&](const PackedPosition& key, std::uint16_t value) {
            if (value < kUnsafeMark) fn(unpack(key));
        });
    }

    std::uint64_t memory_bytes() const;
    std::uint64_t explorations() const { return explorations_; }
    std::uint64_t cached() const { return values_.size(); }
    // Calls of solve() that found X's move.
    std::uint64_t safe_starts() const { return safe_starts_; }
    // Regions given up: too large for the budget, or failing too often.
    std::uint64_t given_up() const { return too_large_.size(); }
    // Quiet games cut at the budget, and those of them whose start was safe
    // all the same.
    std::uint64_t cut_explorations() const { return cut_explorations_; }
    std::uint64_t cut_successes() const { return cut_successes_; }
    // Positions proved safe by cut games whose own start was not.
    std::uint64_t kept_beside_lost_starts() const { return kept_beside_lost_starts_; }

private:
    enum class Exit : std::uint8_t { Safe, Loss };
    bool explore(const Position& start, int depth);
    bool explore_region(const Position& pos, int depth);
    Exit exit_value(const Position& pos, int depth);
    std::string region_key(const Position& pos) const;

    Color x_;
    const std::atomic<bool>* interrupt_ = nullptr;
    bool interrupted_ = false;
    std::size_t budget_;
    std::size_t cache_cap_;
    int max_capture_depth_;
    RegionGame game_;
    std::unique_ptr<DenseGame> dense_;
    // Every position an exploration finished, with its exact value in the
    // region game: X to move and safe: X's move (raw); opponent to move and
    // safe: kSafe; unsafe: kUnsafe.
    PackedMap<std::uint16_t> values_;
    // Regions (pawns and material) given up: too large for the budget, or
    // failing too often.
    std::unordered_set<std::string> too_large_;
    // Explorations of a region that found their start unsafe; after
    // kMaxFailures the region is given up like a too large one.
    static constexpr int kMaxFailures = 8;
    std::unordered_map<std::string, int> failures_;
    // Quiet or pieces games too large for the budget: every one costs a whole
    // budget of work, so after kMaxOverflows the game is not tried again.
    static constexpr int kMaxOverflows = 16;
    int overflows_ = 0;
    // Games with exchanges too large for the budget: after kMaxOverflows no
    // quiet game is tried with exchanges again (the plain ones still are).
    int exchange_overflows_ = 0;
    std::uint64_t explorations_ = 0;
    std::uint64_t safe_starts_ = 0;
    std::uint64_t cut_explorations_ = 0;
    std::uint64_t cut_successes_ = 0;
    std::uint64_t kept_beside_lost_starts_ = 0;
};

}  // namespace tbf::solve::detail
