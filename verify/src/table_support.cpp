// Neutral positions, the probe-based valuation and the shared check state.

#include "table_support.hpp"

#include <omp.h>

#include <algorithm>

#include "movegen.hpp"

namespace tbf::verify::detail {

std::uint8_t type_of_piece(Piece p) {
    for (std::uint8_t t = 0; t < 6; ++t) {
        if (kPieceOfType[t] == p) return t;
    }
    return TBF_PAWN;
}

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

bool ProbeMemo::key_of(const tbf_position& pos, std::uint64_t& a, std::uint64_t& b) {
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

namespace {

// 2^16 entries of 24 bytes: 1.5 MiB per thread. Larger memos raise the hit
// rate a little (72% to 75% at 2^20 on 3-unit tables) but miss the CPU caches
// more: no faster.
constexpr int kMemoBits = 16;

}  // namespace

ProbeValuer::ProbeValuer(tbf_db* db, Variant variant)
    : db_(db), variant_name_(std::string(variant_name(variant))), memo_(kMemoBits) {}

bool ProbeValuer::child_value(const Board& child, DtcValue& value, Failure& failure) {
    // A side without units has won (docs/ARCHITECTURE.md section 3); no table
    // holds such positions. Other terminal children (stalemate, mate) are
    // stored in their table, whose own check values them from the rules.
    if (child.unit_count(Color::White) == 0 || child.unit_count(Color::Black) == 0) {
        value = terminal_value(child.outcome());
        return true;
    }
    if (child.ep_square() != kNoSquare) {
        // Not stored (docs/ARCHITECTURE.md section 4): valued from its own
        // moves, all captures, whose children have no en-passant right.
        const auto derived = derive_value(child, [&](const Board& grandchild, DtcValue& v) {
            return child_value(grandchild, v, failure);
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
    if (const tbf_value* hit = memoised ? memo_.find(a, b) : nullptr) {
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
        if (memoised) memo_.insert(a, b, v);
    }
    if (const auto decoded = from_c(v)) {
        value = *decoded;
        return true;
    }
    failure = {Failure::Kind::Position,
               "the probe answers wdl " + std::to_string(v.wdl) + " for " + child.fen()};
    return false;
}

std::optional<DtcValue> ProbeValuer::derive(const Board& board, Failure& failure) {
    return derive_value(board, [&](const Board& child, DtcValue& v) {
        return child_value(child, v, failure);
    });
}

std::optional<DtcValue> ProbeValuer::probe(const Board& board, Failure& failure) {
    const tbf_position pos = to_neutral(board);
    tbf_value probed{};
    const tbf_status status = tbf_probe(db_, variant_name_.c_str(), &pos, &probed);
    if (status == TBF_ERR_BAD_INPUT) {
        failure = {Failure::Kind::Position,
                   std::string("the probe rejects the position: ") + tbf_last_error()};
        return std::nullopt;
    }
    if (status != TBF_OK) {
        failure = {Failure::Kind::Database, tbf_last_error()};
        return std::nullopt;
    }
    const auto answer = from_c(probed);
    if (!answer) {
        failure = {Failure::Kind::Position,
                   "probing the position answers wdl " + std::to_string(probed.wdl)};
    }
    return answer;
}

int CheckState::threads() const {
    return options_.threads > 0 ? options_.threads : omp_get_max_threads();
}

void CheckState::record(Tally& tally, PositionError error) const {
    ++tally.errors;
    const std::size_t keep = options_.max_listed_errors;
    if (keep == 0) return;
    tally.listed.push_back(std::move(error));
    // Keep the lowest slots; errors do not always arrive in slot order.
    if (tally.listed.size() >= 2 * keep) {
        std::sort(tally.listed.begin(), tally.listed.end(),
                  [](const PositionError& a, const PositionError& b) { return a.slot < b.slot; });
        tally.listed.resize(keep);
    }
}

void CheckState::fail(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (report_.database_error.empty()) report_.database_error = message;
    stop_.store(true);
}

void CheckState::merge(Tally& tally) {
    std::lock_guard lock(mutex_);
    totals_.positions += tally.positions;
    for (int c = 0; c < 2; ++c) {
        totals_.valid[c] += tally.valid[c];
        for (int w = 0; w < 3; ++w) totals_.wdl[c][w] += tally.wdl[c][w];
    }
    totals_.max_dtc = std::max(totals_.max_dtc, tally.max_dtc);
    totals_.errors += tally.errors;
    for (PositionError& e : tally.listed) totals_.listed.push_back(std::move(e));
    std::sort(totals_.listed.begin(), totals_.listed.end(),
              [](const PositionError& a, const PositionError& b) { return a.slot < b.slot; });
    if (totals_.listed.size() > options_.max_listed_errors) {
        totals_.listed.resize(options_.max_listed_errors);
    }
    tally = Tally{};
}

void CheckState::progress(std::uint64_t done, std::uint64_t positions, std::uint64_t total) {
    // Shared counters move once per batch, not per position: two threads
    // updating one cache line per position would slow each other down.
    const std::uint64_t done_now = done_.fetch_add(done) + done;
    const std::uint64_t checked = checked_.fetch_add(positions) + positions;
    if (!options_.progress) return;
    std::unique_lock lock(progress_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress_ < std::chrono::milliseconds(250) && done_now < total) return;
    last_progress_ = now;
    options_.progress(TableCheckProgress{report_.name, done_now, total, checked});
}

}  // namespace tbf::verify::detail
