#pragma once
// Implementation of RetrogradeBuilder; included from retrograde.hpp.

#include <omp.h>

#include <cassert>
#include <mutex>

namespace tbf::gen {

template <Ruleset R, TableIndexer Ix>
TableValues RetrogradeBuilder<R, Ix>::build() {
    const auto start = std::chrono::steady_clock::now();
    size_ = ix_.size();
    for (int c = 0; c < 2; ++c) {
        values_[c].assign(size_, detail::kUndecided);
        open_moves_[c].assign(size_, 0);
    }
    symmetries_.clear();
    if (ix_.symmetry_count() == kSymmetryCount) {
        for (int sym = 1; sym < kSymmetryCount; ++sym) symmetries_.push_back(sym);
    } else if (ix_.symmetry_count() == 2) {
        symmetries_.push_back(kMirrorFiles);
    }
    initial_pass();
    // Wins worth two plies wait for level 2 even when no level reaches it.
    if (!late_wins_.empty() && frontier_.levels.size() < 3) frontier_.levels.resize(3);
    int passes = 1;
    for (int level = 0; static_cast<std::size_t>(level) < frontier_.levels.size(); ++level) {
        level_pass(level);
        ++passes;
    }
    TableValues out;
    for (int c = 0; c < 2; ++c) {
        for (auto& v : values_[c]) {
            if (v == detail::kInvalid || v == detail::kDrawFinal) v = 0;
        }
        out.values[c] = std::move(values_[c]);
        open_moves_[c] = {};
    }
    out.stats.positions = valid_positions_;
    out.stats.passes = passes;
    out.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

template <Ruleset R, TableIndexer Ix>
bool RetrogradeBuilder<R, Ix>::decode(std::uint64_t index, Color side, Square* squares,
                                      Position& pos) const {
    if (!ix_.decode(index, squares)) return false;
    pos = Position();
    const int n = ix_.unit_count();
    for (int i = 0; i < n; ++i) pos.put(squares[i], ix_.unit(i));
    pos.set_side_to_move(side);
    return is_valid(pos);
}

template <Ruleset R, TableIndexer Ix>
int RetrogradeBuilder<R, Ix>::stabilizer(const Position& pos) const {
    int count = 1;
    for (const int sym : symmetries_) {
        Bitboard occ = pos.occupied();
        bool fixed = true;
        while (occ && fixed) {
            const Square s = pop_lsb(occ);
            fixed = pos.unit_on(transform_square(s, sym)) == pos.unit_on(s);
        }
        count += fixed;
    }
    return count;
}

template <Ruleset R, TableIndexer Ix>
int RetrogradeBuilder<R, Ix>::stabilizer_of(Color side, std::uint64_t index) const {
    if (!(symmetric_bits_[to_index(side)][index >> 6] & (std::uint64_t{1} << (index & 63)))) return 1;
    const std::uint64_t key = detail::pack(side, index) << 3;
    const auto it = std::lower_bound(symmetric_.begin(), symmetric_.end(), key);
    return static_cast<int>(*it & 7);
}

template <Ruleset R, TableIndexer Ix>
bool RetrogradeBuilder<R, Ix>::is_valid(const Position& pos) const {
    if constexpr (R::kRoyalKing) {
        // The side that just moved cannot have left its king attacked.
        return !king_attacked<R>(pos, ~pos.side_to_move());
    } else {
        return true;
    }
}

// Does this quiet move give the opponent an en-passant capture? (Position::after
// records the square exactly then.)
template <Ruleset R>
bool gives_en_passant(const Position& pos, Move m) {
    if constexpr (!R::kPawnsCapture) {
        return false;
    } else {
        if ((m.from() ^ m.to()) != 16 || unit_type(pos.unit_on(m.from())) != UnitType::Pawn) return false;
        const Color us = pos.side_to_move();
        const auto skipped = static_cast<Square>((m.from() + m.to()) / 2);
        return (pawn_attacks(us, skipped) & pos.units(~us, UnitType::Pawn)) != 0;
    }
}

template <Ruleset R, TableIndexer Ix>
probe::Value RetrogradeBuilder<R, Ix>::en_passant_child_value(const Position& child) const {
    // Captures are compulsory and one exists, so every move converts.
    MoveList list;
    generate_legal<R>(child, list);
    probe::Value best{Wdl::Loss, 0};
    for (Move m : list) {
        const probe::Value v = probe::move_value(child_value_(child.after(m)), true);
        if (probe::better_for_mover(v, best)) best = v;
    }
    return best;
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::init_position(Color side, std::uint64_t index, Frontier& frontier,
                                             std::vector<std::uint64_t>& late_win,
                                             std::vector<std::uint64_t>& late_loss,
                                             std::vector<std::uint64_t>& symmetric) {
    using probe::Value;
    auto& value = values_[to_index(side)][index];
    Position pos;
    Square squares[kMaxTableUnits];
    if (!decode(index, side, squares, pos)) {
        value = detail::kInvalid;
        return;
    }
    MoveList list;
    generate_legal<R>(pos, list);
    if (list.empty()) {
        const Wdl wdl = *terminal_value<R>(pos, false);
        if (wdl == Wdl::Draw) {
            value = detail::kDrawFinal;
        } else {
            value = probe::encode_value({wdl, 0});
            frontier.add(0, detail::pack(side, index));
        }
        return;
    }
    if (!symmetries_.empty()) {
        if (const int stab = stabilizer(pos); stab > 1) {
            symmetric.push_back(detail::pack(side, index) << 3 | static_cast<std::uint64_t>(stab));
        }
    }
    int best_win = 0;    // shortest winning move outside the table, 0 if none
    int worst_loss = 0;  // longest losing move outside the table
    bool draw = false;
    int quiet = 0;       // moves to positions of this table
    for (Move m : list) {
        Value v;
        if (pos.is_conversion(m)) {
            v = probe::move_value(child_value_(pos.after(m)), true);
        } else if (!gives_en_passant<R>(pos, m)) {
            ++quiet;
            continue;
        } else {
            v = probe::move_value(en_passant_child_value(pos.after(m)), false);
        }
        if (v.wdl == Wdl::Win) {
            best_win = best_win == 0 ? v.dtc : std::min<int>(best_win, v.dtc);
            if (best_win == 1) break;
        } else if (v.wdl == Wdl::Loss) {
            worst_loss = std::max<int>(worst_loss, v.dtc);
        } else {
            draw = true;
        }
    }
    const std::uint64_t packed = detail::pack(side, index);
    if (best_win == 1) {
        value = probe::encode_value({Wdl::Win, 1});
        frontier.add(1, packed);
        return;
    }
    if (quiet == 0) {
        if (best_win) {
            value = probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(best_win)});
            frontier.add(best_win, packed);
        } else if (draw) {
            value = detail::kDrawFinal;
        } else {
            value = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(worst_loss)});
            frontier.add(worst_loss, packed);
        }
        return;
    }
    assert(quiet < detail::kCannotLose);
    open_moves_[to_index(side)][index] =
        (draw || best_win) ? detail::kCannotLose : static_cast<std::uint8_t>(quiet);
    if (best_win) {
        late_win.push_back(packed);
    } else if (worst_loss > 1) {
        late_loss.push_back(packed);
    }
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::initial_pass() {
    const auto total = static_cast<std::int64_t>(size_ * 2);
    std::mutex merge_mutex;
    std::uint64_t valid = 0;
    std::atomic<std::uint64_t> done{0};
#pragma omp parallel reduction(+ : valid)
    {
        Frontier local;
        std::vector<std::uint64_t> late_win, late_loss, symmetric;
        constexpr std::int64_t kChunk = 1 << 14;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t chunk = 0; chunk < (total + kChunk - 1) / kChunk; ++chunk) {
            const std::int64_t end = std::min(total, (chunk + 1) * kChunk);
            for (std::int64_t slot = chunk * kChunk; slot < end; ++slot) {
                // Sides interleave per chunk so both sides' arrays fill together.
                const Color side = static_cast<Color>(slot & 1);
                const auto index = static_cast<std::uint64_t>(slot >> 1);
                init_position(side, index, local, late_win, late_loss, symmetric);
                valid += values_[to_index(side)][index] != detail::kInvalid;
            }
            const auto d = done.fetch_add(static_cast<std::uint64_t>(end - chunk * kChunk)) +
                           static_cast<std::uint64_t>(end - chunk * kChunk);
            if (progress_ && omp_get_thread_num() == 0) progress_("init", -1, d, total);
        }
        std::lock_guard lock(merge_mutex);
        frontier_.merge(local);
        late_wins_.insert(late_wins_.end(), late_win.begin(), late_win.end());
        late_losses_.insert(late_losses_.end(), late_loss.begin(), late_loss.end());
        symmetric_.insert(symmetric_.end(), symmetric.begin(), symmetric.end());
    }
    valid_positions_ = valid;
    std::sort(symmetric_.begin(), symmetric_.end());
    for (int c = 0; c < 2; ++c) symmetric_bits_[c].assign((size_ + 63) / 64, 0);
    for (const std::uint64_t entry : symmetric_) {
        const std::uint64_t packed = entry >> 3;
        const std::uint64_t i = detail::packed_index(packed);
        symmetric_bits_[to_index(detail::packed_side(packed))][i >> 6] |= std::uint64_t{1} << (i & 63);
    }
    std::sort(late_wins_.begin(), late_wins_.end());
    std::sort(late_losses_.begin(), late_losses_.end());
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::predecessors(const Position& pos, Square* squares,
                                            std::vector<std::uint64_t>& out) const {
    out.clear();
    const Color s = pos.side_to_move();
    const Color p = ~s;  // the side that made the last move
    const Bitboard occ = pos.occupied();
    const Bitboard empty = ~occ & R::kBoard;
    int unit = 0;
    auto add = [&](Square from, Square to) {
        squares[unit] = from;
        const std::uint64_t q = ix_.encode(squares);
        squares[unit] = to;
        if (q != kNoSlot) out.push_back(q);
    };
    const int forward = p == Color::White ? 8 : -8;
    const int double_push_rank = p == Color::White ? 3 : 4;
    const int first_rank = p == Color::White ? 0 : 7;
    const int n = ix_.unit_count();
    for (unit = 0; unit < n; ++unit) {
        const Unit u = ix_.unit(unit);
        if (unit_color(u) != p) continue;
        const Square to = squares[unit];
        const UnitType type = unit_type(u);
        if (type != UnitType::Pawn) {
            Bitboard from = unit_attacks(type, to, occ) & empty;
            while (from) add(pop_lsb(from), to);
            continue;
        }
        const auto back = static_cast<Square>(to - forward);
        if (rank_of(back) == first_rank || !(empty & bit(back))) continue;
        add(back, to);
        if (rank_of(to) != double_push_rank) continue;
        const auto start = static_cast<Square>(back - forward);
        if (!(empty & bit(start))) continue;
        // A double push next to an enemy pawn leads to the en-passant
        // position, which is valued outside the table.
        if constexpr (R::kPawnsCapture) {
            if (pawn_attacks(p, back) & pos.units(s, UnitType::Pawn)) continue;
        }
        add(start, to);
    }
    // Sorted so that repeated predecessors (several un-moves) stand together.
    std::sort(out.begin(), out.end());
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::level_pass(int level) {
    std::vector<std::uint64_t> current = std::move(frontier_.levels[level]);
    frontier_.levels[level].clear();
    const auto count = static_cast<std::int64_t>(current.size());
    const auto next = static_cast<std::uint16_t>(level + 1);
    const std::uint16_t win_next = probe::encode_value({Wdl::Win, next});
    std::mutex merge_mutex;
    std::atomic<std::uint64_t> done{0};
#pragma omp parallel
    {
        Frontier local;
        std::vector<std::uint64_t> preds;
        Position pos;
        Square squares[kMaxTableUnits];
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t k = 0; k < count; ++k) {
            const std::uint64_t packed = current[static_cast<std::size_t>(k)];
            const Color s = detail::packed_side(packed);
            const std::uint64_t index = detail::packed_index(packed);
            const probe::Value v = probe::decode_value(load(s, index));
            [[maybe_unused]] const bool ok = decode(index, s, squares, pos);
            assert(ok);
            predecessors(pos, squares, preds);
            const Color p = ~s;
            const int stab_w = symmetries_.empty() ? 1 : stabilizer(pos);
            for (std::size_t at = 0; at < preds.size();) {
                const std::uint64_t q = preds[at];
                std::size_t repeats = 1;
                while (at + repeats < preds.size() && preds[at + repeats] == q) ++repeats;
                at += repeats;
                if (v.wdl == Wdl::Loss) {
                    if (claim(p, q, win_next)) local.add(next, detail::pack(p, q));
                    continue;
                }
                if (load(p, q) != detail::kUndecided) continue;
                std::atomic_ref<std::uint8_t> open(open_moves_[to_index(p)][q]);
                if (open.load(std::memory_order_relaxed) == detail::kCannotLose) continue;
                const auto closed = static_cast<std::uint8_t>(
                    repeats * static_cast<std::size_t>(stabilizer_of(p, q)) / static_cast<std::size_t>(stab_w));
                if (open.fetch_sub(closed, std::memory_order_relaxed) != closed) continue;
                int distance = next;
                if (distance < 2 && std::binary_search(late_losses_.begin(), late_losses_.end(),
                                                       detail::pack(p, q))) {
                    distance = 2;
                }
                const auto loss = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(distance)});
                if (claim(p, q, loss)) local.add(distance, detail::pack(p, q));
            }
            if (progress_ && omp_get_thread_num() == 0 && (k & 0xFFFF) == 0) {
                progress_("level", level, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(count));
            }
        }
        std::lock_guard lock(merge_mutex);
        frontier_.merge(local);
    }
    if (next == 2) {
        for (const std::uint64_t packed : late_wins_) {
            const Color c = detail::packed_side(packed);
            const std::uint64_t i = detail::packed_index(packed);
            if (claim(c, i, probe::encode_value({Wdl::Win, 2}))) frontier_.add(2, packed);
        }
        late_wins_.clear();
    }
}

}  // namespace tbf::gen
