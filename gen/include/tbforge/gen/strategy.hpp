#pragma once
// Strategy databases from tables (extraction) and from text (import); see
// docs/strategy.md. Both write through storage's StrategyWriter, keyed by the
// "position/1 move/1" codec, and publish nothing unless they succeed.

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::gen {

struct ExtractProgress {
    std::uint64_t entries = 0;  // positions given a move so far
    std::uint64_t pending = 0;  // positions found but not yet expanded
};

struct ExtractOptions {
    std::string name;
    // The strategy side; default the side to move at the root. When it is the
    // other side, every reply at the root is expanded.
    std::optional<Color> side;
    bool replace = false;  // replace an existing strategy of the same name
    int threads = 0;       // 0: OpenMP's default
    std::function<void(const ExtractProgress&)> progress;  // called after each batch
};

struct ExtractSummary {
    storage::StrategyKind kind = storage::StrategyKind::NonLoss;
    Color side = Color::White;
    probe::Value root_value;  // for the strategy side
    std::uint64_t entries = 0;
    std::uint64_t entry_bytes = 0;
    std::uint64_t replies = 0;  // opponent replies followed
    double seconds = 0;
};

// Follows the tables from `root_fen`: in every position where the strategy
// side X moves, X plays the best move by value (a win: the smallest DTC,
// which always makes progress; a draw: the first drawing move by UCI), every
// opponent reply is followed, across sub-tables, until the game ends. Each
// position where X moves becomes an entry. A won root gives a winning
// strategy, a drawn root a non-loss one; a lost root is CheckFailed.
// Positions whose table is missing are an error naming the table.
Result<ExtractSummary> extract_strategy(probe::Tablebase& tablebase, VariantId variant,
                                        const std::string& root_fen, const ExtractOptions& options);

struct ImportOptions {
    std::string name;
    Color side = Color::White;
    storage::StrategyKind kind = storage::StrategyKind::NonLoss;
    std::vector<std::string> roots;  // FEN; stored normalised
    std::string source;              // recorded in the strategy's JSON, e.g. the file name
    bool replace = false;
};

struct ImportSummary {
    std::uint64_t lines = 0;
    std::uint64_t entries = 0;
    std::uint64_t duplicates = 0;  // repeated lines with the same move, stored once
};

// Reads "FEN<TAB>uci-move" lines (blank lines and lines starting with '#'
// skipped). Every FEN must be a position of `variant` with the strategy side
// to move and the move legal there; a position given twice with different
// moves is an error. The first bad line is reported as "line N: ..."
// (InvalidArgument) and nothing is stored. Keeps every key in memory (to name
// the line of a duplicate): about 80 bytes per entry.
Result<ImportSummary> import_strategy(storage::Database& db, VariantId variant, std::istream& in,
                                      const ImportOptions& options);

}  // namespace tbf::gen
