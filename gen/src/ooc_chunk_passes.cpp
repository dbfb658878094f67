// The chunk passes of the out-of-core build: the initial pass, and level
// passes that visit one chunk at a time, apply its bucket, push to
// predecessors (buffering updates for other chunks) or split the pass with
// pulls inside the chunk (out_of_core.hpp).

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <exception>

#include "instantiate.hpp"
#include "out_of_core.hpp"
#include "tbforge/index/indexer.hpp"

namespace tbf::gen {

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::initial_chunk(std::uint64_t c) {
    const std::uint64_t first = first_slot(c);
    const std::uint64_t count = chunk_size(c);
    auto& state = loaded_.state;
    state.resize(count);
    loaded_.chunk = c;
    const auto total = static_cast<std::int64_t>(2 * count);
    std::vector<Tally> tallies(static_cast<std::size_t>(omp_get_max_threads()));
    std::vector<ooc::ChunkAux> auxes(tallies.size());
    std::uint64_t valid = 0;
    std::uint64_t undecided = 0;
#pragma omp parallel reduction(+ : valid, undecided)
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        Tally& tally = tallies[t];
        ooc::ChunkAux& aux = auxes[t];
#pragma omp for schedule(dynamic, 1024)
        for (std::int64_t local = 0; local < total; ++local) {
            const auto id = static_cast<std::uint32_t>(local);
            const int side = static_cast<int>(id & 1);
            const std::uint32_t i = id >> 1;
            const SlotStart s = moves_.start(static_cast<Color>(side), first + i);
            state.words[side][i] = s.word();
            valid += s.value != StateWord::kInvalid;
            undecided += s.value == StateWord::kUndecided;
            if (s.level >= 0) tally.decide(s.level);
            if (s.late_win) aux.late_wins.push_back(id);
            if (s.late_loss) aux.late_losses.push_back(id);
            if (s.stabilizer > 1) aux.symmetric.push_back(std::uint64_t{id} << 3 | s.stabilizer);
        }
    }
    ooc::ChunkAux aux;
    for (auto& a : auxes) {
        aux.late_wins.insert(aux.late_wins.end(), a.late_wins.begin(), a.late_wins.end());
        aux.late_losses.insert(aux.late_losses.end(), a.late_losses.begin(), a.late_losses.end());
        aux.symmetric.insert(aux.symmetric.end(), a.symmetric.begin(), a.symmetric.end());
    }
    std::sort(aux.late_wins.begin(), aux.late_wins.end());
    std::sort(aux.late_losses.begin(), aux.late_losses.end());
    std::sort(aux.symmetric.begin(), aux.symmetric.end());
    auto& entry = manifest_.chunks[c];
    entry = ooc::ChunkEntry();
    merge(tallies, entry);
    entry.late_wins = aux.late_wins.size();
    entry.max_code = chunk_max_code();
    entry.generation = 1;
    ooc::write_aux(dir_, aux_file(c), aux);
    ooc::write_chunk(dir_, chunk_file(c, 1), c, state);
    manifest_.valid_positions += valid;
    manifest_.undecided += undecided;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::load(std::uint64_t c) {
    const std::uint64_t count = chunk_size(c);
    loaded_.chunk = c;
    ooc::read_chunk(dir_, chunk_file(c, manifest_.chunks[c].generation), c, count, loaded_.state);
    loaded_.aux = ooc::read_aux(dir_, aux_file(c));
    for (const std::uint64_t entry : loaded_.aux.symmetric) {
        if ((entry >> 3) >= 2 * count) damaged(aux_file(c), "bad slot");
    }
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::visit(std::uint64_t c, int level, bool apply_only) {
    load(c);
    auto& entry = manifest_.chunks[c];
    bool dirty = false;
    std::vector<Tally> tallies(static_cast<std::size_t>(omp_get_max_threads()));
    if (entry.bucket_bytes > 0) {
        const std::uint64_t count = chunk_size(c);
        int last_level = 0;
        ooc::for_each_update_frame(dir_, bucket_file(c), entry.bucket_bytes, [&](std::span<const Update> updates) {
            // Validate before the parallel loop: a damaged record must not
            // touch memory, and levels must not go back.
            for (const Update& u : updates) {
                if (u.slot >= 2 * count || u.level < last_level || u.level > level || (u.child & 0x7F) == 0) {
                    damaged(bucket_file(c), "bad update");
                }
                last_level = u.level;
            }
            // One level at a time: updates of one level commute, those of
            // different levels do not.
            for (std::size_t at = 0; at < updates.size();) {
                std::size_t end = at;
                while (end < updates.size() && updates[end].level == updates[at].level) ++end;
                const auto n = static_cast<std::int64_t>(end - at);
                const Update* run = updates.data() + at;
                // Threads only pay off for long runs (a parallel region costs
                // microseconds, far more on a loaded machine).
#pragma omp parallel if (n > 8192)
                {
                    Tally& tally = tallies[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
                    for (std::int64_t k = 0; k < n; ++k) apply(run[k], tally);
                }
                at = end;
            }
        });
        dirty = true;
    }
    if (level == 1 && entry.late_wins > 0 && !apply_only) {
        // In RAM these are claimed after level pass 1; every update that
        // could reach them first gives the same value (a win in 2), and
        // count-downs skip them (they cannot lose).
        for (const std::uint32_t id : loaded_.aux.late_wins) {
            tallies[0].record(StateWord::claim_win(loaded_.state.words[id & 1][id >> 1], 2));
        }
        entry.late_wins = 0;
        dirty = true;
    }
    // The bucket's updates of level L - 1 decide positions at L: count them
    // before asking whether the chunk has anything to generate.
    manifest_.undecided -= merge(tallies, entry);
    if (entry.pending.count(level) && !apply_only) {
        Tally generated;
        loaded_frontier_ = entry.pending[level];
        const bool split = pulls(level);
        split_visits_ += split;
        generate(level, generated, split);
        if (split) pull_tails(level, generated);
        dirty = dirty || generated.applied > 0;
        entry.pending.erase(level);  // generate() decides levels above L only
        manifest_.undecided -= merge({generated}, entry);
    }
    entry.bucket_bytes = 0;
    if (dirty) {
        entry.max_code = chunk_max_code();
        ++entry.generation;
        ooc::write_chunk(dir_, chunk_file(c, entry.generation), c, loaded_.state);
    }
    flush_buffers();
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::drain_buckets(int level) {
    std::uint64_t waiting = 0;
    for (const auto& e : manifest_.chunks) waiting += e.bucket_bytes;
    if (waiting <= bucket_limit_) return true;
    // Early application is the visit's own first step: chunks already
    // visited in this pass get the level's updates before the next pass,
    // as they would anyway; the others keep their turn to generate.
    for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
        if (manifest_.chunks[c].bucket_bytes == 0) continue;
        const std::uint64_t old_generation = manifest_.chunks[c].generation;
        visit(c, level, true);
        if (progress_) progress_("drain", level, c + 1, manifest_.chunk_count());
        if (!checkpoint(c, c, old_generation)) return false;
    }
    return true;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::generate(int level, Tally& out, bool split) {
    const std::uint64_t c = loaded_.chunk;
    const std::uint64_t first = first_slot(c);
    const std::uint64_t count = chunk_size(c);
    const std::uint64_t k = manifest_.chunk_slots;
    const std::uint16_t win_code = StateWord::win(level);
    const std::uint16_t loss_code = StateWord::loss(level);
    const int threads = omp_get_max_threads();
    std::vector<Tally> tallies(static_cast<std::size_t>(threads));
    // Per thread and target chunk; the buckets are sorted when flushed, so
    // the order in which threads hand them over does not matter.
    const std::uint64_t chunks = manifest_.chunk_count();
    std::vector<std::vector<std::vector<Update>>> outgoing(static_cast<std::size_t>(threads),
                                                           std::vector<std::vector<Update>>(chunks));
    // Slots per batch: outgoing updates are moved to the buffers between
    // batches, so they never hold more than a batch's worth.
    const auto batch = static_cast<std::int64_t>(std::clamp<std::uint64_t>(buffer_limit_ / 16, 1 << 14, 1 << 18));
    const auto total = static_cast<std::int64_t>(2 * count);
    // Few decided positions: one thread, no parallel-region cost per batch.
    const bool parallel = loaded_frontier_ > 256;
    std::uint64_t local_updates = 0;
    for (std::int64_t begin = 0; begin < total; begin += batch) {
        const std::int64_t end = std::min(total, begin + batch);
#pragma omp parallel reduction(+ : local_updates) if (parallel)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num());
            Tally& tally = tallies[t];
            auto& send = outgoing[t];
            std::vector<std::uint64_t> preds;
#pragma omp for schedule(dynamic, 256)
            for (std::int64_t local = begin; local < end; ++local) {
                const auto id = static_cast<std::uint32_t>(local);
                const int side = static_cast<int>(id & 1);
                const std::uint16_t v = load_word(side, id >> 1);
                if (v != win_code && v != loss_code) continue;
                const std::uint64_t index = first + (id >> 1);
                const int p = side ^ 1;
                // Split pass: the tail un-moves of a root range inside the
                // chunk are pulled by their predecessors instead.
                int units_end = kMaxTableUnits;
                if constexpr (kCanPull) {
                    if (split && root_range_inside(index)) units_end = moves_.indexer().root_unit_count();
                }
                for_each_predecessor(index, side, v == loss_code, preds, [&](std::uint64_t q, int repeats,
                                                                              std::uint8_t child) {
                    const std::uint64_t target = q / k;
                    const Update u{static_cast<std::uint32_t>((q - target * k) * 2 + static_cast<std::uint64_t>(p)),
                                   static_cast<std::uint16_t>(level), static_cast<std::uint8_t>(repeats), child};
                    if (target == c) {
                        apply(u, tally);
                        ++local_updates;
                    } else {
                        send[target].push_back(u);
                    }
                }, units_end);
            }
        }
        std::uint64_t moved = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : moved) if (parallel)
        for (std::int64_t target = 0; target < static_cast<std::int64_t>(chunks); ++target) {
            auto& buffer = buffers_[static_cast<std::size_t>(target)];
            for (auto& send : outgoing) {
                auto& part = send[static_cast<std::size_t>(target)];
                buffer.insert(buffer.end(), part.begin(), part.end());
                moved += part.size();
                part.clear();
            }
        }
        buffered_ += moved;
        manifest_.updates_cross += moved;
        if (buffered_ > buffer_limit_) flush_buffers();
    }
    manifest_.updates_local += local_updates;
    out.add(tallies);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::pulls(int level) const {
    if constexpr (!kCanPull) {
        return false;
    } else {
        const auto& pending = manifest_.chunks[loaded_.chunk].pending;
        const auto at = pending.find(level);
        if (at == pending.end() || at->second == 0) return false;
        std::uint64_t open = 0;
        for (const auto& side : loaded_.state.words) {
            const auto n = static_cast<std::int64_t>(side.size());
#pragma omp parallel for reduction(+ : open) schedule(static)
            for (std::int64_t i = 0; i < n; ++i) open += StateWord::is_open(side[static_cast<std::size_t>(i)]);
        }
        return 2 * at->second >= open;
    }
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::root_range_inside(std::uint64_t index) const {
    if constexpr (!kCanPull) {
        return false;
    } else {
        const auto [root_first, root_end] = moves_.indexer().root_range(index);
        const std::uint64_t first = first_slot(loaded_.chunk);
        return root_first >= first && root_end <= first + chunk_size(loaded_.chunk);
    }
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::pull_tails(int level, Tally& out) {
    if constexpr (kCanPull) {
        const std::uint64_t first = first_slot(loaded_.chunk);
        const std::uint64_t count = chunk_size(loaded_.chunk);
        const int first_tail_unit = moves_.indexer().root_unit_count();
        const auto& late = loaded_.aux.late_losses;
        std::vector<Tally> tallies(static_cast<std::size_t>(omp_get_max_threads()));
        const auto total = static_cast<std::int64_t>(2 * count);
        std::uint64_t pulled = 0;
#pragma omp parallel reduction(+ : pulled)
        {
            Tally& tally = tallies[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 4096)
            for (std::int64_t local = 0; local < total; ++local) {
                const auto id = static_cast<std::uint32_t>(local);
                const int side = static_cast<int>(id & 1);
                // Only this thread writes this word; the children are read
                // while others are decided, but those become level + 1
                // codes, never the level's own.
                std::uint16_t& word = loaded_.state.words[side][id >> 1];
                const std::uint16_t seen = std::atomic_ref<std::uint16_t>(word).load(std::memory_order_relaxed);
                if (!StateWord::is_open(seen)) continue;
                const std::uint64_t index = first + (id >> 1);
                if (!root_range_inside(index)) continue;
                Position pos;
                Square squares[kMaxTableUnits];
                [[maybe_unused]] const bool ok = moves_.decode(index, static_cast<Color>(side), squares, pos);
                assert(ok);
                StateWord::PullCount children(level);
                moves_.open_children(index, pos, squares, [&](std::uint64_t child) {
                    assert(child >= first && child - first < count);
                    return children.add(load_word(side ^ 1, static_cast<std::uint32_t>(child - first)));
                }, first_tail_unit);
                pulled += static_cast<std::uint64_t>(children.closed()) + children.wins();
                tally.record(StateWord::pull(word, seen, level, children,
                                             [&] { return std::binary_search(late.begin(), late.end(), id); }));
            }
        }
        manifest_.updates_local += pulled;
        out.add(tallies);
    } else {
        (void)level;
        (void)out;
    }
}

template <Ruleset R, TableIndexer Ix>
int OutOfCoreBuilder<R, Ix>::stabilizer_of(std::uint32_t slot) const {
    const auto& list = loaded_.aux.symmetric;
    const auto it = std::lower_bound(list.begin(), list.end(), std::uint64_t{slot} << 3);
    if (it == list.end() || (*it >> 3) != slot) damaged(aux_file(loaded_.chunk), "symmetric flag");
    return static_cast<int>(*it & 7);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::apply(const Update& u, Tally& tally) {
    const auto& late = loaded_.aux.late_losses;
    return apply_to_word(
        loaded_.state.words[u.slot & 1][u.slot >> 1], u.level, u.repeats, u.child,
        [&] { return stabilizer_of(u.slot); }, [&] { return std::binary_search(late.begin(), late.end(), u.slot); },
        tally);
}

template <Ruleset R, TableIndexer Ix>
std::uint64_t OutOfCoreBuilder<R, Ix>::merge(const std::vector<Tally>& tallies, ooc::ChunkEntry& entry) {
    std::uint64_t decided = 0;
    for (const auto& t : tallies) {
        for (std::size_t l = 0; l < t.decided.size(); ++l) {
            if (t.decided[l]) entry.pending[static_cast<int>(l)] += t.decided[l];
            decided += t.decided[l];
        }
    }
    return decided;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::flush_buffers() {
    // Buckets are sorted and encoded on every thread, one bucket each,
    // and appended one at a time.
    std::exception_ptr failure;
    const auto buckets = static_cast<std::int64_t>(buffers_.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < buckets; ++t) {
        auto& buffer = buffers_[static_cast<std::size_t>(t)];
        if (buffer.empty()) continue;
        try {
            const auto frames = ooc::encode_update_frames(buffer);
            buffer.clear();
            buffer.shrink_to_fit();
#pragma omp critical(tbf_bucket_append)
            {
                if (!failure) {
                    try {
                        dir_.append(bucket_file(static_cast<std::uint64_t>(t)), frames);
                        manifest_.chunks[static_cast<std::size_t>(t)].bucket_bytes += frames.size();
                        touched_buckets_.push_back(static_cast<std::uint64_t>(t));
                    } catch (...) {
                        failure = std::current_exception();
                    }
                }
            }
        } catch (...) {
#pragma omp critical(tbf_bucket_append)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
    buffered_ = 0;
}

template <Ruleset R, TableIndexer Ix>
std::uint16_t OutOfCoreBuilder<R, Ix>::chunk_max_code() const {
    // A 6-unit chunk holds 1.5e9 words: scanned by every thread.
    std::uint16_t m = 0;
    for (const auto& side : loaded_.state.words) {
        const auto n = static_cast<std::int64_t>(side.size());
#pragma omp parallel for reduction(max : m) schedule(static)
        for (std::int64_t i = 0; i < n; ++i) m = std::max(m, StateWord::final_code(side[static_cast<std::size_t>(i)]));
    }
    return m;
}

#define TBF_OOC_INSTANTIATE(R)                                                                               \
    template void OutOfCoreBuilder<R, index::Indexer>::initial_chunk(std::uint64_t);                         \
    template void OutOfCoreBuilder<R, index::Indexer>::load(std::uint64_t);                                  \
    template void OutOfCoreBuilder<R, index::Indexer>::visit(std::uint64_t, int, bool);                      \
    template bool OutOfCoreBuilder<R, index::Indexer>::drain_buckets(int);                                   \
    template void OutOfCoreBuilder<R, index::Indexer>::generate(int, Tally&, bool);                          \
    template bool OutOfCoreBuilder<R, index::Indexer>::pulls(int) const;                                     \
    template bool OutOfCoreBuilder<R, index::Indexer>::root_range_inside(std::uint64_t) const;               \
    template void OutOfCoreBuilder<R, index::Indexer>::pull_tails(int, Tally&);                              \
    template int OutOfCoreBuilder<R, index::Indexer>::stabilizer_of(std::uint32_t) const;                    \
    template bool OutOfCoreBuilder<R, index::Indexer>::apply(const Update&, Tally&);                         \
    template std::uint64_t OutOfCoreBuilder<R, index::Indexer>::merge(const std::vector<Tally>&,             \
                                                                      ooc::ChunkEntry&);                     \
    template void OutOfCoreBuilder<R, index::Indexer>::flush_buffers();                                      \
    template std::uint16_t OutOfCoreBuilder<R, index::Indexer>::chunk_max_code() const;
TBF_GEN_FOR_EACH_RULESET(TBF_OOC_INSTANTIATE)
#undef TBF_OOC_INSTANTIATE
}  // namespace tbf::gen
