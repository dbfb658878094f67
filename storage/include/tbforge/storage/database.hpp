#pragma once
// A tbforge database: one RocksDB directory holding many tables and strategy
// databases. Open it read-only from any number of processes and threads, or
// read-write from one process (RocksDB's lock file enforces that). A
// read-only open sees the database as it was when opened.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/storage/strategy.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::storage {

// Version of the on-disk format (keys, block records, metadata records)
// written by this library; docs/storage-format.md describes each version.
// Version 2 added zstd blocks and per-table dictionaries, version 3 records
// that hold several blocks, version 4 their zstd blocks as bare frames,
// version 5 a block of one value as that value in its record's directory,
// version 6 blocks coded by a table's grammar of value pairs; databases and
// tables of versions 1 to 5 are still read.
inline constexpr std::uint32_t kFormatVersion = 6;

enum class OpenMode : std::uint8_t { ReadOnly, ReadWrite };

struct DatabaseOptions {
    OpenMode mode = OpenMode::ReadOnly;
    bool create_if_missing = false;  // ReadWrite only: create an absent or empty directory
    // Byte limit of the decompressed-block cache shared by all tables of this
    // open database. 0 disables caching.
    std::size_t block_cache_bytes = std::size_t{256} << 20;
    // RocksDB block cache for strategy entries.
    std::size_t strategy_cache_bytes = std::size_t{32} << 20;
    // ReadOnly only: the database files are read through memory maps, so a
    // block read makes no system call and copies nothing. The files of an
    // open database must then not be truncated by another program (a read of
    // a page cut off would fault); RocksDB itself only ever deletes them.
    bool mmap_reads = true;
    // ReadOnly only: a byte limit for the group records kept after their
    // first read (the record's directory and RocksDB's pin, or a copy of
    // the record without memory maps). A kept record is found without
    // RocksDB's lookup and is not checked again; its values are still
    // decoded on every read that no block cache answers. 0: every read
    // fetches and checks its record.
    std::size_t kept_record_bytes = std::size_t{32} << 20;
};

struct CacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::size_t bytes = 0;     // charged bytes now held
    std::size_t capacity = 0;  // the byte limit
    std::size_t blocks = 0;    // blocks now held
};

struct KeptRecordStats {
    std::size_t records = 0;  // records kept
    std::size_t bytes = 0;    // charged bytes of them
    std::size_t limit = 0;    // DatabaseOptions::kept_record_bytes (0 when read-write)
};

// A handle to an open database; movable. The database closes when the handle
// and every reader and writer made from it are gone. All methods may be called
// from several threads at once.
class Database {
public:
    // Errors: NotFound (no such directory), NotADatabase (a directory that is
    // not a tbforge database), Corruption (truncated or damaged files),
    // UnsupportedVersion, Busy (another process has it open read-write),
    // IoError.
    [[nodiscard]] static Result<Database> open(const std::string& path,
                                               const DatabaseOptions& options = {});

    Database(Database&&) noexcept;
    Database& operator=(Database&&) noexcept;
    ~Database();

    [[nodiscard]] const std::string& path() const;
    [[nodiscard]] bool read_only() const;

    // Tables, in name order. A corrupt metadata record is an error naming it.
    [[nodiscard]] Result<std::vector<TableInfo>> list_tables() const;
    [[nodiscard]] Result<TableInfo> table_info(std::string_view name) const;  // NotFound
    [[nodiscard]] Result<TableReader> open_table(std::string_view name) const;
    // Starts writing a table. Fails with AlreadyExists if `spec.name` exists
    // and options.replace is false (checked again at commit).
    [[nodiscard]] Result<TableWriter> create_table(const TableSpec& spec,
                                                   const TableWriteOptions& options = {});
    [[nodiscard]] Status delete_table(std::string_view name);
    // Copies a published table of another database (`source`, from a
    // read-only or read-write open) into this one under the same name, e.g.
    // to merge tables built in separate databases. The stored block records
    // are copied as they are: only their key, and with it their checksum,
    // changes, so stored bytes, statistics and values checksum stay the same.
    // Every block is checked and decoded on the way and the values checksum
    // recomputed; the copy is published in one atomic step, as a writer's
    // commit is (docs/storage-format.md section 9). Returns the new metadata.
    // Errors: AlreadyExists (unless `replace`), ChecksumMismatch / Corruption
    // (a damaged source: nothing is published), ReadOnly, IoError.
    [[nodiscard]] Result<TableInfo> copy_table(const TableReader& source, bool replace = false);

    [[nodiscard]] Result<std::vector<StrategyInfo>> list_strategies() const;
    [[nodiscard]] Result<StrategyInfo> strategy_info(std::string_view name) const;
    [[nodiscard]] Result<StrategyReader> open_strategy(std::string_view name) const;
    [[nodiscard]] Result<StrategyWriter> create_strategy(const StrategySpec& spec,
                                                         const StrategyWriteOptions& options = {});
    [[nodiscard]] Status delete_strategy(std::string_view name);

    [[nodiscard]] CacheStats block_cache_stats() const;
    // Drops every cached block (the next reads decode again), e.g. between
    // benchmark phases.
    void clear_block_cache();
    [[nodiscard]] KeptRecordStats kept_record_stats() const;

private:
    explicit Database(std::shared_ptr<detail::DbState> state);

    std::shared_ptr<detail::DbState> state_;
};

}  // namespace tbf::storage
