#pragma once
// Building tables into a database: dependency order, skipping what is
// already complete, sub-tables read through probe/, statistics, atomic
// publication through storage/.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::gen {

inline constexpr std::string_view kGeneratorVersion = "tbforge-gen/1";

struct GenerateOptions {
    int threads = 0;         // 0: OpenMP's default
    bool progress = false;   // progress lines on stderr (a terminal)
    // Zstd: format 3 (docs/storage-format.md section 4); Lz4 writes format 1.
    storage::Compression compression = storage::Compression::Zstd;
    // Zstd: blocks stored together in one record (a power of two, 1 to 256;
    // 0: storage::compact_write_options()'s 8, or for the compact encodings
    // as many as keep a record near 4 KB). 1 writes format 2.
    std::uint32_t blocks_per_record = 0;
    // Zstd tables of several blocks a record: blocks coded by a grammar of
    // value pairs instead (storage format 6, `tbgen gen --pair-coding`;
    // storage::PairCoding): a value read without a cache decodes a 64-byte
    // sub-block instead of a zstd frame. Auto: where that stores at most
    // pair_size_tolerance more than zstd (0.10: 10 %). Out-of-core builds
    // keep zstd.
    storage::PairCoding pair_coding = storage::PairCoding::Off;
    double pair_size_tolerance = storage::kDefaultPairSizeTolerance;
    // Value encoding of the stored tables (docs/values.md): "wdl-dtc/1",
    // "wdl-dtc/2", which stores only what a one-ply search cannot give back,
    // "wdl-dtc/3", the same in the index order that stores smallest (in-
    // RAM builds), "wdl-dtc/4", which also stores one side to move of a
    // table with the same units on both sides, or "wdl-dtc/5", one side to
    // move of every table. Any other is refused.
    std::string value_encoding = std::string(probe::kValueEncoding);
    // Memory cap in bytes, 0 for none. A table whose in-RAM estimate
    // (plan_memory) exceeds it is built out-of-core in `work_dir`.
    std::uint64_t memory_bytes = 0;
    std::string work_dir;  // needed by out-of-core builds; one subdirectory per table
    // fsync work files at each step, so that even a power loss leaves a
    // resumable state; without it only a killed process is covered.
    bool sync_work_files = true;
    // Bytes the update buckets of an out-of-core build may take on disk
    // before every waiting bucket is applied to its chunk; 0: a third of the
    // work disk's free space when the table starts.
    std::uint64_t bucket_bytes = 0;
    // Finished tables in other databases (`tbgen gen --tables-from`), opened
    // read-only: a table complete in one of them is not built again and is
    // read from there as a sub-table, and the tables it converts into are
    // then not needed. Lets one job build one table into its own database
    // (docs/generation.md, "Plans and per-table jobs").
    std::vector<std::shared_ptr<const probe::Tablebase>> sources;
    // Called after each completed step of an out-of-core build; true stops
    // the run there with an error, as if it had been killed (tests).
    std::function<bool()> stop_after_step;
};

// How one table is built under a memory cap (docs/generation.md, "Memory").
struct MemoryPlan {
    std::uint64_t in_ram_bytes = 0;      // estimate of an in-RAM build, resident sub-tables included
    std::uint64_t subtable_bytes = 0;    // the sub-tables resident in memory (WDL only)
    bool out_of_core = false;
    bool resident_subtables = true;      // false: probed through the database's block cache
    std::uint64_t state_bytes = 0;       // out-of-core: budget for the chunk and update buffers
};

// In RAM: 4 bytes per slot (two sides, one 16-bit word each: value or
// open-move counter), at most 1 more for the frontier lists (8-byte ids,
// capped at an eighth of the slots), plus the sub-tables (their WDL, 2 bits
// per stored slot). A build on the work index (work_size slots, see table_build.hpp)
// takes those 5 bytes per work slot and 4 per exact slot for the renumbered
// values. Out-of-core: the sub-tables stay resident if they take at most half
// the cap and count against it; otherwise they are probed through the block
// cache and the whole cap goes to the chunk state.
MemoryPlan plan_memory(std::uint64_t index_size, std::uint64_t subtable_bytes, std::uint64_t memory_bytes,
                       std::uint64_t work_size = 0);

struct TableSummary {
    std::string name;
    bool built = false;  // false: already complete in the database or in a source
    std::string source;  // not built and found in GenerateOptions::sources: that database's path
    std::uint64_t positions = 0;
    std::uint64_t stored_bytes = 0;
    double seconds = 0;
    // In-RAM builds: where the time went (initial pass, level passes,
    // renumbering into the exact index, storing with statistics; wdl-dtc/3
    // to /6: choosing the index order apart from storing).
    struct Phases {
        double initial = 0, levels = 0, renumber = 0, store = 0, order = 0;
        double sparse = 0, write_back = 0;  // out-of-core: levels in memory, their values written back
    } phases;
    int max_dtc = 0;
    // Out-of-core builds only:
    bool out_of_core = false;
    bool resumed = false;             // continued from an interrupted run's work files
    std::uint64_t chunks = 0;
    std::uint64_t bytes_read = 0;     // work-file bytes, all runs of the table
    std::uint64_t bytes_written = 0;
    double crossing_fraction = 0;     // predecessor updates sent to another chunk
    int sparse_level = -1;            // first level passed in memory on the open positions, -1 if none
    std::uint64_t split_visits = 0;   // chunk visits of this run that read tail moves' children
};

// Builds `tables` and everything they convert into, in dependency order,
// into the database behind `tablebase` (opened read-write), except what is
// complete there or in a source. Returns per-table summaries, or the first
// error: InvalidArgument for a request that cannot be built as given (a bad
// table, no work directory under a memory cap), the database's or the work
// files' code (IoError, Corruption, ...) otherwise. `on_table` (optional) is
// told about each table when it is done.
Result<std::vector<TableSummary>> generate(
    probe::Tablebase& tablebase, VariantId variant, const std::vector<index::Material>& tables,
    const GenerateOptions& options, const std::function<void(const TableSummary&)>& on_table = {});

}  // namespace tbf::gen
