// The sparse phase of the out-of-core build: the positions still open
// collected into memory, the remaining levels passed there, the values
// written back into the chunk files (out_of_core.hpp, "Sparse phase").

#include <omp.h>

#include <algorithm>
#include <chrono>

#include "instantiate.hpp"
#include "out_of_core.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/base/release.hpp"
#include "tbforge/base/xxh64.hpp"

namespace tbf::gen {

template <Ruleset R, TableIndexer Ix>
std::uint64_t OutOfCoreBuilder<R, Ix>::sparse_size(int level) const {
    std::uint64_t held = manifest_.undecided;
    for (const auto& e : manifest_.chunks) {
        for (const auto& [l, n] : e.pending) held += l >= level ? n : 0;
    }
    return held;
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::sparse_fits(int level) const {
    const std::uint64_t held = sparse_size(level);
    // While most slots are still needed, chunk passes are cheaper: they
    // index the state directly, where the set searches a block per update.
    if (8 * held > 2 * size_) return false;
    // Collecting holds the set and one side of one chunk; the write-back
    // only the words (half of the set) and one whole chunk.
    const std::uint64_t k = manifest_.chunk_slots;
    const std::uint64_t need = std::max(4 * held + 2 * k, 2 * held + 4 * k) + 8 * (sparse_blocks() + 1);
    return need <= options_.state_bytes;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::collect_sparse(int level, bool with_words, std::uint64_t expected) {
    sparse_.offsets.assign(sparse_blocks() + 1, 0);
    sparse_.lows.clear();
    sparse_.words.clear();
    // Reserved, so that growing never holds two copies.
    sparse_.lows.reserve(expected);
    if (with_words) sparse_.words.reserve(expected);
    std::vector<std::uint16_t> words;
    for (int side = 0; side < 2; ++side) {
        for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
            auto& entry = manifest_.chunks[c];
            const std::uint64_t count = chunk_size(c);
            ooc::read_chunk_words(dir_, chunk_file(c, entry.generation), c, count, side, words);
            const std::uint64_t base = static_cast<std::uint64_t>(side) * size_ + first_slot(c);
            std::uint64_t held = 0;
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::uint16_t w = words[i];
                if (!sparse_holds(w, level)) continue;
                const std::uint64_t key = base + i;
                ++sparse_.offsets[(key >> SparseSet::kBlockBits) + 1];
                sparse_.lows.push_back(static_cast<std::uint16_t>(key));
                ++held;
                if (with_words) sparse_.words.push_back(w);
            }
            entry.tracked[static_cast<std::size_t>(side)] = held;
        }
    }
    for (std::size_t b = 1; b < sparse_.offsets.size(); ++b) sparse_.offsets[b] += sparse_.offsets[b - 1];
    // The manifest's counts and the chunks agree (checked on a resume).
    assert(sparse_.lows.size() == expected);
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::load_sparse_lists(int level) {
    sparse_.symmetric.clear();
    sparse_.late_losses.clear();
    sparse_.late_wins.clear();
    for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
        const ooc::ChunkAux aux = ooc::read_aux(dir_, aux_file(c));
        const std::uint64_t count = chunk_size(c);
        auto key_of = [&](std::uint64_t id) {
            if (id >= 2 * count) damaged(aux_file(c), "bad slot");
            return (id & 1) * size_ + first_slot(c) + (id >> 1);
        };
        for (const std::uint64_t s : aux.symmetric) sparse_.symmetric.push_back(key_of(s >> 3) << 3 | (s & 7));
        for (const std::uint32_t id : aux.late_losses) sparse_.late_losses.push_back(key_of(id));
        // Claimed at the start of pass 1.
        if (level <= 1) {
            for (const std::uint32_t id : aux.late_wins) sparse_.late_wins.push_back(key_of(id));
        }
    }
    std::sort(sparse_.symmetric.begin(), sparse_.symmetric.end());
    std::sort(sparse_.late_losses.begin(), sparse_.late_losses.end());
    std::sort(sparse_.late_wins.begin(), sparse_.late_wins.end());
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::count_sparse_pending(int level) {
    sparse_.pending.clear();
    for (const std::uint16_t w : sparse_.words) {
        if (StateWord::is_open(w)) continue;
        const auto l = static_cast<std::size_t>(probe::decode_value(w).dtc);
        if (static_cast<int>(l) < level) continue;
        if (sparse_.pending.size() <= l) sparse_.pending.resize(l + 1);
        ++sparse_.pending[l];
    }
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::enter_sparse(int level) {
    manifest_.sparse_level = level;
    load_sparse_lists(level);
    collect_sparse(level, true, sparse_size(level));
    count_sparse_pending(level);
    // Updates of the last chunk pass still waiting in buckets: level L - 1,
    // as the visits that would have applied them.
    std::vector<Tally> tallies(static_cast<std::size_t>(omp_get_max_threads()));
    for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
        auto& entry = manifest_.chunks[c];
        if (entry.bucket_bytes == 0) continue;
        const std::uint64_t count = chunk_size(c);
        ooc::for_each_update_frame(dir_, bucket_file(c), entry.bucket_bytes, [&](std::span<const Update> updates) {
            for (const Update& u : updates) {
                if (u.slot >= 2 * count || u.level + 1 != level || (u.child & 0x7F) == 0) {
                    damaged(bucket_file(c), "bad update");
                }
            }
            const auto n = static_cast<std::int64_t>(updates.size());
#pragma omp parallel if (n > 8192)
            {
                Tally& tally = tallies[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
                for (std::int64_t k = 0; k < n; ++k) {
                    const Update& u = updates[static_cast<std::size_t>(k)];
                    const std::uint64_t key = (u.slot & 1) * size_ + first_slot(c) + (u.slot >> 1);
                    const std::uint64_t at = sparse_.find(key);
                    if (at != SparseSet::kMissing) sparse_apply(at, key, u.level, u.repeats, u.child, tally);
                }
            }
        });
        entry.bucket_bytes = 0;
    }
    add_sparse_pending(tallies);
    manifest_.phase = ooc::Phase::Sparse;
    manifest_.level = level;
    save_sparse_words(level);
    // The buckets' updates are in the saved words now.
    const bool go_on = checkpoint();
    for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) dir_.truncate(bucket_file(c), 0);
    return go_on;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::save_sparse_words(int level) {
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(sparse_.words.data()),
                                              sparse_.words.size() * sizeof(std::uint16_t));
    dir_.write_atomic(sparse_file(level), bytes, false);
    manifest_.sparse_words = sparse_.words.size();
    manifest_.sparse_checksum = xxh64(bytes);
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::load_sparse_words(int level) {
    const std::string name = sparse_file(level);
    if (dir_.size(name) != manifest_.sparse_words * sizeof(std::uint16_t)) {
        damaged(name, "size");
    }
    sparse_.words.resize(manifest_.sparse_words);
    const std::span<std::uint8_t> bytes(reinterpret_cast<std::uint8_t*>(sparse_.words.data()),
                                        sparse_.words.size() * sizeof(std::uint16_t));
    dir_.read_at(name, 0, bytes);
    if (xxh64(std::span<const std::uint8_t>(bytes)) != manifest_.sparse_checksum) {
        damaged(name, "checksum mismatch");
    }
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::sparse_passes() {
    if (sparse_.offsets.empty()) {
        // Resumed: the keys from the chunks, the words from the last save.
        collect_sparse(manifest_.sparse_level, false, manifest_.sparse_words);
        load_sparse_words(manifest_.level);
        if (sparse_.words.size() != sparse_.lows.size()) {
            damaged(sparse_file(manifest_.level), "entry count");
        }
        load_sparse_lists(manifest_.level);
        count_sparse_pending(manifest_.level);
    }
    const bool every_level = static_cast<bool>(options_.stop_after_step);
    auto last_save = std::chrono::steady_clock::now();
    int saved = manifest_.level;  // the level of the words file the manifest names
    auto save = [&] {
        save_sparse_words(manifest_.level);
        const bool go_on = checkpoint();
        if (saved != manifest_.level) dir_.remove(sparse_file(saved));
        saved = manifest_.level;
        return go_on;
    };
    for (int level = manifest_.level;; ++level) {
        bool work = level <= 1 && !sparse_.late_wins.empty();
        for (std::size_t l = static_cast<std::size_t>(level); l < sparse_.pending.size() && !work; ++l) {
            work = sparse_.pending[l] != 0;
        }
        if (!work) break;
        if (!StateWord::in_range(level)) {
            throw StatusError(Status(StatusCode::ResourceExhausted, "distance to conversion beyond the generator's working range"));
        }
        sparse_pass(level);
        if (progress_) progress_("level", level, 1, 1);
        ++manifest_.passes;
        manifest_.level = level + 1;
        const auto now = std::chrono::steady_clock::now();
        if (every_level || std::chrono::duration<double>(now - last_save).count() >= options_.sparse_save_seconds) {
            last_save = now;
            if (!save()) return false;
        }
    }
    // The final words go back into the chunks, which need no keys.
    release_memory(sparse_.lows);
    release_memory(sparse_.offsets);
    manifest_.phase = ooc::Phase::WriteBack;
    manifest_.next_chunk = 0;
    return save();
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::sparse_pass(int level) {
    const std::uint16_t win_code = StateWord::win(level);
    const std::uint16_t loss_code = StateWord::loss(level);
    const int threads = omp_get_max_threads();
    std::vector<Tally> tallies(static_cast<std::size_t>(threads));
    if (level == 1) {
        // As after the in-RAM level pass 1; updates that reached them first
        // gave the same value, and count-downs skip them (they cannot lose).
        for (const std::uint64_t key : sparse_.late_wins) {
            const std::uint64_t at = sparse_.find(key);
            if (at != SparseSet::kMissing) tallies[0].record(StateWord::claim_win(sparse_.words[at], 2));
        }
        release_memory(sparse_.late_wins);
    }
    const auto l = static_cast<std::size_t>(level);
    const std::uint64_t frontier = l < sparse_.pending.size() ? sparse_.pending[l] : 0;
    const auto blocks = static_cast<std::int64_t>(sparse_blocks());
#pragma omp parallel if (frontier > 256)
    {
        Tally& tally = tallies[static_cast<std::size_t>(omp_get_thread_num())];
        std::vector<std::uint64_t> preds;
#pragma omp for schedule(dynamic, 16)
        for (std::int64_t block = 0; block < blocks; ++block) {
            const std::uint64_t end = sparse_.offsets[static_cast<std::size_t>(block) + 1];
            for (std::uint64_t at = sparse_.offsets[static_cast<std::size_t>(block)]; at < end; ++at) {
                const std::uint16_t v =
                    std::atomic_ref<const std::uint16_t>(sparse_.words[at]).load(std::memory_order_relaxed);
                if (v != win_code && v != loss_code) continue;
                const std::uint64_t key = static_cast<std::uint64_t>(block) << SparseSet::kBlockBits | sparse_.lows[at];
                const int side = key >= size_ ? 1 : 0;
                const std::uint64_t index = key - static_cast<std::uint64_t>(side) * size_;
                const std::uint64_t pred_base = static_cast<std::uint64_t>(side ^ 1) * size_;
                for_each_predecessor(index, side, v == loss_code, preds, [&](std::uint64_t q, int repeats,
                                                                              std::uint8_t child) {
                    const std::uint64_t pred_key = pred_base + q;
                    const std::uint64_t found = sparse_.find(pred_key);
                    if (found != SparseSet::kMissing) sparse_apply(found, pred_key, level, repeats, child, tally);
                });
            }
        }
    }
    if (l < sparse_.pending.size()) sparse_.pending[l] = 0;
    add_sparse_pending(tallies);
}

template <Ruleset R, TableIndexer Ix>
int OutOfCoreBuilder<R, Ix>::sparse_stabilizer(std::uint64_t key) const {
    const auto& list = sparse_.symmetric;
    const auto it = std::lower_bound(list.begin(), list.end(), key << 3);
    if (it == list.end() || (*it >> 3) != key) damaged(sparse_file(manifest_.level), "symmetric flag");
    return static_cast<int>(*it & 7);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::sparse_apply(std::uint64_t entry, std::uint64_t key, int level, int repeats,
                                           std::uint8_t child, Tally& tally) {
    const auto& late = sparse_.late_losses;
    return apply_to_word(
        sparse_.words[entry], level, repeats, child, [&] { return sparse_stabilizer(key); },
        [&] { return std::binary_search(late.begin(), late.end(), key); }, tally);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::write_back() {
    if (sparse_.words.empty() && manifest_.sparse_words != 0) load_sparse_words(manifest_.level);
    if (sparse_.words.size() != manifest_.sparse_words) {
        damaged(sparse_file(manifest_.level), "entry count");
    }
    // The slots come back from the chunks: only the words stay in memory.
    release_memory(sparse_.offsets);
    release_memory(sparse_.lows);
    release_memory(sparse_.symmetric);
    release_memory(sparse_.late_losses);
    release_memory(sparse_.late_wins);
    // Each chunk side's entries are one run of the words: White's chunks
    // first, then Black's.
    std::array<std::uint64_t, 2> first_entry{0, 0};
    for (std::uint64_t c = 0; c < manifest_.next_chunk; ++c) {
        first_entry[0] += manifest_.chunks[c].tracked[0];
        first_entry[1] += manifest_.chunks[c].tracked[1];
    }
    for (const auto& e : manifest_.chunks) first_entry[1] += e.tracked[0];
    ooc::ChunkState& state = loaded_.state;
    for (std::uint64_t c = manifest_.next_chunk; c < manifest_.chunk_count(); ++c) {
        auto& entry = manifest_.chunks[c];
        const std::uint64_t count = chunk_size(c);
        ooc::read_chunk(dir_, chunk_file(c, entry.generation), c, count, state);
        for (int side = 0; side < 2; ++side) {
            const auto s = static_cast<std::size_t>(side);
            const std::uint64_t end = first_entry[s] + entry.tracked[s];
            if (end > sparse_.words.size()) damaged(std::string(ooc::kManifestName), "sparse counts");
            std::uint64_t at = first_entry[s];
            for (auto& w : state.words[s]) {
                if (!sparse_holds(w, manifest_.sparse_level)) continue;
                if (at == end) damaged(chunk_file(c, entry.generation), "sparse slots");
                w = sparse_.words[at++];
            }
            if (at != end) damaged(chunk_file(c, entry.generation), "sparse slots");
            first_entry[s] = end;
        }
        const std::uint64_t old_generation = entry.generation;
        entry.max_code = chunk_max_code();
        ++entry.generation;
        ooc::write_chunk(dir_, chunk_file(c, entry.generation), c, state);
        if (progress_) progress_("write", -1, c + 1, manifest_.chunk_count());
        manifest_.next_chunk = c + 1;
        if (!checkpoint(~std::uint64_t{0}, c, old_generation)) return false;
    }
    manifest_.phase = ooc::Phase::Finished;
    const bool go_on = checkpoint();
    dir_.remove(sparse_file(manifest_.level));
    sparse_ = SparseSet();
    return go_on;
}

#define TBF_OOC_INSTANTIATE(R)                                                                               \
    template std::uint64_t OutOfCoreBuilder<R, index::Indexer>::sparse_size(int) const;                      \
    template bool OutOfCoreBuilder<R, index::Indexer>::sparse_fits(int) const;                               \
    template void OutOfCoreBuilder<R, index::Indexer>::collect_sparse(int, bool, std::uint64_t);             \
    template void OutOfCoreBuilder<R, index::Indexer>::load_sparse_lists(int);                               \
    template void OutOfCoreBuilder<R, index::Indexer>::count_sparse_pending(int);                            \
    template bool OutOfCoreBuilder<R, index::Indexer>::enter_sparse(int);                                    \
    template void OutOfCoreBuilder<R, index::Indexer>::save_sparse_words(int);                               \
    template void OutOfCoreBuilder<R, index::Indexer>::load_sparse_words(int);                               \
    template bool OutOfCoreBuilder<R, index::Indexer>::sparse_passes();                                      \
    template void OutOfCoreBuilder<R, index::Indexer>::sparse_pass(int);                                     \
    template int OutOfCoreBuilder<R, index::Indexer>::sparse_stabilizer(std::uint64_t) const;                \
    template bool OutOfCoreBuilder<R, index::Indexer>::sparse_apply(std::uint64_t, std::uint64_t, int, int,  \
                                                                    std::uint8_t, Tally&);                   \
    template bool OutOfCoreBuilder<R, index::Indexer>::write_back();
TBF_GEN_FOR_EACH_RULESET(TBF_OOC_INSTANTIATE)
#undef TBF_OOC_INSTANTIATE
}  // namespace tbf::gen
