// The retrograde engine over the naive indexer, against the Syzygy giveaway
// tables (tests/reference/syzygy) and against its own definition.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "naive_tables.hpp"
#include "syzygy_check.hpp"
#include "tbforge/rules/fen.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

void check_syzygy_rows(const std::string& file, std::size_t max_units,
                       const std::vector<std::string>& only = {}) {
    test::NaiveTables<Antichess> tables;
    const auto result = test::compare_with_syzygy(
        file,
        [&](const std::string& table) {
            return table.size() - 1 <= max_units &&
                   (only.empty() || std::find(only.begin(), only.end(), table) != only.end());
        },
        [&](const Position& pos) {
            // Positions with an en-passant right are valued from their captures.
            if (pos.ep_square() == kNoSquare) return tables.value(pos);
            MoveList list;
            generate_legal<Antichess>(pos, list);
            probe::Value best{Wdl::Loss, 0};
            for (Move m : list) {
                const auto v = probe::move_value(tables.value(pos.after(m)), true);
                if (probe::better_for_mover(v, best)) best = v;
            }
            return best;
        });
    CHECK(result.wdl_compared > 0);
}

}  // namespace

TEST_CASE("naive-index tables agree with Syzygy on 2-unit tables") {
    check_syzygy_rows("syzygy/giveaway_samples_2.tsv", 2);
}

TEST_CASE("naive-index tables agree with Syzygy on some 3-unit tables") {
    if (test::kSanitized) return;
    check_syzygy_rows("syzygy/giveaway_samples_34.tsv", 3, {"RRvK", "KPvK", "BNvQ", "PvPP", "NvBB"});
}

TEST_SUITE("slow") {
    TEST_CASE("naive-index tables agree with Syzygy on all 3-unit tables") {
        check_syzygy_rows("syzygy/giveaway_samples_34.tsv", 3);
    }
}

#include <random>
#include <tuple>

#include "table_moves.hpp"
#include "tbforge/index/work_index.hpp"

TEST_CASE("a block's moves reach the children open_children reaches from each of its slots") {
    // Block pulls read the children of 64 slots through block_children
    // (child blocks with masks, root moves re-mapped) and LastUnitMoves; a
    // slot pull lists them with open_children. Both must give every slot
    // the same children, as multisets.
    using Moves = gen::TableMoves<Antichess, index::WorkIndex>;
    std::uint64_t compared = 0, two_candidates = 0, on_diagonal = 0, folded = 0, transposed = 0;
    for (const std::string name :
         {"KRvN", "BNvK", "QvB", "KRRvK", "QQBvN", "NPvNP", "KPvKP", "PvP", "NPvP", "KPPvB", "BBvKN", "RBNvKN", "QPvBP"}) {
        CAPTURE(name);
        const auto material = index::parse_material(name);
        REQUIRE(material.ok());
        const auto work = index::WorkIndex::create(VariantId::Antichess, *material);
        REQUIRE(work.has_value());
        const Moves moves(*work, gen::ChildValue([](const Position&) { return probe::Value{Wdl::Draw, 0}; }));
        std::mt19937_64 rng(11);
        int blocks = 0;
        for (int tries = 0; tries < 20000 && blocks < (test::kSanitized ? 40 : 200); ++tries) {
            const std::uint64_t block = rng() % (work->size() >> 6);
            Square prefix[gen::kMaxTableUnits];
            if (!Moves::block_moves_apply(*work) || !work->decode_prefix(block << 6, prefix)) continue;
            ++blocks;
            for (const Color side : {Color::White, Color::Black}) {
                std::vector<std::tuple<std::uint64_t, std::uint64_t, Moves::LastSquare>> middle;  // child block, open for
                std::vector<std::pair<index::WorkIndex::RootMove, std::uint64_t>> root;
                moves.block_children(
                    block, side, prefix,
                    [&](std::uint64_t child, std::uint64_t open_for, Moves::LastSquare last) {
                        middle.emplace_back(child, open_for, last);
                        transposed += last == Moves::LastSquare::Transposed;
                    },
                    [&](const index::WorkIndex::RootMove& move, std::uint64_t open_for) {
                        two_candidates += move.alt_map != nullptr;
                        root.emplace_back(move, open_for);
                    });
                const Moves::LastUnitMoves last_unit(moves, side, block, prefix);
                const bool diagonal = work->root_on_diagonal(block << 6);
                for (int x = 0; x < 64; ++x) {
                    const std::uint64_t slot = block << 6 | static_cast<std::uint64_t>(x);
                    Square squares[gen::kMaxTableUnits];
                    Position pos;
                    if (!moves.decode(slot, side, squares, pos)) continue;
                    std::vector<std::uint64_t> listed, from_block;
                    moves.open_children(slot, pos, squares, [&](std::uint64_t child) {
                        listed.push_back(child);
                        return true;
                    });
                    for (const auto& [child, open_for, last] : middle) {
                        if (open_for >> x & 1) {
                            from_block.push_back(child << 6 | Moves::last_square(last, static_cast<Square>(x)));
                        }
                    }
                    for (const auto& [move, open_for] : root) {
                        if (open_for >> x & 1) from_block.push_back(move.child_block() << 6 | move.square(static_cast<Square>(x)));
                    }
                    if (last_unit.any()) {
                        for (Bitboard t = last_unit.targets(static_cast<Square>(x)); t;) {
                            from_block.push_back(block << 6 | last_unit.child(pop_lsb(t)));
                        }
                    }
                    on_diagonal += diagonal;
                    folded += last_unit.lands() == Moves::LastSquare::Folded;
                    std::sort(listed.begin(), listed.end());
                    std::sort(from_block.begin(), from_block.end());
                    if (listed != from_block) {
                        FAIL_CHECK(to_fen(pos) << ": " << listed.size() << " children listed, " << from_block.size()
                                               << " from the block");
                        break;
                    }
                    ++compared;
                }
            }
        }
        CHECK(blocks > 0);
    }
    MESSAGE(compared << " slots' children compared (" << on_diagonal << " with the root on the diagonal, " << folded
                     << " of them decided by the last unit), " << two_candidates << " root moves with two candidate slots, "
                     << transposed << " moves into a transposed block");
    CHECK(two_candidates > 0);
    CHECK(on_diagonal > 0);
    CHECK(folded > 0);
    CHECK(transposed > 0);
}

TEST_CASE("transposed_bits reflects every square in the a1-h8 diagonal") {
    using Moves = gen::TableMoves<Antichess, index::WorkIndex>;
    for (int s = 0; s < 64; ++s) {
        const auto square = static_cast<Square>(s);
        CHECK(Moves::transposed_bits(bit(square)) == bit(transform_square(square, kTranspose)));
    }
    CHECK(Moves::transposed_bits(0x8040201008040201ULL) == 0x8040201008040201ULL);
    CHECK(Moves::transposed_bits(0xFFULL) == 0x0101010101010101ULL);
}

TEST_CASE("a slot scan decodes every slot as decode() does, whatever slots it skips") {
    // Scans place only the last unit again while the other digits stay; the
    // skips are those of a pull pass (decided slots are passed over).
    for (const std::string name : {"KRvN", "BNvK", "KRRvK", "QQBvN", "NPvNP", "KPPvB", "BBvKN"}) {
        CAPTURE(name);
        const auto material = index::parse_material(name);
        REQUIRE(material.ok());
        const auto work = index::WorkIndex::create(VariantId::Antichess, *material);
        REQUIRE(work.has_value());
        const gen::TableMoves<Antichess, index::WorkIndex> moves(
            *work, gen::ChildValue([](const Position&) { return probe::Value{Wdl::Draw, 0}; }));
        std::mt19937_64 rng(5);
        // Windows of 20,000 slots, each scanned once
        // without skips and twice with.
        for (const int skip_one_in : {1000000, 3, 2, 1000000, 3, 2}) {
            gen::TableMoves<Antichess, index::WorkIndex>::Scan scan(moves);
            int agreed = 0;
            // From a used slot: pawns on a back rank leave long stretches unused.
            std::uint64_t start = rng() % work->size();
            for (Square at[gen::kMaxTableUnits]; !work->decode(start, at);) start = rng() % work->size();
            const std::uint64_t end = std::min<std::uint64_t>(work->size(), start + 20000);
            for (std::uint64_t slot = start; slot < end; ++slot) {
                if (rng() % static_cast<unsigned>(skip_one_in) == 0) continue;
                const Color side = (slot & 1) ? Color::Black : Color::White;
                Square squares[gen::kMaxTableUnits];
                Position pos;
                const bool valid = moves.decode(slot, side, squares, pos);
                const bool scanned = scan.decode(slot, side);
                if (scanned != valid) {
                    FAIL_CHECK("slot " << slot << ": scan " << scanned << ", decode " << valid);
                    break;
                }
                if (!valid) continue;
                const bool same_squares = std::equal(squares, squares + work->unit_count(), scan.squares());
                // The bitboards too: operator== compares the board array only.
                bool same_bitboards = scan.position().units(Color::White) == pos.units(Color::White) &&
                                      scan.position().units(Color::Black) == pos.units(Color::Black);
                for (int t = 0; t < kUnitTypeCount; ++t) {
                    same_bitboards = same_bitboards && scan.position().units(static_cast<UnitType>(t)) ==
                                                           pos.units(static_cast<UnitType>(t));
                }
                if (!same_squares || !same_bitboards || !(scan.position() == pos)) {
                    FAIL_CHECK("slot " << slot << ": " << to_fen(scan.position()) << " against " << to_fen(pos));
                    break;
                }
                ++agreed;
            }
            CAPTURE(start);
            CHECK(agreed > 0);
        }
    }
}
