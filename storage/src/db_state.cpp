#include "db_state.hpp"

#include <fcntl.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "records.hpp"

namespace tbf::storage::detail {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kStagingDirName = "tbf-staging";
constexpr std::string_view kLockFileName = "tbf-open.lock";

rocksdb::DBOptions make_db_options() {
    rocksdb::DBOptions o;
    // Every SST file is opened (and kept open) at DB open: a read-only
    // instance then keeps reading files that a concurrent writer deletes.
    o.max_open_files = -1;
    o.paranoid_checks = true;
    // No periodic background timer work: it would only write LOG noise.
    o.stats_dump_period_sec = 0;
    o.stats_persist_period_sec = 0;
    o.keep_log_file_num = 4;
    o.max_background_jobs = 2;
    return o;
}

rocksdb::ColumnFamilyOptions make_catalog_options() {
    rocksdb::ColumnFamilyOptions o;
    o.compression = rocksdb::kNoCompression;
    return o;
}

rocksdb::ColumnFamilyOptions make_blocks_options() {
    rocksdb::ColumnFamilyOptions o;
    // Block records are LZ4 already and carry their own checksum.
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kNoCompression;
    rocksdb::BlockBasedTableOptions t;
    // The decoded-block cache of this library replaces RocksDB's: caching the
    // compressed records as well would hold every block twice.
    t.no_block_cache = true;
    // Each record (tens of KiB) becomes its own data block.
    t.block_size = 4096;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

rocksdb::ColumnFamilyOptions make_entries_options(std::size_t cache_bytes) {
    rocksdb::ColumnFamilyOptions o;
    const auto supported = rocksdb::GetSupportedCompressions();
    const bool has_lz4 =
        std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) != supported.end();
    o.compression = has_lz4 ? rocksdb::kLZ4Compression : rocksdb::kNoCompression;
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = rocksdb::NewLRUCache(cache_bytes);
    // Lookups of positions a strategy does not hold are common (holes).
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

bool is_lock_failure(const rocksdb::Status& s) {
    const std::string text = s.ToString();
    return s.IsIOError() &&
           (text.find("lock") != std::string::npos || text.find("LOCK") != std::string::npos);
}

rocksdb::WriteOptions synced() {
    rocksdb::WriteOptions w;
    w.sync = true;
    return w;
}

Status not_a_database(const std::string& path, const std::string& why) {
    return {StatusCode::NotADatabase, "'" + path + "' is not a tbforge database: " + why};
}

// An open that fails although CURRENT exists means damaged or missing files:
// a file the database refers to that is absent is corruption, not "not found".
Status open_failure(const rocksdb::Status& s, const std::string& path) {
    Status st = from_rocksdb(s, "opening database '" + path + "'");
    if (st.code() == StatusCode::NotFound) return {StatusCode::Corruption, st.message()};
    // Through memory maps RocksDB reports a file shorter than its own footer
    // says as an I/O error on the offset: a truncated file all the same.
    if (s.IsIOError() && s.ToString().find("larger than file length") != std::string::npos) {
        return {StatusCode::Corruption, st.message()};
    }
    return st;
}

// Whether the default column family holds a tbforge format marker: tells a
// damaged tbforge database from a foreign RocksDB one.
bool has_marker(const rocksdb::DBOptions& db_options, const std::string& path) {
    rocksdb::DB* raw = nullptr;
    if (!rocksdb::DB::OpenForReadOnly(rocksdb::Options(db_options, rocksdb::ColumnFamilyOptions()),
                                      path, &raw)
             .ok()) {
        return false;
    }
    std::string value;
    const bool found = raw->Get(rocksdb::ReadOptions(), kMarkerKey, &value).ok();
    delete raw;
    std::uint32_t version = 0;
    return found && decode_marker(value, version).ok();
}

// All column families of an existing database, which must include ours.
Status list_families(const rocksdb::DBOptions& db_options, const std::string& path,
                     std::vector<std::string>& families) {
    const rocksdb::Status s = rocksdb::DB::ListColumnFamilies(db_options, path, &families);
    if (!s.ok()) return open_failure(s, path);
    for (std::string_view needed : {kCatalogFamily, kBlocksFamily, kEntriesFamily}) {
        if (std::find(families.begin(), families.end(), needed) == families.end()) {
            const std::string why = "no column family '" + std::string(needed) + "'";
            if (has_marker(db_options, path)) {
                return {StatusCode::Corruption,
                        "'" + path + "' is a damaged tbforge database: " + why};
            }
            return not_a_database(path, why);
        }
    }
    return {};
}

int lock_file(int fd, int operation) {
    int r;
    do {
        r = flock(fd, operation);
    } while (r != 0 && errno == EINTR);
    return r;
}

}  // namespace

ReaderLock::ReaderLock(const std::string& db_path, bool writer) {
    const std::string file = (fs::path(db_path) / kLockFileName).string();
    fd_ = writer ? ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)
                 : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        // A database never opened for writing by this library has no lock
        // file, and then no writer to race with.
        if (writer) status_ = {StatusCode::IoError, "cannot create '" + file + "'"};
        return;
    }
    if (lock_file(fd_, writer ? LOCK_EX : LOCK_SH) != 0) {
        status_ = {StatusCode::IoError, "cannot lock '" + file + "'"};
    }
}

ReaderLock::~ReaderLock() {
    if (fd_ >= 0) ::close(fd_);  // also releases the lock
}

int ReaderLock::release() {
    lock_file(fd_, LOCK_UN);
    return std::exchange(fd_, -1);
}

Status from_rocksdb(const rocksdb::Status& s, std::string_view context) {
    if (s.ok()) return {};
    StatusCode code = StatusCode::Internal;
    if (s.IsNotFound() || s.IsPathNotFound()) {
        code = StatusCode::NotFound;
    } else if (s.IsCorruption()) {
        code = StatusCode::Corruption;
    } else if (is_lock_failure(s) || s.IsBusy() || s.IsTryAgain() || s.IsLockLimit()) {
        code = StatusCode::Busy;
    } else if (s.IsIOError()) {
        code = StatusCode::IoError;
    } else if (s.IsInvalidArgument()) {
        code = StatusCode::InvalidArgument;
    } else if (s.IsMemoryLimit()) {
        code = StatusCode::ResourceExhausted;
    }
    return {code, std::string(context) + ": " + s.ToString()};
}

DbState::~DbState() {
    // Kept records are pinned in the files RocksDB is about to close.
    kept.clear();
    if (lock_fd_ >= 0) {
        // Deletions deferred since the last purge happen now (and in Close),
        // with no reader in the middle of opening.
        lock_file(lock_fd_, LOCK_EX);
        (void)db->EnableFileDeletions(true);
    }
    if (db != nullptr) {
        for (rocksdb::ColumnFamilyHandle* h : handles) (void)db->DestroyColumnFamilyHandle(h);
        // Close() flushes nothing we rely on (catalog writes are synced); its
        // status has nowhere to go from a destructor.
        (void)db->Close();
        delete db;
    }
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

void DbState::purge_files() {
    // Only when no reader is opening; otherwise the files wait for the next
    // publish or the close.
    if (lock_file(lock_fd_, LOCK_EX | LOCK_NB) != 0) return;
    (void)db->EnableFileDeletions(true);
    (void)db->DisableFileDeletions();
    lock_file(lock_fd_, LOCK_UN);
}

Result<std::shared_ptr<DbState>> DbState::open(const std::string& path,
                                               const DatabaseOptions& options) {
    const bool writable = options.mode == OpenMode::ReadWrite;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    bool create = false;
    if (!fs::exists(st)) {
        if (!(writable && options.create_if_missing)) {
            return Status(StatusCode::NotFound, "database directory '" + path + "' does not exist");
        }
        fs::create_directories(path, ec);
        if (ec) {
            return Status(StatusCode::IoError, "cannot create '" + path + "': " + ec.message());
        }
        create = true;
    } else if (!fs::is_directory(st)) {
        return not_a_database(path, "not a directory");
    } else if (!fs::exists(fs::path(path) / "CURRENT", ec)) {
        if (!(writable && options.create_if_missing && fs::is_empty(path, ec) && !ec)) {
            return not_a_database(path, "no RocksDB CURRENT file");
        }
        create = true;
    }

    if (writable && !create) {
        // Before anything is created in it, the directory must be ours.
        std::vector<std::string> families;
        if (Status s = list_families(make_db_options(), path, families); !s.ok()) return s;
    }
    auto state = std::make_shared<DbState>(path, !writable, options.block_cache_bytes,
                                           options.kept_record_bytes);
    {
        // See ReaderLock: no file deletion may run while this open reads the
        // MANIFEST and opens the files it lists.
        ReaderLock lock(path, writable);
        if (!lock.status().ok()) return lock.status();
        if (Status s = state->open_rocksdb(options, create); !s.ok()) return s;
        if (writable) {
            const rocksdb::Status ds = state->db->DisableFileDeletions();
            if (!ds.ok()) return from_rocksdb(ds, "opening '" + path + "'");
            state->lock_fd_ = lock.release();
        }
    }

    rocksdb::PinnableSlice marker;
    const rocksdb::Status ms =
        state->db->Get(rocksdb::ReadOptions(), state->default_family, kMarkerKey, &marker);
    if (ms.IsNotFound()) return not_a_database(path, "no format marker");
    if (!ms.ok()) return from_rocksdb(ms, "reading the format marker of '" + path + "'");
    std::uint32_t version = 0;
    if (Status s = decode_marker(marker.ToStringView(), version); !s.ok()) {
        return Status(s.code(), "'" + path + "': " + s.message());
    }
    if (version > kFormatVersion) {
        return Status(StatusCode::UnsupportedVersion,
                      "'" + path + "' has format version " + std::to_string(version) +
                          "; this library reads up to " + std::to_string(kFormatVersion));
    }

    if (writable && version < kFormatVersion) {
        // Tables written from now on may be of the new format: libraries that
        // read only the old one must refuse the whole database, by its marker.
        const rocksdb::Status us = state->db->Put(synced(), state->default_family, kMarkerKey,
                                                  encode_marker(kFormatVersion));
        if (!us.ok()) return from_rocksdb(us, "upgrading the format marker of '" + path + "'");
    }
    if (writable) {
        rocksdb::PinnableSlice counter;
        const rocksdb::Status cs =
            state->db->Get(rocksdb::ReadOptions(), state->default_family, kNextIdKey, &counter);
        if (!cs.ok()) return from_rocksdb(cs, "reading the storage id counter of '" + path + "'");
        if (Status s = decode_next_id(counter.ToStringView(), state->next_id_); !s.ok()) return s;

        // Staging files belong to writers of an earlier process that never
        // committed; we hold the RocksDB lock, so no live writer owns them.
        state->staging_dir = (fs::path(path) / kStagingDirName).string();
        fs::remove_all(state->staging_dir, ec);
        fs::create_directories(state->staging_dir, ec);
        if (ec) {
            return Status(StatusCode::IoError,
                          "cannot create '" + state->staging_dir + "': " + ec.message());
        }
        if (Status s = state->sweep_orphans(); !s.ok()) return s;
    }
    return state;
}

Status DbState::open_rocksdb(const DatabaseOptions& options, bool create) {
    rocksdb::DBOptions db_options = make_db_options();
    db_options.allow_mmap_reads = read_only && options.mmap_reads;
    catalog_options = rocksdb::Options(db_options, make_catalog_options());
    blocks_options = rocksdb::Options(db_options, make_blocks_options());
    entries_options =
        rocksdb::Options(db_options, make_entries_options(options.strategy_cache_bytes));

    std::vector<std::string> families;
    if (create) {
        families = {rocksdb::kDefaultColumnFamilyName, std::string(kCatalogFamily),
                    std::string(kBlocksFamily), std::string(kEntriesFamily)};
        db_options.create_if_missing = true;
        db_options.create_missing_column_families = true;
    } else {
        if (Status s = list_families(db_options, path, families); !s.ok()) return s;
        if (read_only) {
            families = {rocksdb::kDefaultColumnFamilyName, std::string(kCatalogFamily),
                        std::string(kBlocksFamily), std::string(kEntriesFamily)};
        }
    }

    // A read-write open must name every family; unknown ones (a later format)
    // get default options and are left alone.
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : families) {
        rocksdb::ColumnFamilyOptions cf;
        if (name == kCatalogFamily) cf = catalog_options;
        if (name == kBlocksFamily) cf = blocks_options;
        if (name == kEntriesFamily) cf = entries_options;
        descriptors.emplace_back(name, cf);
    }

    const rocksdb::Status s =
        read_only ? rocksdb::DB::OpenForReadOnly(db_options, path, descriptors, &handles, &db)
                  : rocksdb::DB::Open(db_options, path, descriptors, &handles, &db);
    if (!s.ok()) {
        db = nullptr;
        handles.clear();
        return open_failure(s, path);
    }
    for (std::size_t i = 0; i < families.size(); ++i) {
        if (families[i] == rocksdb::kDefaultColumnFamilyName) default_family = handles[i];
        if (families[i] == kCatalogFamily) catalog_family = handles[i];
        if (families[i] == kBlocksFamily) blocks_family = handles[i];
        if (families[i] == kEntriesFamily) entries_family = handles[i];
    }

    if (create) {
        rocksdb::WriteBatch batch;
        batch.Put(default_family, kMarkerKey, encode_marker(kFormatVersion));
        batch.Put(default_family, kNextIdKey, encode_next_id(1));
        const rocksdb::Status ws = db->Write(synced(), &batch);
        if (!ws.ok()) return from_rocksdb(ws, "initialising '" + path + "'");
    }
    return {};
}

Status DbState::check_writable() const {
    if (read_only) {
        return {StatusCode::ReadOnly, "database '" + path + "' is open read-only"};
    }
    return {};
}

Status DbState::allocate_id(std::uint64_t& id) {
    std::lock_guard lock(write_mutex_);
    const rocksdb::Status s =
        db->Put(synced(), default_family, kNextIdKey, encode_next_id(next_id_ + 1));
    if (!s.ok()) return from_rocksdb(s, "allocating a storage id");
    id = next_id_++;
    return {};
}

Status DbState::read_catalog(char tag, std::string_view name, std::string& value,
                             bool& found) const {
    const rocksdb::Status s =
        db->Get(rocksdb::ReadOptions(), catalog_family, catalog_key(tag, name), &value);
    found = s.ok();
    if (s.IsNotFound()) return {};
    return from_rocksdb(s, "reading the catalog entry of '" + std::string(name) + "'");
}

namespace {

// Storage id named by a catalog record; false if the record does not decode.
bool id_of_record(char tag, std::string_view name, std::string_view value, std::uint64_t& id) {
    if (tag == kTableTag) {
        TableInfo info;
        if (!decode_table_info(name, value, info).ok()) return false;
        id = info.storage_id;
    } else {
        StrategyInfo info;
        if (!decode_strategy_info(name, value, info).ok()) return false;
        id = info.storage_id;
    }
    return true;
}

std::string what_of(char tag, std::string_view name) {
    return std::string(tag == kTableTag ? "table '" : "strategy '") + std::string(name) + "'";
}

}  // namespace

Status DbState::publish(const Publication& pub) {
    if (Status s = check_writable(); !s.ok()) return s;
    const std::string key = catalog_key(pub.tag, pub.name);
    const std::string what = what_of(pub.tag, pub.name);

    std::lock_guard lock(write_mutex_);
    std::string old;
    bool exists = false;
    if (Status s = read_catalog(pub.tag, pub.name, old, exists); !s.ok()) return s;
    if (exists && !pub.replace) {
        return {StatusCode::AlreadyExists, what + " already exists (replace not requested)"};
    }
    // An undecodable old record is replaced too; its data is then left to
    // the orphan sweep of the next read-write open.
    std::uint64_t old_id = 0;
    const bool retire_old = exists && id_of_record(pub.tag, pub.name, old, old_id);

    rocksdb::SstFileWriter catalog_writer(rocksdb::EnvOptions(), catalog_options, catalog_family);
    rocksdb::Status s = catalog_writer.Open(pub.catalog_file);
    if (s.ok()) s = catalog_writer.Put(key, pub.record);
    if (s.ok()) s = catalog_writer.Finish();
    if (!s.ok()) return from_rocksdb(s, "staging the catalog entry of " + what);

    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;           // hard links: the data is not copied
    ingest.write_global_seqno = false;  // ingested files stay byte-identical
    std::vector<rocksdb::IngestExternalFileArg> args;
    if (!pub.data_file.empty()) {
        args.push_back({});
        args.back().column_family = pub.data_family;
        args.back().external_files = {pub.data_file};
        args.back().options = ingest;
    }
    args.push_back({});
    args.back().column_family = catalog_family;
    args.back().external_files = {pub.catalog_file};
    args.back().options = ingest;
    // One MANIFEST record for both families: after a crash either all of the
    // table (data and catalog entry) is there or none of it.
    s = db->IngestExternalFiles(args);
    if (!s.ok()) return from_rocksdb(s, "publishing " + what);

    // The new version is published whatever happens next: if retiring the
    // old data fails, it is an orphan that the next read-write open removes.
    if (retire_old) (void)retire_locked(pub.data_family, old_id);
    purge_files();
    return {};
}

Status DbState::retire_locked(rocksdb::ColumnFamilyHandle* family, std::uint64_t storage_id) {
    const std::string begin = id_prefix(storage_id);
    const std::string end = id_prefix(storage_id + 1);
    rocksdb::WriteBatch batch;
    batch.DeleteRange(family, begin, end);
    const rocksdb::Status s = db->Write(synced(), &batch);
    if (!s.ok()) return from_rocksdb(s, "deleting old data");
    return reclaim(family, storage_id);
}

Status DbState::reclaim(rocksdb::ColumnFamilyHandle* family, std::uint64_t storage_id) {
    // The range tombstone already hides the data; dropping the SST files that
    // lie wholly inside the range frees the space now instead of at some
    // later compaction.
    const std::string begin = id_prefix(storage_id);
    const std::string end = id_prefix(storage_id + 1);
    const rocksdb::Slice b(begin);
    const rocksdb::Slice e(end);
    return from_rocksdb(rocksdb::DeleteFilesInRange(db, family, &b, &e, false), "reclaiming space");
}

Status DbState::remove(char tag, std::string_view name) {
    if (Status s = check_writable(); !s.ok()) return s;
    const std::string what = what_of(tag, name);
    rocksdb::ColumnFamilyHandle* family = tag == kTableTag ? blocks_family : entries_family;

    std::lock_guard lock(write_mutex_);
    std::string value;
    bool exists = false;
    if (Status s = read_catalog(tag, name, value, exists); !s.ok()) return s;
    if (!exists) return {StatusCode::NotFound, what + " does not exist"};

    std::uint64_t id = 0;
    const bool known = id_of_record(tag, name, value, id);
    rocksdb::WriteBatch batch;
    batch.Delete(catalog_family, catalog_key(tag, name));
    if (known) batch.DeleteRange(family, id_prefix(id), id_prefix(id + 1));
    const rocksdb::Status s = db->Write(synced(), &batch);
    if (!s.ok()) return from_rocksdb(s, "deleting " + what);
    if (known) (void)reclaim(family, id);  // space only; the delete itself is done
    purge_files();
    return {};
}

Status DbState::sweep_orphans() {
    // Storage ids referenced by the catalog. If any record is unreadable the
    // set is incomplete, and nothing may be swept.
    std::set<std::uint64_t> live;
    std::uint64_t max_id = 0;
    {
        std::unique_ptr<rocksdb::Iterator> it(
            db->NewIterator(rocksdb::ReadOptions(), catalog_family));
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
            const std::string_view key = it->key().ToStringView();
            if (key.empty() || (key[0] != kTableTag && key[0] != kStrategyTag)) continue;
            std::uint64_t id = 0;
            if (!id_of_record(key[0], key.substr(1), it->value().ToStringView(), id)) return {};
            live.insert(id);
            max_id = std::max(max_id, id);
        }
        if (!it->status().ok()) return from_rocksdb(it->status(), "reading the catalog");
    }

    rocksdb::WriteBatch batch;
    std::vector<std::pair<rocksdb::ColumnFamilyHandle*, std::uint64_t>> orphans;
    for (rocksdb::ColumnFamilyHandle* family : {blocks_family, entries_family}) {
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), family));
        it->SeekToFirst();
        while (it->Valid()) {
            const std::string_view key = it->key().ToStringView();
            if (key.size() < 8) {
                it->Next();
                continue;
            }
            const std::uint64_t id = id_of_key(key);
            max_id = std::max(max_id, id);
            if (!live.contains(id)) {
                batch.DeleteRange(family, id_prefix(id), id_prefix(id + 1));
                orphans.emplace_back(family, id);
            }
            if (id == UINT64_MAX) break;
            it->Seek(id_prefix(id + 1));  // skip the rest of this id
        }
        if (!it->status().ok()) return from_rocksdb(it->status(), "scanning for orphaned data");
    }
    if (!orphans.empty()) {
        const rocksdb::Status s = db->Write(synced(), &batch);
        if (!s.ok()) return from_rocksdb(s, "deleting orphaned data");
        for (const auto& [family, id] : orphans) (void)reclaim(family, id);
        purge_files();
    }
    // Ids are never reused, even if the counter record lagged behind.
    next_id_ = std::max(next_id_, max_id + 1);
    return {};
}

}  // namespace tbf::storage::detail
