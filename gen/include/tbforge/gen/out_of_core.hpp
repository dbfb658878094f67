#pragma once
// Out-of-core retrograde analysis of one table (DESIGN.md section 6,
// docs/generation.md "Out-of-core"): the same passes as RetrogradeBuilder,
// with the working state kept in chunk files of a work directory and only
// one chunk in memory at a time.
//
// A chunk is a contiguous range of slots, both sides to move. Level pass L
// visits the chunks in order; a visit loads the chunk, applies the updates
// waiting in its bucket (in the order they were sent, which is by level),
// claims the late wins (pass 1), then generates the predecessors of the
// chunk's positions decided at distance L. Updates for the chunk itself are
// applied at once; updates for other chunks are buffered per target chunk and
// appended to its bucket, to be applied when that chunk is next visited:
// later in the same pass, or early in the next one (before the chunk
// generates anything, so every level's updates land before the next level's).
// Within a level, updates commute (claims from undecided, count-downs), so the
// values are those of the in-RAM builder for any chunk size and thread count.
// The positions decided at distance L are found by their value, so no
// frontier lists are stored; per chunk the manifest only counts them by level
// so that chunks without work are skipped.
//
// Sparse phase: after the first levels, which decide most positions, few
// stay open, yet a chunk pass would still read and rewrite every chunk for
// each of the remaining levels (up to the table's longest DTC). As soon as
// the positions still open or waiting to generate fit the budget at 4 bytes
// each, they are collected into memory (sorted per block of 2^16 keys: the
// low 16 bits of each key and a 16-bit word, a final code or an open
// counter), the buckets are applied to them, and every later level is a push
// pass inside that set; one last pass writes the values back into the chunk
// files. The set is saved every few minutes (every level when a test stops
// builds) as one words file; the keys are found again from the chunk files.
//
// Restart: after each chunk of each pass the manifest records the chunk
// files' generations and the valid length of each bucket; a restarted build
// cuts the buckets back, removes files the manifest does not name and goes
// on with the next chunk. All chess logic is TableMoves', shared with the
// in-RAM builder.

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tbforge/gen/table_moves.hpp"
#include "tbforge/gen/work_files.hpp"
#include "tbforge/storage/checksum.hpp"

namespace tbf::gen {

struct OutOfCoreOptions {
    std::string work_dir;            // this table's own directory (created, removed by remove_work())
    std::string table;               // table name, recorded in the manifest
    std::string generator_version;   // recorded in the manifest
    std::uint64_t state_bytes = 0;   // budget for the chunk in memory and the update buffers
    bool durable = true;             // fsync work files (see ooc::WorkDir)
    // Called after every completed step (one chunk of one pass); returning
    // true stops the build there, as a killed process would. For tests.
    std::function<bool()> stop_after_step;
    // Non-empty once a sub-table read has failed: the step is then not
    // recorded (its values may be wrong) and build() throws.
    std::function<std::string()> child_error;
    // Seconds between saves of the sparse phase's state (always after every
    // level when stop_after_step is set).
    double sparse_save_seconds = 300;
    // Bucket bytes on disk beyond which every waiting bucket is applied at
    // once; 0: a third of the work disk's free space at the start.
    std::uint64_t bucket_bytes = 0;
};

struct OutOfCoreReport {
    std::uint64_t chunks = 0;
    std::uint64_t chunk_slots = 0;
    std::uint64_t positions = 0;  // valid positions, both sides
    std::uint64_t passes = 0;
    std::uint64_t updates_local = 0;  // predecessor visits inside the visiting chunk
    std::uint64_t updates_cross = 0;  // visits sent to another chunk's bucket
    ooc::IoCounters io;               // work-file bytes, all runs of this table
    bool resumed = false;             // a manifest of an earlier run was found
    int sparse_level = -1;            // first level passed in memory, -1 if none
    std::uint64_t split_visits = 0;   // chunk visits of this run that split their pass
    // Seconds of this run (not of runs before a restart) per phase.
    double initial_seconds = 0, chunk_level_seconds = 0, sparse_seconds = 0, write_back_seconds = 0;

    double crossing_fraction() const {
        const std::uint64_t all = updates_local + updates_cross;
        return all ? static_cast<double>(updates_cross) / static_cast<double>(all) : 0.0;
    }
};

// Working memory per slot of a chunk: 2 words (4 bytes) plus, at most, a
// quarter byte of auxiliary lists; a quarter of the budget is kept for
// update buffers: slots = budget * 3/4 / 4.25.
inline std::uint64_t chunk_slots_for(std::uint64_t state_bytes, std::uint64_t index_size) {
    constexpr std::uint64_t kMinSlots = 1024;
    constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << 30;  // local packed ids fit 32 bits
    const std::uint64_t slots = std::clamp(state_bytes / 17 * 3, kMinSlots, kMaxSlots);
    return std::max<std::uint64_t>(1, std::min(slots, index_size));
}

template <Ruleset R, TableIndexer Ix>
class OutOfCoreBuilder {
public:
    using ChildValue = std::function<probe::Value(const Position&)>;
    using Progress = std::function<void(const char* pass, int level, std::uint64_t done,
                                        std::uint64_t total)>;

    OutOfCoreBuilder(const Ix& indexer, ChildValue child_value, OutOfCoreOptions options,
                     Progress progress = {})
        : moves_(indexer, std::move(child_value)),
          options_(std::move(options)),
          progress_(std::move(progress)),
          dir_(options_.work_dir, io_, options_.durable) {}

    // Runs the passes, resuming from the work directory's manifest if it
    // belongs to this table and layout (otherwise the directory is cleared).
    // False if stopped by the test hook. Throws ooc::WorkError.
    bool build();

    // Largest final value code (after build()).
    std::uint16_t max_code() const {
        std::uint16_t m = 0;
        for (const auto& c : manifest_.chunks) m = std::max(m, c.max_code);
        return m;
    }

    // Final values in slot order, White to move first: sink(side, first
    // index, span of codes). Throws ooc::WorkError.
    template <class Sink>
    void stream_values(Sink&& sink) {
        std::vector<std::uint16_t> values;
        for (int side = 0; side < 2; ++side) {
            for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
                ooc::read_chunk_words(dir_, chunk_file(c, manifest_.chunks[c].generation), c, chunk_size(c),
                                      side, values);
                for (auto& v : values) v = final_code(v);
                // Pieces keep the consumer's own buffers small.
                constexpr std::size_t kPiece = 1 << 16;
                const std::span<const std::uint16_t> all(values);
                for (std::size_t at = 0; at < all.size(); at += kPiece) {
                    sink(static_cast<Color>(side), first_slot(c) + at,
                         all.subspan(at, std::min(kPiece, all.size() - at)));
                }
            }
        }
    }

    OutOfCoreReport report() const {
        OutOfCoreReport r;
        r.chunks = manifest_.chunk_count();
        r.chunk_slots = manifest_.chunk_slots;
        r.positions = manifest_.valid_positions;
        r.passes = manifest_.passes;
        r.updates_local = manifest_.updates_local;
        r.updates_cross = manifest_.updates_cross;
        r.io = io_;
        r.resumed = resumed_;
        r.sparse_level = manifest_.sparse_level;
        r.split_visits = split_visits_;
        r.initial_seconds = seconds_[0];
        r.chunk_level_seconds = seconds_[1];
        r.sparse_seconds = seconds_[2];
        r.write_back_seconds = seconds_[3];
        return r;
    }

    // Deletes the table's work directory (after the table is committed).
    void remove_work() { dir_.remove_all(); }

private:
    using Update = ooc::Update;

    // The chunk in memory with its fixed lists.
    struct Loaded {
        std::uint64_t chunk = 0;
        ooc::ChunkState state;
        ooc::ChunkAux aux;
    };

    // Per-thread tallies of one parallel loop.
    struct Tally {
        std::vector<std::uint64_t> decided;  // by level
        std::uint64_t applied = 0;           // updates that changed the state
        void decide(int level) {
            if (decided.size() <= static_cast<std::size_t>(level)) decided.resize(level + 1);
            ++decided[level];
        }
        void add(const std::vector<Tally>& others) {
            for (const auto& t : others) {
                if (decided.size() < t.decided.size()) decided.resize(t.decided.size());
                for (std::size_t l = 0; l < t.decided.size(); ++l) decided[l] += t.decided[l];
                applied += t.applied;
            }
        }
    };

    static std::uint16_t final_code(std::uint16_t v) {
        return v == detail::kInvalid || v == detail::kDrawFinal || detail::is_open_word(v) ? 0 : v;
    }
    static std::string chunk_file(std::uint64_t c, std::uint64_t generation) {
        return "chunk-" + std::to_string(c) + "." + std::to_string(generation);
    }
    static std::string aux_file(std::uint64_t c) { return "aux-" + std::to_string(c); }
    static std::string bucket_file(std::uint64_t c) { return "bucket-" + std::to_string(c); }
    static std::string sparse_file(int level) { return "sparse-" + std::to_string(level); }

    std::uint64_t first_slot(std::uint64_t c) const { return c * manifest_.chunk_slots; }
    std::uint64_t chunk_size(std::uint64_t c) const {
        return std::min(manifest_.chunk_slots, size_ - first_slot(c));
    }

    void start_over();
    void resume();
    void initial_chunk(std::uint64_t c);
    bool has_work(std::uint64_t c, int level) const;
    bool any_work(int level) const;
    // Applies the chunk's bucket, then (unless `apply_only`) claims its late
    // wins and generates from its positions decided at `level`.
    void visit(std::uint64_t c, int level, bool apply_only = false);
    // Applies every waiting bucket, so that the disk holds at most
    // bucket_limit_ bytes of them.
    bool drain_buckets(int level);
    void load(std::uint64_t c);
    void apply_bucket(std::uint64_t c);
    // Pushes from the chunk's positions decided at `level`; with `split`,
    // only the moves pull_tails() does not count.
    void generate(int level, Tally& tally_out, bool split = false);
    // Pull passes need the root ranges of the index and legal quiet moves.
    static constexpr bool kCanPull = RootedIndexer<Ix> && !R::kRoyalKing;
    // Whether the chunk's pass at `level` pulls: its positions decided at
    // `level` are at least half as many as its open ones (as in RAM).
    bool pulls(int level) const;
    // Whether a slot's root range lies inside the loaded chunk: the tail
    // moves of its positions then stay in the chunk.
    bool root_range_inside(std::uint64_t index) const;
    // The other half of a split pass: open positions whose root range lies
    // inside the chunk read the children of their tail moves.
    void pull_tails(int level, Tally& tally_out);
    bool apply(const Update& u, Tally& tally);
    int stabilizer_of(std::uint32_t slot) const;
    // Adds the tallies' decisions to the chunk's pending levels; returns how many.
    std::uint64_t merge(const std::vector<Tally>& tallies, ooc::ChunkEntry& entry);
    void flush_buffers();
    std::uint16_t chunk_max_code() const;
    // Writes the manifest, then removes what it no longer names; false if the
    // test hook asks to stop.
    bool checkpoint(std::uint64_t consumed_bucket = ~std::uint64_t{0}, std::uint64_t old_generation_of = ~std::uint64_t{0},
                    std::uint64_t old_generation = 0);

    std::uint16_t load_word(int side, std::uint32_t i) const {
        return std::atomic_ref<const std::uint16_t>(loaded_.state.words[side][i]).load(std::memory_order_relaxed);
    }
    // Decides an open word; false if it was decided already.
    static bool claim(std::uint16_t& target, std::uint16_t value) {
        std::atomic_ref<std::uint16_t> word(target);
        std::uint16_t seen = word.load(std::memory_order_relaxed);
        while (detail::is_open_word(seen)) {
            if (word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) return true;
        }
        return false;
    }
    // One update on one word, of the chunk in memory or of the sparse set:
    // the same steps as RetrogradeBuilder::level_pass for one predecessor. A
    // compare-and-swap settles races between claims and count-downs.
    // stabilizer() is asked only for flagged words, late_loss() only when
    // the count reaches zero.
    template <class Stabilizer, class LateLoss>
    static bool apply_to_word(std::uint16_t& target, int level, int repeats, std::uint8_t child,
                              Stabilizer&& stabilizer, LateLoss&& late_loss, Tally& tally);

    // ---- Sparse phase ----
    // Keys are side * index size + index, so that one side's values of a
    // chunk can be collected alone.
    struct SparseSet {
        static constexpr int kBlockBits = 16;
        static constexpr std::uint64_t kMissing = ~std::uint64_t{0};
        std::vector<std::uint64_t> offsets;  // per block of keys: its first entry (one more at the end)
        std::vector<std::uint16_t> lows;     // keys' low bits, ascending within a block
        std::vector<std::uint16_t> words;    // chunk words (work_files.hpp): a final code or an open counter
        std::vector<std::uint64_t> pending;  // per level: entries decided there, not yet generated
        std::vector<std::uint64_t> symmetric;    // key << 3 | stabiliser size, sorted
        std::vector<std::uint64_t> late_losses;  // keys, sorted
        std::vector<std::uint64_t> late_wins;    // keys, sorted (only before pass 1)

        std::uint64_t find(std::uint64_t key) const {
            const std::uint64_t block = key >> kBlockBits;
            const auto begin = lows.begin() + static_cast<std::ptrdiff_t>(offsets[block]);
            const auto end = lows.begin() + static_cast<std::ptrdiff_t>(offsets[block + 1]);
            const auto low = static_cast<std::uint16_t>(key);
            const auto it = std::lower_bound(begin, end, low);
            return it != end && *it == low ? static_cast<std::uint64_t>(it - lows.begin()) : kMissing;
        }
    };
    // Whether the sparse phase begun at `level` holds a slot whose chunk
    // word is `word`: open, or decided at `level` or later (written back,
    // the same slots again).
    static bool sparse_holds(std::uint16_t word, int level) {
        if (detail::is_open_word(word)) return true;
        if (word == detail::kInvalid || word == detail::kDrawFinal) return false;
        return probe::decode_value(word).dtc >= level;
    }
    std::uint64_t sparse_blocks() const {
        return (2 * size_ + (1u << SparseSet::kBlockBits) - 1) >> SparseSet::kBlockBits;
    }
    [[noreturn]] void damaged(const std::string& name, const char* what) const {
        throw ooc::WorkError("damaged work file " + dir_.file(name) + " (" + what + ")");
    }
    // Slots the sparse phase begun at `level` holds: open, or decided at
    // `level` or later.
    std::uint64_t sparse_size(int level) const;
    bool sparse_fits(int level) const;
    // Collects the set from the chunks, applies the buckets, saves it.
    bool enter_sparse(int level);
    // Keys (and, with `words`, the words: load_sparse_lists first) of the
    // slots the phase begun at `level` holds; fills the chunks' tracked counts.
    void collect_sparse(int level, bool words, std::uint64_t expected);
    void load_sparse_lists(int level);
    void count_sparse_pending(int level);
    // Un-moves from a position decided at some level (its code a loss when
    // `loss`): calls f(predecessor slot, repeats, child byte of an Update)
    // once per distinct predecessor.
    template <class F>
    void for_each_predecessor(std::uint64_t index, int side, bool loss, std::vector<std::uint64_t>& preds,
                              F&& f, int units_end = kMaxTableUnits) const {
        Position pos;
        Square squares[kMaxTableUnits];
        [[maybe_unused]] const bool ok = moves_.decode(index, static_cast<Color>(side), squares, pos);
        assert(ok);
        moves_.predecessors(index, pos, squares, preds, true, units_end);
        const int stab_w = moves_.has_symmetries() ? moves_.stabilizer(pos) : 1;
        const auto child = static_cast<std::uint8_t>((loss ? ooc::kLossChild : 0) | stab_w);
        for (std::size_t at = 0; at < preds.size();) {
            std::size_t repeats = 1;
            while (at + repeats < preds.size() && preds[at + repeats] == preds[at]) ++repeats;
            f(preds[at], static_cast<int>(repeats), child);
            at += repeats;
        }
    }
    // Moves of a predecessor closed by `repeats` un-moves from a won child
    // whose stabiliser is in `child` (retrograde.hpp, "Symmetry").
    static std::uint8_t closed_moves(int repeats, int stabilizer, std::uint8_t child) {
        return static_cast<std::uint8_t>(static_cast<std::size_t>(repeats) * static_cast<std::size_t>(stabilizer) /
                                         static_cast<std::size_t>(child & 0x7F));
    }
    void add_sparse_pending(const std::vector<Tally>& tallies) {
        for (const auto& t : tallies) {
            if (sparse_.pending.size() < t.decided.size()) sparse_.pending.resize(t.decided.size());
            for (std::size_t d = 0; d < t.decided.size(); ++d) sparse_.pending[d] += t.decided[d];
        }
    }
    bool sparse_passes();
    void sparse_pass(int level);
    bool sparse_apply(std::uint64_t entry, std::uint64_t key, int level, int repeats, std::uint8_t child,
                      Tally& tally);
    int sparse_stabilizer(std::uint64_t key) const;
    void save_sparse_words(int level);
    void load_sparse_words(int level);
    bool write_back();

    TableMoves<R, Ix> moves_;
    OutOfCoreOptions options_;
    Progress progress_;
    ooc::IoCounters io_;
    ooc::WorkDir dir_;
    ooc::Manifest manifest_;
    std::uint64_t size_ = 0;
    bool resumed_ = false;
    Loaded loaded_;
    std::uint64_t loaded_frontier_ = 0;  // positions the current visit generates from
    // Updates for other chunks, waiting to be appended to their buckets.
    std::vector<std::vector<Update>> buffers_;
    std::uint64_t buffered_ = 0;
    std::uint64_t buffer_limit_ = 0;  // updates
    std::uint64_t bucket_limit_ = 0;  // bytes on disk
    std::vector<std::uint64_t> touched_buckets_;  // appended since the last checkpoint
    SparseSet sparse_;
    std::array<double, 4> seconds_{};  // initial, chunk levels, sparse, write-back
    std::uint64_t split_visits_ = 0;
};

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
    buffers_ = {};
    sparse_ = SparseSet();
    return true;
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::resume() {
    const std::uint64_t chunks = manifest_.chunk_count();
    if (chunks != (size_ + manifest_.chunk_slots - 1) / manifest_.chunk_slots) {
        throw ooc::WorkError("damaged work file " + dir_.file(ooc::kManifestName) + " (chunk count)");
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
            state.words[side][i] =
                s.value != detail::kUndecided
                    ? s.value
                    : static_cast<std::uint16_t>(detail::kOpenWord | (s.stabilizer > 1 ? detail::kSymmetricWord : 0) | s.open);
            valid += s.value != detail::kInvalid;
            undecided += s.value == detail::kUndecided;
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
            if (id >= 2 * count) throw ooc::WorkError("damaged work file " + dir_.file(aux_file(c)) + " (bad slot)");
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
        if (detail::is_open_word(w)) continue;
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
                    throw ooc::WorkError("damaged work file " + dir_.file(bucket_file(c)) + " (bad update)");
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
    manifest_.sparse_checksum = storage::xxh64(bytes);
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
    if (storage::xxh64(std::span<const std::uint8_t>(bytes)) != manifest_.sparse_checksum) {
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
        if (probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(level + 2)}) >= detail::kOpenWord) {
            throw ooc::WorkError("distance to conversion beyond the generator's working range");
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
    sparse_.lows = {};
    sparse_.offsets = {};
    manifest_.phase = ooc::Phase::WriteBack;
    manifest_.next_chunk = 0;
    return save();
}

template <Ruleset R, TableIndexer Ix>
void OutOfCoreBuilder<R, Ix>::sparse_pass(int level) {
    const std::uint16_t win_code = probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(level)});
    const std::uint16_t loss_code = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(level)});
    const int threads = omp_get_max_threads();
    std::vector<Tally> tallies(static_cast<std::size_t>(threads));
    if (level == 1) {
        // As after the in-RAM level pass 1; updates that reached them first
        // gave the same value, and count-downs skip them (they cannot lose).
        const std::uint16_t win2 = probe::encode_value({Wdl::Win, 2});
        for (const std::uint64_t key : sparse_.late_wins) {
            const std::uint64_t at = sparse_.find(key);
            if (at == SparseSet::kMissing || !detail::is_open_word(sparse_.words[at])) continue;
            sparse_.words[at] = win2;
            tallies[0].decide(2);
        }
        sparse_.late_wins = {};
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
template <class Stabilizer, class LateLoss>
bool OutOfCoreBuilder<R, Ix>::apply_to_word(std::uint16_t& target, int level, int repeats, std::uint8_t child,
                                            Stabilizer&& stabilizer, LateLoss&& late_loss, Tally& tally) {
    std::atomic_ref<std::uint16_t> word(target);
    const auto next = static_cast<std::uint16_t>(level + 1);
    std::uint16_t seen = word.load(std::memory_order_relaxed);
    if (child & ooc::kLossChild) {
        if (!claim(target, probe::encode_value({Wdl::Win, next}))) return false;
        tally.decide(next);
        ++tally.applied;
        return true;
    }
    if (!detail::is_open_word(seen)) return false;
    // The flag stays while the word is open: one look-up, outside the retries.
    const std::uint8_t closed =
        closed_moves(repeats, (seen & detail::kSymmetricWord) ? stabilizer() : 1, child);
    while (detail::is_open_word(seen)) {
        const auto open = static_cast<std::uint8_t>(seen & 0xFF);
        if (open == detail::kCannotLose) return false;
        const auto left = static_cast<std::uint8_t>(open - closed);
        int distance = next;
        std::uint16_t result = static_cast<std::uint16_t>((seen & ~std::uint16_t{0xFF}) | left);
        if (left == 0) {
            if (distance < 2 && late_loss()) distance = 2;
            result = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(distance)});
        }
        if (word.compare_exchange_weak(seen, result, std::memory_order_relaxed)) {
            ++tally.applied;
            if (left == 0) tally.decide(distance);
            return true;
        }
    }
    return false;
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::write_back() {
    if (sparse_.words.empty() && manifest_.sparse_words != 0) load_sparse_words(manifest_.level);
    if (sparse_.words.size() != manifest_.sparse_words) {
        damaged(sparse_file(manifest_.level), "entry count");
    }
    // The slots come back from the chunks: only the words stay in memory.
    sparse_.offsets = {};
    sparse_.lows = {};
    sparse_.symmetric = {};
    sparse_.late_losses = {};
    sparse_.late_wins = {};
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
                    throw ooc::WorkError("damaged work file " + dir_.file(bucket_file(c)) + " (bad update)");
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
        const std::uint16_t win2 = probe::encode_value({Wdl::Win, 2});
        for (const std::uint32_t id : loaded_.aux.late_wins) {
            if (claim(loaded_.state.words[id & 1][id >> 1], win2)) tallies[0].decide(2);
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
    const std::uint16_t win_code = probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(level)});
    const std::uint16_t loss_code = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(level)});
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
            for (std::int64_t i = 0; i < n; ++i) open += detail::is_open_word(side[static_cast<std::size_t>(i)]);
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
        const std::uint16_t win_code = probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(level)});
        const std::uint16_t loss_code = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(level)});
        const auto next = static_cast<std::uint16_t>(level + 1);
        const std::uint16_t win_next = probe::encode_value({Wdl::Win, next});
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
                std::atomic_ref<std::uint16_t> word(loaded_.state.words[side][id >> 1]);
                const std::uint16_t seen = word.load(std::memory_order_relaxed);
                if (!detail::is_open_word(seen)) continue;
                const std::uint64_t index = first + (id >> 1);
                if (!root_range_inside(index)) continue;
                Position pos;
                Square squares[kMaxTableUnits];
                [[maybe_unused]] const bool ok = moves_.decode(index, static_cast<Color>(side), squares, pos);
                assert(ok);
                bool wins = false;
                int closed = 0;
                moves_.open_children(index, pos, squares, [&](std::uint64_t child) {
                    assert(child >= first && child - first < count);
                    const std::uint16_t code = load_word(side ^ 1, static_cast<std::uint32_t>(child - first));
                    wins = code == loss_code;
                    closed += code == win_code;
                    return !wins;
                }, first_tail_unit);
                pulled += static_cast<std::uint64_t>(closed) + wins;
                if (wins) {
                    word.store(win_next, std::memory_order_relaxed);
                    tally.decide(next);
                    ++tally.applied;
                    continue;
                }
                const auto open = static_cast<std::uint8_t>(seen & 0xFF);
                if (closed == 0 || open == detail::kCannotLose) continue;
                ++tally.applied;
                if (closed != open) {
                    word.store(static_cast<std::uint16_t>(seen - closed), std::memory_order_relaxed);
                    continue;
                }
                int distance = next;
                if (distance < 2 && std::binary_search(late.begin(), late.end(), id)) distance = 2;
                word.store(probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(distance)}),
                           std::memory_order_relaxed);
                tally.decide(distance);
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
        for (std::int64_t i = 0; i < n; ++i) m = std::max(m, final_code(side[static_cast<std::size_t>(i)]));
    }
    return m;
}

template <Ruleset R, TableIndexer Ix>
bool OutOfCoreBuilder<R, Ix>::checkpoint(std::uint64_t consumed_bucket, std::uint64_t old_generation_of,
                                         std::uint64_t old_generation) {
    if (options_.child_error) {
        if (std::string error = options_.child_error(); !error.empty()) throw ooc::WorkError(error);
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

}  // namespace tbf::gen
