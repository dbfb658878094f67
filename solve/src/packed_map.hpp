#pragma once
// A flat open-addressing map from a packed position to a small value. The
// region and quiet caches hold tens of millions of positions and every
// exploration indexes up to its budget of them; a node-based map spends
// about 60 bytes and an allocation on each, this one 18 bytes a slot
// (at most 48 a position just after it grows) and none.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "huge_pages.hpp"
#include "packed_position.hpp"

namespace tbf::solve::detail {

template <class Value>
class PackedMap {
public:
    // Bytes a position may cost at the least dense moment (just after the
    // slots doubled): what a memory cap should budget per position.
    static constexpr std::size_t kBytesPerPosition = (sizeof(PackedPosition) + sizeof(Value)) * 8 / 3 + 1;

    const Value* find(const PackedPosition& key) const {
        if (keys_.empty()) return nullptr;
        for (std::size_t i = packed_hash(key) & mask_;; i = (i + 1) & mask_) {
            if (keys_[i] == key) return &values_[i];
            if (keys_[i] == kEmpty) return nullptr;
        }
    }
    Value* find(const PackedPosition& key) {
        return const_cast<Value*>(std::as_const(*this).find(key));
    }
    bool contains(const PackedPosition& key) const { return find(key) != nullptr; }

    // Starts loading the slot where a lookup of `key` begins: a batch of
    // lookups whose slots are requested first waits for memory once, not
    // once per lookup. A hint only (a later growth moves the slots).
    void prefetch(const PackedPosition& key) const {
        if (!keys_.empty()) __builtin_prefetch(&keys_[packed_hash(key) & mask_]);
    }

    // The value of `key`, inserted as `value` if absent; true if inserted.
    std::pair<Value*, bool> try_emplace(const PackedPosition& key, Value value) {
        if ((size_ + 1) * 4 > keys_.size() * 3) grow();
        std::size_t i = packed_hash(key) & mask_;
        for (; keys_[i] != kEmpty; i = (i + 1) & mask_) {
            if (keys_[i] == key) return {&values_[i], false};
        }
        keys_[i] = key;
        values_[i] = value;
        ++size_;
        return {&values_[i], true};
    }
    void insert_or_assign(const PackedPosition& key, Value value) {
        auto [slot, inserted] = try_emplace(key, value);
        if (!inserted) *slot = value;
    }

    // Calls fn(key, value) for every entry, in slot order.
    template <class Fn>
    void for_each(Fn&& fn) const {
        for (std::size_t i = 0; i < keys_.size(); ++i) {
            if (!(keys_[i] == kEmpty)) fn(keys_[i], values_[i]);
        }
    }

    std::size_t size() const { return size_; }
    std::uint64_t memory_bytes() const { return keys_.capacity() * sizeof(PackedPosition) + values_.capacity() * sizeof(Value); }

private:
    // No position packs to all zeros: both kings are always on the board.
    static constexpr PackedPosition kEmpty{};

    void grow() {
        const std::size_t slots = keys_.empty() ? 1024 : keys_.size() * 2;
        std::vector<PackedPosition, HugePageAllocator<PackedPosition>> old_keys(slots);
        std::vector<Value, HugePageAllocator<Value>> old_values(slots);
        old_keys.swap(keys_);
        old_values.swap(values_);
        mask_ = slots - 1;
        for (std::size_t j = 0; j < old_keys.size(); ++j) {
            if (old_keys[j] == kEmpty) continue;
            std::size_t i = packed_hash(old_keys[j]) & mask_;
            while (keys_[i] != kEmpty) i = (i + 1) & mask_;
            keys_[i] = old_keys[j];
            values_[i] = old_values[j];
        }
    }

    std::vector<PackedPosition, HugePageAllocator<PackedPosition>> keys_;
    std::vector<Value, HugePageAllocator<Value>> values_;
    std::size_t size_ = 0;
    std::size_t mask_ = 0;
};

}  // namespace tbf::solve::detail
