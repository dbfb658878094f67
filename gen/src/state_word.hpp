#pragma once
// The 16-bit working word of one slot and side to move, and the one place
// its transitions are written. Both builders keep these words: the in-RAM
// builder in two arrays, the out-of-core builder in its chunk files and its
// sparse set (so the encoding is also a file format: work_files.hpp).
//
// A word is a final value code (probe/value.hpp; DTC < 24576 keeps it below
// kOpen), one of two markers (kInvalid, kDrawFinal), or from kOpen up an
// undecided position's count of open moves (low 8 bits) with kSymmetric set
// when a non-trivial table symmetry fixes the position.
//
// The retrograde step, from a child decided at distance `level`:
//  - a lost child makes an open predecessor a win at level + 1 (the first
//    level that reaches it is its shortest win): claim_win();
//  - a won child closes moves of its predecessor, |Stab Q| / |Stab W| per
//    un-move (retrograde.hpp, "Symmetry"); the predecessor whose last open
//    move closes is a loss at level + 1 (its longest loss), or at 2 if a
//    double push into en passant loses more slowly (the late-loss rule):
//    count_down();
//  - a pull does both for one open position from the children of its open
//    moves: pull().
// Words that cannot lose (kCannotLose: a move draws or wins) only change by
// a claim. Pushes run concurrently on shared words (relaxed atomics, a
// compare-and-swap per change); a pull has one writer per word.
//
// StateByte is the in-RAM builder's narrower form of the same word, one
// byte a slot and side: short distances and small counters in the byte, the
// rest exact elsewhere (see there).

#include <atomic>
#include <cstdint>

#include "tbforge/probe/value.hpp"

namespace tbf::gen {

struct StateWord {
    // Value of a slot the initial pass leaves undecided (SlotStart::value).
    static constexpr std::uint16_t kUndecided = 0;
    static constexpr std::uint16_t kInvalid = 0xFFFF;
    static constexpr std::uint16_t kDrawFinal = 0xFFFE;
    static constexpr std::uint16_t kOpen = 0xC000;
    static constexpr std::uint16_t kSymmetric = 0x1000;
    // Counter of a position that some move keeps from losing.
    static constexpr std::uint8_t kCannotLose = 0xFF;

    static constexpr bool is_open(std::uint16_t word) { return word >= kOpen && word <= (kOpen | kSymmetric | 0xFF); }
    static constexpr std::uint8_t open_count(std::uint16_t word) { return static_cast<std::uint8_t>(word & 0xFF); }
    static constexpr bool is_symmetric(std::uint16_t word) { return (word & kSymmetric) != 0; }

    // The initial pass's word: `value` if it decided the slot, otherwise an
    // open word counting `open` moves (or kCannotLose).
    static constexpr std::uint16_t initial(std::uint16_t value, std::uint8_t open, int stabilizer) {
        if (value != kUndecided) return value;
        return static_cast<std::uint16_t>(kOpen | (stabilizer > 1 ? kSymmetric : 0) | open);
    }
    // The stored code: open positions, invalid slots and draws are 0.
    static constexpr std::uint16_t final_code(std::uint16_t word) {
        return word == kInvalid || word == kDrawFinal || is_open(word) ? 0 : word;
    }
    static constexpr std::uint16_t win(int distance) {
        return probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(distance)});
    }
    static constexpr std::uint16_t loss(int distance) {
        return probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(distance)});
    }
    // Whether the level pass at `level` can still decide losses at level + 2
    // (the late-loss rule) below kOpen.
    static constexpr bool in_range(int level) { return loss(level + 2) < kOpen; }

    // What a transition did.
    struct Step {
        bool changed = false;  // the word was written
        int decided = -1;      // the distance it was decided at, -1 if it stays open
    };

    // Decides an open word as a win at `distance`; unchanged if it was
    // decided already (possibly by a concurrent step).
    static Step claim_win(std::uint16_t& target, int distance) {
        std::atomic_ref<std::uint16_t> word(target);
        const std::uint16_t value = win(distance);
        std::uint16_t seen = word.load(std::memory_order_relaxed);
        while (is_open(seen)) {
            if (word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) return {true, distance};
        }
        return {};
    }

    // `repeats` un-moves from a child won at `level`, whose stabiliser has
    // `child_stabilizer` elements, into this predecessor. stabilizer() (the
    // predecessor's) is asked only for flagged words, late_loss() only when
    // the count reaches zero.
    template <class Stabilizer, class LateLoss>
    static Step count_down(std::uint16_t& target, int level, int repeats, int child_stabilizer,
                           Stabilizer&& stabilizer, LateLoss&& late_loss) {
        std::atomic_ref<std::uint16_t> word(target);
        std::uint16_t seen = word.load(std::memory_order_relaxed);
        if (!is_open(seen) || open_count(seen) == kCannotLose) return {};
        // The flag stays while the word is open: one look-up, outside the retries.
        const int stab = is_symmetric(seen) ? stabilizer() : 1;
        const auto closed = static_cast<std::uint8_t>(repeats * stab / child_stabilizer);
        // A failed exchange rereads the word; another step may have decided it.
        do {
            if (open_count(seen) != closed) {
                if (word.compare_exchange_weak(seen, static_cast<std::uint16_t>(seen - closed),
                                               std::memory_order_relaxed)) {
                    return {true, -1};
                }
            } else {
                const int distance = loss_distance(level, late_loss);
                if (word.compare_exchange_weak(seen, loss(distance), std::memory_order_relaxed)) {
                    return {true, distance};
                }
            }
        } while (is_open(seen));
        return {};
    }

    // The children's words a pull at `level` reads, one per open move of the
    // position; add() returns false once a child lost at `level` wins it.
    class PullCount {
    public:
        explicit PullCount(int level) : win_(win(level)), loss_(loss(level)) {}
        bool add(std::uint16_t child) {
            wins_ = child == loss_;
            closed_ += child == win_;
            return !wins_;
        }
        bool wins() const { return wins_; }
        int closed() const { return closed_; }

    private:
        std::uint16_t win_, loss_;
        bool wins_ = false;
        int closed_ = 0;
    };

    // The pull of the open word `seen` at `level` from its children's
    // count. Only the caller writes the word; others may read it meanwhile.
    // (Count: PullCount, or StateByte's for a word read among bytes.)
    template <class Count, class LateLoss>
    static Step pull(std::uint16_t& target, std::uint16_t seen, int level, const Count& count,
                     LateLoss&& late_loss) {
        std::atomic_ref<std::uint16_t> word(target);
        if (count.wins()) {
            word.store(win(level + 1), std::memory_order_relaxed);
            return {true, level + 1};
        }
        const int closed = count.closed();
        if (closed == 0 || open_count(seen) == kCannotLose) return {};
        if (closed != open_count(seen)) {
            word.store(static_cast<std::uint16_t>(seen - closed), std::memory_order_relaxed);
            return {true, -1};
        }
        const int distance = loss_distance(level, late_loss);
        word.store(loss(distance), std::memory_order_relaxed);
        return {true, distance};
    }

private:
    // A loss whose last open move closes at `level` + 1, or at 2 when a
    // double push into en passant (worth two plies) loses more slowly.
    template <class LateLoss>
    static int loss_distance(int level, LateLoss&& late_loss) {
        const int next = level + 1;
        return next < 2 && late_loss() ? 2 : next;
    }
};

// One byte per slot and side to move, for the in-RAM builder: half the
// StateWord's memory. What does not fit is kept exactly elsewhere:
//  - kInvalid is 0, so that pages of unused slots can stay untouched zero
//    pages (StateBytes).
//  - [1, 65): a win at distance - 1; [65, 129): a loss at distance - 65.
//    Distances from `far_level` (at most 64) on are kWinFar or kLossFar;
//    the builder lists every position decided that far, by level, and
//    knows each one's distance from its list.
//  - kEscaped: the slot's StateWord lives in a side table (the builder's).
//    The initial pass escapes positions fixed by a table symmetry (their
//    count-downs need the stabiliser), counters above `max_count`, and
//    distances of `far_level` and beyond; the set never changes after it.
//  - kCannotLose, then counters 1..max_count (at most kMaxCount): an open
//    position that no symmetry fixes, as StateWord's open words.
// The transitions are StateWord's on a non-symmetric word (stabiliser 1).
class StateByte {
public:
    static constexpr int kLevels = 64;
    static constexpr std::uint8_t kInvalid = 0;
    static constexpr std::uint8_t kWin = 1;                 // win at distance 0
    static constexpr std::uint8_t kLoss = kWin + kLevels;   // loss at distance 0
    static constexpr std::uint8_t kWinFar = kLoss + kLevels;
    static constexpr std::uint8_t kLossFar = kWinFar + 1;
    static constexpr std::uint8_t kDrawFinal = 131;
    static constexpr std::uint8_t kEscaped = 132;
    static constexpr std::uint8_t kCannotLose = 133;
    static constexpr int kMaxCount = 0xFF - kCannotLose;
    static_assert(kLossFar < kDrawFinal);

    // Defaults hold the most in the byte; smaller limits push more through
    // the far lists and the side table (tests).
    explicit constexpr StateByte(int far_level = kLevels, int max_count = kMaxCount)
        : far_level_(far_level < 1 ? 1 : far_level > kLevels ? kLevels : far_level),
          max_count_(max_count < 1 ? 1 : max_count > kMaxCount ? kMaxCount : max_count) {}

    int far_level() const { return far_level_; }
    int max_count() const { return max_count_; }

    static constexpr bool is_open(std::uint8_t b) { return b >= kCannotLose; }
    // Open moves of an open byte; 0 for kCannotLose.
    static constexpr int open_count(std::uint8_t b) { return b - kCannotLose; }
    static constexpr bool is_decided(std::uint8_t b) { return b != kInvalid && b <= kLossFar; }
    // The result of a decided byte.
    static constexpr Wdl wdl(std::uint8_t b) {
        return b < kLoss || b == kWinFar ? Wdl::Win : Wdl::Loss;
    }
    // The stored code of a byte held in full (not far, not escaped): open
    // positions, invalid slots and draws are 0.
    static constexpr std::uint16_t code(std::uint8_t b) {
        if (b == kInvalid) return 0;
        if (b < kLoss) return StateWord::win(b - kWin);
        if (b < kWinFar) return StateWord::loss(b - kLoss);
        return 0;
    }

    std::uint8_t win(int distance) const {
        return distance < far_level_ ? static_cast<std::uint8_t>(kWin + distance) : kWinFar;
    }
    std::uint8_t loss(int distance) const {
        return distance < far_level_ ? static_cast<std::uint8_t>(kLoss + distance) : kLossFar;
    }

    // The byte of an initial StateWord, kEscaped when the word must be kept whole.
    std::uint8_t initial(std::uint16_t word) const {
        if (word == StateWord::kInvalid) return kInvalid;
        if (word == StateWord::kDrawFinal) return kDrawFinal;
        if (StateWord::is_open(word)) {
            if (StateWord::is_symmetric(word)) return kEscaped;
            const int count = StateWord::open_count(word);
            if (count == StateWord::kCannotLose) return kCannotLose;
            return count <= max_count_ ? static_cast<std::uint8_t>(kCannotLose + count) : kEscaped;
        }
        const probe::Value v = probe::decode_value(word);
        if (v.dtc >= far_level_) return kEscaped;
        return v.wdl == Wdl::Win ? win(v.dtc) : loss(v.dtc);
    }

    // StateWord::claim_win.
    StateWord::Step claim_win(std::uint8_t& target, int distance) const {
        std::atomic_ref<std::uint8_t> word(target);
        const std::uint8_t value = win(distance);
        std::uint8_t seen = word.load(std::memory_order_relaxed);
        while (is_open(seen)) {
            if (word.compare_exchange_weak(seen, value, std::memory_order_relaxed)) return {true, distance};
        }
        return {};
    }

    // StateWord::count_down on a word no symmetry fixes.
    template <class LateLoss>
    StateWord::Step count_down(std::uint8_t& target, int level, int repeats, int child_stabilizer,
                               LateLoss&& late_loss) const {
        std::atomic_ref<std::uint8_t> word(target);
        std::uint8_t seen = word.load(std::memory_order_relaxed);
        if (!is_open(seen) || seen == kCannotLose) return {};
        const int closed = repeats / child_stabilizer;
        do {
            if (open_count(seen) != closed) {
                if (word.compare_exchange_weak(seen, static_cast<std::uint8_t>(seen - closed),
                                               std::memory_order_relaxed)) {
                    return {true, -1};
                }
            } else {
                const int distance = loss_distance(level, late_loss);
                if (word.compare_exchange_weak(seen, loss(distance), std::memory_order_relaxed)) {
                    return {true, distance};
                }
            }
        } while (is_open(seen));
        return {};
    }

    // StateWord::PullCount over bytes, at a level below far_level() (a far
    // byte does not say its level). An escaped child is added as the byte
    // of its word's value at the level (as_byte()).
    class PullCount {
    public:
        PullCount(const StateByte& layout, int level)
            : win_(layout.win(level)), loss_(layout.loss(level)), level_(level) {}
        bool add(std::uint8_t child) {
            wins_ = child == loss_;
            closed_ += child == win_;
            return !wins_;
        }
        // The byte standing for an escaped child's word at this level.
        std::uint8_t as_byte(std::uint16_t word) const {
            if (word == StateWord::loss(level_)) return loss_;
            if (word == StateWord::win(level_)) return win_;
            return kEscaped;
        }
        // Children read in bulk (a block of 64 slots at once): one lost at
        // the level, and a count of those won at it.
        void add_lost() { wins_ = true; }
        void add_won(int children) { closed_ += children; }
        bool wins() const { return wins_; }
        int closed() const { return closed_; }

    private:
        std::uint8_t win_, loss_;
        int level_;
        bool wins_ = false;
        int closed_ = 0;
    };

    // StateWord::pull.
    template <class LateLoss>
    StateWord::Step pull(std::uint8_t& target, std::uint8_t seen, int level, const PullCount& count,
                         LateLoss&& late_loss) const {
        std::atomic_ref<std::uint8_t> word(target);
        if (count.wins()) {
            word.store(win(level + 1), std::memory_order_relaxed);
            return {true, level + 1};
        }
        const int closed = count.closed();
        if (closed == 0 || seen == kCannotLose) return {};
        if (closed != open_count(seen)) {
            word.store(static_cast<std::uint8_t>(seen - closed), std::memory_order_relaxed);
            return {true, -1};
        }
        const int distance = loss_distance(level, late_loss);
        word.store(loss(distance), std::memory_order_relaxed);
        return {true, distance};
    }

private:
    template <class LateLoss>
    static int loss_distance(int level, LateLoss&& late_loss) {
        const int next = level + 1;
        return next < 2 && late_loss() ? 2 : next;
    }

    int far_level_;
    int max_count_;
};

}  // namespace tbf::gen
