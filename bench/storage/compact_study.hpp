#pragma once
// What the studies of wdl-dtc/2 tables share: the generator's settings for
// storing them and which slots the encoding stores (the free ones).

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/probe/tablebase.hpp"
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

// A study's failure: the message on stderr, named by `tool`, and the exit
// code (2 bad input, 3 database).
[[noreturn]] inline void study_failure(const char* tool, const Status& status, int code) {
    std::fprintf(stderr, "%s: %s\n", tool, status.to_string().c_str());
    std::exit(code);
}

// The database at `path` opened for probing.
inline probe::Tablebase open_study_tablebase(const char* tool, const char* path,
                                             const probe::TablebaseOptions& options = {}) {
    auto tb = probe::Tablebase::open(path, options);
    if (!tb.ok()) study_failure(tool, tb.status(), 3);
    return std::move(*tb);
}

// The table named `name` ("antichess/KQvK") and its wdl-dtc/1 codes, every
// slot resolved (Table::read_codes, White to move first).
struct StudyTable {
    std::shared_ptr<const probe::Table> table;
    std::vector<std::uint16_t> codes;
};
inline StudyTable open_study_codes(const char* tool, const probe::Tablebase& tb, const char* name) {
    auto id = probe::parse_table_name(name);
    if (!id.ok()) study_failure(tool, id.status(), 2);
    auto table = tb.table(id->variant, id->material);
    if (!table.ok()) study_failure(tool, table.status(), 3);
    StudyTable out{*table, std::vector<std::uint16_t>(2 * (*table)->indexer().size())};
    if (auto read = out.table->read_codes(0, out.codes.size(), out.codes.data()); !read.ok()) {
        study_failure(tool, read.status(), 3);
    }
    return out;
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

// The bytes of `stored` (codes in slot order) as block records of
// `slots_per_block` slots, one byte a code unless a code needs two,
// compressed with `options` on every thread.
inline std::uint64_t compressed_bytes(const std::vector<std::uint16_t>& stored, std::uint64_t slots_per_block,
                                      const storage::TableWriteOptions& options) {
    std::uint16_t largest = 0;
    for (const std::uint16_t c : stored) largest = std::max(largest, c);
    const unsigned width = largest > 0xFF ? 2 : 1;
    const std::uint64_t blocks = (stored.size() + slots_per_block - 1) / slots_per_block;
    std::uint64_t bytes = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bytes)
    for (std::int64_t b = 0; b < static_cast<std::int64_t>(blocks); ++b) {
        const std::uint64_t at = static_cast<std::uint64_t>(b) * slots_per_block;
        const std::uint64_t count = std::min<std::uint64_t>(slots_per_block, stored.size() - at);
        std::vector<std::uint8_t> raw(count * width);
        for (std::uint64_t k = 0; k < count; ++k) {
            raw[k * width] = static_cast<std::uint8_t>(stored[at + k]);
            if (width == 2) raw[k * 2 + 1] = static_cast<std::uint8_t>(stored[at + k] >> 8);
        }
        bytes += storage::block_record_bytes(raw, width, options);
    }
    return bytes;
}

}  // namespace tbf::study
