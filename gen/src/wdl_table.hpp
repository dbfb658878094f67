#pragma once
// A finished sub-table kept in memory by its win/draw/loss alone, 2 bits a
// stored slot (an eighth of its decoded codes). The generator reads
// sub-tables only through conversions (captures, promotions, and the
// captures after a double push into en passant), and a converting move is
// worth distance 1 whatever the distance of the position it reaches
// (probe::move_value), so the DTC of a sub-table position is never needed.
//
// A wdl-dtc/2 table stores no value where a one-ply look over its own
// sub-tables gives it back, and its stored code holds only for the slots a
// move keeps in the table. Such a table is resolved lazily: the stored
// code's WDL is kept for every slot, and a slot is classified (and, if its
// moves all leave the table, valued over the sub-tables) the first time it
// is read, the answer kept for later reads. A parent reads only the slots
// its conversions reach (a promotion reaches a few in a hundred of a
// table), so resolving the whole table when it is loaded wasted most of
// the work.
//
// A parent's conversions reach a sub-table at one side to move only (the
// mover hands the move over: a white capture or promotion lands on black to
// move), so only the sides read are kept: half the bytes for most.

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/value.hpp"
#include "tbforge/rules/symmetry.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::gen {

class WdlTable {
public:
    // Tables of three or four units also answer by placement
    // (map_placements).
    static constexpr int kMinMappedUnits = 3;
    static constexpr int kMaxMappedUnits = 4;

    // Bytes held for `slot_count` kept slots (n per side kept); a
    // wdl-dtc/2 table (`compact`) adds a bit a slot: read already or not.
    static constexpr std::uint64_t bytes_for(std::uint64_t slot_count, bool compact = false) {
        const std::uint64_t wdl = (slot_count + 31) / 32 * 8;
        return compact ? wdl + (slot_count + 63) / 64 * 8 : wdl;
    }

    // Whether a table of `units` units keeps placement maps (map_placements).
    static constexpr bool maps_units(int units) { return units >= kMinMappedUnits && units <= kMaxMappedUnits; }
    // Bytes of the placement map kept for one side to move (map_placements).
    static constexpr std::uint64_t map_bytes(int units, bool compact = false) {
        return maps_units(units) && !compact ? (std::uint64_t{1} << (6 * units)) / 4 : 0;
    }

    // Both sides to move, for `sides`.
    static constexpr unsigned kBothSides = 3;
    static constexpr unsigned side_bit(Color side) { return 1u << to_index(side); }

    // The WDL of every slot of a table as its stored codes give it, for the
    // sides to move in `sides` (side_bit), read block by block on every
    // thread (probe::Table::for_each_block): no decoded copy is made. A
    // wdl-dtc/2 table's other slots are valued when first read, by
    // `resolver` (the same table, opened through the block cache), which
    // the WdlTable keeps. `map`: also keep the placement map
    // (map_placements) where the table has one.
    static Result<WdlTable> from(const probe::Table& table, std::shared_ptr<const probe::Table> resolver = nullptr,
                                 unsigned sides = kBothSides, bool map = true) {
        WdlTable out(table.indexer());
        const std::uint64_t n = out.ix_.size();
        out.sides_ = sides & kBothSides;
        // Kept sides follow each other: white's slots, then black's.
        out.first_[1] = out.sides_ & 1 ? n : 0;
        const std::uint64_t slots = static_cast<std::uint64_t>(std::popcount(out.sides_)) * n;
        out.words_.assign((slots + 31) / 32, 0);
        if (table.compact()) {
            if (!resolver) return invalid_argument("a wdl-dtc/2 sub-table needs a table to resolve its slots");
            out.resolver_ = std::move(resolver);
            out.checked_.assign((slots + 63) / 64, 0);
        }
        const Status read = table.for_each_block([&](const storage::Block& block) {
            // Stored slots [c * n, (c + 1) * n) are side c's; a kept side's
            // slots start at first_[c] here. Blocks share at most their end
            // words with others: every word is or-ed in.
            const std::uint64_t block_end = block.first_slot() + block.size();
            for (int c = 0; c < 2; ++c) {
                if (!(out.sides_ & side_bit(static_cast<Color>(c)))) continue;
                const std::uint64_t side_first = static_cast<std::uint64_t>(c) * n;
                const std::uint64_t begin = std::max(block.first_slot(), side_first);
                const std::uint64_t end = std::min(block_end, side_first + n);
                std::uint64_t bits = 0;
                for (std::uint64_t stored = begin; stored < end; ++stored) {
                    const std::uint64_t slot = out.first_[c] + stored - side_first;
                    const auto code = static_cast<std::uint16_t>(block.value(stored - block.first_slot()));
                    bits |= static_cast<std::uint64_t>(bits_of(probe::decode_value(code).wdl)) << (2 * (slot % 32));
                    if (slot % 32 == 31 || stored + 1 == end) {
                        if (bits != 0) std::atomic_ref(out.words_[slot / 32]).fetch_or(bits, std::memory_order_relaxed);
                        bits = 0;
                    }
                }
            }
        });
        if (!read.ok()) return read;
        if (map && !table.compact()) out.map_placements();
        return out;
    }

    // The WDL of a table this run has just built, from the codes of every
    // slot (wdl-dtc/1 codes, exact values), for the sides in `sides`:
    // nothing is left to resolve, so a compact table's later readers skip
    // the one-ply valuations its stored form would need. `read(side,
    // first, out)` gives the codes of slots [first, first + out.size()) in
    // `ix`'s order. `map`: also keep the placement map where the table has one.
    template <class ReadCodes>
    static WdlTable from_codes(const index::Indexer& ix, unsigned sides, bool map, ReadCodes&& read) {
        WdlTable out(ix);
        const std::uint64_t n = out.ix_.size();
        out.sides_ = sides & kBothSides;
        out.first_[1] = out.sides_ & 1 ? n : 0;
        const std::uint64_t slots = static_cast<std::uint64_t>(std::popcount(out.sides_)) * n;
        out.words_.assign((slots + 31) / 32, 0);
        constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;  // codes read at a time
        std::vector<std::uint16_t> codes(kChunk);
        for (int c = 0; c < 2; ++c) {
            const auto side = static_cast<Color>(c);
            if (!(out.sides_ & side_bit(side))) continue;
            for (std::uint64_t first = 0; first < n; first += kChunk) {
                const auto count = static_cast<std::int64_t>(std::min(kChunk, n - first));
                read(side, first, std::span<std::uint16_t>(codes.data(), static_cast<std::size_t>(count)));
                // A word at a time; a word at a chunk's edge may hold slots of
                // the next chunk or of the other side too, so each is or-ed in.
                const std::uint64_t base = out.first_[c] + first;
                const std::uint64_t end = base + static_cast<std::uint64_t>(count);
                const auto words = static_cast<std::int64_t>((end + 31) / 32 - base / 32);
#pragma omp parallel for schedule(static) if (count >= (std::int64_t{1} << 16))
                for (std::int64_t w = 0; w < words; ++w) {
                    const std::uint64_t word = base / 32 + static_cast<std::uint64_t>(w);
                    std::uint64_t bits = 0;
                    for (std::uint64_t slot = std::max(base, word * 32); slot < std::min(end, word * 32 + 32); ++slot) {
                        const std::uint16_t code = codes[static_cast<std::size_t>(slot - base)];
                        bits |= static_cast<std::uint64_t>(bits_of(probe::decode_value(code).wdl)) << (2 * (slot % 32));
                    }
                    if (bits != 0) std::atomic_ref(out.words_[word]).fetch_or(bits, std::memory_order_relaxed);
                }
            }
        }
        if (map) out.map_placements();
        return out;
    }

    WdlTable(WdlTable&& other) noexcept
        : ix_(std::move(other.ix_)),
          words_(std::move(other.words_)),
          checked_(std::move(other.checked_)),
          placements_(std::move(other.placements_)),
          resolver_(std::move(other.resolver_)),
          sides_(other.sides_),
          first_(other.first_) {}

    const index::Indexer& indexer() const { return ix_; }
    // The sides to move kept (side_bit).
    unsigned sides() const { return sides_; }
    std::uint64_t bytes() const {
        return (words_.size() + checked_.size() + placements_[0].size() + placements_[1].size()) *
               sizeof(std::uint64_t);
    }

    // The value of a slot for its side to move, DTC 0: only the WDL is kept.
    // Safe from parallel loops; a wdl-dtc/2 slot that cannot be valued (a
    // damaged sub-table of its own), or a side not kept, reads as a draw and
    // leaves error() set.
    probe::Value value(Color side, std::uint64_t index) const {
        if (!(sides_ & side_bit(side))) [[unlikely]] {
            not_kept(side);
            return {Wdl::Draw, 0};
        }
        const std::uint64_t slot = first_[to_index(side)] + index;
        if (!checked_.empty() &&
            !(std::atomic_ref(checked_[slot / 64]).load(std::memory_order_acquire) >> (slot % 64) & 1)) {
            return {resolve(side, index, slot), 0};
        }
        return {wdl_of(std::atomic_ref(words_[slot / 32]).load(std::memory_order_relaxed) >> (2 * (slot % 32)) & 3),
                0};
    }

    // Whether `side`'s values are also kept by placement (maps_units, not
    // wdl-dtc/2, asked for).
    bool maps_placements(Color side) const { return !placements_[to_index(side)].empty(); }
    // For a side kept by placement: value() of the slot of a placement
    // (squares in the indexer's unit order, distinct), read from the map
    // without an encode; false where the placement has no slot.
    bool mapped_value(Color side, const Square* placed, probe::Value& out) const {
        std::uint32_t key = 0;
        for (int u = 0; u < ix_.unit_count(); ++u) key = key << 6 | placed[u];
        const auto bits = static_cast<unsigned>(placements_[to_index(side)][key / 32] >> (2 * (key % 32)) & 3);
        out = {wdl_of(bits), 0};
        return bits != kUnplaced;
    }

    // Frees the placement maps (value() and the position path stay).
    void drop_placements() {
        for (auto& map : placements_) std::vector<std::uint64_t>().swap(map);
    }

    // The first failure of value(), empty if none.
    std::string error() const {
        std::lock_guard lock(error_mutex_);
        return error_;
    }

private:
    static constexpr unsigned kWin = 1, kLoss = 2;
    static unsigned bits_of(Wdl wdl) { return wdl == Wdl::Win ? kWin : wdl == Wdl::Loss ? kLoss : 0; }
    static Wdl wdl_of(std::uint64_t bits) { return bits == kWin ? Wdl::Win : bits == kLoss ? Wdl::Loss : Wdl::Draw; }

    // The WDL of a free position of a side not stored (wdl-dtc/5): the best
    // of its moves, a quiet one read from this table's other side (valued
    // once, kept), any other probed through the resolver. `moves`: its
    // legal moves, or empty. nullopt on a failure, which sets error().
    template <Ruleset R>
    std::optional<Wdl> one_ply(const Position& pos, MoveList& moves) const {
        if (moves.size() == 0) generate_legal<R>(pos, moves);
        const Color other = ~pos.side_to_move();
        Wdl best = Wdl::Loss;
        for (Move m : moves) {
            const Position child = pos.after(m);
            Wdl child_wdl = Wdl::Draw;
            if (probe::stays_in_table(pos, m)) {
                const index::Index slot = ix_.index(child);
                if (slot == index::kNoIndex) {
                    fail("a move of a position of table " + resolver_->info().spec.name + " leaves its index");
                    return std::nullopt;
                }
                child_wdl = value(other, slot).wdl;
            } else {
                auto probed = resolver_->position_wdl(child);
                if (!probed.ok()) {
                    fail(probed.status().to_string());
                    return std::nullopt;
                }
                child_wdl = *probed;
            }
            const Wdl mine = -child_wdl;
            if (static_cast<int>(mine) > static_cast<int>(best)) best = mine;
            if (best == Wdl::Win) break;
        }
        return best;
    }

    void fail(const std::string& message) const {
        std::lock_guard lock(error_mutex_);
        if (error_.empty()) error_ = message;
    }

    // First read of a wdl-dtc/2 slot: a free slot's stored WDL holds; any
    // other is valued as the probe values it. Threads reading the same slot
    // at once both value it and write the same bits.
    Wdl resolve(Color side, std::uint64_t index, std::uint64_t slot) const {
        const unsigned shift = 2 * (slot % 32);
        Wdl wdl = wdl_of(std::atomic_ref(words_[slot / 32]).load(std::memory_order_relaxed) >> shift & 3);
        Square squares[index::kMaxUnits];
        if (ix_.decode(index, squares)) {
            Position pos;
            for (int u = 0; u < ix_.unit_count(); ++u) pos.put(squares[u], ix_.unit(u));
            pos.set_side_to_move(side);
            const VariantId variant = ix_.variant();
            if (side_not_to_move_in_check(variant, pos)) {
                wdl = Wdl::Draw;  // not a position: stored as a draw, never read for a move
            } else {
                // A side whose free slots are not stored is resolved slot by
                // slot: read from the colour-swapped image where both sides
                // have the same units (wdl-dtc/4), without classifying it
                // here first; else (wdl-dtc/5) a free slot by one ply here,
                // when the other side is kept, so that each of its children
                // is valued once for all the slots that reach it.
                const bool one_ply_here = !resolver_->stores_free_slots(side) && !resolver_->same_units() &&
                                          (sides_ & side_bit(~side)) != 0;
                bool known = false;
                bool failed = false;
                if (resolver_->stores_free_slots(side) || one_ply_here) {
                    known = with_variant(variant, [&]<class R>() {
                        MoveList moves;
                        std::optional<probe::SlotKind> kind = probe::quick_slot_kind<R>(pos);
                        if (!kind) kind = probe::slot_kind<R>(pos, moves);
                        if (*kind != probe::SlotKind::Free) return false;
                        // wdl-dtc/7 and /8: a derived placement's slot stores
                        // nothing; the probe searches it.
                        if (resolver_->derived_slot(side, squares)) return false;
                        if (one_ply_here) {
                            const std::optional<Wdl> searched = one_ply<R>(pos, moves);
                            failed = !searched;
                            wdl = searched.value_or(Wdl::Draw);
                        }
                        return true;
                    });
                }
                if (failed) return Wdl::Draw;  // not kept: error() ends the build
                if (!known) {
                    auto resolved = resolver_->wdl(side, index, pos);
                    if (!resolved.ok()) {
                        fail(resolved.status().to_string());
                        return Wdl::Draw;
                    }
                    wdl = *resolved;
                }
            }
        } else {
            wdl = Wdl::Draw;
        }
        const std::uint64_t keep = ~(std::uint64_t{3} << shift) | static_cast<std::uint64_t>(bits_of(wdl)) << shift;
        const std::uint64_t set = static_cast<std::uint64_t>(bits_of(wdl)) << shift;
        std::atomic_ref word(words_[slot / 32]);
        word.fetch_and(keep, std::memory_order_relaxed);
        word.fetch_or(set, std::memory_order_relaxed);
        std::atomic_ref(checked_[slot / 64]).fetch_or(std::uint64_t{1} << (slot % 64), std::memory_order_release);
        return wdl;
    }

    explicit WdlTable(index::Indexer ix) : ix_(std::move(ix)) {}

    // Three- and four-unit tables keep, per side kept, the WDL of every
    // placement of their units (64^3 or 64^4 of them, 2 bits each: 64 KiB
    // or 4 MiB a side): a parent's capture into one, the commonest
    // conversion, then costs a load instead of an encode into the index.
    // Four-unit tables with a pawn are mapped too: RBPvKN's initial pass
    // values its captures into four of them (0.89x its time with their
    // maps, for 16 MiB: it peaks at 922 MiB). Five-unit maps (256 MiB
    // a side) would cost more memory than the parents' encodes cost time.
    //
    // The map is filled from the slots rather than by encoding every
    // placement: each slot's canonical placement is written under all its
    // images (the index's symmetries, and every order of identical units),
    // which are exactly the placements encode() sends to that slot, since
    // the index holds each placement once up to symmetry. Keys no slot
    // writes keep kUnplaced.
    static constexpr unsigned kUnplaced = 3;  // no slot (squares shared, a unit off its squares)
    void map_placements() {
        const int n = ix_.unit_count();
        if (!maps_units(n)) return;
        // Unit orders that permute identical units among themselves only.
        std::array<int, kMaxMappedUnits> order{};
        for (int u = 0; u < n; ++u) order[static_cast<std::size_t>(u)] = u;
        std::vector<std::array<int, kMaxMappedUnits>> orders;
        do {
            bool same_units = true;
            for (int u = 0; u < n; ++u) same_units &= ix_.unit(order[static_cast<std::size_t>(u)]) == ix_.unit(u);
            if (same_units) orders.push_back(order);
        } while (std::next_permutation(order.begin(), order.begin() + n));
        const std::uint8_t symmetries = symmetry_mask(ix_.symmetry_group());
        const auto size = static_cast<std::int64_t>(ix_.size());
        const std::size_t words = (std::size_t{1} << (6 * n)) / 32;
        constexpr std::int64_t kChunk = 1 << 14;
        for (int c = 0; c < 2; ++c) {
            const auto side = static_cast<Color>(c);
            if (!(sides_ & side_bit(side))) continue;
            std::vector<std::uint64_t>& map = placements_[c];
            map.assign(words, ~std::uint64_t{0});
            const std::uint64_t first = first_[c];
#pragma omp parallel for schedule(dynamic, 1)
            for (std::int64_t chunk = 0; chunk < (size + kChunk - 1) / kChunk; ++chunk) {
                Square squares[kMaxMappedUnits];
                const std::int64_t end = std::min(size, (chunk + 1) * kChunk);
                for (std::int64_t slot = chunk * kChunk; slot < end; ++slot) {
                    const auto index = static_cast<index::Index>(slot);
                    const bool decoded =
                        slot == chunk * kChunk ? ix_.decode(index, squares) : ix_.decode_next(index, squares);
                    if (!decoded) continue;
                    const std::uint64_t at = first + index;
                    const auto code = static_cast<unsigned>(words_[at / 32] >> (2 * (at % 32)) & 3);
                    for (int sym = 0; sym < kSymmetryCount; ++sym) {
                        if (!(symmetries >> sym & 1)) continue;
                        Square image[kMaxMappedUnits];
                        for (int u = 0; u < n; ++u) image[u] = transform_square(squares[u], sym);
                        for (const auto& o : orders) {
                            std::uint32_t key = 0;
                            for (int u = 0; u < n; ++u) key = key << 6 | image[o[static_cast<std::size_t>(u)]];
                            // Slots of other threads may share the word (not
                            // the key): clear the bits the code lacks at once.
                            const std::uint64_t clear = static_cast<std::uint64_t>(kUnplaced ^ code) << (2 * (key % 32));
                            std::atomic_ref(map[key / 32]).fetch_and(~clear, std::memory_order_relaxed);
                        }
                    }
                }
            }
        }
    }

    void not_kept(Color side) const {
        fail(std::string("sub-table read with ") + (side == Color::White ? "white" : "black") +
             " to move, a side not loaded");
    }

    index::Indexer ix_;
    // Read and, for wdl-dtc/2 tables, written from parallel loops through
    // std::atomic_ref.
    mutable std::vector<std::uint64_t> words_;
    mutable std::vector<std::uint64_t> checked_;  // wdl-dtc/2: a bit a slot, set once valued
    std::array<std::vector<std::uint64_t>, 2> placements_;  // per side: 2 bits a placement, or empty
    std::shared_ptr<const probe::Table> resolver_;
    unsigned sides_ = kBothSides;
    std::array<std::uint64_t, 2> first_{};  // per side: its first slot in words_
    mutable std::mutex error_mutex_;
    mutable std::string error_;
};

}  // namespace tbf::gen
