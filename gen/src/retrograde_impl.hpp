#pragma once
// RetrogradeBuilder's member definitions (retrograde.hpp).

#include <omp.h>

#include <cassert>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits>
#include <mutex>
#include <stdexcept>

#include "retrograde.hpp"

namespace tbf::gen {

template <Ruleset R, TableIndexer Ix>
TableValues RetrogradeBuilder<R, Ix>::build() {
    const auto start = std::chrono::steady_clock::now();
    size_ = moves_.indexer().size();
    if constexpr (kCanPull && std::is_same_v<Ix, index::WorkIndex>) {
        block_pulls_ = TableMoves<R, Ix>::block_moves_apply(moves_.indexer());
    }
    for (int c = 0; c < 2; ++c) bytes_[c] = StateBytes(size_);
    escaped_ids_.clear();
    escaped_words_.clear();
    frontier_ = {};
    const bool ids_fit = 2 * size_ - 1 <= std::numeric_limits<ListedId>::max();
    frontier_.budget = ids_fit ? size_ / 32 : 0;
    initial_pass();
    moves_.release_children();
    // Tracked once the sub-tables are gone (RBPvKN's peak is its initial
    // pass), and only where block pulls read child blocks.
    if (block_pulls_) {
        decided_.allocate(size_);
        for (int level = 0; level < DecidedBlocks::kWindow; ++level) track_level(level);
    }
    const double initial_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Wins worth two plies wait for level 2 even when no level reaches it.
    if (!late_wins_.empty() && frontier_.counts.size() < 3) {
        LocalFrontier none;
        none.counts.resize(3);
        none.lists.resize(3);
        none.far.resize(3);
        none.overflow.resize(3);
        frontier_.merge(none);
    }
    frontier_.added = 0;
    int passes = 1;
    for (int level = 0; static_cast<std::size_t>(level) < frontier_.counts.size(); ++level) {
        if (!StateWord::in_range(level)) {
            throw std::length_error("distance to conversion beyond the generator's working range");
        }
        level_pass(level);
        if (block_pulls_) track_level(level + DecidedBlocks::kWindow);
        ++passes;
    }
    decided_.release();
    TableValues out;
    collect_exceptions(out);
    for (int c = 0; c < 2; ++c) out.bytes[c] = std::move(bytes_[c]);
    out.stats.positions = valid_positions_;
    out.stats.passes = passes;
    out.stats.initial_seconds = initial_seconds;
    out.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::collect_exceptions(TableValues& out) {
    std::vector<std::pair<std::uint64_t, std::uint16_t>> codes;
    codes.reserve(escaped_ids_.size());
    for (std::size_t k = 0; k < escaped_ids_.size(); ++k) {
        codes.emplace_back(escaped_ids_[k], StateWord::final_code(escaped_words_[k]));
    }
    // A far byte's distance is the level of the list that holds it (each
    // position is decided, and listed, once); escaped ones keep their word.
    for (std::size_t l = 0; l < frontier_.far.size(); ++l) {
        for (const std::uint64_t packed : frontier_.far[l]) {
            const std::uint8_t b = load(detail::packed_side(packed), detail::packed_index(packed));
            if (b == StateByte::kWinFar) codes.emplace_back(packed, StateWord::win(static_cast<int>(l)));
            if (b == StateByte::kLossFar) codes.emplace_back(packed, StateWord::loss(static_cast<int>(l)));
        }
    }
    frontier_.far.clear();
    release_memory(escaped_ids_);
    release_memory(escaped_words_);
    std::sort(codes.begin(), codes.end());
    out.exception_ids.reserve(codes.size());
    out.exception_codes.reserve(codes.size());
    for (const auto& [packed, code] : codes) {
        out.exception_ids.push_back(packed);
        out.exception_codes.push_back(code);
    }
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::track_level(int level) {
    decided_.start(level);
    if (!any_decided(level)) return;
    const auto l = static_cast<std::size_t>(level);
    // Far levels are never pulled; an overflowed list no longer says where
    // the level's positions are.
    if (level >= layout_.far_level() || frontier_.overflow[l]) {
        decided_.stop(level);
        return;
    }
    for (const ListedId packed : frontier_.lists[l]) {
        decided_.mark(level, detail::packed_side(packed), detail::packed_index(packed));
    }
}

template <Ruleset R, TableIndexer Ix>
int RetrogradeBuilder<R, Ix>::stabilizer_of(Color side, std::uint64_t index) const {
    const std::uint64_t key = detail::pack(side, index) << 3;
    const auto it = std::lower_bound(symmetric_.begin(), symmetric_.end(), key);
    return static_cast<int>(*it & 7);
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::initial_pass() {
    const auto total = static_cast<std::int64_t>(size_ * 2);
    std::mutex merge_mutex;
    std::uint64_t valid = 0;
    std::uint64_t open = 0;
    std::atomic<std::uint64_t> done{0};
#pragma omp parallel reduction(+ : valid, open)
    {
        LocalFrontier local = local_frontier();
        std::vector<std::uint64_t> late_win, late_loss, symmetric;
        std::vector<std::pair<std::uint64_t, std::uint16_t>> escaped;
        constexpr std::int64_t kChunk = 1 << 14;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t chunk = 0; chunk < (total + kChunk - 1) / kChunk; ++chunk) {
            const std::int64_t end = std::min(total, (chunk + 1) * kChunk);
            auto record = [&](Color side, std::uint64_t index, const SlotStart& s) {
                const std::uint16_t word = s.word();
                const std::uint8_t b = layout_.initial(word);
                // An invalid slot's byte is already 0: its page stays untouched.
                if (b != StateByte::kInvalid) bytes_[to_index(side)][index] = b;
                valid += s.value != StateWord::kInvalid;
                open += s.value == StateWord::kUndecided;
                const std::uint64_t packed = detail::pack(side, index);
                if (b == StateByte::kEscaped) escaped.emplace_back(packed, word);
                if (s.level >= 0) local.add(s.level, packed);
                if (s.late_win) late_win.push_back(packed);
                if (s.late_loss) late_loss.push_back(packed);
                if (s.stabilizer > 1) symmetric.push_back(packed << 3 | s.stabilizer);
            };
            if constexpr (!R::kRoyalKing) {
                // Without a royal king a slot is a position for both sides or
                // for neither: one decode serves both (chunks are even).
                static_assert(kChunk % 2 == 0);
                typename TableMoves<R, Ix>::Scan scan(moves_);
                for (std::int64_t slot = chunk * kChunk; slot < end; slot += 2) {
                    const auto index = static_cast<std::uint64_t>(slot >> 1);
                    if (!scan.decode(index, Color::White)) {
                        SlotStart invalid;
                        invalid.value = StateWord::kInvalid;
                        record(Color::White, index, invalid);
                        if (slot + 1 < end) record(Color::Black, index, invalid);
                        continue;
                    }
                    Position& pos = scan.position();
                    record(Color::White, index, moves_.start(pos, scan.squares()));
                    if (slot + 1 < end) {
                        pos.set_side_to_move(Color::Black);
                        record(Color::Black, index, moves_.start(pos, scan.squares()));
                    }
                }
            } else {
                for (std::int64_t slot = chunk * kChunk; slot < end; ++slot) {
                    // Sides interleave per chunk so both sides' arrays fill together.
                    const Color side = static_cast<Color>(slot & 1);
                    const auto index = static_cast<std::uint64_t>(slot >> 1);
                    record(side, index, moves_.start(side, index));
                }
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
        for (const auto& [packed, word] : escaped) {
            escaped_ids_.push_back(packed);
            escaped_words_.push_back(word);
        }
    }
    valid_positions_ = valid;
    {
        std::vector<std::size_t> order(escaped_ids_.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return escaped_ids_[a] < escaped_ids_[b]; });
        std::vector<std::uint64_t> ids(order.size());
        std::vector<std::uint16_t> words(order.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
            ids[k] = escaped_ids_[order[k]];
            words[k] = escaped_words_[order[k]];
        }
        escaped_ids_ = std::move(ids);
        escaped_words_ = std::move(words);
    }
    initial_open_ = open;
    std::sort(symmetric_.begin(), symmetric_.end());
    std::sort(late_wins_.begin(), late_wins_.end());
    std::sort(late_losses_.begin(), late_losses_.end());
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::visit(Color s, std::uint64_t index, int level, LocalFrontier& local,
                                     SlotList& preds) {
    const int next = level + 1;
    const std::uint8_t b = load(s, index);
    const Wdl wdl = b == StateByte::kEscaped ? probe::decode_value(load_escaped(s, index)).wdl : StateByte::wdl(b);
    Position pos;
    Square squares[kMaxTableUnits];
    [[maybe_unused]] const bool ok = moves_.decode(index, s, squares, pos);
    assert(ok);
    const Color p = ~s;
    const int stab_w = wdl == Wdl::Win && moves_.has_symmetries() ? moves_.stabilizer(pos) : 1;
    // Repeated predecessors only need counting together when the closed
    // share r |Stab Q| / |Stab W| is not a multiple of r.
    const bool grouped = stab_w > 1;
    moves_.predecessors(index, pos, squares, preds, grouped);
    StateBytes& bytes = bytes_[to_index(p)];
    if (wdl == Wdl::Loss) {
        for (std::size_t at = 0; at < preds.size(); ++at) {
            if (claim(p, preds[at], next).changed) local.add(next, detail::pack(p, preds[at]));
        }
        return;
    }
    for (std::size_t at = 0; at < preds.size();) {
        const std::uint64_t q = preds[at];
        std::size_t repeats = 1;
        if (grouped) {
            while (at + repeats < preds.size() && preds[at + repeats] == q) ++repeats;
        }
        at += repeats;
        auto late = [&] { return late_loss(detail::pack(p, q)); };
        std::uint8_t& target = bytes[q];
        const StateWord::Step step =
            std::atomic_ref<std::uint8_t>(target).load(std::memory_order_relaxed) == StateByte::kEscaped
                ? StateWord::count_down(escaped(p, q), level, static_cast<int>(repeats), stab_w,
                                        [&] { return stabilizer_of(p, q); }, late)
                : layout_.count_down(target, level, static_cast<int>(repeats), stab_w, late);
        if (step.decided >= 0) local.add(step.decided, detail::pack(p, q));
    }
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::level_pass(int level) {
    const auto l = static_cast<std::size_t>(level);
    // From the far level on a byte does not say its distance: those levels
    // are always listed, and always pushed.
    const bool far = level >= layout_.far_level();
    // Pushing costs a locked update per predecessor of each decided
    // position, pulling a read per move of each open one plus a scan;
    // block pulls (pull_block) read a block of children for 64 slots.
    const std::uint64_t open = initial_open_ - frontier_.added;
    const bool pull = passes_ == Passes::Chosen ? pull_factor(level) * frontier_.counts[l] >= open : passes_ != Passes::Push;
    if (kCanPull && !far && frontier_.counts[l] != 0 && pull) {
        if (!frontier_.overflow[l]) {
            frontier_.budget += frontier_.lists[l].size();
            release_memory(frontier_.lists[l]);
        }
        pull_pass(level);
    } else if (far) {
        // Kept: the list is the record of these positions' distance.
        push_listed(frontier_.far[l], level);
    } else if (frontier_.counts[l] != 0 && !frontier_.overflow[l]) {
        const std::vector<ListedId> current = std::move(frontier_.lists[l]);  // leaves it empty, unallocated
        frontier_.budget += current.size();
        push_listed(current, level);
    } else if (frontier_.counts[l] != 0) {
        push_scanned(level);
    }
    if (level + 1 == 2) {
        LocalFrontier local = local_frontier();
        for (const std::uint64_t packed : late_wins_) {
            if (claim(detail::packed_side(packed), detail::packed_index(packed), 2).changed) local.add(2, packed);
        }
        frontier_.merge(local);
        late_wins_.clear();
    }
}

template <Ruleset R, TableIndexer Ix>
template <class Id>
void RetrogradeBuilder<R, Ix>::push_listed(const std::vector<Id>& listed, int level) {
    std::mutex merge_mutex;
    const auto count = static_cast<std::int64_t>(listed.size());
#pragma omp parallel
    {
        LocalFrontier local = local_frontier();
        SlotList preds;
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t k = 0; k < count; ++k) {
            const std::uint64_t packed = listed[static_cast<std::size_t>(k)];
            visit(detail::packed_side(packed), detail::packed_index(packed), level, local, preds);
            if (progress_ && omp_get_thread_num() == 0 && (k & 0xFFFF) == 0) {
                progress_("level", level, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(count));
            }
        }
        std::lock_guard lock(merge_mutex);
        frontier_.merge(local);
    }
}

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::push_scanned(int level) {
    // Too many to list: find them by their values, the escaped slots by
    // their words.
    const std::uint8_t win_byte = layout_.win(level);
    const std::uint8_t loss_byte = layout_.loss(level);
    const std::uint16_t win_code = StateWord::win(level);
    const std::uint16_t loss_code = StateWord::loss(level);
    constexpr std::int64_t kChunk = 1 << 14;
    const auto chunks = static_cast<std::int64_t>((size_ + kChunk - 1) / kChunk);
    const auto escaped_count = static_cast<std::int64_t>(escaped_ids_.size());
    std::mutex merge_mutex;
#pragma omp parallel
    {
        LocalFrontier local = local_frontier();
        SlotList preds;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t chunk = 0; chunk < 2 * chunks; ++chunk) {
            const auto side = static_cast<Color>(chunk & 1);
            const auto first = static_cast<std::uint64_t>(chunk >> 1) * kChunk;
            const std::uint64_t end = std::min<std::uint64_t>(size_, first + kChunk);
            for (std::uint64_t i = first; i < end; ++i) {
                const std::uint8_t b = load(side, i);
                if (b == win_byte || b == loss_byte) visit(side, i, level, local, preds);
            }
            if (progress_ && omp_get_thread_num() == 0) {
                progress_("level", level, static_cast<std::uint64_t>(chunk), static_cast<std::uint64_t>(2 * chunks));
            }
        }
        // Words written in this pass are level + 1 codes, never the level's own.
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t k = 0; k < escaped_count; ++k) {
            const std::uint16_t word = std::atomic_ref<std::uint16_t>(escaped_words_[static_cast<std::size_t>(k)])
                                           .load(std::memory_order_relaxed);
            if (word != win_code && word != loss_code) continue;
            const std::uint64_t packed = escaped_ids_[static_cast<std::size_t>(k)];
            visit(detail::packed_side(packed), detail::packed_index(packed), level, local, preds);
        }
        std::lock_guard lock(merge_mutex);
        frontier_.merge(local);
    }
}

namespace detail {

// The 64 bytes of a block of slots, read while other threads may write some
// of them (never with the codes a pass looks for: see pull_pass), compared
// with one value at a time into a mask of 64 bits.
struct BlockBytes {
    alignas(16) std::uint8_t b[64];

    explicit BlockBytes(const std::uint8_t* p) {
        using Word [[gnu::may_alias]] = std::uint64_t;
        for (int k = 0; k < 8; ++k) {
            const std::uint64_t w = __atomic_load_n(reinterpret_cast<const Word*>(p + 8 * k), __ATOMIC_RELAXED);
            std::memcpy(b + 8 * k, &w, 8);
        }
    }
    // Bit x set where byte x equals v.
    std::uint64_t equal(std::uint8_t v) const { return where(v, false); }
    // Bit x set where byte x is at least v.
    std::uint64_t at_least(std::uint8_t v) const { return where(v, true); }

private:
    std::uint64_t where(std::uint8_t v, bool at_least) const {
        std::uint64_t mask = 0;
#if defined(__SSE2__)
        const __m128i value = _mm_set1_epi8(static_cast<char>(v));
        for (int k = 0; k < 4; ++k) {
            const __m128i bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(b + 16 * k));
            // max(bytes, v) == bytes: bytes >= v, unsigned.
            const __m128i hit = _mm_cmpeq_epi8(at_least ? _mm_max_epu8(bytes, value) : value, bytes);
            mask |= static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(hit))) << (16 * k);
        }
#else
        for (int x = 0; x < 64; ++x) mask |= static_cast<std::uint64_t>(at_least ? b[x] >= v : b[x] == v) << x;
#endif
        return mask;
    }
};

}  // namespace detail

template <Ruleset R, TableIndexer Ix>
void RetrogradeBuilder<R, Ix>::pull_pass(int level) {
    if constexpr (kCanPull) {
        constexpr std::int64_t kChunk = 1 << 14;
        const auto chunks = static_cast<std::int64_t>((size_ + kChunk - 1) / kChunk);
        std::mutex merge_mutex;
#pragma omp parallel
        {
            LocalFrontier local = local_frontier();
            typename TableMoves<R, Ix>::Scan scan(moves_);
            auto finish = [&](Color side, std::uint64_t i, std::uint8_t seen, std::uint16_t seen_word,
                              const StateByte::PullCount& count) {
                std::uint8_t& target = bytes_[to_index(side)][i];
                const std::uint64_t packed = detail::pack(side, i);
                auto late = [&] { return late_loss(packed); };
                const StateWord::Step step = seen == StateByte::kEscaped
                                                 ? StateWord::pull(escaped(side, i), seen_word, level, count, late)
                                                 : layout_.pull(target, seen, level, count, late);
                if (step.decided >= 0) local.add(step.decided, packed);
            };
            // One slot: its open children read one by one.
            auto pull_slot = [&](Color side, std::uint64_t i) {
                // Only this thread writes slot i; the children's bytes are
                // read while other threads decide them, but those become
                // level + 1 codes, never the level's own.
                const Color child_side = ~side;
                const StateBytes& children = bytes_[to_index(child_side)];
                const std::uint8_t seen =
                    std::atomic_ref<std::uint8_t>(bytes_[to_index(side)][i]).load(std::memory_order_relaxed);
                const bool escaped_slot = seen == StateByte::kEscaped;
                if (!StateByte::is_open(seen) && !escaped_slot) return;
                std::uint16_t seen_word = 0;
                if (escaped_slot) {
                    seen_word = load_escaped(side, i);
                    if (!StateWord::is_open(seen_word)) return;
                }
                [[maybe_unused]] const bool ok = scan.decode(i, side);
                assert(ok);
                StateByte::PullCount count(layout_, level);
                moves_.open_children(i, scan.position(), scan.squares(), [&](std::uint64_t child) {
                    const std::uint8_t b =
                        std::atomic_ref<const std::uint8_t>(children[child]).load(std::memory_order_relaxed);
                    return count.add(b != StateByte::kEscaped ? b : count.as_byte(load_escaped(child_side, child)));
                });
                finish(side, i, seen, seen_word, count);
            };
#pragma omp for schedule(dynamic, 1)
            for (std::int64_t chunk = 0; chunk < 2 * chunks; ++chunk) {
                const auto side = static_cast<Color>(chunk & 1);
                const auto first = static_cast<std::uint64_t>(chunk >> 1) * kChunk;
                const std::uint64_t end = std::min<std::uint64_t>(size_, first + kChunk);
                if constexpr (std::is_same_v<Ix, index::WorkIndex>) {
                    // Work-index slots come in blocks of 64 (the last digit).
                    if (passes_ == Passes::PullSlots) {
                        for (std::uint64_t i = first; i < end; ++i) pull_slot(side, i);
                        continue;
                    }
                    for (std::uint64_t block = first >> 6; block < end >> 6; ++block) {
                        pull_block(side, block, level, pull_slot, finish);
                    }
                } else {
                    for (std::uint64_t i = first; i < end; ++i) pull_slot(side, i);
                }
                if (progress_ && omp_get_thread_num() == 0) {
                    progress_("level", level, static_cast<std::uint64_t>(chunk), static_cast<std::uint64_t>(2 * chunks));
                }
            }
            std::lock_guard lock(merge_mutex);
            frontier_.merge(local);
        }
    }
}

template <Ruleset R, TableIndexer Ix>
template <class PullSlot, class Finish>
void RetrogradeBuilder<R, Ix>::pull_block(Color side, std::uint64_t block, int level, PullSlot& pull_slot,
                                          Finish& finish) {
    const std::uint64_t base = block << 6;
    const detail::BlockBytes own(&bytes_[to_index(side)][base]);
    // Open bytes and escaped ones (kEscaped, then kCannotLose and counters).
    const std::uint64_t live = own.at_least(StateByte::kEscaped);
    if (live == 0) return;
    const index::WorkIndex& ix = moves_.indexer();
    Square squares[kMaxTableUnits];
    if (!block_pulls_ || !ix.decode_prefix(base, squares)) {
        for (std::uint64_t rest = live; rest;) pull_slot(side, base + pop_lsb(rest));
        return;
    }
    // Escaped slots hold their word elsewhere: one by one.
    const std::uint64_t escaped_slots = own.equal(StateByte::kEscaped);
    for (std::uint64_t rest = escaped_slots; rest;) pull_slot(side, base + pop_lsb(rest));
    const std::uint64_t open = live & ~escaped_slots;
    if (open == 0) return;
    const Color child_side = ~side;
    const StateBytes& children = bytes_[to_index(child_side)];
    const std::uint8_t loss_byte = layout_.loss(level);
    const std::uint8_t win_byte = layout_.win(level);
    const StateByte::PullCount as_byte(layout_, level);
    // Child blocks without a position decided at the level change nothing.
    const std::uint64_t* decided = decided_.blocks(level, child_side);
    std::uint64_t wins = 0;                 // a child lost at the level
    std::array<std::uint8_t, 64> won{};     // children won at the level
    // An escaped child's word, read as the byte of its value at the level.
    auto take_escaped = [&](Square x, std::uint64_t child) {
        const std::uint8_t b = as_byte.as_byte(load_escaped(child_side, child));
        if (b == loss_byte) wins |= bit(x);
        if (b == win_byte) ++won[x];
    };
    using Moves = TableMoves<R, Ix>;
    // Children of one block: every slot x of `open_for` reads the child
    // where the last unit stands on last_square(last, x).
    auto read = [&](std::uint64_t child_block, std::uint64_t open_for, typename Moves::LastSquare last) {
        const std::uint64_t reading = open & ~wins & open_for;
        if (reading == 0) return;
        const detail::BlockBytes child(&children[child_block << 6]);
        wins |= Moves::by_last_square(last, child.equal(loss_byte)) & reading;
        for (std::uint64_t w = Moves::by_last_square(last, child.equal(win_byte)) & reading & ~wins; w;) {
            ++won[pop_lsb(w)];
        }
        for (std::uint64_t e = Moves::by_last_square(last, child.equal(StateByte::kEscaped)) & reading; e;) {
            const Square x = pop_lsb(e);
            take_escaped(x, (child_block << 6) | Moves::last_square(last, x));
        }
    };
    // A root move re-maps the last unit's square: x reads square(x).
    auto root = [&](const index::WorkIndex::RootMove& move, std::uint64_t open_for) {
        const std::uint64_t reading = open & ~wins & open_for;
        if (reading == 0) return;
        const std::uint64_t child_block = move.child_block();
        const detail::BlockBytes child(&children[child_block << 6]);
        const std::uint64_t lost = child.equal(loss_byte);
        const std::uint64_t won_there = child.equal(win_byte);
        const std::uint64_t escaped_there = child.equal(StateByte::kEscaped);
        for (std::uint64_t rest = reading; rest;) {
            const Square x = pop_lsb(rest);
            const Square y = move.square(x);
            if (lost >> y & 1) {
                wins |= bit(x);
            } else if (won_there >> y & 1) {
                ++won[x];
            } else if (escaped_there >> y & 1) {
                take_escaped(x, (child_block << 6) | y);
            }
        }
    };
    // The child blocks are read once every move is listed and its child
    // block prefetched: each read is most often a cache miss, and misses
    // issued together overlap instead of following one another.
    struct ListedMiddle {
        std::uint64_t child_block;
        std::uint64_t open_for;
        typename Moves::LastSquare last;
    };
    struct ListedRoot {
        index::WorkIndex::RootMove move;
        std::uint64_t open_for;
    };
    constexpr std::size_t kListed = 64;
    std::array<ListedMiddle, kListed> middles;
    std::array<ListedRoot, kListed> roots;
    std::size_t middle_count = 0, root_count = 0;
    auto read_listed = [&] {
        for (std::size_t k = 0; k < middle_count; ++k) read(middles[k].child_block, middles[k].open_for, middles[k].last);
        for (std::size_t k = 0; k < root_count; ++k) root(roots[k].move, roots[k].open_for);
        middle_count = root_count = 0;
    };
    auto list_middle = [&](std::uint64_t child_block, std::uint64_t open_for, typename Moves::LastSquare last) {
        if (!DecidedBlocks::has(decided, child_block)) return;
        if (middle_count == kListed) read_listed();
        __builtin_prefetch(&children[child_block << 6]);
        middles[middle_count++] = {child_block, open_for, last};
    };
    auto list_root = [&](const index::WorkIndex::RootMove& move, std::uint64_t open_for) {
        if (!DecidedBlocks::has(decided, move.child_block())) return;
        if (root_count == kListed) read_listed();
        __builtin_prefetch(&children[move.child_block() << 6]);
        roots[root_count++] = {move, open_for};
    };
    moves_.block_children(block, side, squares, list_middle, list_root);
    read_listed();
    // The last unit's own moves stay in the block (the other side to move).
    const std::uint64_t last_moves = open & ~wins;
    const typename TableMoves<R, Ix>::LastUnitMoves last_unit(moves_, side, block, squares);
    if (last_moves != 0 && last_unit.any() && DecidedBlocks::has(decided, block)) {
        const detail::BlockBytes same(&children[base]);
        const std::uint64_t lost = last_unit.by_target(same.equal(loss_byte));
        const std::uint64_t won_here = last_unit.by_target(same.equal(win_byte));
        const std::uint64_t escaped_here = last_unit.by_target(same.equal(StateByte::kEscaped));
        for (std::uint64_t rest = last_moves; rest;) {
            const Square x = pop_lsb(rest);
            const Bitboard targets = last_unit.targets(x);
            if (targets & lost) {
                wins |= bit(x);
                continue;
            }
            won[x] = static_cast<std::uint8_t>(won[x] + std::popcount(targets & won_here));
            for (Bitboard e = targets & escaped_here; e;) take_escaped(x, base | last_unit.child(pop_lsb(e)));
        }
    }
    for (std::uint64_t rest = open; rest;) {
        const Square x = pop_lsb(rest);
        StateByte::PullCount count(layout_, level);
        if (wins & bit(x)) {
            count.add_lost();
        } else {
            count.add_won(won[x]);
        }
        finish(side, base | x, own.b[x], 0, count);
    }
}

}  // namespace tbf::gen
