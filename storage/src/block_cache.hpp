#pragma once
// Decompressed-block cache shared by all tables of one open database: a
// sharded LRU keyed by (storage id, block number) with a byte limit. Storage
// ids are never reused, so a replaced table cannot hit stale blocks.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "tbforge/storage/database.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::storage::detail {

class BlockCache {
public:
    explicit BlockCache(std::size_t capacity_bytes);

    // Reads one value of a cached block under the shard lock, so the hot path
    // of get(slot) touches no reference count. False on a miss.
    bool lookup_value(std::uint64_t storage_id, std::uint64_t block_no, std::size_t index,
                      std::uint32_t& value);
    BlockRef lookup(std::uint64_t storage_id, std::uint64_t block_no);
    // False when caching is off (a limit of 0): readers then skip the cache
    // altogether.
    [[nodiscard]] bool keeps_blocks() const { return shard_capacity_ > 0; }
    void insert(std::uint64_t storage_id, const BlockRef& block);
    void clear();
    [[nodiscard]] CacheStats stats() const;

private:
    struct Key {
        std::uint64_t storage_id;
        std::uint64_t block_no;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const;
    };
    struct Entry {
        Key key;
        BlockRef block;
        std::size_t charge;
    };
    using Lru = std::list<Entry>;  // front = most recently used

    struct alignas(64) Shard {
        std::mutex mutex;
        Lru lru;
        std::unordered_map<Key, Lru::iterator, KeyHash> map;
        std::size_t bytes = 0;
        std::uint64_t hits = 0;
        std::uint64_t misses = 0;
    };

    Shard& shard_for(const Key& key);
    // Looks up and marks as recently used; caller holds the shard lock.
    static const Entry* find_locked(Shard& shard, const Key& key);

    std::size_t capacity_;
    std::size_t shard_capacity_;
    std::size_t shard_count_;
    std::unique_ptr<Shard[]> shards_;
};

}  // namespace tbf::storage::detail
