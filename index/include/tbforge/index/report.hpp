#pragma once
// Size report of indexers, for `tbgen index`: per table the number of slots
// N and the number of valid positions per side to move, counted by decoding
// every slot (OpenMP-parallel).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/result.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::index {

struct IndexReport {
    VariantId variant = VariantId::Antichess;
    Material material;
    Index slots = 0;
    std::array<std::uint64_t, 2> valid{};  // White to move, Black to move

    // slots / valid for one side; slots / mean of both sides.
    double ratio(Color side_to_move) const;
    double mean_ratio() const;
};

// Counts the valid slots of an indexer exhaustively: decodes every slot and
// checks that it is a position (encodes back to the same slot; Four File: the
// side not to move is not in check).
IndexReport count_valid(const Indexer& indexer);

// Parses a table name (either colour orientation; it is reported under its
// canonical name), builds the indexer and counts it.
Result<IndexReport> index_report(VariantId variant, std::string_view table);

// {"variant":"antichess","table":"QvR","slots":N,"valid":[W,B]}
std::string to_json(const IndexReport& report);
// "antichess QvR: 12345 slots, valid 12000 (w) 11000 (b), slots/valid 1.0288 1.1223 (mean
// 1.0728)"
std::string to_text(const IndexReport& report);

}  // namespace tbf::index
