// Table verification: stream each table's stored values chunk by chunk,
// decode every slot to a position, and compare the stored value with the
// minimax of the position's moves, generated here and valued through the
// public probe C API.

#include "tbforge/verify/tables.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <span>
#include <unordered_set>

#include "movegen.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::verify {

std::string_view wdl_name(Wdl wdl) {
    switch (wdl) {
        case Wdl::Win: return "win";
        case Wdl::Loss: return "loss";
        case Wdl::Draw: break;
    }
    return "draw";
}

std::string to_string(const DtcValue& v) {
    if (v.wdl == Wdl::Draw) return v.dtc == 0 ? "draw" : "draw " + std::to_string(v.dtc);
    return std::string(wdl_name(v.wdl)) + " " + std::to_string(v.dtc);
}

DtcValue terminal_value(Outcome outcome) {
    switch (outcome) {
        case Outcome::Win: return {Wdl::Win, 0};
        case Outcome::Loss: return {Wdl::Loss, 0};
        case Outcome::Draw:
        case Outcome::NotTerminal: break;
    }
    return {};
}

DtcValue move_score(const DtcValue& child, bool conversion) {
    if (child.wdl == Wdl::Draw) return {};
    const Wdl wdl = child.wdl == Wdl::Win ? Wdl::Loss : Wdl::Win;
    return {wdl, conversion ? 1u : child.dtc + 1};
}

bool better(const DtcValue& a, const DtcValue& b) {
    if (a.wdl != b.wdl) return static_cast<int>(a.wdl) > static_cast<int>(b.wdl);
    if (a.wdl == Wdl::Win) return a.dtc < b.dtc;
    if (a.wdl == Wdl::Loss) return a.dtc > b.dtc;
    return false;
}

std::optional<DtcValue> derive_value(const Board& board, const ChildValue& child_value) {
    detail::MoveList moves;
    detail::generate_legal(board, moves);
    if (moves.empty()) return terminal_value(board.outcome());
    std::optional<DtcValue> best;
    for (const Move& m : moves) {
        DtcValue child;
        if (!child_value(board.after(m), child)) return std::nullopt;
        const DtcValue score = move_score(child, board.is_conversion(m));
        if (!best || better(score, *best)) best = score;
    }
    return best;
}

namespace {

constexpr Piece kPieceOfType[] = {Piece::King,   Piece::Queen,  Piece::Rook,
                                  Piece::Bishop, Piece::Knight, Piece::Pawn};

std::uint8_t type_of_piece(Piece p) {
    for (std::uint8_t t = 0; t < 6; ++t) {
        if (kPieceOfType[t] == p) return t;
    }
    return TBF_PAWN;
}

struct DbCloser {
    void operator()(tbf_db* db) const { tbf_close(db); }
};
using DbHandle = std::unique_ptr<tbf_db, DbCloser>;

tbf_position to_neutral(const Board& board) {
    tbf_position pos{};
    for (int sq = 0; sq < 64; ++sq) {
        const Unit u = board.unit_on(sq);
        if (u.empty()) continue;
        pos.units[pos.unit_count++] = {
            static_cast<std::uint8_t>(sq), type_of_piece(u.piece),
            static_cast<std::uint8_t>(u.color == Color::White ? TBF_WHITE : TBF_BLACK)};
    }
    pos.side_to_move = board.side_to_move() == Color::White ? TBF_WHITE : TBF_BLACK;
    pos.ep_square = board.ep_square() == kNoSquare ? TBF_NO_SQUARE
                                                   : static_cast<std::uint8_t>(board.ep_square());
    return pos;
}

// The placement of a neutral position as FEN, unchecked: for naming a
// position that is not a legal board.
std::string neutral_fen(const tbf_position& pos) {
    std::array<char, 64> cells{};
    for (int i = 0; i < pos.unit_count && i < TBF_MAX_UNITS; ++i) {
        const tbf_unit& u = pos.units[i];
        if (u.square > 63) continue;
        const char letter = u.type < 6 ? "kqrbnp"[u.type] : '?';
        cells[u.square] = u.color == TBF_WHITE ? static_cast<char>(letter - 'a' + 'A') : letter;
    }
    std::string s;
    for (int rank = 7; rank >= 0; --rank) {
        int empty = 0;
        for (int file = 0; file < 8; ++file) {
            const char c = cells[static_cast<std::size_t>(square_at(file, rank))];
            if (c == 0) {
                ++empty;
                continue;
            }
            if (empty > 0) s += static_cast<char>('0' + empty);
            empty = 0;
            s += c;
        }
        if (empty > 0) s += static_cast<char>('0' + empty);
        if (rank > 0) s += '/';
    }
    s += pos.side_to_move == TBF_WHITE ? " w - " : " b - ";
    s += pos.ep_square == TBF_NO_SQUARE ? std::string("-") : square_name(pos.ep_square);
    return s + " 0 1";
}

// The material of a neutral position, "KRvK": each side's units in the
// order K Q R B N P (the table naming of docs/ARCHITECTURE.md section 4).
std::string material_of(const tbf_position& pos) {
    std::array<std::array<int, 6>, 2> counts{};
    for (int i = 0; i < pos.unit_count && i < TBF_MAX_UNITS; ++i) {
        const tbf_unit& u = pos.units[i];
        if (u.type < 6 && u.color < 2) ++counts[u.color][u.type];
    }
    std::string out;
    for (int c = 0; c < 2; ++c) {
        if (c == 1) out += 'v';
        for (int t = 0; t < 6; ++t) out.append(static_cast<std::size_t>(counts[c][t]), "KQRBNP"[t]);
    }
    return out;
}

// Builds the verifier's own board from a neutral position.
Result<Board> to_board(Variant variant, const tbf_position& pos) {
    std::array<Unit, 64> cells{};
    if (pos.unit_count > TBF_MAX_UNITS) return invalid_argument("too many units");
    for (int i = 0; i < pos.unit_count; ++i) {
        const tbf_unit& u = pos.units[i];
        if (u.square > 63 || u.type > TBF_PAWN || u.color > TBF_BLACK) {
            return invalid_argument("unit " + std::to_string(i) + " out of range");
        }
        Unit& cell = cells[u.square];
        if (!cell.empty()) return invalid_argument("two units on " + square_name(u.square));
        cell = Unit{kPieceOfType[u.type], u.color == TBF_WHITE ? Color::White : Color::Black};
    }
    if (pos.side_to_move > TBF_BLACK) return invalid_argument("side to move out of range");
    const int ep = pos.ep_square == TBF_NO_SQUARE ? kNoSquare : pos.ep_square;
    return make_board(variant, cells, pos.side_to_move == TBF_WHITE ? Color::White : Color::Black,
                      ep);
}

std::optional<DtcValue> from_c(const tbf_value& v) {
    switch (v.wdl) {
        case 1: return DtcValue{Wdl::Win, v.dtc};
        case -1: return DtcValue{Wdl::Loss, v.dtc};
        case 0: return DtcValue{Wdl::Draw, v.dtc};
        default: break;
    }
    return std::nullopt;
}

// The stored code of a value (docs/ARCHITECTURE.md section 4 and probe/value.hpp:
// 0 draw, 1 + 2d win in d, 2 + 2d loss in d), to recompute the checksum.
std::uint64_t stored_code(const tbf_value& v) {
    if (v.wdl > 0) return 1 + 2 * std::uint64_t{v.dtc};
    if (v.wdl < 0) return 2 + 2 * std::uint64_t{v.dtc};
    return 0;
}

// A memo of probe answers, one per thread. Consecutive slots decode to
// positions that differ by one unit, so they share most of their children:
// most child probes repeat a recent one. Keys are exact (units in square
// order, packed), so a hit is the probe's own answer for that position.
class ProbeMemo {
public:
    static constexpr int kMaxUnits = 12;  // 10 bits per unit, two 64-bit words

    explicit ProbeMemo(int bits) : entries_(std::size_t{1} << bits), shift_(64 - bits) {}

    // Positions with more units or an en-passant right are not memoised.
    static bool key_of(const tbf_position& pos, std::uint64_t& a, std::uint64_t& b) {
        if (pos.unit_count > kMaxUnits || pos.ep_square != TBF_NO_SQUARE) return false;
        a = pos.unit_count;  // 4 bits; never 0 for a position, so a == 0 marks an empty entry
        b = pos.side_to_move;
        for (int i = 0; i < pos.unit_count; ++i) {
            const tbf_unit& u = pos.units[i];
            const std::uint64_t packed =
                u.square | (std::uint64_t{u.type} << 6) | (std::uint64_t{u.color} << 9);
            if (i < 6) {
                a |= packed << (4 + 10 * i);
            } else {
                b |= packed << (1 + 10 * (i - 6));
            }
        }
        return true;
    }

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
            ((a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full)) >> shift_);
    }

    std::vector<Entry> entries_;
    int shift_;
};

// 2^16 entries of 24 bytes: 1.5 MiB per thread. Larger memos raise the hit
// rate a little (72% to 75% at 2^20 on 3-unit tables) but miss the CPU caches
// more: no faster.
constexpr int kMemoBits = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Why a child has no value: a position error (the table or the probe is
// wrong about a legal position) or a database error (stops the table).
struct Failure {
    enum class Kind { None, Position, Database } kind = Kind::None;
    std::string message;
};

// Counts gathered by one thread, merged at the end.
struct Tally {
    std::uint64_t positions = 0;  // checked
    std::array<std::uint64_t, 2> valid{};
    std::array<std::array<std::uint64_t, 3>, 2> wdl{};  // loss, draw, win per side
    unsigned max_dtc = 0;
    std::uint64_t errors = 0;
    std::vector<PositionError> listed;

    void add(const Tally& o) {
        positions += o.positions;
        for (int c = 0; c < 2; ++c) {
            valid[c] += o.valid[c];
            for (int w = 0; w < 3; ++w) wdl[c][w] += o.wdl[c][w];
        }
        max_dtc = std::max(max_dtc, o.max_dtc);
        errors += o.errors;
    }
};

// One table's check. Shared state is the report's totals (merged under a
// lock), the stop flag and the checksum (updated in slot order).
class Checker {
public:
    Checker(tbf_db* db, const tbf_table_info& info, Variant variant,
            const TableCheckOptions& options, TableReport& report)
        : db_(db),
          info_(info),
          variant_(variant),
          variant_name_(std::string(verify::variant_name(variant))),
          options_(options),
          report_(report) {
        // Slots decode to the stored colour orientation; either is accepted.
        const std::string material = info.material;
        const std::size_t v = material.find('v');
        materials_[0] = material;
        materials_[1] = v == std::string::npos
                            ? material
                            : material.substr(v + 1) + "v" + material.substr(0, v);
    }

    void run_full(const std::map<std::string, std::uint64_t>& counters);
    void run_sample();

private:
    // Per-thread working state.
    struct Worker {
        Tally tally;
        ProbeMemo memo{kMemoBits};
        std::uint64_t shown = 0;  // tally.positions already added to checked_
    };

    void check_slot(std::uint64_t slot, const tbf_value& stored, Worker& worker);
    void check_position(std::uint64_t slot, const tbf_position& pos, const DtcValue& stored,
                        Worker& worker);
    bool child_value(const Board& child, DtcValue& value, Failure& failure, ProbeMemo& memo) const;
    void record(Tally& tally, PositionError error) const;
    void fail(const std::string& message);
    void merge(Tally& tally);
    // Adds the worker's new counts to the shared ones and reports progress.
    void report_progress(Worker& worker, std::uint64_t done_now, std::uint64_t total);
    bool stopped() const { return stop_.load(std::memory_order_relaxed); }
    int threads() const { return options_.threads > 0 ? options_.threads : omp_get_max_threads(); }
    void check_statistics(const std::map<std::string, std::uint64_t>& counters);

    tbf_db* db_;
    const tbf_table_info& info_;
    Variant variant_;
    std::string variant_name_;
    std::array<std::string, 2> materials_;  // the table's material, both orientations
    const TableCheckOptions& options_;
    TableReport& report_;

    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> done_{0};
    std::atomic<std::uint64_t> checked_{0};  // for progress; the tallies have the counts
    std::mutex mutex_;                       // report_, tally_ and the first error
    Tally tally_;
    std::mutex progress_mutex_;
    std::chrono::steady_clock::time_point last_progress_{};
};

void Checker::fail(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (report_.database_error.empty()) report_.database_error = message;
    stop_.store(true);
}

void Checker::record(Tally& tally, PositionError error) const {
    ++tally.errors;
    // Chunks run in slot order within a thread, so the first ones a thread
    // meets are its lowest: keeping max_listed_errors per thread suffices.
    if (tally.listed.size() < options_.max_listed_errors) tally.listed.push_back(std::move(error));
}

void Checker::merge(Tally& tally) {
    std::lock_guard lock(mutex_);
    tally_.add(tally);
    for (PositionError& e : tally.listed) tally_.listed.push_back(std::move(e));
    std::sort(tally_.listed.begin(), tally_.listed.end(),
              [](const PositionError& a, const PositionError& b) { return a.slot < b.slot; });
    if (tally_.listed.size() > options_.max_listed_errors) {
        tally_.listed.resize(options_.max_listed_errors);
    }
    tally = Tally{};
}

void Checker::report_progress(Worker& worker, std::uint64_t done_now, std::uint64_t total) {
    // Shared counters move once per chunk, not per position: two threads
    // updating one cache line per position would slow each other down.
    const std::uint64_t done = done_.fetch_add(done_now) + done_now;
    const std::uint64_t checked = checked_.fetch_add(worker.tally.positions - worker.shown) +
                                  worker.tally.positions - worker.shown;
    worker.shown = worker.tally.positions;
    if (!options_.progress) return;
    std::unique_lock lock(progress_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress_ < std::chrono::milliseconds(250) && done < total) return;
    last_progress_ = now;
    options_.progress(TableCheckProgress{report_.name, done, total, checked});
}

bool Checker::child_value(const Board& child, DtcValue& value, Failure& failure,
                          ProbeMemo& memo) const {
    // A side without units has won (docs/ARCHITECTURE.md section 3); no table holds
    // such positions. Other terminal children (stalemate, mate) are stored in
    // their table, whose own check values them from the rules.
    if (child.unit_count(Color::White) == 0 || child.unit_count(Color::Black) == 0) {
        value = terminal_value(child.outcome());
        return true;
    }
    if (child.ep_square() != kNoSquare) {
        // Not stored (docs/ARCHITECTURE.md section 4): valued from its own moves, all
        // captures, whose children have no en-passant right.
        const auto derived = derive_value(child, [&](const Board& grandchild, DtcValue& v) {
            return child_value(grandchild, v, failure, memo);
        });
        if (!derived) return false;
        value = *derived;
        return true;
    }
    const tbf_position pos = to_neutral(child);
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    const bool memoised = ProbeMemo::key_of(pos, a, b);
    tbf_value v{};
    if (const tbf_value* hit = memoised ? memo.find(a, b) : nullptr) {
        v = *hit;
    } else {
        const tbf_status status = tbf_probe(db_, variant_name_.c_str(), &pos, &v);
        if (status == TBF_ERR_BAD_INPUT) {
            failure = {Failure::Kind::Position,
                       "the probe rejects the child " + child.fen() + ": " + tbf_last_error()};
            return false;
        }
        if (status != TBF_OK) {
            failure = {Failure::Kind::Database, tbf_last_error()};
            return false;
        }
        if (memoised) memo.insert(a, b, v);
    }
    if (const auto decoded = from_c(v)) {
        value = *decoded;
        return true;
    }
    failure = {Failure::Kind::Position,
               "the probe answers wdl " + std::to_string(v.wdl) + " for " + child.fen()};
    return false;
}

void Checker::check_position(std::uint64_t slot, const tbf_position& pos, const DtcValue& stored,
                             Worker& worker) {
    ++worker.tally.positions;
    if (const std::string material = material_of(pos);
        material != materials_[0] && material != materials_[1]) {
        record(worker.tally,
               {slot, neutral_fen(pos), stored, std::nullopt,
                "the slot decodes to a position of " + material + ", not " + materials_[0]});
        return;
    }
    const Result<Board> board = to_board(variant_, pos);
    if (!board) {
        record(worker.tally,
               {slot, neutral_fen(pos), stored, std::nullopt,
                "the slot decodes to an impossible position: " + board.status().message()});
        return;
    }
    if (board->ep_square() != kNoSquare) {
        record(worker.tally, {slot, board->fen(), stored, std::nullopt,
                              "the slot decodes to a position with an en-passant right"});
        return;
    }
    Failure failure;
    const auto derived = derive_value(*board, [&](const Board& child, DtcValue& v) {
        return child_value(child, v, failure, worker.memo);
    });
    if (!derived) {
        if (failure.kind == Failure::Kind::Database) {
            fail(failure.message + " (needed by " + board->fen() + ")");
        } else {
            record(worker.tally, {slot, board->fen(), stored, std::nullopt, failure.message});
        }
        return;
    }
    if (*derived != stored) {
        record(worker.tally,
               {slot, board->fen(), stored, derived,
                "stored " + to_string(stored) + ", its moves give " + to_string(*derived)});
        return;
    }
    // Probing the position itself must find the same value: the probe's
    // locate() must be the inverse of the slot decoding that was checked.
    tbf_value probed{};
    const tbf_status status = tbf_probe(db_, variant_name_.c_str(), &pos, &probed);
    if (status != TBF_OK && status != TBF_ERR_BAD_INPUT) {
        fail(tbf_last_error());
        return;
    }
    const auto answer = status == TBF_OK ? from_c(probed) : std::nullopt;
    if (!answer || *answer != stored) {
        record(worker.tally,
               {slot, board->fen(), stored, derived,
                status == TBF_OK
                    ? "probing the position answers " +
                          (answer ? to_string(*answer) : "an invalid value") +
                          ", its slot stores " + to_string(stored)
                    : std::string("the probe rejects the position: ") + tbf_last_error()});
    }
}

void Checker::check_slot(std::uint64_t slot, const tbf_value& stored_c, Worker& worker) {
    const std::uint64_t n = info_.index_size;
    const int side = slot >= n ? 1 : 0;
    const std::uint64_t index = slot - static_cast<std::uint64_t>(side) * n;
    const std::optional<DtcValue> stored = from_c(stored_c);
    tbf_position pos{};
    const tbf_status status = tbf_table_position(db_, info_.name, index, side, &pos);
    if (status == TBF_ERR_NOT_A_POSITION) {
        if (!stored || *stored != DtcValue{}) {
            record(worker.tally,
                   {slot, "", stored, DtcValue{},
                    "slot " + std::to_string(slot) + " holds no position but stores " +
                        (stored ? to_string(*stored) : "an invalid value")});
        }
        return;
    }
    if (status != TBF_OK) {
        fail(tbf_last_error());
        return;
    }
    Tally& tally = worker.tally;
    ++tally.valid[side];
    if (!stored) {
        record(worker.tally, {slot, neutral_fen(pos), std::nullopt, std::nullopt,
                              "the stored value has wdl " + std::to_string(stored_c.wdl)});
        return;
    }
    ++tally.wdl[side][static_cast<int>(stored->wdl) + 1];
    if (stored->wdl != Wdl::Draw) tally.max_dtc = std::max(tally.max_dtc, stored->dtc);
    check_position(slot, pos, *stored, worker);
}

void Checker::run_full(const std::map<std::string, std::uint64_t>& counters) {
    const std::uint64_t slots = info_.slots;
    const std::uint64_t chunk = std::max<std::uint64_t>(options_.chunk_slots, 1);
    const auto chunks = static_cast<std::int64_t>((slots + chunk - 1) / chunk);
    const std::uint32_t width = info_.value_width;
    const bool hash = width == 1 || width == 2 || width == 4;
    tbf::Xxh64 hasher;

#pragma omp parallel num_threads(threads())
    {
        std::vector<tbf_value> values;
        std::vector<std::uint8_t> raw;
        std::unique_ptr<Worker> worker;
        bool out_of_memory = false;
        try {
            worker = std::make_unique<Worker>();
            values.resize(chunk);
            raw.resize(chunk * width);
        } catch (const std::bad_alloc&) {
            out_of_memory = true;
            fail("out of memory for a chunk of " + std::to_string(chunk) + " slots");
        }
        // Dynamic chunks for balance; the checksum needs the values in slot
        // order, hence the ordered section (a thread waits at most one chunk).
#pragma omp for ordered schedule(dynamic, 1)
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::uint64_t first = static_cast<std::uint64_t>(c) * chunk;
            const std::size_t n = std::min(chunk, slots - first);
            bool read = false;
            if (!out_of_memory && !stopped()) {
                if (tbf_table_values(db_, info_.name, first, n, values.data()) != TBF_OK) {
                    fail(tbf_last_error());
                } else {
                    read = true;
                    try {
                        for (std::size_t i = 0; i < n && !stopped(); ++i) {
                            const std::uint64_t code = stored_code(values[i]);
                            for (std::uint32_t b = 0; b < width && hash; ++b) {
                                raw[i * width + b] = static_cast<std::uint8_t>(code >> (8 * b));
                            }
                            check_slot(first + i, values[i], *worker);
                        }
                    } catch (const std::bad_alloc&) {
                        fail("out of memory");
                    }
                }
            }
#pragma omp ordered
            {
                if (read && hash && !stopped()) hasher.update(std::span(raw.data(), n * width));
            }
            if (read && worker) report_progress(*worker, n, slots);
        }
        if (worker) merge(worker->tally);
    }

    report_.positions = tally_.positions;
    report_.valid = tally_.valid;
    report_.errors = tally_.errors;
    report_.first_errors = std::move(tally_.listed);
    if (!report_.database_error.empty()) return;

    if (info_.slots != 2 * info_.index_size) {
        report_.metadata_errors.push_back("the table has " + std::to_string(info_.slots) +
                                          " slots, not twice its index size " +
                                          std::to_string(info_.index_size));
    }
    if (!hash) {
        report_.metadata_errors.push_back("value width " + std::to_string(width) +
                                          " is not 1, 2 or 4 bytes");
    } else {
        const std::uint64_t digest = hasher.digest();
        report_.checksum_ok = digest == info_.checksum;
        if (!*report_.checksum_ok) {
            char text[80];
            std::snprintf(text, sizeof text, "stored checksum %016llx, values hash to %016llx",
                          static_cast<unsigned long long>(info_.checksum),
                          static_cast<unsigned long long>(digest));
            report_.metadata_errors.emplace_back(text);
        }
    }
    check_statistics(counters);
}

// The generator's statistics (storage counters "white.valid", "white.win",
// ..., "max_dtc") must match the values just streamed. Tables written
// without statistics have none to check.
void Checker::check_statistics(const std::map<std::string, std::uint64_t>& counters) {
    const auto expect = [&](const std::string& name, std::uint64_t counted, const char* what) {
        const auto it = counters.find(name);
        if (it == counters.end() || it->second == counted) return;
        report_.metadata_errors.push_back("statistics counter " + name + " is " +
                                          std::to_string(it->second) + ", the table has " +
                                          std::to_string(counted) + " " + what);
    };
    const char* sides[] = {"white", "black"};
    for (int c = 0; c < 2; ++c) {
        const std::string side = sides[c];
        expect(side + ".valid", tally_.valid[c], "positions");
        expect(side + ".win", tally_.wdl[c][2], "wins");
        expect(side + ".draw", tally_.wdl[c][1], "draws");
        expect(side + ".loss", tally_.wdl[c][0], "losses");
    }
    expect("max_dtc", tally_.max_dtc, "as longest distance");
}

void Checker::run_sample() {
    report_.sampled = true;
    const std::uint64_t slots = info_.slots;
    const std::uint64_t n = info_.index_size;
    // A seed of its own per table, so that tables do not share one sample pattern.
    std::uint64_t mix = options_.seed;
    for (const char* p = info_.name; *p != '\0'; ++p) {
        mix = (mix ^ static_cast<unsigned char>(*p)) * 0x100000001b3ull;
    }
    std::mt19937_64 rng(mix);

    const auto is_position = [&](std::uint64_t slot, bool& ok) {
        tbf_position pos{};
        const int side = slot >= n ? 1 : 0;
        const tbf_status status = tbf_table_position(
            db_, info_.name, slot - static_cast<std::uint64_t>(side) * n, side, &pos);
        ok = status == TBF_OK || status == TBF_ERR_NOT_A_POSITION;
        if (!ok) fail(tbf_last_error());
        return status == TBF_OK;
    };

    // Rejection sampling of distinct slots gives a uniform sample of the
    // positions; when the sample is a large part of the table (or the table
    // is mostly holes) every position is listed and a subset drawn instead.
    std::vector<std::uint64_t> chosen;
    bool ok = true;
    bool enumerate = options_.sample >= slots / 4;
    if (!enumerate) {
        std::unordered_set<std::uint64_t> tried;
        std::uniform_int_distribution<std::uint64_t> pick(0, slots - 1);
        const std::uint64_t limit = 16 * options_.sample + 4096;
        while (ok && chosen.size() < options_.sample && tried.size() < limit) {
            const std::uint64_t slot = pick(rng);
            if (!tried.insert(slot).second) continue;
            if (is_position(slot, ok)) chosen.push_back(slot);
        }
        if (chosen.size() < options_.sample) {
            enumerate = true;
            chosen.clear();
        }
    }
    if (enumerate) {
        for (std::uint64_t slot = 0; ok && slot < slots; ++slot) {
            if (is_position(slot, ok)) chosen.push_back(slot);
        }
        // Partial Fisher-Yates: the first `sample` entries are a uniform subset.
        const std::uint64_t take = std::min<std::uint64_t>(options_.sample, chosen.size());
        for (std::uint64_t i = 0; i < take; ++i) {
            std::uniform_int_distribution<std::uint64_t> pick(i, chosen.size() - 1);
            std::swap(chosen[i], chosen[pick(rng)]);
        }
        chosen.resize(take);
    }
    if (!ok) return;
    std::sort(chosen.begin(), chosen.end());

    const auto count = static_cast<std::int64_t>(chosen.size());
#pragma omp parallel num_threads(threads())
    {
        std::unique_ptr<Worker> worker;
        try {
            worker = std::make_unique<Worker>();
        } catch (const std::bad_alloc&) {
            fail("out of memory");
        }
#pragma omp for schedule(dynamic, 16)
        for (std::int64_t i = 0; i < count; ++i) {
            if (stopped() || !worker) continue;
            tbf_value value{};
            const std::uint64_t slot = chosen[static_cast<std::size_t>(i)];
            if (tbf_table_values(db_, info_.name, slot, 1, &value) != TBF_OK) {
                fail(tbf_last_error());
                continue;
            }
            try {
                check_slot(slot, value, *worker);
            } catch (const std::bad_alloc&) {
                fail("out of memory");
            }
            report_progress(*worker, 1, chosen.size());
        }
        if (worker) merge(worker->tally);
    }
    report_.positions = tally_.positions;
    report_.errors = tally_.errors;
    report_.first_errors = std::move(tally_.listed);
}

}  // namespace

struct TableDatabase::State {
    DbHandle db;
    storage::Database metadata;
    // The C API lists every table on each tbf_table_info_at call; a read-only
    // open sees a fixed database, so the listing is read once.
    std::vector<tbf_table_info> infos;
};

TableDatabase::TableDatabase(std::unique_ptr<State> state) : state_(std::move(state)) {}
TableDatabase::TableDatabase(TableDatabase&&) noexcept = default;
TableDatabase& TableDatabase::operator=(TableDatabase&&) noexcept = default;
TableDatabase::~TableDatabase() = default;

Result<TableDatabase> TableDatabase::open(const std::string& path) {
    tbf_db* raw = nullptr;
    if (tbf_open(path.c_str(), 0, &raw) != TBF_OK) {
        return io_error(tbf_last_error());
    }
    DbHandle db(raw);
    // A second read-only handle for what the C API does not expose: the
    // generator's statistics counters.
    auto metadata = storage::Database::open(path);
    if (!metadata.ok()) {
        return io_error("cannot open database " + path + ": " + metadata.status().to_string());
    }
    std::size_t count = 0;
    if (tbf_table_count(db.get(), &count) != TBF_OK) {
        return io_error(tbf_last_error());
    }
    std::vector<tbf_table_info> infos(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (tbf_table_info_at(db.get(), i, &infos[i]) != TBF_OK) {
            return io_error(tbf_last_error());
        }
    }
    return TableDatabase(std::make_unique<State>(
        State{std::move(db), std::move(metadata.value()), std::move(infos)}));
}

std::vector<TableListing> TableDatabase::tables() const {
    std::vector<TableListing> out;
    for (const tbf_table_info& info : state_->infos) {
        out.push_back({info.name, info.variant, info.material});
    }
    return out;
}

TableReport TableDatabase::check(const std::string& name, const TableCheckOptions& options) const {
    const auto start = std::chrono::steady_clock::now();
    TableReport report;
    report.name = name;
    const auto finish = [&]() -> TableReport {
        report.seconds = seconds_since(start);
        return report;
    };

    tbf_db* db = state_->db.get();
    const auto it = std::find_if(state_->infos.begin(), state_->infos.end(),
                                 [&](const tbf_table_info& i) { return name == i.name; });
    if (it == state_->infos.end()) {
        report.database_error = "table " + name + " is not in the database";
        return finish();
    }
    const tbf_table_info& info = *it;
    report.variant = info.variant;
    report.slots = info.slots;
    report.index_size = info.index_size;
    const std::optional<Variant> variant = variant_from_name(info.variant);
    if (!variant) {
        report.database_error =
            "table " + name + " has variant \"" + info.variant + "\", which tbverify does not know";
        return finish();
    }

    std::map<std::string, std::uint64_t> counters;
    auto stored = state_->metadata.table_info(name);
    if (!stored.ok()) {
        report.database_error = stored.status().to_string();
        return finish();
    }
    for (const storage::Counter& c : stored->statistics.counters) counters[c.name] = c.value;

    Checker checker(db, info, *variant, options, report);
    if (options.sample > 0) {
        checker.run_sample();
    } else {
        checker.run_full(counters);
    }
    return finish();
}

}  // namespace tbf::verify
