#pragma once
// What the studies of wdl-dtc/2 tables share: the generator's settings for
// storing them and which slots the encoding stores (the free ones).

#include <omp.h>

#include <cstdint>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::study {

// The zstd settings of stored wdl-dtc/2 blocks (gen/src/generate.cpp).
inline storage::TableWriteOptions compact_table_options() {
    storage::TableWriteOptions options = storage::compact_write_options();
    options.zstd_min_match = 6;
    options.zstd_strategy = 7;
    options.zstd_search_log = 3;
    options.zstd_target_length = 256;
    return options;
}

// The zstd parser the generator stores compact tables with today (gen/src/
// generate.cpp: minimum match 6, the optimal parser, search log 6, target
// length 4095), set on `options`.
inline void use_stored_compact_parser(storage::TableWriteOptions& options) {
    options.zstd_min_match = 6;
    options.zstd_strategy = 7;
    options.zstd_search_log = 6;
    options.zstd_target_length = 4095;
}

// Per slot (White to move first), 1 where the slot is free: classified as
// the generator does (probe::slot_kind), in parallel.
inline std::vector<std::uint8_t> free_slots(const index::Indexer& ix) {
    const std::uint64_t n = ix.size();
    std::vector<std::uint8_t> is_free(2 * n, 0);
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        Square squares[index::kMaxUnits];
        if (!ix.decode(static_cast<std::uint64_t>(i), squares)) continue;
        Position pos;
        for (int u = 0; u < ix.unit_count(); ++u) pos.put(squares[u], ix.unit(u));
        for (int c = 0; c < 2; ++c) {
            pos.set_side_to_move(static_cast<Color>(c));
            MoveList moves;
            is_free[static_cast<std::size_t>(c * n + static_cast<std::uint64_t>(i))] =
                probe::slot_kind<Antichess>(pos, moves) == probe::SlotKind::Free;
        }
    }
    return is_free;
}

}  // namespace tbf::study
