#pragma once
// Internal: what both ways of checking a table share: the neutral positions
// of the C API, the probe-based valuation of a position (the reference the
// streaming check is compared with), per-thread tallies and the shared
// state of one table's check (errors, progress, the stop flag).

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/base/mix64.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/verify/tables.hpp"

namespace tbf::verify::detail {

// Unit types as the C API numbers them (TBF_KING .. TBF_PAWN).
inline constexpr Piece kPieceOfType[] = {Piece::King,   Piece::Queen,  Piece::Rook,
                                         Piece::Bishop, Piece::Knight, Piece::Pawn};
std::uint8_t type_of_piece(Piece p);

tbf_position to_neutral(const Board& board);
// The placement of a neutral position as FEN, unchecked: for naming a
// position that is not a legal board.
std::string neutral_fen(const tbf_position& pos);
// "KRvK": each side's units in the order K Q R B N P.
std::string material_of(const tbf_position& pos);
// The verifier's own board from a neutral position (checked by make_board).
Result<Board> to_board(Variant variant, const tbf_position& pos);

std::optional<DtcValue> from_c(const tbf_value& v);

// The stored code of wdl-dtc/1 (docs/values.md): 0 draw, 1 + 2d win in d,
// 2 + 2d loss in d.
inline DtcValue value_of_code(std::uint32_t code) {
    if (code == 0) return {};
    return {code % 2 == 1 ? Wdl::Win : Wdl::Loss, (code - 1) / 2};
}
inline std::uint64_t code_of_value(const DtcValue& v) {
    if (v.wdl == Wdl::Win) return 1 + 2 * std::uint64_t{v.dtc};
    if (v.wdl == Wdl::Loss) return 2 + 2 * std::uint64_t{v.dtc};
    return 0;
}

// Why a child has no value: a position error (the table or the probe is
// wrong about a legal position) or a database error (stops the table).
struct Failure {
    enum class Kind { None, Position, Database } kind = Kind::None;
    std::string message;
};

// A memo of probe answers, one per thread. Consecutive slots decode to
// positions that differ by one unit, so they share most of their children.
// Keys are exact (units in square order, packed), so a hit is the probe's
// own answer for that position.
class ProbeMemo {
public:
    static constexpr int kMaxUnits = 12;  // 10 bits per unit, two 64-bit words

    explicit ProbeMemo(int bits) : entries_(std::size_t{1} << bits), shift_(64 - bits) {}

    // Positions with more units or an en-passant right are not memoised.
    static bool key_of(const tbf_position& pos, std::uint64_t& a, std::uint64_t& b);
    const tbf_value* find(std::uint64_t a, std::uint64_t b) const {
        const Entry& e = entries_[slot(a, b)];
        return e.a == a && e.b == b ? &e.value : nullptr;
    }
    void insert(std::uint64_t a, std::uint64_t b, const tbf_value& value) {
        entries_[slot(a, b)] = {a, b, value};
    }

private:
    struct Entry {
        std::uint64_t a = 0;
        std::uint64_t b = 0;
        tbf_value value{};
    };
    std::size_t slot(std::uint64_t a, std::uint64_t b) const {
        return static_cast<std::size_t>(
            ((a * kGoldenGamma) ^ (b * 0xc2b2ae3d27d4eb4full)) >> shift_);
    }

    std::vector<Entry> entries_;
    int shift_;
};

// Values positions through the public probe API only: tbf_probe for every
// child that is not terminal and has no en-passant right (those are valued
// here). This is the whole check of --sample, and the reference the
// streaming check compares a sample of every table with.
class ProbeValuer {
public:
    ProbeValuer(tbf_db* db, Variant variant);

    // The minimax of the board's moves, children valued through tbf_probe;
    // nothing with `failure` set when a child has no value.
    std::optional<DtcValue> derive(const Board& board, Failure& failure);
    // tbf_probe of the position itself: its value, or nothing with `failure`.
    std::optional<DtcValue> probe(const Board& board, Failure& failure);

private:
    bool child_value(const Board& child, DtcValue& value, Failure& failure);

    tbf_db* db_;
    std::string variant_name_;
    ProbeMemo memo_;
};

// Counts gathered by one thread, merged at the end.
struct Tally {
    std::uint64_t positions = 0;  // checked
    std::array<std::uint64_t, 2> valid{};
    std::array<std::array<std::uint64_t, 3>, 2> wdl{};  // loss, draw, win per side
    unsigned max_dtc = 0;
    std::uint64_t errors = 0;
    std::vector<PositionError> listed;

    void add_stored(int side, const DtcValue& stored) {
        ++valid[static_cast<std::size_t>(side)];
        ++wdl[static_cast<std::size_t>(side)][static_cast<std::size_t>(static_cast<int>(stored.wdl) + 1)];
        if (stored.wdl != Wdl::Draw && stored.dtc > max_dtc) max_dtc = stored.dtc;
    }
};

// The shared state of one table's check: the report's totals (merged under a
// lock), the first database error and the stop flag, and progress.
class CheckState {
public:
    CheckState(const TableCheckOptions& options, TableReport& report)
        : options_(options), report_(report) {}

    const TableCheckOptions& options() const { return options_; }
    TableReport& report() { return report_; }
    int threads() const;

    // A wrong position or slot: counted, and kept if among the lowest slots.
    void record(Tally& tally, PositionError error) const;
    // A database error: the first one is reported and the check stops.
    void fail(const std::string& message);
    bool stopped() const { return stop_.load(std::memory_order_relaxed); }
    // Adds a thread's tally to the totals and empties it.
    void merge(Tally& tally);
    const Tally& totals() const { return totals_; }
    Tally& totals() { return totals_; }

    // `done` more slots (or sampled positions) of `total` are finished and
    // `positions` more positions checked; calls the progress callback now
    // and then (never from two threads at once).
    void progress(std::uint64_t done, std::uint64_t positions, std::uint64_t total);

private:
    const TableCheckOptions& options_;
    TableReport& report_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> done_{0};
    std::atomic<std::uint64_t> checked_{0};
    std::mutex mutex_;  // report_ and totals_
    Tally totals_;
    std::mutex progress_mutex_;
    std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace tbf::verify::detail
