#pragma once
// Table verification: every stored value is re-derived from the rules with
// the verifier's own move generator. For each position of a table, its legal
// moves are generated here, each child is valued (terminal children from the
// rules, children with an en-passant right from their own moves, the others
// through the public probe C API), and the minimax of docs/ARCHITECTURE.md section 4 must
// equal what the table stores. Values are read only through the probe C API
// (tbforge.h) and table metadata through storage/, never through generator
// code.
//
// Thread safety: a TableDatabase may be shared by threads (checks of one
// database run one at a time: they share its decoded values); check() runs
// OpenMP-parallel itself.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/verify/board.hpp"

namespace tbf::verify {

// Game-theoretic result for the side to move.
enum class Wdl : signed char { Loss = -1, Draw = 0, Win = 1 };

std::string_view wdl_name(Wdl wdl);  // "win", "draw", "loss"

// A stored or derived value: result for the side to move and DTC in plies
// (0 for draws and terminal positions).
struct DtcValue {
    Wdl wdl = Wdl::Draw;
    unsigned dtc = 0;

    friend constexpr bool operator==(const DtcValue&, const DtcValue&) = default;
};

std::string to_string(const DtcValue& v);  // "win 5", "draw", "loss 0"

// The value of a terminal position (outcome not NotTerminal): distance 0.
DtcValue terminal_value(Outcome outcome);

// A move scored for the side making it, from the value of the position it
// leads to (docs/ARCHITECTURE.md section 4): a conversion scores 1 and the child's WDL,
// a quiet move the child's distance + 1; the result is negated, draws stay
// draws.
DtcValue move_score(const DtcValue& child, bool conversion);

// Whether `a` is better than `b` for the side choosing: wins by smaller
// distance, then draws, then losses by larger distance.
bool better(const DtcValue& a, const DtcValue& b);

// The value of a child position for the side then to move; false when it has
// none (derive_value then returns nothing).
using ChildValue = std::function<bool(const Board& child, DtcValue& value)>;

// The value of `board` for its side to move: its outcome at distance 0 when
// terminal, otherwise the best score of its legal moves, each child valued by
// `child_value`.
std::optional<DtcValue> derive_value(const Board& board, const ChildValue& child_value);

// --- Checking the tables of a database -------------------------------------

struct TableCheckProgress {
    std::string_view table;
    std::uint64_t done = 0;   // slots (full check) or sampled positions processed
    std::uint64_t total = 0;  // slots of the table, or positions to sample
    std::uint64_t positions = 0;
};

struct TableCheckOptions {
    int threads = 0;                     // 0: OpenMP's default
    std::uint64_t sample = 0;            // 0: every position; otherwise this many at random
    std::uint64_t seed = 1;              // for --sample
    std::size_t max_listed_errors = 10;  // position errors kept with their FEN
    // Bound on the memory a full check holds (decoded values, the window of
    // the table checked, children waiting for their values); 0: half of the
    // physical memory. A table and its sub-tables that fit are held whole,
    // a larger table is checked a window at a time (docs/verify.md).
    std::uint64_t memory_bytes = 0;
    // Called now and then from a worker thread (never two at once).
    std::function<void(const TableCheckProgress&)> progress;
};

// A position (or a slot) whose stored value is wrong.
struct PositionError {
    std::uint64_t slot = 0;  // storage slot: side * index_size + index
    std::string fen;         // "" for a slot that holds no position
    std::optional<DtcValue> stored;
    std::optional<DtcValue> derived;  // nothing when it could not be derived
    std::string message;              // what is wrong, in words
};

struct TableReport {
    std::string name;  // "antichess/KQvR"
    std::string variant;
    std::uint64_t slots = 0;
    std::uint64_t index_size = 0;
    bool sampled = false;
    std::uint64_t positions = 0;               // positions checked
    std::array<std::uint64_t, 2> valid{};      // positions per side to move (full check)
    std::uint64_t errors = 0;                  // positions and slots with a wrong value
    std::vector<PositionError> first_errors;   // the lowest slots, at most max_listed_errors
    std::vector<std::string> metadata_errors;  // checksum, slot count, statistics
    std::optional<bool> checksum_ok;           // nothing when sampled
    std::string database_error;  // not empty: the check could not finish (missing or corrupt data)
    double seconds = 0;
    // How a full check ran: windows of slots (1 when the table and its
    // sub-tables were held whole), children that waited for their value
    // block, and value blocks read.
    std::uint64_t windows = 0;
    std::uint64_t waited = 0;
    std::uint64_t blocks_read = 0;

    [[nodiscard]] bool ok() const {
        return database_error.empty() && errors == 0 && metadata_errors.empty();
    }
};

// A table as listed by the database.
struct TableListing {
    std::string name;
    std::string variant;
    std::string material;
};

// A database opened read-only for verification. Decoded values are kept
// between checks (within the memory bound), so that checking every table
// reads shared sub-tables once.
class TableDatabase {
public:
    // Opens `path` and lists its tables; an IoError naming the problem
    // (missing, not a database, damaged metadata) otherwise.
    [[nodiscard]] static Result<TableDatabase> open(const std::string& path);

    TableDatabase(TableDatabase&&) noexcept;
    TableDatabase& operator=(TableDatabase&&) noexcept;
    ~TableDatabase();

    // Tables in name order.
    [[nodiscard]] std::vector<TableListing> tables() const;

    // Checks one table of tables(). A failure to read the database is
    // reported in TableReport::database_error, not thrown.
    [[nodiscard]] TableReport check(const std::string& name,
                                    const TableCheckOptions& options) const;

private:
    struct State;
    explicit TableDatabase(std::unique_ptr<State> state);

    std::unique_ptr<State> state_;
};

}  // namespace tbf::verify
