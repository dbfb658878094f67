#pragma once
// In-RAM retrograde analysis of one table, both sides to move, with DTC
// values (docs/ARCHITECTURE.md sections 4 and 6).
//
// Passes:
//  1. Initial pass over every slot: invalid slots, terminal positions
//     (distance 0), conversions (captures, promotions) valued from sub-tables,
//     and double pushes that hand the opponent an en-passant capture (valued
//     from that child's own captures). What remains are quiet moves inside
//     the table; they are counted per position (no child is indexed here).
//  2. Level passes, distance L = 0, 1, 2, ...: from each position decided at
//     distance L, un-moves reach its predecessors. A loss at L makes every
//     undecided predecessor a win at L + 1 (the first level that reaches it is
//     the shortest win); a win at L closes the predecessor's moves into it,
//     and a predecessor whose last open move closes is a loss at L + 1 (the
//     last move to close is its longest loss), unless some move of it is
//     known to draw or win.
//     Symmetry: Q has f moves into the class of W and W has r un-moves into
//     the class of Q, with f |orbit Q| = r |orbit W|, so each visit from W
//     closes r |Stab Q| / |Stab W| of Q's moves. Stabilisers are trivial for
//     all but a few positions, which the initial pass records.
//  3. Everything undecided is a draw.
// Threads only compare-and-swap undecided values and count down atomically, and
// every value written depends only on earlier levels, so the result is the
// same for any thread count.
//
// The member definitions are in retrograde_impl.hpp, for table_build.cpp
// (which instantiates them for each ruleset) and for tests with their own
// indexers.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include <omp.h>

#include "decided_blocks.hpp"
#include "table_moves.hpp"
#include "tbforge/base/release.hpp"

namespace tbf::gen {

struct LevelReport {
    int level;
    std::uint64_t decided;
};

struct BuildStats {
    std::uint64_t positions = 0;  // valid positions, both sides
    int passes = 0;
    double seconds = 0;
    double initial_seconds = 0;  // the initial pass; the level passes take the rest
};

// One StateByte per slot, all StateByte::kInvalid (0) at first, on pages
// mapped from the kernel and not written until a slot is: a page the
// initial pass leaves invalid (a run of unused work-index slots, with two
// of the first units on one square) stays out of the resident set.
class StateBytes {
public:
    StateBytes() = default;
    explicit StateBytes(std::uint64_t size) : size_(size) {
        if (size == 0) return;
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        data_ = static_cast<std::uint8_t*>(p);
    }
    StateBytes(StateBytes&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    StateBytes& operator=(StateBytes&& other) noexcept {
        if (this != &other) {
            unmap();
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~StateBytes() { unmap(); }

    std::uint64_t size() const { return size_; }
    std::uint8_t& operator[](std::uint64_t i) { return data_[i]; }
    const std::uint8_t& operator[](std::uint64_t i) const { return data_[i]; }
    const std::uint8_t* begin() const { return data_; }
    const std::uint8_t* end() const { return data_ + size_; }

private:
    void unmap() {
        if (data_) ::munmap(data_, size_);
        data_ = nullptr;
        size_ = 0;
    }
    std::uint8_t* data_ = nullptr;
    std::uint64_t size_ = 0;
};

// A built table's final values: one StateByte per slot and side to move,
// and the codes of the slots whose byte does not hold them (escaped and far
// slots), by packed id.
struct TableValues {
    std::array<StateBytes, 2> bytes;
    std::vector<std::uint64_t> exception_ids;  // sorted packed ids
    std::vector<std::uint16_t> exception_codes;
    BuildStats stats;

    // The stored code (encoded Value) of a slot.
    std::uint16_t code(Color side, std::uint64_t index) const {
        const std::uint16_t code = kCodes[bytes[to_index(side)][index]];
        return code != kException ? code : exception(detail::pack(side, index));
    }
    // Bytes a stored code needs: 1 unless a code exceeds 255. A byte holds
    // codes up to 128 (distances below 64), so only the exceptions can,
    // and no scan of the bytes is needed.
    unsigned code_width() const {
        static_assert(StateByte::code(StateByte::kWinFar - 1) <= 0xFF);
        for (const std::uint16_t c : exception_codes) {
            if (c > 0xFF) return 2;
        }
        return 1;
    }

private:
    // The code of each byte, one look-up for the renumbering; kException
    // for the bytes that do not hold it.
    static constexpr std::uint16_t kException = 0xFFFF;
    static constexpr std::array<std::uint16_t, 256> kCodes = [] {
        std::array<std::uint16_t, 256> codes{};
        for (int b = 0; b < 256; ++b) {
            const auto byte = static_cast<std::uint8_t>(b);
            const bool exception =
                byte == StateByte::kEscaped || byte == StateByte::kWinFar || byte == StateByte::kLossFar;
            codes[static_cast<std::size_t>(b)] = exception ? kException : StateByte::code(byte);
        }
        return codes;
    }();
    std::uint16_t exception(std::uint64_t packed) const {
        const auto it = std::lower_bound(exception_ids.begin(), exception_ids.end(), packed);
        return exception_codes[static_cast<std::size_t>(it - exception_ids.begin())];
    }
};

template <Ruleset R, TableIndexer Ix>
class RetrogradeBuilder {
public:

    // child_value gives the value (for its side to move) of any position a
    // conversion reaches: a sub-table position or a terminal one.
    // `layout`: what the state bytes hold (StateByte; tests narrow it).
    // How each level pass is made. Chosen: by the level's size (the
    // builds); the others force one kind on every level that can take it,
    // so that tests compare them (Push never pulls; PullSlots pulls slot by
    // slot, PullBlocks a block of 64 work slots at a time where it can).
    enum class Passes { Chosen, Push, PullSlots, PullBlocks };
    RetrogradeBuilder(const Ix& indexer, ChildValue child_value, BuildProgress progress = {},
                      StateByte layout = StateByte(), Passes passes = Passes::Chosen)
        : moves_(indexer, std::move(child_value)), progress_(std::move(progress)), layout_(layout),
          passes_(passes) {}

    TableValues build();

private:
    // Positions decided at each distance, both sides to move. A level is
    // listed while the lists of all levels fit a budget of one entry per 64
    // slots (a sixteenth of a byte per slot, entries are 32-bit packed ids,
    // beside the state's byte: a quarter byte took RBPvKN's lists to 200
    // MB in the initial pass); a level that outgrows it is found again by a
    // scan of the state bytes, which also reaches predecessors in index
    // order. Tables whose packed ids do
    // not fit 32 bits list nothing. Levels from the state bytes' far level
    // on are always listed, in full packed ids, and kept to the end: their
    // bytes do not say the distance, the lists do.
    using ListedId = std::uint32_t;
    struct LocalFrontier {
        std::vector<std::vector<ListedId>> lists;
        std::vector<std::vector<std::uint64_t>> far;
        std::vector<std::uint64_t> counts;
        std::vector<char> overflow;
        std::size_t cap = 0;
        int far_level = StateByte::kLevels;
        DecidedBlocks* decided = nullptr;
        // The 64-slot block (index / 64 and side) and level marked last: a
        // pull decides positions in slot order, mostly several in a block,
        // and a block needs marking once (the tracked levels do not change
        // during a pass, which owns its LocalFrontier).
        std::uint64_t marked_block = ~std::uint64_t{0};
        int marked_level = -1;
        void add(int level, std::uint64_t packed) {
            const auto l = static_cast<std::size_t>(level);
            if (decided) {
                const std::uint64_t block = (packed >> 7) << 1 | (packed & 1);
                if (block != marked_block || level != marked_level) {
                    decided->mark(level, detail::packed_side(packed), detail::packed_index(packed));
                    marked_block = block;
                    marked_level = level;
                }
            }
            if (counts.size() <= l) {
                counts.resize(l + 1);
                lists.resize(l + 1);
                far.resize(l + 1);
                overflow.resize(l + 1);
            }
            ++counts[l];
            if (level >= far_level) {
                far[l].push_back(packed);
                return;
            }
            if (overflow[l]) return;
            if (lists[l].size() >= cap) {
                overflow[l] = 1;
                release_memory(lists[l]);
                return;
            }
            lists[l].push_back(static_cast<ListedId>(packed));
        }
    };
    struct Frontier {
        std::vector<std::vector<ListedId>> lists;
        std::vector<std::vector<std::uint64_t>> far;
        std::vector<std::uint64_t> counts;
        std::vector<char> overflow;
        std::uint64_t budget = 0;  // list entries still allowed
        std::uint64_t added = 0;   // positions added since the initial pass
        void drop(std::size_t l) {
            overflow[l] = 1;
            budget += lists[l].size();
            release_memory(lists[l]);
        }
        void merge(LocalFrontier& local) {
            if (counts.size() < local.counts.size()) {
                counts.resize(local.counts.size());
                lists.resize(local.counts.size());
                far.resize(local.counts.size());
                overflow.resize(local.counts.size());
            }
            for (std::size_t l = 0; l < local.counts.size(); ++l) {
                counts[l] += local.counts[l];
                added += local.counts[l];
                far[l].insert(far[l].end(), local.far[l].begin(), local.far[l].end());
                if (overflow[l]) continue;
                if (local.overflow[l] || local.lists[l].size() > budget) {
                    drop(l);
                    continue;
                }
                budget -= local.lists[l].size();
                lists[l].insert(lists[l].end(), local.lists[l].begin(), local.lists[l].end());
            }
            local.lists.clear();
            local.far.clear();
            local.counts.clear();
            local.overflow.clear();
        }
    };

    LocalFrontier local_frontier() {
        LocalFrontier local;
        local.decided = &decided_;
        local.cap = static_cast<std::size_t>(frontier_.budget / static_cast<std::uint64_t>(omp_get_max_threads()));
        local.far_level = layout_.far_level();
        return local;
    }
    // Un-moves from one position decided at `level`.
    void visit(Color side, std::uint64_t index, int level, LocalFrontier& local, SlotList& preds);
    void initial_pass();
    // A level's decisions reach the open positions either by pushing from
    // each decided position to its predecessors (few decided) or by pulling:
    // a scan of the open positions looks at their children (many decided).
    void level_pass(int level);
    void pull_pass(int level);
    // pull_pass() over the 64 work-index slots of one block (the last unit
    // on each square): the children of the moves of the units between the
    // root and the last are read a block at a time for all 64.
    template <class PullSlot, class Finish>
    void pull_block(Color side, std::uint64_t block, int level, PullSlot& pull_slot, Finish& finish);
    static constexpr bool kCanPull = MoveIndexer<Ix> && !R::kRoyalKing;
    // A level is pulled when it holds at least 1/pull_factor() of the open
    // positions. Block pulls on the work index read about a tenth of what
    // slot-by-slot pulls read per position, which moves the break-even
    // (measured on six 4-unit tables: levels 0.70x with 4 against 2), and
    // skipping the child blocks where nothing was decided at the level
    // (a tracked level) moves it again (RBNvKN's levels 3-5 pulled in
    // 0.35-0.44 s against pushes of 0.42-0.83 s; 10-16 measured best on
    // 4-unit pawn tables).
    std::uint64_t pull_factor(int level) const {
        if constexpr (std::is_same_v<Ix, index::WorkIndex>) {
            return decided_.tracks(level) ? 12 : 4;
        }
        return 2;
    }
    // Whether positions were decided at `level` so far.
    bool any_decided(int level) const {
        const auto l = static_cast<std::size_t>(level);
        return l < frontier_.counts.size() && frontier_.counts[l] != 0;
    }
    // Starts tracking `level` in decided_, from its frontier list when the
    // level already holds positions (left untracked if the list overflowed).
    void track_level(int level);
    int stabilizer_of(Color side, std::uint64_t index) const;
    // Whether a loss of this position closing before level 2 waits for it
    // (StateWord's late-loss rule).
    bool late_loss(std::uint64_t packed) const {
        return std::binary_search(late_losses_.begin(), late_losses_.end(), packed);
    }

    // Visits the listed positions of one level (push).
    template <class Id>
    void push_listed(const std::vector<Id>& listed, int level);
    // Sweeps for the positions decided at `level` (below the far level) by
    // their values, and visits them (push).
    void push_scanned(int level);

    // One StateByte per slot, so the level passes touch one byte per
    // predecessor.
    std::uint8_t load(Color c, std::uint64_t i) const {
        return std::atomic_ref<const std::uint8_t>(bytes_[to_index(c)][i]).load(std::memory_order_relaxed);
    }
    // The whole word of an escaped slot (its byte is StateByte::kEscaped).
    std::uint16_t& escaped(Color c, std::uint64_t i) {
        const auto it = std::lower_bound(escaped_ids_.begin(), escaped_ids_.end(), detail::pack(c, i));
        return escaped_words_[static_cast<std::size_t>(it - escaped_ids_.begin())];
    }
    std::uint16_t load_escaped(Color c, std::uint64_t i) {
        return std::atomic_ref<std::uint16_t>(escaped(c, i)).load(std::memory_order_relaxed);
    }
    // A win at `distance` for an open slot (StateWord::claim_win).
    StateWord::Step claim(Color c, std::uint64_t i, int distance) {
        std::uint8_t& b = bytes_[to_index(c)][i];
        if (std::atomic_ref<std::uint8_t>(b).load(std::memory_order_relaxed) == StateByte::kEscaped) {
            return StateWord::claim_win(escaped(c, i), distance);
        }
        return layout_.claim_win(b, distance);
    }
    // The final codes of the slots whose byte does not hold them.
    void collect_exceptions(TableValues& out);

    TableMoves<R, Ix> moves_;
    BuildProgress progress_;
    StateByte layout_;
    Passes passes_;
    std::uint64_t size_ = 0;
    std::array<StateBytes, 2> bytes_;
    // Escaped slots (StateByte::kEscaped): sorted packed ids and their words.
    std::vector<std::uint64_t> escaped_ids_;
    std::vector<std::uint16_t> escaped_words_;
    Frontier frontier_;
    // Blocks holding positions decided at the next few levels, which a
    // block pull reads (children decided at other levels do not count).
    DecidedBlocks decided_;
    // Whether block pulls apply to this table (fixed by its index).
    bool block_pulls_ = false;
    // Positions decided by a move worth 2 plies (a double push into an
    // en-passant capture): wins waiting for level 2, and losses whose longest
    // move is that one. Sorted packed ids.
    std::vector<std::uint64_t> late_wins_;
    std::vector<std::uint64_t> late_losses_;
    // Positions with a non-trivial stabiliser (flagged in their words):
    // packed id * 8 + stabiliser size, sorted.
    std::vector<std::uint64_t> symmetric_;
    std::uint64_t valid_positions_ = 0;
    // Open positions after the initial pass: every later frontier addition
    // decides one of them.
    std::uint64_t initial_open_ = 0;
};

}  // namespace tbf::gen
