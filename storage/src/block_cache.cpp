#include "block_cache.hpp"

#include <algorithm>
#include <bit>

#include "tbforge/base/mix64.hpp"

namespace tbf::storage::detail {
namespace {

constexpr std::size_t kMaxShards = 32;
// Each shard should hold many blocks even for the largest blocks (4 MiB raw),
// so small caches get fewer shards rather than useless ones.
constexpr std::size_t kMinShardBytes = std::size_t{8} << 20;
// Per-entry bookkeeping (list node, hash node, Block object), charged so the
// byte limit stays honest for small blocks.
constexpr std::size_t kEntryOverhead = 128;

}  // namespace

std::size_t BlockCache::KeyHash::operator()(const Key& k) const {
    // Both words reach every bit of the shard and bucket numbers.
    return static_cast<std::size_t>(mix64(k.storage_id * kGoldenGamma ^ k.block_no));
}

BlockCache::BlockCache(std::size_t capacity_bytes)
    : capacity_(capacity_bytes),
      shard_count_(
          std::bit_floor(std::clamp<std::size_t>(capacity_bytes / kMinShardBytes, 1, kMaxShards))),
      shards_(std::make_unique<Shard[]>(shard_count_)) {
    shard_capacity_ = capacity_ / shard_count_;
}

BlockCache::Shard& BlockCache::shard_for(const Key& key) {
    // High bits: the map inside the shard uses the low ones.
    return shards_[(KeyHash{}(key) >> 48) & (shard_count_ - 1)];
}

const BlockCache::Entry* BlockCache::find_locked(Shard& shard, const Key& key) {
    const auto it = shard.map.find(key);
    if (it == shard.map.end()) {
        ++shard.misses;
        return nullptr;
    }
    ++shard.hits;
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
    return &*it->second;
}

bool BlockCache::lookup_value(std::uint64_t storage_id, std::uint64_t block_no, std::size_t index,
                              std::uint32_t& value) {
    const Key key{storage_id, block_no};
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    const Entry* e = find_locked(shard, key);
    if (e == nullptr) return false;
    value = e->block->value(index);
    return true;
}

BlockRef BlockCache::lookup(std::uint64_t storage_id, std::uint64_t block_no) {
    const Key key{storage_id, block_no};
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    const Entry* e = find_locked(shard, key);
    return e == nullptr ? nullptr : e->block;
}

void BlockCache::insert(std::uint64_t storage_id, const BlockRef& block) {
    const std::size_t charge = block->bytes().size() + kEntryOverhead;
    if (charge > shard_capacity_) return;  // would evict everything and still not fit
    const Key key{storage_id, block->block_no()};
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    if (shard.map.contains(key)) return;  // another thread decoded it first
    shard.lru.push_front(Entry{key, block, charge});
    shard.map.emplace(key, shard.lru.begin());
    shard.bytes += charge;
    while (shard.bytes > shard_capacity_) {
        const Entry& victim = shard.lru.back();
        shard.bytes -= victim.charge;
        shard.map.erase(victim.key);
        shard.lru.pop_back();
    }
}

void BlockCache::clear() {
    for (std::size_t i = 0; i < shard_count_; ++i) {
        Shard& shard = shards_[i];
        std::lock_guard lock(shard.mutex);
        shard.map.clear();
        shard.lru.clear();
        shard.bytes = 0;
    }
}

CacheStats BlockCache::stats() const {
    CacheStats s;
    s.capacity = capacity_;
    for (std::size_t i = 0; i < shard_count_; ++i) {
        Shard& shard = shards_[i];
        std::lock_guard lock(shard.mutex);
        s.hits += shard.hits;
        s.misses += shard.misses;
        s.bytes += shard.bytes;
        s.blocks += shard.map.size();
    }
    return s;
}

}  // namespace tbf::storage::detail
