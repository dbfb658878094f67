#include "kept_records.hpp"

#include <algorithm>
#include <bit>

#include "tbforge/base/mix64.hpp"

namespace tbf::storage::detail {
namespace {

// Below this a record's directory and RocksDB's pinned block object are
// not worth counting apart: the smallest charge, and the unit that sizes
// the slot array.
constexpr std::size_t kMinCharge = 512;
// RocksDB's block object behind a pinned slice, with its allocation.
constexpr std::size_t kPinCharge = 256;

std::size_t charge_of(const KeptRecord& k) {
    const std::size_t own = sizeof(KeptRecord) + k.view.members.capacity() * sizeof(GroupMember);
    // A slice that is not pinned (no memory maps) holds a copy of the record.
    return std::max(kMinCharge, own + (k.record.IsPinned() ? kPinCharge : k.record.size()));
}

std::size_t capacity_for(std::size_t limit_bytes) {
    if (limit_bytes == 0) return 0;
    return std::bit_ceil(2 * std::max<std::size_t>(64, limit_bytes / kMinCharge));
}

}  // namespace

KeptRecords::KeptRecords(std::size_t limit_bytes)
    : limit_bytes_(limit_bytes), capacity_(capacity_for(limit_bytes)) {}

KeptRecords::~KeptRecords() { clear(); }

bool KeptRecords::has_room() const {
    return capacity_ != 0 && !full_.load(std::memory_order_relaxed);
}

// The record number's multiplier: odd and unrelated to kGoldenGamma (it is
// xxHash64's second prime), so that a table and a record number do not
// cancel each other in the home slot.
constexpr std::uint64_t kRecordMultiplier = 0xC2B2AE3D27D4EB4FULL;

std::size_t KeptRecords::home(std::uint64_t storage_id, std::uint64_t record_no) const {
    std::uint64_t h = storage_id * kGoldenGamma ^ record_no * kRecordMultiplier;
    h ^= h >> 29;
    return static_cast<std::size_t>(h) & (capacity_ - 1);
}

const KeptRecord* KeptRecords::find(std::uint64_t storage_id, std::uint64_t record_no) const {
    const Slot* slots = slots_.load(std::memory_order_acquire);
    if (slots == nullptr) return nullptr;
    // At most half the slots are ever used, so an empty one ends the scan.
    for (std::size_t i = home(storage_id, record_no);; i = (i + 1) & (capacity_ - 1)) {
        const KeptRecord* k = slots[i].load(std::memory_order_acquire);
        if (k == nullptr) return nullptr;
        if (k->storage_id == storage_id && k->record_no == record_no) return k;
    }
}

const KeptRecord* KeptRecords::keep(std::unique_ptr<KeptRecord> record) {
    if (capacity_ == 0) return nullptr;
    const std::size_t charge = charge_of(*record);
    std::lock_guard lock(insert_mutex_);
    Slot* slots = slots_.load(std::memory_order_relaxed);
    if (slots == nullptr) {
        slots = new Slot[capacity_];
        for (std::size_t i = 0; i < capacity_; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
        slots_.store(slots, std::memory_order_release);
    }
    std::size_t i = home(record->storage_id, record->record_no);
    for (;; i = (i + 1) & (capacity_ - 1)) {
        const KeptRecord* k = slots[i].load(std::memory_order_relaxed);
        if (k == nullptr) break;
        if (k->storage_id == record->storage_id && k->record_no == record->record_no) return k;
    }
    if (bytes_.load(std::memory_order_relaxed) + charge > limit_bytes_ ||
        count_.load(std::memory_order_relaxed) + 1 > capacity_ / 2) {
        // Nothing more fits: readers stop trying (has_room).
        full_.store(true, std::memory_order_relaxed);
        return nullptr;
    }
    bytes_.fetch_add(charge, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    KeptRecord* kept = record.release();
    slots[i].store(kept, std::memory_order_release);
    return kept;
}

void KeptRecords::clear() {
    std::lock_guard lock(insert_mutex_);
    Slot* slots = slots_.exchange(nullptr, std::memory_order_acq_rel);
    if (slots != nullptr) {
        for (std::size_t i = 0; i < capacity_; ++i) delete slots[i].load(std::memory_order_relaxed);
        delete[] slots;
    }
    bytes_.store(0, std::memory_order_relaxed);
    count_.store(0, std::memory_order_relaxed);
    full_.store(false, std::memory_order_relaxed);
}

KeptRecordStats KeptRecords::stats() const {
    std::lock_guard lock(insert_mutex_);
    return {count_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed), limit_bytes_};
}

}  // namespace tbf::storage::detail
