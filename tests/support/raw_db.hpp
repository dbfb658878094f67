#pragma once
// Plain RocksDB access to a tbforge database, below the storage API, for
// tests that plant damage or look at keys directly (the key layout is
// docs/storage-format.md section 3). The executable must link RocksDB.

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tbf::test {

// Every column family of the database, opened read-write.
class RawDb {
public:
    explicit RawDb(const std::string& path) {
        REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names_).ok());
        std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
        for (const auto& n : names_) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
        REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), path, descriptors, &handles_, &db_).ok());
    }
    ~RawDb() {
        for (auto* h : handles_) CHECK(db_->DestroyColumnFamilyHandle(h).ok());
        delete db_;
    }
    RawDb(const RawDb&) = delete;
    RawDb& operator=(const RawDb&) = delete;

    rocksdb::DB* db() { return db_; }
    rocksdb::ColumnFamilyHandle* family(const std::string& name) {
        const auto it = std::find(names_.begin(), names_.end(), name);
        REQUIRE(it != names_.end());
        return handles_[static_cast<std::size_t>(it - names_.begin())];
    }
    std::string get(const std::string& family_name, const std::string& key) {
        std::string value;
        REQUIRE(db_->Get(rocksdb::ReadOptions(), family(family_name), key, &value).ok());
        return value;
    }
    // A synced write, so that a process opening the database next sees it.
    void put(const std::string& family_name, const std::string& key, const std::string& value) {
        rocksdb::WriteOptions w;
        w.sync = true;
        REQUIRE(db_->Put(w, family(family_name), key, value).ok());
    }
    // Storage ids (first 8 key bytes, big-endian) present in a family.
    std::set<std::uint64_t> ids(const std::string& family_name) {
        std::set<std::uint64_t> out;
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), family(family_name)));
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
            std::uint64_t id = 0;
            for (int i = 0; i < 8; ++i) id = (id << 8) | static_cast<unsigned char>(it->key()[i]);
            out.insert(id);
        }
        REQUIRE(it->status().ok());
        return out;
    }

private:
    rocksdb::DB* db_ = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles_;
    std::vector<std::string> names_;
};

// Big-endian u64, as keys hold their integers.
inline std::string be64(std::uint64_t v) {
    std::string s;
    for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
    return s;
}

// Key of block `block_no` of a table's storage id in the `blocks` family.
inline std::string block_key(std::uint64_t storage_id, std::uint64_t block_no) {
    return be64(storage_id) + be64(block_no);
}

}  // namespace tbf::test
