#pragma once
// Out-of-core retrograde analysis of one table (docs/ARCHITECTURE.md section 6,
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
//
// Files: this header declares the builder; its members are defined, and
// instantiated for each ruleset, by concept: ooc_manifest.cpp (the phases as
// recorded steps, resume, checkpoints), ooc_chunk_passes.cpp (initial and
// level passes over chunks, buckets, split passes), ooc_sparse.cpp (the
// sparse phase and the write-back); the files themselves are work_files.hpp's.

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "table_moves.hpp"
#include "work_files.hpp"

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

    OutOfCoreBuilder(const Ix& indexer, ChildValue child_value, OutOfCoreOptions options,
                     BuildProgress progress = {})
        : moves_(indexer, std::move(child_value)),
          options_(std::move(options)),
          progress_(std::move(progress)),
          dir_(options_.work_dir, io_, options_.durable) {}

    // Runs the passes, resuming from the work directory's manifest if it
    // belongs to this table and layout (otherwise the directory is cleared).
    // False if stopped by the test hook. Throws StatusError.
    bool build();

    // Largest final value code (after build()).
    std::uint16_t max_code() const {
        std::uint16_t m = 0;
        for (const auto& c : manifest_.chunks) m = std::max(m, c.max_code);
        return m;
    }

    // Final values in slot order, White to move first: sink(side, first
    // index, span of codes). Throws StatusError.
    template <class Sink>
    void stream_values(Sink&& sink) {
        std::vector<std::uint16_t> values;
        for (int side = 0; side < 2; ++side) {
            for (std::uint64_t c = 0; c < manifest_.chunk_count(); ++c) {
                ooc::read_chunk_words(dir_, chunk_file(c, manifest_.chunks[c].generation), c, chunk_size(c),
                                      side, values);
                for (auto& v : values) v = StateWord::final_code(v);
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
        void record(const StateWord::Step& step) {
            applied += step.changed;
            if (step.decided >= 0) decide(step.decided);
        }
        void add(const std::vector<Tally>& others) {
            for (const auto& t : others) {
                if (decided.size() < t.decided.size()) decided.resize(t.decided.size());
                for (std::size_t l = 0; l < t.decided.size(); ++l) decided[l] += t.decided[l];
                applied += t.applied;
            }
        }
    };

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
    // One update on one word, of the chunk in memory or of the sparse set:
    // a StateWord step. stabilizer() is asked only for flagged words,
    // late_loss() only when the count reaches zero.
    template <class Stabilizer, class LateLoss>
    static bool apply_to_word(std::uint16_t& target, int level, int repeats, std::uint8_t child,
                              Stabilizer&& stabilizer, LateLoss&& late_loss, Tally& tally) {
        const StateWord::Step step =
            (child & ooc::kLossChild)
                ? StateWord::claim_win(target, level + 1)
                : StateWord::count_down(target, level, repeats, child & 0x7F, stabilizer, late_loss);
        tally.record(step);
        return step.changed;
    }

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
        if (StateWord::is_open(word)) return true;
        if (word == StateWord::kInvalid || word == StateWord::kDrawFinal) return false;
        return probe::decode_value(word).dtc >= level;
    }
    std::uint64_t sparse_blocks() const {
        return (2 * size_ + (1u << SparseSet::kBlockBits) - 1) >> SparseSet::kBlockBits;
    }
    [[noreturn]] void damaged(std::string_view name, const char* what) const {
        ooc::damaged(dir_.file(name), what);
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
    BuildProgress progress_;
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

}  // namespace tbf::gen
