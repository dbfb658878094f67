#pragma once

#include <rocksdb/sst_file_writer.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "db_state.hpp"
#include "tbforge/storage/strategy.hpp"

namespace tbf::storage::detail {

class StrategyWriterImpl {
public:
    StrategyWriterImpl(std::shared_ptr<DbState> db, StrategySpec spec, StrategyWriteOptions options,
                       std::uint64_t storage_id);
    ~StrategyWriterImpl();

    [[nodiscard]] const StrategySpec& spec() const { return spec_; }
    [[nodiscard]] std::uint64_t entries_added() const { return added_; }

    [[nodiscard]] Status add(std::string_view key, std::string_view value);
    [[nodiscard]] Status commit();
    void abort();

private:
    [[nodiscard]] Status check_open() const;
    [[nodiscard]] Status fail(Status status);
    [[nodiscard]] Status duplicate(std::string_view key) const;
    // Appends one entry (key without prefix) to the output SST.
    [[nodiscard]] Status emit(std::string_view key, std::string_view value);
    [[nodiscard]] Status sort_run();
    [[nodiscard]] Status spill_run();
    [[nodiscard]] Status merge_runs();
    void remove_files();
    [[nodiscard]] std::string entries_file() const;
    [[nodiscard]] std::string catalog_file() const;

    enum class State : std::uint8_t { Open, Failed, Done };

    std::shared_ptr<DbState> db_;
    StrategySpec spec_;
    StrategyWriteOptions options_;
    std::uint64_t storage_id_;
    std::string prefix_;
    std::string stem_;  // staging path without suffix
    std::unique_ptr<rocksdb::SstFileWriter> out_;
    std::string full_key_;
    std::string last_key_;                                  // sorted input
    std::vector<std::pair<std::string, std::string>> run_;  // unsorted input, in memory
    std::size_t run_bytes_ = 0;
    std::vector<std::string> runs_;  // spilled sorted runs
    std::uint64_t added_ = 0;
    std::uint64_t entry_count_ = 0;
    std::uint64_t entry_bytes_ = 0;
    State state_ = State::Open;
};

}  // namespace tbf::storage::detail
