// The free slots of a wdl-dtc/2 table and the choice of its DTC side
// (docs/values.md, docs/generation.md "Storing a table"): the store phase
// of gen/src/generate.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "table_moves.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/storage/table.hpp"
#include "tbforge/base/mix64.hpp"

namespace tbf::gen {

// Codes of the final values of one side, slots [first, first + out.size()),
// where the builder can read them in any order (values kept in RAM); empty
// where it can only stream them (out-of-core builds).
using ValueReader = std::function<void(Color side, std::uint64_t first, std::span<std::uint16_t> out)>;

// The code a free slot of `side` with wdl-dtc/1 code `code` stores in a
// compact table whose DTC side is `dtc_side` (docs/values.md): its code on
// the DTC side; on the other its WDL alone (0 draw, 1 win, 2 loss), or
// nothing when the DTC side is stored alone (the slot then repeats the
// code before it, like every slot that stores no value).
// `sides.wins_as_wdl` (wdl-dtc/6, the same units on both sides): a win of the
// DTC side is stored as its WDL alone, code 1.
// `sides.derives[d]` (wdl-dtc/7 to /9): with DTC side d, the free slots of d in
// derived placements store nothing (probe/derived_slots.hpp).
// `sides.colourings`: 2 where wdl-dtc/9 lets the writer choose the knights'
// colouring (for either DTC side), else 1 (the pawns' frame).
struct StoredSides {
    bool dtc_side_alone = false;
    bool wins_as_wdl = false;
    std::array<probe::DerivedWorths, 2> derives{};
    int colourings = 1;
    // Whether DTC side d stores nothing in side d's free slot at `squares`,
    // knights worth `k`.
    bool derived(const index::Indexer& ix, int d, const Square* squares, probe::KnightColouring k) const {
        return probe::derived_placement(ix, derives[static_cast<std::size_t>(d)], k, static_cast<Color>(d), squares);
    }
};
inline StoredSides stored_sides(std::string_view encoding, const index::Material& material) {
    const bool choice = probe::chooses_knight_colouring(encoding, material, Color::White) ||
                        probe::chooses_knight_colouring(encoding, material, Color::Black);
    return {probe::stores_dtc_side_alone(encoding, material),
            probe::stores_wins_as_wdl(encoding, material),
            {probe::derived_worths(encoding, material, Color::White),
             probe::derived_worths(encoding, material, Color::Black)},
            choice ? 2 : 1};
}
inline std::optional<std::uint16_t> stored_code(std::uint16_t code, Color side, Color dtc_side, StoredSides sides) {
    if (side == dtc_side) return sides.wins_as_wdl && (code & 1) ? std::uint16_t{1} : code;
    if (sides.dtc_side_alone) return std::nullopt;
    return code == 0 ? 0 : static_cast<std::uint16_t>(2 - (code & 1));
}

// Whether the slot holding `pos` (a placement of the table, its side to
// move set) is free, its value stored: a position (the side not to move
// not in check) with a move that stays in the table. `moves` is room for
// the move list, reused from slot to slot.
template <Ruleset R>
bool is_free_slot(const Position& pos, MoveList& moves) {
    if (side_not_to_move_in_check(R::kId, pos)) return false;
    // Attack sets decide most slots; the move list the rest.
    auto kind = probe::quick_slot_kind<R>(pos);
    if (!kind) kind = probe::slot_kind<R>(pos, moves);
    return *kind == probe::SlotKind::Free;
}

// Samples of a large table's blocks. A sample of 16 blocks is a fair share
// of a table of up to 4 units (at most about 800 blocks of 16384 slots), but
// of a 5-unit table's tens of thousands it is a few, and evenly spaced they
// fall in step with the index's radices and see one phase of the table:
// RBPvKN's 16 blocks lie about three pawn squares apart at the same place
// in each, and chose a DTC side and order twice as large as the best
// (bench/storage/README.md, "wide samples"). Where one block in
// kWideSampleShare is more than a sample holds, the choices take that many
// (at most kWideSampleBlocks), one in each of as many equal stretches of the
// table at a place a hash picks.
inline constexpr std::uint64_t kWideSampleShare = 64;
inline constexpr std::uint64_t kWideSampleBlocks = 256;
// The wide sample's seed: the DTC side and the index order are chosen on
// the same blocks, so the side the writer takes is measured where the order
// was.
inline constexpr std::uint64_t kWideSampleSeed = 2;

// The wide sample's size for a table of `blocks` blocks, 0 where it would
// hold no more than the `narrow` sample.
inline std::uint64_t wide_sample_count(std::uint64_t blocks, std::uint64_t narrow) {
    const std::uint64_t wide = std::min(kWideSampleBlocks, blocks / kWideSampleShare);
    return wide > narrow ? wide : 0;
}

// `count` of `blocks` block numbers, increasing: the first block of each of
// `count` equal stretches with seed 0 (evenly spaced), else one a hash of
// the seed and the stretch picks within it (the same for every build).
inline std::vector<std::uint64_t> sample_block_numbers(std::uint64_t blocks, std::uint64_t count, std::uint64_t seed) {
    count = std::min(count, blocks);
    std::vector<std::uint64_t> out;
    out.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t lo = i * blocks / count, hi = (i + 1) * blocks / count;
        const std::uint64_t z = mix64(seed * kGoldenGamma + i);
        out.push_back(seed == 0 || hi <= lo ? lo : lo + z % (hi - lo));
    }
    return out;
}

// What wdl-dtc/2 needs to know of a table's slots before writing the first
// one (docs/values.md): which are free, and per side how many free slots are
// decided and their largest code. Recomputed from each slot's position, so
// every builder stores the same bytes. A wdl-dtc/9 table that derives
// knights' squares has two candidate colourings (StoredSides::colourings):
// the slots are classified under both, and the sample chooses the DTC side
// and the colouring together.
template <Ruleset R>
class FreeSlots {
public:
    // Classifies every slot: the kinds depend on the positions alone, not
    // on the values, so one decode of an index serves both sides to move.
    // `slots_per_block`: the storage blocks, whose sample chooses the DTC side.
    // `near_slots`: how far back the last free slot before a sampled block
    // is read with the block rather than alone (the stored bytes do not
    // depend on it; tests vary it).
    // `sides`: what the two sides store (stored_code()).
    FreeSlots(const index::Indexer& ix, std::uint64_t slots_per_block, StoredSides sides = {},
              std::uint64_t near_slots = kNearSlots)
        : ix_(ix),
          sides_(sides),
          colourings_(std::clamp(sides.colourings, 1, 2)),
          slots_per_block_(slots_per_block),
          near_slots_(near_slots),
          block_shift_(static_cast<unsigned>(std::countr_zero(slots_per_block))) {
        // Up to kSampleBlocks blocks spread evenly over the table
        // (kColouringSampleBlocks where a colouring is chosen too), or a
        // large table's wide sample.
        const std::uint64_t blocks = (2 * ix.size() + slots_per_block - 1) / slots_per_block;
        const std::uint64_t narrow =
            std::min<std::uint64_t>(blocks, colourings_ == 2 ? kColouringSampleBlocks : kSampleBlocks);
        const std::uint64_t wide = wide_sample_count(blocks, narrow);
        sample_blocks_ = wide == 0 ? sample_block_numbers(blocks, narrow, 0)
                                   : sample_block_numbers(blocks, wide, kWideSampleSeed);
        classify();
    }

    // Whether slot `index` of `side` is free and stored, under the chosen
    // colouring (the table's first candidate until one is chosen).
    bool is_free(Color side, std::uint64_t index) const { return is_free(colouring_index(), side, index); }

    // Survey from the values in slot order (White to move first): the
    // decided free slots and largest codes per side, and the sampled blocks.
    void add(Color side, std::uint64_t first, std::span<const std::uint16_t> codes) {
        const int c = to_index(side);
        for (int k = 0; k < colourings_; ++k) {
            for (std::size_t i = 0; i < codes.size(); ++i) {
                if (!is_free(k, side, first + i)) continue;
                decided_[k][c] += codes[i] != 0;
                max_code_[k][c] = std::max(max_code_[k][c], codes[i]);
            }
        }
        if (first == 0) previous_ = {};
        const std::uint64_t base = to_index(side) * ix_.size() + first;
        for (std::size_t i = 0; i < codes.size(); ++i) {
            remember(side, first + i, codes[i]);
            // Slots come in increasing order: the cursor only moves forward.
            const std::uint64_t block = (base + i) >> block_shift_;
            while (cursor_ < sample_blocks_.size() && sample_blocks_[cursor_] < block) ++cursor_;
            if (cursor_ < sample_blocks_.size() && sample_blocks_[cursor_] == block) keep_previous();
        }
        surveyed_ = true;
    }

    // The sampled blocks alone, read from values kept in RAM: the same
    // sample add() gathers, without reading every value. Each side's part
    // of a block starts from the last free slot before it.
    void sample(const ValueReader& read) {
        const std::uint64_t n = ix_.size();
        std::vector<std::uint16_t> codes;
        for (const std::uint64_t block : sample_blocks_) {
            const std::uint64_t begin = block * slots_per_block_;
            const std::uint64_t end = std::min(2 * n, begin + slots_per_block_);
            for (int c = 0; c < 2; ++c) {
                const auto side = static_cast<Color>(c);
                const std::uint64_t lo = std::max(begin, c * n), hi = std::min(end, (c + 1) * n);
                if (lo >= hi) continue;
                const std::uint64_t first = lo - c * n;
                previous_ = {};
                // The slots the block's first codes repeat (one a colouring)
                // are read with the block when they are near (every read is
                // a parallel region), else one by one.
                std::uint64_t from = first;
                std::array<std::optional<std::uint64_t>, 2> before{};
                bool near = true;
                for (int k = 0; k < colourings_; ++k) {
                    before[k] = last_free_before(k, side, first);
                    if (!before[k]) continue;
                    from = std::min(from, *before[k]);
                    near = near && first - *before[k] <= near_slots_;
                }
                if (!near) {
                    from = first;
                    for (int k = 0; k < colourings_; ++k) {
                        if (!before[k]) continue;
                        std::uint16_t code = 0;
                        read(side, *before[k], std::span(&code, 1));
                        remember_as(k, side, code);
                    }
                }
                codes.resize(static_cast<std::size_t>(hi - lo + first - from));
                read(side, from, codes);
                for (std::size_t i = 0; i < codes.size(); ++i) {
                    remember(side, from + i, codes[i]);
                    if (from + i >= first) keep_previous();
                }
            }
        }
    }

    // The DTC side and colouring, once the sample is taken: the pair whose
    // sampled blocks compress smaller with the table's write options (a
    // side's colourings compared first, the pawns' frame on a tie); on a
    // tie between the sides (or no sample) the one with fewer decided free
    // slots, White on a tie (bench/storage/encoding_study.cpp). It depends
    // on the values alone. nullopt when only a survey (add()) can break the
    // tie.
    std::optional<Color> choose_dtc_side(const storage::TableWriteOptions& options) {
        for (int k = 0; k < colourings_; ++k) {
            for (int d = 0; d < 2; ++d) {
                const int cand = candidate(k, d);
                // The width only changes the high byte plane, all zeros below
                // 256, so the comparison does not depend on knowing it exactly.
                const unsigned width = surveyed_ && max_code_[k][d] > 0xFF ? 2 : 1;
                std::vector<std::uint8_t> raw;
                bytes_[cand] = varied_bytes_[cand] = varied_blocks_[cand] = 0;
                const auto& sample = sample_[cand];
                for (std::size_t at = 0; at < sample.size(); at += slots_per_block_) {
                    const std::size_t n = std::min<std::size_t>(slots_per_block_, sample.size() - at);
                    raw.resize(n * width);
                    bool varied = false;
                    for (std::size_t i = 0; i < n; ++i) {
                        raw[i * width] = static_cast<std::uint8_t>(sample[at + i]);
                        if (width == 2) raw[i * 2 + 1] = static_cast<std::uint8_t>(sample[at + i] >> 8);
                        varied = varied || sample[at + i] != sample[at];
                    }
                    const std::size_t record = storage::block_record_bytes(raw, width, options);
                    bytes_[cand] += record;
                    if (varied) varied_bytes_[cand] += record, ++varied_blocks_[cand];
                }
            }
        }
        const std::array<int, 2> k = {best_colouring(0), best_colouring(1)};
        const std::uint64_t white = bytes_[candidate(k[0], 0)], black = bytes_[candidate(k[1], 1)];
        if (white != black) {
            dtc_side_ = black < white ? Color::Black : Color::White;
        } else {
            if (!surveyed_) return std::nullopt;
            dtc_side_ = decided_[k[1]][1] < decided_[k[0]][0] ? Color::Black : Color::White;
        }
        colouring_ = static_cast<probe::KnightColouring>(k[to_index(dtc_side_)]);
        return dtc_side_;
    }
    // After choose_dtc_side(): store `side` as the DTC side instead (either
    // side gives a correct table; the sampled sizes stay), with the
    // colouring its sample prefers.
    void prefer_dtc_side(Color side) {
        dtc_side_ = side;
        colouring_ = static_cast<probe::KnightColouring>(best_colouring(to_index(side)));
    }
    bool surveyed() const { return surveyed_; }
    // With the DTC side chosen (once chosen): the sampled blocks holding
    // more than one code, and the bytes they took as one-block records.
    // A block of one code is stored as a fill (storage-format.md section
    // 4) whatever the layout, so only these tell what a block costs (half
    // the sample of a table storing one side to move is such fills).
    std::uint64_t sampled_blocks() const { return varied_blocks_[chosen()]; }
    std::uint64_t sampled_record_bytes() const { return varied_bytes_[chosen()]; }
    void clear_sample() {
        sample_ = {};
        cursor_ = 0;
        previous_ = {};
    }
    Color dtc_side() const { return dtc_side_; }
    // The knights' colouring chosen with the DTC side (the pawns' frame
    // where the table has no choice).
    probe::KnightColouring colouring() const { return colouring_; }
    // The sampled blocks' slots in order as DTC side `candidate` would
    // store them with colouring `k`, once sampled (by add() or sample()).
    const std::vector<std::uint16_t>& sampled(Color candidate,
                                              probe::KnightColouring k = probe::KnightColouring::PawnFrame) const {
        return sample_[this->candidate(static_cast<int>(k) < colourings_ ? static_cast<int>(k) : 0, to_index(candidate))];
    }
    // The largest stored code with DTC side d, once surveyed: its codes, or
    // a WDL code (at most 2).
    std::uint16_t max_code(Color d) const {
        return std::max<std::uint16_t>(max_code_[colouring_index()][to_index(d)], 2);
    }
    std::uint16_t max_code() const { return max_code(dtc_side_); }

    static constexpr std::uint64_t kNearSlots = 4096;

private:
    static constexpr std::uint64_t kSampleBlocks = 16;
    // An index led by a knight puts whole blocks in or out of the derived
    // placements, so 16 blocks see too few of its squares to tell the
    // colourings apart: NNPvN took 1.18 times its bytes with the colouring
    // they chose (bench/storage/README.md).
    static constexpr std::uint64_t kColouringSampleBlocks = 64;
    // Candidates: DTC side d with colouring k.
    static constexpr int kCandidates = 4;
    static int candidate(int k, int d) { return 2 * k + d; }
    int colouring_index() const { return static_cast<int>(colouring_); }
    int chosen() const { return candidate(colouring_index(), to_index(dtc_side_)); }
    // Side d's colouring with the smaller sample, the pawns' frame on a tie.
    int best_colouring(int d) const {
        return colourings_ == 2 && bytes_[candidate(1, d)] < bytes_[candidate(0, d)] ? 1 : 0;
    }
    bool is_free(int k, Color side, std::uint64_t index) const {
        return bits_[k][to_index(side)][index / 64] >> (index % 64) & 1;
    }

    void classify() {
        const std::uint64_t n = ix_.size();
        for (int k = 0; k < colourings_; ++k)
            for (auto& bits : bits_[k]) bits.assign((n + 63) / 64, 0);
        // Runs of consecutive indices, each decoded from the one before
        // (Indexer::decode_next); the position as Indexer::position() makes
        // it. A run covers whole words of bits, so threads never share one.
        constexpr std::int64_t kRun = 1024;
        const auto runs = static_cast<std::int64_t>((n + kRun - 1) / kRun);
#pragma omp parallel for schedule(dynamic, 16)
        for (std::int64_t run = 0; run < runs; ++run) {
            Square squares[kMaxTableUnits];
            MoveList moves;
            const auto begin = static_cast<std::uint64_t>(run * kRun);
            const std::uint64_t end = std::min<std::uint64_t>(n, begin + kRun);
            for (std::uint64_t i = begin; i < end; ++i) {
                if (!(i == begin ? ix_.decode(i, squares) : ix_.decode_next(i, squares))) continue;
                Position pos;
                for (int u = 0; u < ix_.unit_count(); ++u) pos.put(squares[u], ix_.unit(u));
                for (int c = 0; c < 2; ++c) {
                    // A derived slot is free for no candidate: with the other
                    // side as DTC side, side c stores nothing anyway.
                    std::array<bool, 2> stored{};
                    bool any = false;
                    for (int k = 0; k < colourings_; ++k) {
                        stored[k] = !sides_.derived(ix_, c, squares, static_cast<probe::KnightColouring>(k));
                        any = any || stored[k];
                    }
                    if (!any) continue;
                    pos.set_side_to_move(static_cast<Color>(c));
                    if (!is_free_slot<R>(pos, moves)) continue;
                    for (int k = 0; k < colourings_; ++k)
                        if (stored[k]) bits_[k][c][i / 64] |= std::uint64_t{1} << (i % 64);
                }
            }
        }
    }

    // The last free slot of `side` below index `first` under colouring k, if any.
    std::optional<std::uint64_t> last_free_before(int k, Color side, std::uint64_t first) const {
        const auto& bits = bits_[k][to_index(side)];
        std::uint64_t word = first / 64;
        std::uint64_t mask = first % 64 == 0 ? 0 : bits[word] & ((std::uint64_t{1} << (first % 64)) - 1);
        while (mask == 0) {
            if (word == 0) return std::nullopt;
            mask = bits[--word];
        }
        return word * 64 + 63 - static_cast<std::uint64_t>(std::countl_zero(mask));
    }

    // Slot `index` of `side` holding `code`: what each candidate stores
    // there, where it is free under the candidate's colouring.
    void remember(Color side, std::uint64_t index, std::uint16_t code) {
        for (int k = 0; k < colourings_; ++k)
            if (is_free(k, side, index)) remember_as(k, side, code);
    }
    // A free slot's code as each DTC side would store it with colouring k.
    void remember_as(int k, Color side, std::uint16_t code) {
        for (int d = 0; d < 2; ++d) {
            if (auto stored = stored_code(code, side, static_cast<Color>(d), sides_)) previous_[candidate(k, d)] = *stored;
        }
    }
    void keep_previous() {
        for (int cand = 0; cand < 2 * colourings_; ++cand) sample_[cand].push_back(previous_[cand]);
    }

    const index::Indexer& ix_;
    StoredSides sides_;
    int colourings_;
    // Per colouring and side, a bit an index: free and stored.
    std::array<std::array<std::vector<std::uint64_t>, 2>, 2> bits_;
    std::array<std::array<std::uint64_t, 2>, 2> decided_{};
    std::array<std::array<std::uint16_t, 2>, 2> max_code_{};
    bool surveyed_ = false;
    std::uint64_t slots_per_block_;
    std::uint64_t near_slots_;
    unsigned block_shift_;                        // slots_per_block_ is a power of two
    std::vector<std::uint64_t> sample_blocks_;    // ascending block numbers
    std::size_t cursor_ = 0;                      // the first not behind the slots added
    std::array<std::uint16_t, kCandidates> previous_{};  // per candidate
    std::array<std::vector<std::uint16_t>, kCandidates> sample_;  // per candidate, the sampled blocks' slots in order
    std::array<std::uint64_t, kCandidates> bytes_{};
    std::array<std::uint64_t, kCandidates> varied_bytes_{};
    std::array<std::uint64_t, kCandidates> varied_blocks_{};
    Color dtc_side_ = Color::White;
    probe::KnightColouring colouring_ = probe::KnightColouring::PawnFrame;
};

}  // namespace tbf::gen
