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
    const std::uint64_t count =
        std::min(blocks, sides.colourings == 2 ? kColouringOrderSampleBlocks : kOrderSampleBlocks);
    std::vector<std::uint64_t> sampled;
    for (std::uint64_t i = 0; i < count; ++i) sampled.push_back(i * blocks / count);
    const unsigned width = values.code_width();

    // Stored bytes of the sampled blocks in one order, per DTC side.
    // Candidates: DTC side cand % 2 with knights' colouring cand / 2.
    const int candidates = 2 * sides.colourings;
    auto sample_bytes = [&](const index::Indexer& ix) {
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

    // The smallest order (either DTC side), and the smallest that keeps
    // children near with the side it does so for.
    index::Indexer best = rule;
    const auto rule_bytes = sample_bytes(rule);
    std::uint64_t best_bytes = std::min(rule_bytes[0], rule_bytes[1]);
    std::optional<index::Indexer> near;
    std::uint64_t near_bytes = 0;
    Color near_side = Color::White;
    auto consider_near = [&](const index::Indexer& ix, const std::array<std::uint64_t, 2>& bytes) {
        if (!near_children) return;
        for (int d = 0; d < 2; ++d) {
            if (!keeps_children_near(ix.group_order(), static_cast<Color>(d))) continue;
            if (!near || bytes[d] < near_bytes) {
                near = ix;
                near_bytes = bytes[d];
                near_side = static_cast<Color>(d);
            }
        }
    };
    consider_near(rule, rule_bytes);
    for (index::GroupOrders orders(rule.variant(), rule.material()); auto ix = orders.next();) {
        if (ix->group_order() == rule.group_order()) continue;
        const auto bytes = sample_bytes(*ix);
        consider_near(*ix, bytes);
        if (std::min(bytes[0], bytes[1]) < best_bytes) {
            best_bytes = std::min(bytes[0], bytes[1]);
            best = std::move(*ix);
        }
    }
    if (near && best_bytes >= near_min_block_bytes * sampled.size() &&
        static_cast<double>(near_bytes) <= kNearChildrenTolerance * static_cast<double>(best_bytes)) {
        return {std::move(*near), near_side};
    }
    return {std::move(best), std::nullopt};
}

}  // namespace tbf::gen
