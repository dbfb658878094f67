// StateWord: the encoding of the builders' working words and the retrograde
// step on one word (claim, count-down, pull, the late-loss and symmetric
// rules), alone and under concurrent steps; StateByte, the in-RAM builder's
// one-byte form, step for step against StateWord.

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "state_word.hpp"

namespace tbf {
namespace {

using gen::StateByte;
using gen::StateWord;

constexpr auto kNever = [] { return false; };
constexpr auto kLate = [] { return true; };
constexpr auto kNoSymmetry = [] { return 1; };

TEST_CASE("state word: initial words, final codes and the open range") {
    const std::uint16_t win3 = StateWord::win(3);
    CHECK(StateWord::initial(win3, 0, 1) == win3);
    CHECK(StateWord::initial(StateWord::kInvalid, 0, 1) == StateWord::kInvalid);

    const std::uint16_t plain = StateWord::initial(StateWord::kUndecided, 7, 1);
    CHECK(StateWord::is_open(plain));
    CHECK(StateWord::open_count(plain) == 7);
    CHECK_FALSE(StateWord::is_symmetric(plain));
    const std::uint16_t symmetric = StateWord::initial(StateWord::kUndecided, 7, 2);
    CHECK(StateWord::is_open(symmetric));
    CHECK(StateWord::is_symmetric(symmetric));
    CHECK(StateWord::open_count(symmetric) == 7);
    CHECK(StateWord::is_open(StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 8)));

    // Markers and final codes are not open; the stored code keeps only values.
    CHECK_FALSE(StateWord::is_open(StateWord::kInvalid));
    CHECK_FALSE(StateWord::is_open(StateWord::kDrawFinal));
    CHECK(StateWord::final_code(StateWord::kInvalid) == 0);
    CHECK(StateWord::final_code(StateWord::kDrawFinal) == 0);
    CHECK(StateWord::final_code(symmetric) == 0);
    CHECK(StateWord::final_code(win3) == win3);
    CHECK(StateWord::final_code(StateWord::loss(0)) == StateWord::loss(0));

    // Every distance the level passes accept encodes below the open range.
    int last = 0;
    while (StateWord::in_range(last + 1)) ++last;
    CHECK(last > 10000);
    CHECK(StateWord::loss(last + 2) < StateWord::kOpen);
    CHECK_FALSE(StateWord::is_open(StateWord::loss(last + 2)));
    CHECK_FALSE(StateWord::is_open(StateWord::win(last + 2)));
}

TEST_CASE("state word: a claim decides an open word once") {
    std::uint16_t word = StateWord::initial(StateWord::kUndecided, 4, 1);
    const auto step = StateWord::claim_win(word, 5);
    CHECK(step.changed);
    CHECK(step.decided == 5);
    CHECK(word == StateWord::win(5));
    // Decided already: a later (longer) win does not replace it.
    const auto again = StateWord::claim_win(word, 7);
    CHECK_FALSE(again.changed);
    CHECK(again.decided == -1);
    CHECK(word == StateWord::win(5));
    // A position that cannot lose can still win.
    std::uint16_t cannot_lose = StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 1);
    CHECK(StateWord::claim_win(cannot_lose, 2).decided == 2);
}

TEST_CASE("state word: count-down, loss at zero, late-loss rule") {
    int late_asked = 0;
    auto late = [&] {
        ++late_asked;
        return true;
    };
    std::uint16_t word = StateWord::initial(StateWord::kUndecided, 3, 1);
    auto step = StateWord::count_down(word, 4, 1, 1, kNoSymmetry, late);
    CHECK(step.changed);
    CHECK(step.decided == -1);
    CHECK(StateWord::open_count(word) == 2);
    step = StateWord::count_down(word, 4, 2, 1, kNoSymmetry, late);
    CHECK(step.decided == 5);
    CHECK(word == StateWord::loss(5));
    // The late-loss rule applies below distance 2 only: not asked here.
    CHECK(late_asked == 0);
    step = StateWord::count_down(word, 5, 1, 1, kNoSymmetry, late);
    CHECK_FALSE(step.changed);
    CHECK(word == StateWord::loss(5));

    // Asked only when the count reaches zero.
    std::uint16_t two = StateWord::initial(StateWord::kUndecided, 2, 1);
    CHECK(StateWord::count_down(two, 0, 1, 1, kNoSymmetry, late).decided == -1);
    CHECK(late_asked == 0);
    CHECK(StateWord::count_down(two, 0, 1, 1, kNoSymmetry, late).decided == 2);
    CHECK(late_asked == 1);

    std::uint16_t early = StateWord::initial(StateWord::kUndecided, 1, 1);
    CHECK(StateWord::count_down(early, 0, 1, 1, kNoSymmetry, kNever).decided == 1);
    CHECK(early == StateWord::loss(1));
    std::uint16_t delayed = StateWord::initial(StateWord::kUndecided, 1, 1);
    CHECK(StateWord::count_down(delayed, 0, 1, 1, kNoSymmetry, kLate).decided == 2);
    CHECK(delayed == StateWord::loss(2));

    // A position with a drawing or winning move never counts down.
    std::uint16_t cannot_lose = StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 1);
    const std::uint16_t before = cannot_lose;
    CHECK_FALSE(StateWord::count_down(cannot_lose, 0, 1, 1, kNoSymmetry, kNever).changed);
    CHECK(cannot_lose == before);
}

TEST_CASE("state word: symmetric count-downs close r |Stab Q| / |Stab W| moves") {
    int asked = 0;
    auto stabilizer_two = [&] {
        ++asked;
        return 2;
    };
    // Unflagged word: its stabiliser is not looked up.
    std::uint16_t plain = StateWord::initial(StateWord::kUndecided, 6, 1);
    StateWord::count_down(plain, 3, 2, 2, stabilizer_two, kNever);
    CHECK(asked == 0);
    CHECK(StateWord::open_count(plain) == 5);  // 2 * 1 / 2
    // Flagged word: 1 * 2 / 1 moves per visit; the flag survives the count.
    std::uint16_t symmetric = StateWord::initial(StateWord::kUndecided, 6, 2);
    StateWord::count_down(symmetric, 3, 1, 1, stabilizer_two, kNever);
    CHECK(asked == 1);
    CHECK(StateWord::is_symmetric(symmetric));
    CHECK(StateWord::open_count(symmetric) == 4);
    StateWord::count_down(symmetric, 3, 4, 2, stabilizer_two, kNever);  // 4 * 2 / 2
    CHECK(symmetric == StateWord::loss(4));
}

TEST_CASE("state word: a pull equals the pushes of the same children") {
    for (int open = 1; open <= 5; ++open) {
        for (int won = 0; won <= open; ++won) {
            for (const bool late : {false, true}) {
                for (const int level : {0, 1, 3}) {
                    CAPTURE(open);
                    CAPTURE(won);
                    CAPTURE(late);
                    CAPTURE(level);
                    auto late_loss = [&] { return late; };
                    const std::uint16_t start = StateWord::initial(StateWord::kUndecided,
                                                                   static_cast<std::uint8_t>(open), 1);
                    std::uint16_t pushed = start;
                    int pushed_decided = -1;
                    for (int k = 0; k < won; ++k) {
                        const auto step = StateWord::count_down(pushed, level, 1, 1, kNoSymmetry, late_loss);
                        if (step.decided >= 0) pushed_decided = step.decided;
                    }
                    // The pull sees the children: `won` wins at this level,
                    // the rest still open or decided later.
                    StateWord::PullCount count(level);
                    for (int k = 0; k < open; ++k) {
                        CHECK(count.add(k < won ? StateWord::win(level) : StateWord::win(level + 1)));
                    }
                    CHECK_FALSE(count.wins());
                    CHECK(count.closed() == won);
                    std::uint16_t pulled = start;
                    const auto step = StateWord::pull(pulled, start, level, count, late_loss);
                    CHECK(pulled == pushed);
                    CHECK(step.decided == pushed_decided);
                    CHECK(step.changed == (won > 0));
                }
            }
        }
    }
}

TEST_CASE("state word: a pull wins through one lost child and stops there") {
    StateWord::PullCount count(2);
    CHECK(count.add(StateWord::win(2)));
    CHECK_FALSE(count.add(StateWord::loss(2)));
    CHECK(count.wins());
    std::uint16_t word = StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 1);
    const auto step = StateWord::pull(word, word, 2, count, kNever);
    CHECK(step.decided == 3);
    CHECK(word == StateWord::win(3));
    // Children won at the level do not touch a position that cannot lose.
    StateWord::PullCount closing(2);
    closing.add(StateWord::win(2));
    std::uint16_t cannot_lose = StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 1);
    CHECK_FALSE(StateWord::pull(cannot_lose, cannot_lose, 2, closing, kNever).changed);
}

TEST_CASE("state word: concurrent steps decide a word exactly once") {
    constexpr int kThreads = 8;
    constexpr int kMoves = 200;
    for (int round = 0; round < 20; ++round) {
        // Count-downs only: the last of kMoves closes it, whoever runs it.
        std::uint16_t word = StateWord::initial(StateWord::kUndecided, kMoves, 1);
        std::atomic<int> deciders{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int k = t; k < kMoves; k += kThreads) {
                    if (StateWord::count_down(word, 6, 1, 1, kNoSymmetry, kNever).decided >= 0) ++deciders;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(deciders == 1);
        CHECK(word == StateWord::loss(7));

        // Claims racing count-downs: one decision, a win or a loss.
        std::uint16_t raced = StateWord::initial(StateWord::kUndecided, kMoves / 2, 1);
        std::atomic<int> decided{0};
        threads.clear();
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int k = 0; k < kMoves / kThreads; ++k) {
                    const auto step = (t == 0 && k == kMoves / kThreads / 2)
                                          ? StateWord::claim_win(raced, 7)
                                          : StateWord::count_down(raced, 6, 1, 1, kNoSymmetry, kNever);
                    decided += step.decided >= 0;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(decided == 1);
        CHECK((raced == StateWord::win(7) || raced == StateWord::loss(7)));
    }
}

// The byte a StateWord stands for in `layout` (kEscaped where the word must
// stay whole), or, for a decided word at a far distance, the far marker.
std::uint8_t byte_of(const StateByte& layout, std::uint16_t word) {
    if (StateWord::is_open(word)) return layout.initial(word);
    if (word == StateWord::kInvalid || word == StateWord::kDrawFinal) return layout.initial(word);
    const probe::Value v = probe::decode_value(word);
    return v.wdl == Wdl::Win ? layout.win(v.dtc) : layout.loss(v.dtc);
}

TEST_CASE("state byte: initial bytes, codes and what escapes") {
    const StateByte layout;
    CHECK(layout.far_level() == StateByte::kLevels);
    CHECK(layout.max_count() == StateByte::kMaxCount);
    CHECK(StateByte::kMaxCount >= 100);
    for (int d = 0; d < StateByte::kLevels; ++d) {
        const std::uint8_t w = layout.initial(StateWord::win(d));
        const std::uint8_t l = layout.initial(StateWord::loss(d));
        CHECK(StateByte::code(w) == StateWord::win(d));
        CHECK(StateByte::code(l) == StateWord::loss(d));
        CHECK(StateByte::is_decided(w));
        CHECK(StateByte::wdl(w) == Wdl::Win);
        CHECK(StateByte::wdl(l) == Wdl::Loss);
        CHECK_FALSE(StateByte::is_open(w));
    }
    CHECK(layout.initial(StateWord::win(StateByte::kLevels)) == StateByte::kEscaped);
    CHECK(layout.win(StateByte::kLevels) == StateByte::kWinFar);
    CHECK(layout.loss(StateByte::kLevels + 5) == StateByte::kLossFar);
    CHECK(StateByte::wdl(StateByte::kWinFar) == Wdl::Win);
    CHECK(StateByte::wdl(StateByte::kLossFar) == Wdl::Loss);
    CHECK(layout.initial(StateWord::kInvalid) == StateByte::kInvalid);
    CHECK(layout.initial(StateWord::kDrawFinal) == StateByte::kDrawFinal);
    CHECK(StateByte::code(StateByte::kInvalid) == 0);
    CHECK(StateByte::code(StateByte::kDrawFinal) == 0);
    // Untouched zero pages read as invalid slots (StateBytes).
    CHECK(StateByte::kInvalid == 0);
    CHECK_FALSE(StateByte::is_decided(StateByte::kInvalid));
    CHECK_FALSE(StateByte::is_open(StateByte::kInvalid));
    for (int count = 1; count <= StateByte::kMaxCount; ++count) {
        const std::uint8_t b = layout.initial(StateWord::initial(StateWord::kUndecided, static_cast<std::uint8_t>(count), 1));
        CHECK(StateByte::is_open(b));
        CHECK(StateByte::open_count(b) == count);
        CHECK(StateByte::code(b) == 0);
    }
    CHECK(layout.initial(StateWord::initial(StateWord::kUndecided, StateByte::kMaxCount + 1, 1)) == StateByte::kEscaped);
    CHECK(layout.initial(StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 1)) == StateByte::kCannotLose);
    CHECK(StateByte::is_open(StateByte::kCannotLose));
    // Positions fixed by a symmetry keep their word (count-downs need the stabiliser).
    CHECK(layout.initial(StateWord::initial(StateWord::kUndecided, 3, 2)) == StateByte::kEscaped);
    CHECK(layout.initial(StateWord::initial(StateWord::kUndecided, StateWord::kCannotLose, 2)) == StateByte::kEscaped);
    // A narrowed layout escapes more.
    const StateByte narrow(2, 3);
    CHECK(narrow.initial(StateWord::loss(2)) == StateByte::kEscaped);
    CHECK(narrow.initial(StateWord::loss(1)) == narrow.loss(1));
    CHECK(StateByte::code(narrow.loss(1)) == StateWord::loss(1));
    CHECK(narrow.initial(StateWord::initial(StateWord::kUndecided, 4, 1)) == StateByte::kEscaped);
    CHECK(narrow.win(2) == StateByte::kWinFar);
}

TEST_CASE("state byte: random steps follow StateWord's, far distances as far markers") {
    std::mt19937 random(24);
    for (const StateByte layout : {StateByte(), StateByte(3, StateByte::kMaxCount), StateByte(1, 5)}) {
        for (int round = 0; round < 2000; ++round) {
            const int moves = 1 + static_cast<int>(random() % 12);
            const bool cannot_lose = random() % 5 == 0;
            const std::uint16_t start = StateWord::initial(
                StateWord::kUndecided, cannot_lose ? StateWord::kCannotLose : static_cast<std::uint8_t>(moves), 1);
            std::uint16_t word = start;
            std::uint8_t byte = layout.initial(start);
            if (byte == StateByte::kEscaped) continue;  // counters above a narrowed layout's
            const bool late = random() % 4 == 0;
            auto late_loss = [&] { return late; };
            for (int level = 0; level < 80 && StateWord::is_open(word); ++level) {
                const int kind = static_cast<int>(random() % 6);
                CAPTURE(round);
                CAPTURE(level);
                if (kind == 0) {
                    const auto a = StateWord::claim_win(word, level + 1);
                    const auto b = layout.claim_win(byte, level + 1);
                    CHECK(a.changed == b.changed);
                    CHECK(a.decided == b.decided);
                } else if (kind <= 3) {
                    // Never more moves closed than are open (as in a table).
                    const int open = StateWord::open_count(word);
                    const int repeats = open >= 2 && open != StateWord::kCannotLose ? 1 + static_cast<int>(random() % 2) : 1;
                    const int child_stab = repeats == 2 && random() % 2 ? 2 : 1;
                    const auto a = StateWord::count_down(word, level, repeats, child_stab, kNoSymmetry, late_loss);
                    const auto b = layout.count_down(byte, level, repeats, child_stab, late_loss);
                    CHECK(a.changed == b.changed);
                    CHECK(a.decided == b.decided);
                } else if (level < layout.far_level()) {
                    // A pull over children at this level, some won, maybe one lost.
                    StateWord::PullCount by_word(level);
                    StateByte::PullCount by_byte(layout, level);
                    const int children = StateWord::open_count(word) == StateWord::kCannotLose
                                             ? 3
                                             : StateWord::open_count(word);
                    for (int k = 0; k < children; ++k) {
                        const int pick = static_cast<int>(random() % 8);
                        const std::uint16_t child = pick == 0   ? StateWord::loss(level)
                                                    : pick < 4 ? StateWord::win(level)
                                                    : pick < 6 ? StateWord::win(level + 1)
                                                               : StateWord::initial(StateWord::kUndecided, 2, 1);
                        // Escaped children stand for their word's value at the level.
                        const std::uint8_t as_byte =
                            random() % 3 == 0 ? by_byte.as_byte(child) : byte_of(layout, child);
                        const bool go_on = by_word.add(child);
                        CHECK(by_byte.add(as_byte) == go_on);
                        if (!go_on) break;
                    }
                    CHECK(by_word.wins() == by_byte.wins());
                    CHECK(by_word.closed() == by_byte.closed());
                    const auto a = StateWord::pull(word, word, level, by_word, late_loss);
                    const auto b = layout.pull(byte, byte, level, by_byte, late_loss);
                    CHECK(a.changed == b.changed);
                    CHECK(a.decided == b.decided);
                }
                REQUIRE(byte == byte_of(layout, word));
            }
        }
    }
}

TEST_CASE("state byte: concurrent count-downs decide a byte exactly once") {
    constexpr int kThreads = 8;
    constexpr int kMoves = StateByte::kMaxCount;
    const StateByte layout;
    for (int round = 0; round < 20; ++round) {
        std::uint8_t byte = layout.initial(StateWord::initial(StateWord::kUndecided, kMoves, 1));
        std::atomic<int> deciders{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int k = t; k < kMoves; k += kThreads) {
                    if (layout.count_down(byte, 6, 1, 1, kNever).decided >= 0) ++deciders;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(deciders == 1);
        CHECK(byte == layout.loss(7));
    }
}

}  // namespace
}  // namespace tbf
