// The out-of-core build as a sequence of recorded steps: the driver over
// its phases, resuming from the manifest, and the checkpoint after each step
// (out_of_core.hpp, "Restart").

#include <algorithm>
#include <chrono>

#include "instantiate.hpp"
#include "out_of_core.hpp"
#include "tbforge/base/release.hpp"
#include "tbforge/index/indexer.hpp"

namespace tbf::gen {

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::build() {
    size_ = moves_.indexer().size();
    const std::uint64_t chunk_slots = chunk_slots_for(options_.state_bytes, size_);
    buffer_limit_ = std::max<std::uint64_t>(512, options_.state_bytes / 4 / sizeof(Update));
    dir_.create();
    bucket_limit_ = options_.bucket_bytes ? options_.bucket_bytes
                                          : std::max(options_.state_bytes, dir_.free_bytes() / 3);
    auto existing = ooc::read_manifest(dir_);
    if (existing && existing->format == ooc::Manifest::kFormat && existing->table == options_.table &&
        existing->generator_version == options_.generator_version &&
        existing->index_size == size_ && existing->chunk_slots == chunk_slots) {
        manifest_ = std::move(*existing);
        io_ = manifest_.io;
        resumed_ = true;
        resume();
    } else {
        // Nothing, or the state of another table, generator or chunk layout.
        dir_.remove_all();
        dir_.create();
        manifest_ = ooc::Manifest();
        manifest_.generator_version = options_.generator_version;
        manifest_.table = options_.table;
        manifest_.index_size = size_;
        manifest_.chunk_slots = chunk_slots;
        manifest_.chunks.resize((size_ + chunk_slots - 1) / chunk_slots);
    }
    buffers_.assign(manifest_.chunk_count(), {});
    auto clock = std::chrono::steady_clock::now();
    auto lap = [&](std::size_t phase) {
        const auto now = std::chrono::steady_clock::now();
        seconds_[phase] += std::chrono::duration<double>(now - clock).count();
        clock = now;
    };

    while (manifest_.phase == ooc::Phase::Initial) {
        const std::uint64_t c = manifest_.next_chunk;
        initial_chunk(c);
        if (progress_) progress_("init", -1, first_slot(c) + chunk_size(c), size_);
        ++manifest_.next_chunk;
        if (manifest_.next_chunk == manifest_.chunk_count()) {
            manifest_.phase = ooc::Phase::Levels;
            manifest_.level = 0;
            manifest_.next_chunk = 0;
            manifest_.passes = 1;
        }
        if (!checkpoint()) return false;
    }
    lap(0);
    while (manifest_.phase == ooc::Phase::Levels) {
        const int level = manifest_.level;
        if (manifest_.next_chunk == 0 && !any_work(level)) {
            manifest_.phase = ooc::Phase::Finished;
            if (!checkpoint()) return false;
            break;
        }
        if (manifest_.next_chunk == 0 && sparse_fits(level)) {
            if (!enter_sparse(level)) return false;
            break;
        }
        for (std::uint64_t c = manifest_.next_chunk; c < manifest_.chunk_count(); ++c) {
            if (!has_work(c, level)) continue;
            const std::uint64_t old_generation = manifest_.chunks[c].generation;
            visit(c, level);
            if (progress_) progress_("level", level, c + 1, manifest_.chunk_count());
            manifest_.next_chunk = c + 1;
            if (!checkpoint(c, c, old_generation)) return false;
            if (!drain_buckets(level)) return false;
        }
        manifest_.level = level + 1;
        manifest_.next_chunk = 0;
        ++manifest_.passes;
        if (!checkpoint()) return false;
    }
    lap(1);
    if (manifest_.phase == ooc::Phase::Sparse && !sparse_passes()) return false;
    lap(2);
    if (manifest_.phase == ooc::Phase::WriteBack && !write_back()) return false;
    lap(3);
    loaded_ = Loaded();
    release_memory(buffers_);
    sparse_ = SparseSet();
    return true;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::resume() {
    const std::uint64_t chunks = manifest_.chunk_count();
    if (chunks != (size_ + manifest_.chunk_slots - 1) / manifest_.chunk_slots) {
        damaged(ooc::kManifestName, "chunk count");
    }
    // Files of a step that did not complete: temporaries, chunk generations
    // the manifest does not name, auxiliary files of chunks not yet started.
    for (const auto& name : dir_.list()) {
        if (name == ooc::kManifestName) continue;
        bool keep = false;
        for (std::uint64_t c = 0; c < chunks && !keep; ++c) {
            const auto& e = manifest_.chunks[c];
            keep = (e.generation != 0 && name == chunk_file(c, e.generation)) ||
                   (e.generation != 0 && name == aux_file(c)) || name == bucket_file(c);
        }
        if ((manifest_.phase == ooc::Phase::Sparse || manifest_.phase == ooc::Phase::WriteBack) &&
            name == sparse_file(manifest_.level)) {
            keep = true;
        }
        if (!keep) dir_.remove(name);
    }
    // Updates appended after the last completed step are sent again.
    for (std::uint64_t c = 0; c < chunks; ++c) dir_.truncate(bucket_file(c), manifest_.chunks[c].bucket_bytes);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::checkpoint(std::uint64_t consumed_bucket, std::uint64_t old_generation_of,
                                         std::uint64_t old_generation) {
    if (options_.child_error) {
        if (std::string error = options_.child_error(); !error.empty()) throw StatusError(io_error(error));
    }
    std::sort(touched_buckets_.begin(), touched_buckets_.end());
    touched_buckets_.erase(std::unique(touched_buckets_.begin(), touched_buckets_.end()), touched_buckets_.end());
    // fsync costs tens of milliseconds on some disks: past a few files, one
    // file-system sync is cheaper than one per bucket.
    if (touched_buckets_.size() > 2) {
        dir_.sync_all();
    } else {
        for (const std::uint64_t t : touched_buckets_) dir_.sync(bucket_file(t));
    }
    touched_buckets_.clear();
    manifest_.io = io_;
    ooc::write_manifest(dir_, manifest_);
    // Only now may the previous state go: a restart before this point
    // resumes from the previous manifest, which names it.
    if (consumed_bucket < manifest_.chunk_count()) dir_.truncate(bucket_file(consumed_bucket), 0);
    if (old_generation_of < manifest_.chunk_count() && old_generation != 0 &&
        old_generation != manifest_.chunks[old_generation_of].generation) {
        dir_.remove(chunk_file(old_generation_of, old_generation));
    }
    return !(options_.stop_after_step && options_.stop_after_step());
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::has_work(std::uint64_t c, int level) const {
    const auto& e = manifest_.chunks[c];
    return e.pending.count(level) || e.bucket_bytes > 0 || (level == 1 && e.late_wins > 0);
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::any_work(int level) const {
    // Late wins keep passes 0 to 2 alive, as in the in-RAM builder.
    for (const auto& e : manifest_.chunks) {
        if (!e.pending.empty() || e.bucket_bytes > 0 || (level <= 1 && e.late_wins > 0)) return true;
    }
    return false;
}

// Every member defined above or inside the class, for each ruleset.
#define TBF_OOC_INSTANTIATE(R) template class OutOfCoreBuilder<R, index::Indexer>;
TBF_GEN_FOR_EACH_RULESET(TBF_OOC_INSTANTIATE)
#undef TBF_OOC_INSTANTIATE
}  // namespace tbf::gen
