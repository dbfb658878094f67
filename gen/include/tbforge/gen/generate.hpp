#pragma once
// Building tables into a database: dependency order, skipping what is
// already complete, sub-tables read through probe/, statistics, atomic
// publication through storage/.

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "tbforge/index/material.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::gen {

inline constexpr std::string_view kGeneratorVersion = "tbforge-gen/1";

struct GenerateOptions {
    int threads = 0;         // 0: OpenMP's default
    bool progress = false;   // progress lines on stderr (a terminal)
    storage::Compression compression = storage::Compression::Lz4;
};

struct TableSummary {
    std::string name;
    bool built = false;  // false: already complete in the database
    std::uint64_t positions = 0;
    std::uint64_t stored_bytes = 0;
    double seconds = 0;
    int max_dtc = 0;
};

struct GenerateError {
    int exit_code;  // 2 bad input, 3 database
    std::string message;
};

// Builds `tables` and everything they convert into, in dependency order,
// into the database behind `tablebase` (opened read-write). Returns per-table summaries, or the first
// error. `on_table` (optional) is told about each table when it is done.
std::variant<std::vector<TableSummary>, GenerateError> generate(
    probe::Tablebase& tablebase, VariantId variant, const std::vector<index::Material>& tables,
    const GenerateOptions& options, const std::function<void(const TableSummary&)>& on_table = {});

}  // namespace tbf::gen
