#pragma once
// The shared state behind a Database handle and every reader and writer made
// from it: the RocksDB instance, its column families, the block cache and the
// serialisation of catalog changes.

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "block_cache.hpp"
#include "kept_records.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage::detail {

// Maps a RocksDB failure to a Status; `context` says what was being done.
[[nodiscard]] Status from_rocksdb(const rocksdb::Status& s, std::string_view context);

// Runs `f`, turning an escaping exception (allocation failure, mostly) into
// a Status, so that none leaves the public API.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return Status(StatusCode::ResourceExhausted, "out of memory");
    } catch (const std::exception& e) {
        return Status(StatusCode::Internal, e.what());
    } catch (...) {
        return Status(StatusCode::Internal, "unknown exception");
    }
}

// Keeps a live writer from deleting files while another process opens the
// database read-only. RocksDB's read-only open reads the MANIFEST and then
// opens every SST file it lists; a file the writer deletes in between (after
// a compaction, a replace, a MANIFEST rotation) makes the open fail. So the
// writer runs with file deletions disabled and re-enables them only for a
// moment while it holds an exclusive flock on tbf-open.lock; a reader holds
// a shared flock while it opens. Once open, a reader holds every file open
// (max_open_files = -1) and later deletions cannot hurt it.
class ReaderLock {
public:
    ReaderLock(const std::string& db_path, bool writer);
    ~ReaderLock();
    ReaderLock(const ReaderLock&) = delete;
    ReaderLock& operator=(const ReaderLock&) = delete;

    [[nodiscard]] const Status& status() const { return status_; }
    // Unlocks and hands over the file descriptor (the writer keeps it).
    int release();

private:
    int fd_ = -1;
    Status status_;
};

// A catalog entry to publish: data file (may be empty: no entries) plus record.
struct Publication {
    char tag;  // kTableTag or kStrategyTag
    std::string name;
    std::string record;  // encoded metadata
    rocksdb::ColumnFamilyHandle* data_family;
    std::string data_file;     // finished SST of the data, "" if none
    std::string catalog_file;  // where to stage the catalog SST
    bool replace;
};

struct DbState {
    DbState(std::string path_, bool read_only_, std::size_t cache_bytes, std::size_t kept_record_bytes)
        : path(std::move(path_)),
          read_only(read_only_),
          cache(cache_bytes),
          kept(read_only_ ? kept_record_bytes : 0) {}
    ~DbState();
    DbState(const DbState&) = delete;
    DbState& operator=(const DbState&) = delete;

    static Result<std::shared_ptr<DbState>> open(const std::string& path,
                                                 const DatabaseOptions& options);

    [[nodiscard]] Status check_writable() const;
    // A fresh storage id (never handed out before in this database).
    [[nodiscard]] Status allocate_id(std::uint64_t& id);
    // Catalog record of `name` under `tag`; `found` false if absent.
    [[nodiscard]] Status read_catalog(char tag, std::string_view name, std::string& value,
                                      bool& found) const;
    // Atomically ingests the data file and the catalog record; with
    // `replace`, then retires the storage id of the previous version.
    [[nodiscard]] Status publish(const Publication& pub);
    // Removes a catalog entry and its data in one atomic write.
    [[nodiscard]] Status remove(char tag, std::string_view name);

    std::string path;
    bool read_only;
    rocksdb::DB* db = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::ColumnFamilyHandle* default_family = nullptr;
    rocksdb::ColumnFamilyHandle* catalog_family = nullptr;
    rocksdb::ColumnFamilyHandle* blocks_family = nullptr;
    rocksdb::ColumnFamilyHandle* entries_family = nullptr;
    // Full options per family, as SstFileWriter needs them.
    rocksdb::Options catalog_options;
    rocksdb::Options blocks_options;
    rocksdb::Options entries_options;
    std::string staging_dir;
    BlockCache cache;
    KeptRecords kept;  // read-only databases only (kept_records.hpp)

private:
    [[nodiscard]] Status open_rocksdb(const DatabaseOptions& options, bool create);
    // Deletes data whose storage id no catalog entry names (left by a crash
    // between publishing a replacement and retiring the old version).
    [[nodiscard]] Status sweep_orphans();
    // Hides the data of `storage_id` with a range tombstone; caller holds
    // write_mutex_.
    [[nodiscard]] Status retire_locked(rocksdb::ColumnFamilyHandle* family,
                                       std::uint64_t storage_id);
    // Drops the SST files wholly inside the (already deleted) id range.
    [[nodiscard]] Status reclaim(rocksdb::ColumnFamilyHandle* family, std::uint64_t storage_id);
    // Lets RocksDB delete obsolete files if no reader is opening (ReaderLock).
    void purge_files();

    std::mutex write_mutex_;  // catalog changes and id allocation
    std::uint64_t next_id_ = 1;
    int lock_fd_ = -1;  // writer: the ReaderLock file
};

}  // namespace tbf::storage::detail
