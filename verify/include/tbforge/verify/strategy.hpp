#pragma once
// `tbverify strategy`: checks that a stored strategy is closed (docs/ARCHITECTURE.md
// section 8) with the verifier's own move generator. Entries are streamed in
// key order and never held all at once; successors are looked up by key in
// the store. Only the check for cycles of a winning strategy keeps per-entry
// state: a key hash, rank, edge offset and in-degree (about 30 bytes per
// entry) plus 12 bytes per edge between entries, while it runs.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/verify/board.hpp"

namespace tbf::verify {

enum class ProblemKind : unsigned char {
    BadEntry,     // the key or value does not decode to a legal position / move
    IllegalMove,  // the stored move is not legal in its position
    Hole,         // an opponent reply reaches a position with no entry
    BadEnd,       // the game ends in a loss for the strategy side (a draw, if winning)
    BadRoot,      // a root that is not covered (no entry) or does not parse
    Cycle,        // winning strategy: play can go round forever
};

std::string_view problem_kind_name(ProblemKind kind);  // "hole", "bad-end", ...

struct StrategyProblem {
    ProblemKind kind = ProblemKind::Hole;
    std::string fen;                 // the entry (or root) position; "" if it does not decode
    std::string move;                // the stored move, UCI; "" if none
    std::string reply;               // the opponent reply that escapes, UCI; "" if none
    std::string reached;             // the position the reply (or move) reaches; "" if none
    std::string message;             // one line saying what is wrong
    std::vector<std::string> cycle;  // Cycle: the positions, each moving to the next
};

struct StrategyCheckOptions {
    int threads = 0;              // 0: all cores
    std::size_t max_listed = 20;  // problems kept in the report (all are counted)
    std::size_t batch = 8192;     // entries read per parallel batch
    std::function<void(std::uint64_t entries)> progress;  // after each batch
};

struct StrategyReport {
    std::string name;
    std::string variant;
    std::string side;  // "white" or "black"
    std::string kind;  // "non-loss" or "winning"
    std::vector<std::string> roots;
    std::uint64_t entries = 0;
    std::uint64_t replies = 0;   // opponent replies followed from entries and roots
    std::uint64_t problems = 0;  // every problem found, listed or not
    std::vector<StrategyProblem> listed;
    bool cycles_checked = false;  // winning strategies only
    std::string database_error;   // non-empty: the check could not run to the end
    double seconds = 0;

    [[nodiscard]] bool closed() const { return problems == 0 && database_error.empty(); }
};

// Checks strategy `name` of the database at `db_path` (opened read-only).
// Database trouble (no database, no such strategy, unreadable or corrupt
// entries store, an unknown variant or entry encoding) ends the check with
// database_error set.
StrategyReport check_strategy(const std::string& db_path, std::string_view name,
                              const StrategyCheckOptions& options = {});

// The verifier's side of the "position/1" key codec: the key of a board, and
// the board of a key (or an error). Exposed for tests.
std::string board_key(const Board& board);
Result<Board> board_from_key(Variant variant, std::string_view key);

}  // namespace tbf::verify
