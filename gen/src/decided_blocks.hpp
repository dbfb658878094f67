#pragma once
// Which 64-slot blocks of the work index hold a position decided at a given
// distance. A pull at level L counts only children decided at L, so a child
// block without any can be skipped unread; at sparse levels most are.

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tbforge/rules/types.hpp"

namespace tbf::gen {

class DecidedBlocks {
public:
    // Levels tracked at once: a pass at level L decides level L + 1 (and
    // now and then L + 2); the initial pass decides levels 0 and 1 mostly.
    static constexpr int kWindow = 4;

    DecidedBlocks() { tracked_.fill(kUntracked); }
    // Tracks levels 0 to kWindow - 1 from now on in tables of `size` slots a
    // side, except those `decided_before(level)` says already hold positions.
    template <class DecidedBefore>
    void track(std::uint64_t size, DecidedBefore decided_before) {
        const std::uint64_t words = (size + 4095) / 4096;
        for (int k = 0; k < kWindow; ++k) {
            tracked_[k] = decided_before(k) ? kUntracked : k;
            for (auto& side : bits_[k]) side.assign(words, 0);
        }
    }
    void release() {
        tracked_.fill(kUntracked);
        for (auto& level : bits_) {
            for (auto& side : level) side = {};
        }
    }
    // Level `level` is done: its bits track `level + kWindow` from now on,
    // unless positions were `decided_before` at that level.
    void slide(int level, bool decided_before) {
        const int k = level % kWindow;
        if (bits_[k][0].empty()) return;  // not tracking
        tracked_[k] = decided_before ? kUntracked : level + kWindow;
        if (!decided_before) {
            for (auto& side : bits_[k]) std::memset(side.data(), 0, side.size() * sizeof(std::uint64_t));
        }
    }
    // A position decided at `level`; thread-safe.
    void mark(int level, Color side, std::uint64_t index) {
        const int k = level % kWindow;
        if (tracked_[k] != level) return;
        std::uint64_t& word = bits_[k][to_index(side)][index >> 12];
        const std::uint64_t bit = std::uint64_t{1} << (index >> 6 & 63);
        if (!(std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed) & bit)) {
            std::atomic_ref<std::uint64_t>(word).fetch_or(bit, std::memory_order_relaxed);
        }
    }
    // The blocks of `side` holding a position decided at `level`, one bit a
    // block; nullptr when the level was not tracked from its first decision.
    const std::uint64_t* blocks(int level, Color side) const {
        const int k = level % kWindow;
        return tracked_[k] == level ? bits_[k][to_index(side)].data() : nullptr;
    }
    static bool has(const std::uint64_t* blocks, std::uint64_t block) {
        return blocks == nullptr || (blocks[block >> 6] >> (block & 63) & 1);
    }

private:
    static constexpr int kUntracked = -1;
    std::array<int, kWindow> tracked_{};
    std::array<std::array<std::vector<std::uint64_t>, 2>, kWindow> bits_;
};

}  // namespace tbf::gen
