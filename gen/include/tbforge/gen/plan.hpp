#pragma once
// The build plan of a set of tables, for a scheduler that runs one job per
// table (docs/generation.md, "Plans and per-table jobs"): every table the
// request needs, each after the tables its conversions reach, with its size
// and the memory its build takes; and the merge of finished per-table
// databases into one.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::gen {

// A table below this many slots per side builds in well under a second:
// its job gets one thread, more would only add start-up cost.
inline constexpr std::uint64_t kSingleThreadSlots = std::uint64_t{1} << 20;

// Process memory beside a build's own estimate: the program, RocksDB and
// its table writer, compression contexts, per-thread lists. The 5-unit
// sample (bench/gen/README.md) peaked up to 80 MiB above the estimate plus a
// tenth, on tables of 10-170 M positions where these fixed costs weigh most.
inline constexpr std::uint64_t kProcessOverheadBytes = std::uint64_t{128} << 20;
// Peak RSS of the larger in-RAM builds was up to 27 % above plan_memory's
// estimate for tables with a pawn and identical units, and below it for
// pawnless tables (the 5-unit sample): a job reserves a tenth more, and the
// process overhead above covers the rest.
inline constexpr std::uint64_t kEstimateMarginDivisor = 10;
// The block cache through which an out-of-core build probes sub-tables
// that are not resident (tbgen's setting).
inline constexpr std::uint64_t kSubtableCacheBytes = std::uint64_t{256} << 20;

struct PlannedTable {
    index::Material material;  // canonical
    std::string name;          // storage name, "antichess/KQvK"
    // Tables its conversions reach (index::sub_tables), canonical.
    std::vector<index::Material> sub_tables;
    // 0 for a table whose conversions all end the game; otherwise one more
    // than the highest level among its sub-tables: the length of the longest
    // chain of jobs below it.
    int level = 0;
    std::uint64_t slots = 0;       // index size N per side to move (as `tbgen index`)
    std::uint64_t work_slots = 0;  // work-index size per side, 0 if built on the exact index
    MemoryPlan memory;             // plan_memory under the plan's cap
    // Memory to reserve for the job: the in-RAM estimate and a tenth more
    // (kEstimateMarginDivisor), or under a cap the cap plus the block cache
    // (sub-tables not resident) and one chunk side of values while the
    // table is stored; plus kProcessOverheadBytes.
    std::uint64_t reserve_bytes = 0;
    int threads = 1;       // kSingleThreadSlots and the plan's thread count
    bool present = false;  // complete in the plan's database: no job
};

struct PlanOptions {
    std::uint64_t memory_bytes = 0;  // the cap `tbgen gen --memory` will get; 0: none
    int threads = 1;                 // threads of a job on a table of kSingleThreadSlots or more
    // A database whose complete tables need no job (and whose sub-tables
    // are then not needed either); null: none.
    const storage::Database* existing = nullptr;
    // The value encoding of the tables built (tbgen gen --encoding). A
    // wdl-dtc/2 sub-table is held at 3 bits a slot rather than 2 while its
    // parents are built, so it changes the memory the plan counts.
    std::string value_encoding = std::string(probe::kValueEncoding);
};

struct Plan {
    VariantId variant = VariantId::Antichess;
    std::vector<index::Material> requested;  // canonical, as given
    PlanOptions options;
    // Every table the request needs, each after all its sub-tables (the
    // order of index::dependency_order). A table present in the existing
    // database is listed, but its sub-tables only if another table needs
    // them.
    std::vector<PlannedTable> tables;
};

// Errors: InvalidArgument for a bad request, the database's code if the
// existing database cannot be read.
Result<Plan> plan_tables(VariantId variant, const std::vector<index::Material>& requested,
                         const PlanOptions& options);

enum class PlanFormat { Json, Snakemake, Make };

// The plan as text (docs/generation.md gives the JSON schema): `Json` one
// object; `Snakemake` and `Make` a workflow with one rule per table that
// builds it into its own database under PARTS, its sub-tables read from
// their jobs' databases, then merges every part into DB.
std::string render_plan(const Plan& plan, PlanFormat format);

// ---- Merge ----

struct MergedTable {
    std::string name;
    std::string source;   // the source database it was found in
    bool copied = false;  // false: an identical table was already there
    std::uint64_t values_checksum = 0;
    std::uint64_t stored_bytes = 0;
};

// Copies every table of the `sources` (read-only, left as they are) into
// `target`, each in one atomic step (storage::Database::copy_table). A table
// already in the target, or met in an earlier source, with the same variant,
// material, slot count, value width and encoding and the same values
// checksum is skipped. Anything else under the same name is a conflict:
// CheckFailed naming the table, both databases and both checksums, found
// before anything is copied (so a refused merge changes nothing). Other
// errors: the databases' codes (NotFound, NotADatabase, Corruption,
// ChecksumMismatch of a damaged source block, IoError). `on_table` is told
// about each table when it is done.
Result<std::vector<MergedTable>> merge_databases(storage::Database& target,
                                                 const std::vector<std::string>& sources,
                                                 const std::function<void(const MergedTable&)>& on_table = {});

}  // namespace tbf::gen
