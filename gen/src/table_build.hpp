#pragma once
// The values of one table in the exact index, built in RAM: on the faster
// work index (index/work_index.hpp) where it applies, then renumbered.
// Defined and instantiated for each ruleset in table_build.cpp.

#include <array>
#include <optional>
#include <span>

#include "retrograde.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/index/work_index.hpp"

namespace tbf::gen {

// The work index where it applies and stays small (nullopt: build on the
// exact index).
std::optional<index::WorkIndex> work_index_for(const index::Indexer& exact);

// A built table's final values, read in exact-index order. A build on the
// work index keeps its own values and renumbers them piece by piece as they
// are read, so the exact-index copy never exists whole (it would take 4
// bytes per exact slot beside the work index's 2 per work slot).
class ExactValues {
public:
    ExactValues(const index::Indexer& exact, TableValues built);
    ExactValues(const index::Indexer& exact, const index::WorkIndex& work, TableValues built);

    const BuildStats& stats() const { return built_.stats; }
    // Bytes a stored code of the table needs: 1 unless a code exceeds 255.
    // Every work slot in use holds a position of the table and shares its
    // value with the position's exact slot.
    unsigned code_width() const;
    // Codes of the exact slots [first, first + out.size()) with `side` to
    // move, in parallel; the slots of the stored order once one is set.
    void read(Color side, std::uint64_t first, std::span<std::uint16_t> out);
    // read() of both sides at once (white.size() == black.size()): a slot
    // of another order is placed into the built one once for both.
    void read_both(std::uint64_t first, std::span<std::uint16_t> white, std::span<std::uint16_t> black);
    // From now on read() answers in the slots of `stored`, an indexer of the
    // same table in another group order (wdl-dtc/3).
    void set_stored_order(const index::Indexer& stored);
    // Codes of single placements given in the unit order of an indexer of
    // the table in any group order. One per thread.
    class PlacedReader {
    public:
        PlacedReader(const ExactValues& values, const index::Indexer& from);
        // 0 where the placement has no slot.
        std::uint16_t code(Color side, const Square* squares);
        // The built slot of a placement, index::kNoIndex where it has none.
        index::Index slot(const Square* squares);
        // slot() of the placements after `squares`, with unit `unit` of
        // `from` on next[0], next[1], ... (squares ends on the last).
        void slots_moved(Square* squares, int unit, const Square* next, int count, index::Index* out);

    private:
        const ExactValues& values_;
        std::array<int, kMaxTableUnits> position_{};  // unit k of `from` is unit position_[k] of the build
        std::optional<index::WorkIndex::Cursor> cursor_;
        int units_ = 0;
    };
    // The values of `side` will not be read again.
    void release(Color side) { built_.bytes[to_index(side)] = {}; }
    // Time spent renumbering so far.
    double renumber_seconds() const { return renumber_seconds_; }

private:
    template <class Visit>  // visit(k, built slot or index::kNoIndex) for the slots [first, first + n)
    void for_each_slot(std::uint64_t first, std::uint64_t n, Visit&& visit);

    const index::Indexer& exact_;
    std::optional<index::WorkIndex> work_;
    std::optional<index::Indexer> stored_;
    TableValues built_;
    double renumber_seconds_ = 0;
};

template <Ruleset R>
ExactValues build_table_values(const index::Indexer& exact, ChildValue child_value, BuildProgress progress = {});

}  // namespace tbf::gen
