#pragma once
// Search for a closed non-loss strategy in Four File chess (docs/fourfile.md).
//
// The explored graph has X-to-move nodes (X picks one move) and
// opponent-to-move nodes (every reply must be met). Unexpanded frontier
// nodes count as lost for X: the root is proven exactly when it lies outside
// the opponent's attractor to {losses for X} and the frontier, and the
// strategy is read off the complement of that attractor, which is a trap
// for the opponent. Cycles inside it are repetitions: draws, so fine.
// Which nodes get expanded (and which move X tries first) only decides how
// fast a proof is found, never whether a claimed one is right.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::solve {

enum class Verdict {
    Proven,     // a closed non-loss strategy for X exists in the explored graph
    Lost,       // the opponent forces a loss for X (checkmate) within the explored graph
    NotProven,  // stopped first: memory cap, node budget, interruption
};

std::string_view verdict_name(Verdict verdict);  // "proven", "lost", "not-proven"

struct SolveProgress {
    std::uint64_t nodes = 0;      // positions in the graph
    std::uint64_t expanded = 0;   // positions whose moves are known
    std::uint64_t open = 0;       // frontier positions the current strategy reaches
    std::uint64_t reachable = 0;  // positions the current strategy reaches
    std::uint64_t lost = 0;       // positions proven lost for X
    std::uint64_t fortress_leaves = 0;      // X nodes a waiting closure proved safe (fortress.hpp)
    std::uint64_t region_explorations = 0;  // locked-structure regions explored
    std::uint64_t region_positions = 0;     // positions whose region value is cached
    std::uint64_t region_safe = 0;          // X nodes a region game proved safe
    std::uint64_t region_given_up = 0;      // regions too large for the budget or failing too often
    std::uint64_t quiet_explorations = 0;   // quiet games explored
    std::uint64_t quiet_positions = 0;      // positions whose quiet-game value is cached
    std::uint64_t quiet_cut = 0;            // quiet games cut at the budget
    std::uint64_t quiet_cut_safe = 0;       // of them, those whose start was safe all the same
    std::uint64_t quiet_cut_kept = 0;       // positions kept as safe by cut games whose start was not
    std::uint64_t quiet_dense_structures = 0;  // pawn structures the dense quiet game solved
    std::uint64_t quiet_dense_positions = 0;   // positions of those structures (both sides to move)
    std::uint64_t pieces_explorations = 0;  // pieces games explored
    std::uint64_t pieces_positions = 0;     // positions whose pieces-game value is cached
    std::uint64_t pieces_cut = 0;           // pieces games cut at the budget
    std::uint64_t pieces_safe = 0;          // X nodes a pieces game proved safe
    std::uint64_t memory_bytes = 0;
    double seconds = 0;
};

struct SolveOptions {
    Color side = Color::White;                // X; must be the side to move at the root
    const probe::Tablebase* tables = nullptr;  // leaf tables (Four File, <= 5 units); null: none
    std::uint64_t memory_bytes = 0;            // cap on the graph's memory; 0: none
    std::uint64_t max_nodes = 0;               // stop after this many graph nodes; 0: none
    int threads = 1;
    // X leaves a move whose proof-number estimate grew far above the
    // cheapest alternative's; false: X changes a move only once it is
    // proven to lose (or another one is proven safe).
    bool proof_number_switching = true;
    // X nodes whose pawns all face enemy pawns head-on are tried as region
    // leaves (the safety game on the locked structure, solved retrogradely).
    bool region_leaves = true;
    // How many captures deep a region game follows captures into the
    // regions they lead to (0: every capture of the opponent's is a loss
    // for X and X captures nothing).
    int region_capture_depth = 1;
    // Positions one region exploration may hold before the region is given
    // up (larger regions cost more than the search they save at three pieces
    // a side or fewer: docs/fourfile.md).
    std::uint64_t region_budget = 20'000;
    // Positions one quiet-game exploration may hold (X's pawns may step as
    // well, every capture ends the game: docs/fourfile.md, "Quiet games");
    // tried at X nodes with few free pawns and at most one piece of the
    // opponent's. 0: no quiet games.
    std::uint64_t quiet_budget = 2'000'000;
    // Quiet games follow exchanges: the opponent's capture is a move of the
    // game, X recaptures to keep its lead in material (docs/fourfile.md,
    // "Quiet games with exchanges"); false: every capture ends the game.
    bool quiet_exchanges = false;
    // Quiet games whose material fits a dense index (at most three pieces
    // besides the kings and pawns) are solved over it, structure by
    // structure, at a bit a position and without a budget
    // (docs/fourfile.md, "Dense quiet games"); false: hash-table
    // explorations only.
    bool dense_quiet = true;
    // The dense game plays captures and promotions too, by both sides, into
    // the tables of the materials they leave: the whole game wherever the
    // materials fit the index, a stronger leaf than the quiet game but
    // many more positions to solve (docs/fourfile.md, "Dense quiet games").
    bool dense_conversions = false;
    // Fortress leaves with guarded waiting too: units of X's may stand within
    // the opponent's reach where every capture is an exchange X takes back
    // (docs/fourfile.md, "Guarded fortress leaves").
    bool guarded_fortresses = false;
    // Positions one pieces game may explore (X's pawns stay where they are,
    // locked or not, X's pieces and every unit of the opponent's move:
    // docs/fourfile.md, "Pieces games"); tried at X nodes whose pawns are
    // not all locked. 0: no pieces games.
    std::uint64_t pieces_budget = 0;
    // Captures a pieces game follows into the games they lead to.
    int pieces_capture_depth = 0;
    // X's move order puts last the moves after which the opponent forces
    // mate by checks within this many of its moves (1: mate in one only)...
    int mate_check_moves = 3;
    // ...or by a mate in two whose first move is quiet (a threat).
    bool mate_threats = true;
    // Checkpoint file (written atomically: a temporary file renamed over it).
    // Loaded at the start when it exists; "" disables checkpoints.
    std::string checkpoint_path;
    double checkpoint_seconds = 600;
    const std::atomic<bool>* interrupt = nullptr;  // set from a signal handler to stop
    std::function<void(const SolveProgress&)> progress;
    double progress_seconds = 2;
};

struct SolveSummary {
    Verdict verdict = Verdict::NotProven;
    std::string reason;  // why not proven, or what was proven
    SolveProgress final;
    std::uint64_t resumed_nodes = 0;  // expansions replayed from a checkpoint
    // Open lines when not proven: up to a few frontier positions the
    // strategy reaches, as the moves from the root (UCI).
    std::vector<std::string> open_lines;
};

class Solver {
public:
    // `root` must be a legal Four File position with options.side to move
    // and at least one legal move.
    Solver(const Position& root, SolveOptions options);
    ~Solver();
    Solver(const Solver&) = delete;
    Solver& operator=(const Solver&) = delete;

    // Runs (once) until proven, lost, or stopped. Errors: InvalidArgument for
    // a checkpoint of another root, side or --tables setting; Corruption or
    // UnsupportedVersion for a damaged or foreign checkpoint; IoError when it
    // cannot be read or written; the table's code when a table read fails.
    Result<SolveSummary> run();

    // After a Proven run: every X-to-move position of the closed strategy
    // with X's move, in discovery order (including positions below leaves
    // decided by tables, whose moves come from the tables). Errors: NotFound
    // before a Proven run, a table read failing.
    Result<std::uint64_t> for_each_entry(
        const std::function<void(const Position&, Move)>& visit) const;

    // After run (whatever its verdict): every expanded position with X to
    // move, in expansion order (studies of the graph a run left behind).
    void for_each_expanded_x_position(const std::function<void(const Position&)>& visit) const;

    // Checkpoint file of a run (under the work directory).
    static std::string checkpoint_file(const std::string& work_dir, const std::string& name);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct StoreSummary {
    std::uint64_t entries = 0;
    std::uint64_t entry_bytes = 0;
};

// Writes the strategy of a Proven solver into `db` under `name` (kind
// non-loss, side X, the root), publishing it only when complete. A taken
// name without `replace` is AlreadyExists.
Result<StoreSummary> store_strategy(storage::Database& db, const Solver& solver, const Position& root,
                                    Color side, const std::string& name, bool replace,
                                    const std::string& json);

}  // namespace tbf::solve
