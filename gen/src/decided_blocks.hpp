#pragma once
// Which 64-slot blocks of the work index hold a position decided at a given
// distance. A pull at level L counts only children decided at L, so a child
// block without any can be skipped unread; at sparse levels most are.

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tbforge/base/release.hpp"
#include "tbforge/rules/types.hpp"

namespace tbf::gen {

class DecidedBlocks {
public:
    // Levels tracked at once: a pass at level L decides level L + 1 (and
    // now and then L + 2); the initial pass decides levels 0 and 1 mostly,
    // which the builder marks from its frontier lists where they are kept.
    static constexpr int kWindow = 4;

    DecidedBlocks() { tracked_.fill(kUntracked); }
    // Bits for tables of `size` slots a side; no level tracked yet.
    void allocate(std::uint64_t size) {
        const std::uint64_t words = (size + 4095) / 4096;
        tracked_.fill(kUntracked);
        for (auto& level : bits_) {
            for (auto& side : level) side.assign(words, 0);
        }
    }
    void release() {
        tracked_.fill(kUntracked);
        for (auto& level : bits_) {
            for (auto& side : level) release_memory(side);
        }
    }
    // Tracks `level` from now on, with no block marked, in place of the
    // level kWindow below it (done by then).
    void start(int level) {
        const int k = level % kWindow;
        tracked_[k] = level;
        for (auto& side : bits_[k]) std::memset(side.data(), 0, side.size() * sizeof(std::uint64_t));
    }
    // `level` cannot be tracked: its blocks are all read.
    void stop(int level) {
        if (tracks(level)) tracked_[level % kWindow] = kUntracked;
    }
    bool tracks(int level) const { return tracked_[level % kWindow] == level; }
    // A position decided at `level`; thread-safe.
    void mark(int level, Color side, std::uint64_t index) {
        if (!tracks(level)) return;
        std::uint64_t& word = bits_[level % kWindow][to_index(side)][index >> 12];
        const std::uint64_t bit = std::uint64_t{1} << (index >> 6 & 63);
        if (!(std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed) & bit)) {
            std::atomic_ref<std::uint64_t>(word).fetch_or(bit, std::memory_order_relaxed);
        }
    }
    // The blocks of `side` holding a position decided at `level`, one bit a
    // block; nullptr when the level is not tracked.
    const std::uint64_t* blocks(int level, Color side) const {
        return tracks(level) ? bits_[level % kWindow][to_index(side)].data() : nullptr;
    }
    static bool has(const std::uint64_t* blocks, std::uint64_t block) {
        return blocks == nullptr || (blocks[block >> 6] >> (block & 63) & 1);
    }

private:
    static constexpr int kUntracked = -1;
    std::array<int, kWindow> tracked_;
    std::array<std::array<std::vector<std::uint64_t>, 2>, kWindow> bits_;
};

}  // namespace tbf::gen
