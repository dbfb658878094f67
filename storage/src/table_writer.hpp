#pragma once

#include <rocksdb/sst_file_writer.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "db_state.hpp"
#include "records.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::storage::detail {

class TableWriterImpl {
public:
    TableWriterImpl(std::shared_ptr<DbState> db, TableSpec spec, TableWriteOptions options,
                    std::uint64_t storage_id);
    ~TableWriterImpl();

    [[nodiscard]] const TableSpec& spec() const { return spec_; }
    [[nodiscard]] std::uint64_t slots_written() const { return slots_written_; }

    // Values as little-endian bytes, `count` slots of spec().value_width.
    [[nodiscard]] Status append_bytes(const std::uint8_t* bytes, std::uint64_t count);
    [[nodiscard]] Status commit(const TableStatistics& statistics);
    void abort();
    [[nodiscard]] Status check_open(std::uint32_t width) const;
    [[nodiscard]] Status fail(Status status);

private:
    // A finished block: encoded and stored now, or queued for a parallel batch.
    [[nodiscard]] Status add_block(const std::uint8_t* raw, std::uint32_t slots);
    [[nodiscard]] Status encode_and_add(const std::uint8_t* raw, std::uint32_t slots);
    // Zstd: trains the dictionary on the held-back blocks, then stores them.
    [[nodiscard]] Status release_held();
    // Pair coding: the whole table held in held_, stored pair-coded or (Auto,
    // or too many distinct values) as zstd blocks.
    [[nodiscard]] Status store_held_table();
    [[nodiscard]] Status flush_batch();
    // One block as its record, or in a group, when all its values are one,
    // as a fill member (not compressed at all). `thread`: whose zstd
    // context and scratch to use.
    void encode(const std::string& key, std::span<const std::uint8_t> raw, std::size_t thread,
                std::string& record);
    // Takes one encoded block (the next block number): stores it in the
    // staging file, or adds it to the group of blocks that share a record.
    [[nodiscard]] Status put_record(const std::string& key, const std::string& record,
                                    std::span<const std::uint8_t> values);
    [[nodiscard]] Status flush_group();
    [[nodiscard]] Status store(const std::string& key, const std::string& record);
    void remove_files();

    enum class State : std::uint8_t { Open, Failed, Done };

    std::shared_ptr<DbState> db_;
    TableSpec spec_;
    TableWriteOptions options_;
    std::uint64_t storage_id_;
    std::string blocks_file_;
    std::string catalog_file_;
    std::unique_ptr<rocksdb::SstFileWriter> sst_;  // opened at the first block
    std::vector<std::uint8_t> pending_;            // values of the unfinished block
    std::uint64_t slots_written_ = 0;
    std::uint64_t blocks_written_ = 0;
    std::uint64_t stored_bytes_ = 0;
    std::uint64_t payload_bytes_ = 0;
    std::vector<std::string> group_;  // encoded blocks of the record being filled
    std::string group_record_;
    Xxh64 values_hash_;
    std::vector<std::uint8_t> batch_;         // raw blocks awaiting parallel compression
    std::vector<std::uint32_t> batch_slots_;  // slots of each queued block
    std::vector<std::string> records_;        // one encoded record per batch entry
    std::vector<std::string> scratch_;        // per compression thread, reused
    std::vector<ZstdCCtx> cctx_;              // per compression thread (zstd)
    BlockEncoding encoding_;
    // Zstd: blocks held back until the dictionaries are trained on them.
    bool dictionaries_ready_ = true;
    bool hold_table_ = false;  // pair coding: every block held until commit
    std::string pair_model_;
    std::vector<std::uint8_t> held_;
    std::vector<std::uint32_t> held_slots_;
    std::string dictionary_;
    ZstdCDict cdict_;
    State state_ = State::Open;
};

}  // namespace tbf::storage::detail
