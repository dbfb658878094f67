// The index group order a wdl-dtc/3 table is stored in (docs/values.md,
// docs/generation.md "Storing a table"): of every order the indexer
// accepts, the one whose sampled blocks, laid out and filled as wdl-dtc/2
// stores them, compress smallest. The rule's order wins ties.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "free_slots.hpp"
#include "table_build.hpp"
#include "table_moves.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::gen {

// Blocks sampled per order: the choice costs a decode, a classification and
// a value read per sampled slot and order. 16 rather than 4: the ≤4 set 3 %
// smaller for about a tenth more generation time; 32 saves 1 % more for a
// fifth more again (bench/storage/README.md).
inline constexpr std::uint64_t kOrderSampleBlocks = 16;
// A large table (more blocks than wide_sample_count() needs): every order
// on this many scattered blocks first, then the kWideFinalists smallest on
// the wide sample. 16 evenly spaced blocks of RBPvKN's 41,883 fall in step
// with its pawn's squares and chose an order and side twice as large as
// the best (bench/storage/README.md, "wide samples").
inline constexpr std::uint64_t kWideFirstSampleBlocks = 64;
inline constexpr std::size_t kWideFinalists = 4;
// Reading a table's values in another order than the rule's takes a pass
// of its own (KKKvKKK: 67.6 s of a 169.6 s build, for 0.9998 of its bytes),
// and 256 blocks of a table whose blocks range from fills to kilobytes
// still differ by a few percent from sample to sample (KKKvKKK's two
// mirror-image orders, the same bytes stored, sampled over 2 % apart). So on
// the wide sample the rule's order counts at this share of its bytes:
// another order must save 5 % to be taken.
inline constexpr double kWideRuleOrderShare = 0.95;
inline constexpr std::uint64_t kOrderFirstSampleSeed = 1;
// wdl-dtc/9 tables that choose a knights' colouring: as many as the writer's
// sample (FreeSlots::kColouringSampleBlocks). With 16, an order led by a
// knight, whose blocks lie wholly in or out of the derived placements, was
// chosen on a sample that favoured it by chance (NNvNP 1.37 times its
// bytes).
inline constexpr std::uint64_t kColouringOrderSampleBlocks = 64;
// How far back the code a sampled block starts from is looked for.
inline constexpr std::uint64_t kOrderLookBack = 4096;

// wdl-dtc/5, sides of different units: a probe off the DTC side searches
// one ply, over children that differ from it by a move of a unit of the
// side to move there. With those units in the last groups (the lowest
// digits of the slot) the children lie in one or two blocks, which a probe
// without a cache decodes each; anywhere else, in several (KRvKN in the
// order chosen for size alone: 3.7 blocks; with Black's DTC side and
// White's units last: 1.1). Such an order and side is taken where its
// sample is at most this much larger than the smallest one's
// (bench/storage/README.md, "a one-ply search's children in one block").
inline constexpr double kNearChildrenTolerance = 1.05;
// wdl-dtc/6, the same units on both sides: the preference applies only where
// the smallest sample averages at least this many bytes a block. Below, the
// blocks are nearly all fills, which a probe reads without a decode, and the
// samples are mostly fixed record costs that miss the stored size by more
// than the tolerance (QRvQR: 564 against 560 sampled, 167 against 151 B
// stored).
inline constexpr std::uint64_t kNearMinBlockBytesSameUnits = 48;

// Whether `encoding` prefers an order that keeps a one-ply search's children
// near for a table of `material`: wdl-dtc/5 where the sides have different
// units (the search off the DTC side), every table from wdl-dtc/6 on (with
// the same units, a win's search too).
inline bool keeps_search_children_near(std::string_view encoding, const index::Material& material) {
    const int number = probe::value_encoding_number(encoding);
    return number >= 6 || (number == 5 && material != material.flipped());
}

// True when every unit of the side off `dtc_side` comes after every unit of
// `dtc_side` in `order`.
inline bool keeps_children_near(const std::vector<Unit>& order, Color dtc_side) {
    bool off_side_seen = false;
    for (const Unit u : order) {
        if (unit_color(u) != dtc_side) {
            off_side_seen = true;
        } else if (off_side_seen) {
            return false;
        }
    }
    return true;
}

// The order chosen, and with `near_children` the DTC side it was chosen
// with (unset: the writer's sample decides, as for every other encoding).
struct ChosenOrder {
    index::Indexer indexer;
    std::optional<Color> dtc_side;
};

// The order of a table stored in `encoding` (wdl-dtc/3 to /6): the slots
// laid out as the encoding stores them (stored_sides()), and where
// keeps_search_children_near() an order and DTC side that keep a one-ply
// search's children near each other, within kNearChildrenTolerance (for
// tables with the same units only where the smallest sample holds
// kNearMinBlockBytesSameUnits a block).
template <Ruleset R>
ChosenOrder choose_group_order(const index::Indexer& rule, const ExactValues& values,
                               const storage::TableWriteOptions& options, std::string_view encoding) {
    const index::Material& material = rule.material();
    const StoredSides sides = stored_sides(encoding, material);
    const bool near_children = keeps_search_children_near(encoding, material);
    const std::uint64_t near_min_block_bytes = material == material.flipped() ? kNearMinBlockBytesSameUnits : 0;
    const std::uint64_t n = rule.size();
    const std::uint64_t per_block = options.slots_per_block;
    const std::uint64_t blocks = (2 * n + per_block - 1) / per_block;
    const std::uint64_t narrow =
        std::min(blocks, sides.colourings == 2 ? kColouringOrderSampleBlocks : kOrderSampleBlocks);
    // A large table: every order on a first scattered sample, the few
    // smallest again on a wide one (sample_block_numbers()).
    const std::uint64_t wide = wide_sample_count(blocks, narrow);
    const std::vector<std::uint64_t> first_sample =
        wide == 0 ? sample_block_numbers(blocks, narrow, 0)
                  : sample_block_numbers(blocks, std::max(narrow, kWideFirstSampleBlocks), kOrderFirstSampleSeed);
    const unsigned width = values.code_width();

    // Stored bytes of the sampled blocks in one order, per DTC side.
    // Candidates: DTC side cand % 2 with knights' colouring cand / 2.
    const int candidates = 2 * sides.colourings;
    auto sample_bytes = [&](const index::Indexer& ix, const std::vector<std::uint64_t>& sampled) {
        std::uint64_t bytes[4] = {0, 0, 0, 0};
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bytes[:4])
        for (std::size_t b = 0; b < sampled.size(); ++b) {
            ExactValues::PlacedReader reader(values, ix);
            MoveList moves;
            // The code of slot s as each DTC side stores it if free; nullopt
            // for a slot that is not free (it repeats the one before).
            auto free_code = [&](std::uint64_t s, Square* squares, bool next) -> std::optional<std::uint16_t> {
                const auto side = static_cast<Color>(s / n);
                const std::uint64_t i = s % n;
                if (!(next ? ix.decode_next(i, squares) : ix.decode(i, squares))) return std::nullopt;
                Position pos;
                for (int u = 0; u < ix.unit_count(); ++u) pos.put(squares[u], ix.unit(u));
                pos.set_side_to_move(side);
                if (!is_free_slot<R>(pos, moves)) return std::nullopt;
                return reader.code(side, squares);
            };
            // A free slot's code as candidate `cand` (DTC side cand % 2,
            // knights' colouring cand / 2) stores it (or nothing).
            auto store = [&](std::uint16_t& previous, std::uint16_t code, Color side, int cand, const Square* squares) {
                const int d = cand % 2;
                const auto colouring = static_cast<probe::KnightColouring>(cand / 2);
                if (to_index(side) == d && sides.derived(ix, d, squares, colouring)) return;  // wdl-dtc/7 to /9: nothing
                if (auto stored = stored_code(code, side, static_cast<Color>(d), sides)) previous = *stored;
            };
            const std::uint64_t begin = sampled[b] * per_block;
            const std::uint64_t end = std::min(2 * n, begin + per_block);
            Square squares[kMaxTableUnits];
            std::uint16_t previous[4] = {0, 0, 0, 0};
            // The block's first slots repeat the last free code before it
            // (a candidate that derives that slot starts from 0: a sample).
            const std::uint64_t side_start = begin / n * n;
            for (std::uint64_t s = begin; s > side_start && begin - s < kOrderLookBack;) {
                --s;
                if (auto code = free_code(s, squares, false)) {
                    for (int cand = 0; cand < candidates; ++cand)
                        store(previous[cand], *code, static_cast<Color>(s / n), cand, squares);
                    break;
                }
            }
            std::vector<std::uint8_t> raw[4];
            for (int cand = 0; cand < candidates; ++cand) raw[cand].assign((end - begin) * width, 0);
            for (std::uint64_t s = begin; s < end; ++s) {
                if (s % n == 0) std::fill(std::begin(previous), std::end(previous), std::uint16_t{0});
                const bool next = s != begin && s % n != 0;
                if (auto code = free_code(s, squares, next)) {
                    for (int cand = 0; cand < candidates; ++cand)
                        store(previous[cand], *code, static_cast<Color>(s / n), cand, squares);
                }
                for (int cand = 0; cand < candidates; ++cand) {
                    raw[cand][(s - begin) * width] = static_cast<std::uint8_t>(previous[cand]);
                    if (width == 2) raw[cand][(s - begin) * 2 + 1] = static_cast<std::uint8_t>(previous[cand] >> 8);
                }
            }
            for (int cand = 0; cand < candidates; ++cand)
                bytes[cand] += storage::block_record_bytes(raw[cand], width, options);
        }
        // Each side with its smaller colouring (wdl-dtc/9; the writer's
        // sample chooses again, from the same rule).
        std::array<std::uint64_t, 2> side_bytes = {bytes[0], bytes[1]};
        for (int cand = 2; cand < candidates; ++cand)
            side_bytes[cand % 2] = std::min(side_bytes[cand % 2], bytes[cand]);
        return side_bytes;
    };

    // Every order's sample, the rule's first (it wins ties).
    struct Measured {
        index::Indexer ix;
        std::array<std::uint64_t, 2> bytes;
    };
    auto smaller_side = [](const Measured& m) { return std::min(m.bytes[0], m.bytes[1]); };
    std::vector<Measured> measured;
    measured.push_back({rule, sample_bytes(rule, first_sample)});
    for (index::GroupOrders orders(rule.variant(), rule.material()); auto ix = orders.next();) {
        if (ix->group_order() == rule.group_order()) continue;
        auto bytes = sample_bytes(*ix, first_sample);
        measured.push_back({std::move(*ix), bytes});
    }

    // Of orders measured on one sample: the smallest (either DTC side), and
    // the smallest that keeps children near with the side it does so for.
    struct Choice {
        std::size_t best = 0;
        std::optional<std::size_t> near;
        Color near_side = Color::White;
    };
    auto choose = [&](const std::vector<Measured>& compared) {
        Choice c;
        for (std::size_t k = 0; k < compared.size(); ++k) {
            if (smaller_side(compared[k]) < smaller_side(compared[c.best])) c.best = k;
            if (!near_children) continue;
            for (int d = 0; d < 2; ++d) {
                if (!keeps_children_near(compared[k].ix.group_order(), static_cast<Color>(d))) continue;
                if (!c.near || compared[k].bytes[d] < compared[*c.near].bytes[to_index(c.near_side)]) {
                    c.near = k;
                    c.near_side = static_cast<Color>(d);
                }
            }
        }
        return c;
    };
    Choice choice = choose(measured);
    std::uint64_t sample_blocks = first_sample.size();
    if (wide != 0) {
        // The finalists (the smallest orders of the first sample, the
        // smallest that keeps children near and the rule's), measured again
        // on the wide sample, the rule's first. The rule's counts at
        // kWideRuleOrderShare of its bytes: another order is read from the
        // values in a pass of its own.
        std::vector<std::size_t> ranked(measured.size());
        for (std::size_t k = 0; k < ranked.size(); ++k) ranked[k] = k;
        std::stable_sort(ranked.begin(), ranked.end(),
                         [&](std::size_t x, std::size_t y) { return smaller_side(measured[x]) < smaller_side(measured[y]); });
        ranked.resize(std::min<std::size_t>(ranked.size(), kWideFinalists));
        for (const std::size_t k : {std::size_t{0}, choice.near.value_or(0)})
            if (std::find(ranked.begin(), ranked.end(), k) == ranked.end()) ranked.push_back(k);
        std::sort(ranked.begin(), ranked.end());
        const std::vector<std::uint64_t> wide_sample = sample_block_numbers(blocks, wide, kWideSampleSeed);
        std::vector<Measured> finalists;
        for (const std::size_t k : ranked)
            finalists.push_back({measured[k].ix, sample_bytes(measured[k].ix, wide_sample)});
        for (std::uint64_t& bytes : finalists.front().bytes)
            bytes = static_cast<std::uint64_t>(kWideRuleOrderShare * static_cast<double>(bytes));
        measured = std::move(finalists);
        choice = choose(measured);
        sample_blocks = wide_sample.size();
    }
    const std::uint64_t best_bytes = smaller_side(measured[choice.best]);
    if (choice.near && best_bytes >= near_min_block_bytes * sample_blocks &&
        static_cast<double>(measured[*choice.near].bytes[to_index(choice.near_side)]) <=
            kNearChildrenTolerance * static_cast<double>(best_bytes)) {
        return {std::move(measured[*choice.near].ix), choice.near_side};
    }
    return {std::move(measured[choice.best].ix), std::nullopt};
}

}  // namespace tbf::gen
