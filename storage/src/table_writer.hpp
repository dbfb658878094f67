#pragma once

#include <rocksdb/sst_file_writer.h>

#include <memory>
#include <string>
#include <vector>

#include "db_state.hpp"
#include "tbforge/storage/checksum.hpp"
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
    [[nodiscard]] Status write_block(const std::uint8_t* raw, std::uint32_t slots);
    void remove_files();

    enum class State : std::uint8_t { Open, Failed, Done };

    std::shared_ptr<DbState> db_;
    TableSpec spec_;
    TableWriteOptions options_;
    std::uint64_t storage_id_;
    std::string blocks_file_;
    std::string catalog_file_;
    std::unique_ptr<rocksdb::SstFileWriter> sst_;  // opened at the first block
    std::vector<std::uint8_t> pending_;             // values of the unfinished block
    std::uint64_t slots_written_ = 0;
    std::uint64_t blocks_written_ = 0;
    std::uint64_t stored_bytes_ = 0;
    Xxh64 values_hash_;
    std::string scratch_;
    std::string record_;
    State state_ = State::Open;
};

}  // namespace tbf::storage::detail
