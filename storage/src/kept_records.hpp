#pragma once
// Group records of a read-only database, each checked once and then kept
// where RocksDB read it: with memory-mapped reads the pinned slice points
// into the mapped file, so keeping a record costs its directory, not its
// bytes. A value read without a block cache then finds its record here and
// skips RocksDB's lookup and the record's checksum, as a reader of a mapped
// file would; it still decodes the value from the stored bytes.
//
// Only a read-only database keeps records: its SST files stay open and
// mapped until it closes, whereas a writer's compactions and replacements
// may unmap a file under a pinned slice. Nothing is evicted: once the byte
// limit is reached, further records are read as if none were kept. Lookups
// take no lock (an open-addressing array of atomic pointers to immutable
// entries); inserts take a mutex, once per record.

#include <rocksdb/slice.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "records.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage::detail {

struct KeptRecord {
    std::uint64_t storage_id = 0;
    std::uint64_t record_no = 0;
    rocksdb::PinnableSlice record;
    GroupView view;  // into `record`, checked
};

class KeptRecords {
public:
    explicit KeptRecords(std::size_t limit_bytes);
    ~KeptRecords();
    KeptRecords(const KeptRecords&) = delete;
    KeptRecords& operator=(const KeptRecords&) = delete;

    // Whether a record not kept yet may still be: false when the limit is 0
    // or has been reached (a racy read, which only decides whether to try).
    [[nodiscard]] bool has_room() const;
    [[nodiscard]] const KeptRecord* find(std::uint64_t storage_id, std::uint64_t record_no) const;
    // Keeps a checked record; returns the one kept under its key (an
    // earlier one if another thread kept the same record first), or null
    // when the limit leaves no room (the record is then dropped).
    const KeptRecord* keep(std::unique_ptr<KeptRecord> record);
    // Drops every record: only while no reader uses the database.
    void clear();
    [[nodiscard]] KeptRecordStats stats() const;

private:
    using Slot = std::atomic<KeptRecord*>;
    [[nodiscard]] std::size_t home(std::uint64_t storage_id, std::uint64_t record_no) const;

    const std::size_t limit_bytes_;
    const std::size_t capacity_;  // slots, a power of two: twice the most records kept
    std::atomic<Slot*> slots_{nullptr};  // allocated on the first keep
    std::atomic<std::size_t> bytes_{0};
    std::atomic<std::size_t> count_{0};
    std::atomic<bool> full_{false};
    mutable std::mutex insert_mutex_;
};

}  // namespace tbf::storage::detail
