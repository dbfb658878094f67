#pragma once
// A finished sub-table kept in memory by its win/draw/loss alone, 2 bits a
// stored slot (an eighth of its decoded codes). A wdl-dtc/2 table gives it
// through the probe's WDL-only resolution. The generator reads
// sub-tables only through conversions (captures, promotions, and the
// captures after a double push into en passant), and a converting move is
// worth distance 1 whatever the distance of the position it reaches
// (probe::move_value), so the DTC of a sub-table position is never needed.

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/value.hpp"

namespace tbf::gen {

class WdlTable {
public:
    // Bytes held for a table of `slot_count` stored slots (both sides).
    static constexpr std::uint64_t bytes_for(std::uint64_t slot_count) { return (slot_count + 31) / 32 * 8; }

    // The WDL of every slot of a decoded table (probe::Tablebase::decode_table).
    static Result<WdlTable> from(const probe::Table& table) {
        WdlTable out(table.indexer());
        const std::uint64_t n = out.ix_.size();
        const std::uint64_t slots = 2 * n;
        out.words_.assign((slots + 31) / 32, 0);
        const auto words = static_cast<std::int64_t>(out.words_.size());
        bool failed = false;
        Status error;
        // Runs of 32 words (1024 slots, never across the sides' boundary
        // unless N is not a multiple of 1024), each decoded slot by slot from
        // its first (Indexer::decode_next) when positions are needed.
        constexpr std::int64_t kRunWords = 32;
#pragma omp parallel for schedule(static)
        for (std::int64_t run = 0; run < (words + kRunWords - 1) / kRunWords; ++run) {
            Square squares[index::kMaxUnits];
            std::uint64_t decoded_next = ~std::uint64_t{0};  // the index squares can step to
            const std::int64_t end = std::min(words, (run + 1) * kRunWords);
            for (std::int64_t w = run * kRunWords; w < end && !failed; ++w) {
                std::uint64_t bits = 0;
                const std::uint64_t first = static_cast<std::uint64_t>(w) * 32;
                const std::uint64_t stop = std::min(slots, first + 32);
                for (std::uint64_t slot = first; slot < stop; ++slot) {
                    const Color side = slot < n ? Color::White : Color::Black;
                    const std::uint64_t index = slot < n ? slot : slot - n;
                    probe::ProbeResult<Wdl> wdl = Wdl::Draw;
                    if (!table.compact()) {
                        wdl = wdl_of_code(table, side, index);
                    } else {
                        // wdl-dtc/2: the stored WDL of a free slot, or a one-ply
                        // look at the table's own sub-tables (never its DTC).
                        const bool ok = index == decoded_next ? out.ix_.decode_next(index, squares)
                                                              : out.ix_.decode(index, squares);
                        decoded_next = index + 1;
                        if (ok) {
                            Position pos;
                            for (int u = 0; u < out.ix_.unit_count(); ++u) pos.put(squares[u], out.ix_.unit(u));
                            pos.set_side_to_move(side);
                            if (!side_not_to_move_in_check(out.ix_.variant(), pos)) wdl = table.wdl(side, index, pos);
                        }
                    }
                    if (!wdl.ok()) {
#pragma omp critical(wdl_table_error)
                        {
                            if (!failed) error = wdl.status();
                            failed = true;
                        }
                        break;
                    }
                    const unsigned wdl_bits = *wdl == Wdl::Win ? kWin : *wdl == Wdl::Loss ? kLoss : 0;
                    bits |= static_cast<std::uint64_t>(wdl_bits) << (2 * (slot - first));
                }
                out.words_[static_cast<std::size_t>(w)] = bits;
            }
        }
        if (failed) return error;
        return out;
    }

    const index::Indexer& indexer() const { return ix_; }
    std::uint64_t bytes() const { return words_.size() * sizeof(std::uint64_t); }

    // The value of a slot for its side to move, DTC 0: only the WDL is kept.
    probe::Value value(Color side, std::uint64_t index) const {
        const std::uint64_t slot = to_index(side) * ix_.size() + index;
        const auto bits = static_cast<unsigned>(words_[slot / 32] >> (2 * (slot % 32)) & 3);
        return {bits == kWin ? Wdl::Win : bits == kLoss ? Wdl::Loss : Wdl::Draw, 0};
    }

private:
    static constexpr unsigned kWin = 1, kLoss = 2;
    static probe::ProbeResult<Wdl> wdl_of_code(const probe::Table& table, Color side, std::uint64_t index) {
        auto code = table.code(side, index);
        if (!code.ok()) return code.status();
        return probe::decode_value(*code).wdl;
    }

    explicit WdlTable(index::Indexer ix) : ix_(std::move(ix)) {}

    index::Indexer ix_;
    std::vector<std::uint64_t> words_;
};

}  // namespace tbf::gen
