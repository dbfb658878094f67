// DecidedBlocks: which blocks a block pull may skip. A level answers only
// while it is tracked; a skipped block must never hold a position decided
// at the level (the pull would miss it).

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "decided_blocks.hpp"

namespace tbf {
namespace {

using gen::DecidedBlocks;

constexpr std::uint64_t kSlots = 3 * 4096 + 100;  // a partial last word

// Allocated, with levels 0 to kWindow - 1 tracked.
void track_first_window(DecidedBlocks& decided) {
    decided.allocate(kSlots);
    for (int level = 0; level < DecidedBlocks::kWindow; ++level) decided.start(level);
}

TEST_CASE("decided blocks: untracked until started, then exactly the marked blocks") {
    DecidedBlocks decided;
    decided.mark(0, Color::White, 5);  // nothing allocated yet: ignored
    CHECK(decided.blocks(0, Color::White) == nullptr);
    CHECK(DecidedBlocks::has(nullptr, 12345));  // untracked: read everything
    decided.allocate(kSlots);
    CHECK_FALSE(decided.tracks(0));

    track_first_window(decided);
    const std::vector<std::pair<Color, std::uint64_t>> marks = {
        {Color::White, 0}, {Color::White, 63}, {Color::White, 64 * 70 + 3}, {Color::Black, kSlots - 1}};
    for (const auto& [side, index] : marks) decided.mark(2, side, index);
    for (int c = 0; c < 2; ++c) {
        const auto side = static_cast<Color>(c);
        const std::uint64_t* bits = decided.blocks(2, side);
        REQUIRE(bits != nullptr);
        std::set<std::uint64_t> expected;
        for (const auto& [s, index] : marks) {
            if (s == side) expected.insert(index >> 6);
        }
        for (std::uint64_t block = 0; block < (kSlots + 63) / 64; ++block) {
            CHECK(DecidedBlocks::has(bits, block) == (expected.count(block) == 1));
        }
    }
    // Other tracked levels saw nothing.
    CHECK_FALSE(DecidedBlocks::has(decided.blocks(3, Color::White), 0));
    // Beyond the window: not tracked, so read in full.
    decided.mark(DecidedBlocks::kWindow, Color::White, 0);
    CHECK(decided.blocks(DecidedBlocks::kWindow, Color::White) == nullptr);
}

TEST_CASE("decided blocks: a stopped level is read in full, a started one begins empty") {
    DecidedBlocks decided;
    track_first_window(decided);
    decided.mark(1, Color::White, 64);
    decided.stop(1);
    CHECK_FALSE(decided.tracks(1));
    CHECK(decided.blocks(1, Color::White) == nullptr);
    decided.stop(2 + DecidedBlocks::kWindow);  // not the level tracked there: no effect
    CHECK(decided.tracks(2));
    // Level 1 done: its bits go to level 1 + kWindow, cleared.
    decided.mark(1 + DecidedBlocks::kWindow, Color::White, 64);  // not tracked yet: ignored
    decided.start(1 + DecidedBlocks::kWindow);
    const std::uint64_t* bits = decided.blocks(1 + DecidedBlocks::kWindow, Color::White);
    REQUIRE(bits != nullptr);
    CHECK_FALSE(DecidedBlocks::has(bits, 1));
}

TEST_CASE("decided blocks: a level started in place of another clears its bits") {
    DecidedBlocks decided;
    track_first_window(decided);
    decided.mark(2, Color::White, 640);
    CHECK(DecidedBlocks::has(decided.blocks(2, Color::White), 10));
    decided.start(2 + DecidedBlocks::kWindow);
    CHECK_FALSE(decided.tracks(2));
    const std::uint64_t* bits = decided.blocks(2 + DecidedBlocks::kWindow, Color::White);
    REQUIRE(bits != nullptr);
    CHECK_FALSE(DecidedBlocks::has(bits, 10));
    decided.release();
    CHECK(decided.blocks(2 + DecidedBlocks::kWindow, Color::White) == nullptr);
}

TEST_CASE("decided blocks: marks from two threads are all kept") {
    DecidedBlocks decided;
    track_first_window(decided);
    std::vector<std::uint64_t> indexes(20000);
    std::mt19937_64 rng(7);
    for (auto& index : indexes) index = rng() % kSlots;
    auto mark_half = [&](std::size_t first) {
        for (std::size_t k = first; k < indexes.size(); k += 2) decided.mark(3, Color::Black, indexes[k]);
    };
    std::thread other(mark_half, 1);
    mark_half(0);
    other.join();
    const std::uint64_t* bits = decided.blocks(3, Color::Black);
    REQUIRE(bits != nullptr);
    std::set<std::uint64_t> expected;
    for (const std::uint64_t index : indexes) expected.insert(index >> 6);
    std::size_t missing = 0, extra = 0;
    for (std::uint64_t block = 0; block < (kSlots + 63) / 64; ++block) {
        const bool want = expected.count(block) == 1;
        missing += want && !DecidedBlocks::has(bits, block);
        extra += !want && DecidedBlocks::has(bits, block);
    }
    CHECK(missing == 0);
    CHECK(extra == 0);
}

}  // namespace
}  // namespace tbf
