#pragma once
// Internal: the stored values of the tables a check reads, held as blocks of
// codes under a byte budget (--memory). This is the one place values enter
// the check: every block, of the table checked and of the tables its children
// are in, is read with the probe's C API tbf_table_values (full values of a
// slot range, whatever the stored encoding; the storage reader's block
// checksums guard what it reads) and held as wdl-dtc/1 codes (0 draw, 1 + 2d
// win in d, 2 + 2d loss in d) of the table's value width. Block geometry
// (slots per block, matching the stored blocks so that each is decompressed
// once) comes from the storage metadata. A table that fits is held whole, a
// larger one a window at a time, the blocks used longest ago making room
// first.
//
// Thread safety: code(), loaded() and touch() may be called from many
// threads while nothing is loaded or evicted; open(), load() and evict run
// between those phases, from one thread (load() reads in parallel itself).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/storage/database.hpp"

namespace tbf::verify::detail {

class TableValues {
public:
    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] const storage::TableInfo& info() const { return *info_; }
    [[nodiscard]] std::uint64_t slots() const { return slots_; }
    [[nodiscard]] std::uint32_t width() const { return width_; }
    // Bytes of the whole table decoded.
    [[nodiscard]] std::uint64_t bytes() const { return slots_ * width_; }
    [[nodiscard]] std::uint64_t block_of(std::uint64_t slot) const { return slot >> shift_; }
    [[nodiscard]] std::uint64_t block_count() const { return entries_.size(); }
    [[nodiscard]] bool loaded(std::uint64_t block) const {
        return entries_[block].data != nullptr;
    }
    // The stored code of `slot`, whose block is loaded.
    [[nodiscard]] std::uint32_t code(std::uint64_t slot) const {
        const std::uint8_t* p = entries_[slot >> shift_].data;
        const std::uint64_t i = slot & mask_;
        switch (width_) {
            case 1: return p[i];
            case 2: return static_cast<std::uint32_t>(p[2 * i] | (p[2 * i + 1] << 8));
            default: break;
        }
        const std::uint8_t* q = p + 4 * i;
        return static_cast<std::uint32_t>(q[0]) | (static_cast<std::uint32_t>(q[1]) << 8) |
               (static_cast<std::uint32_t>(q[2]) << 16) | (static_cast<std::uint32_t>(q[3]) << 24);
    }
    // Asks the CPU to fetch the value of `slot` (block loaded) ahead of use.
    void prefetch(std::uint64_t slot) const {
        __builtin_prefetch(entries_[slot >> shift_].data + (slot & mask_) * width_);
    }
    // The raw little-endian bytes of slots [first, first + n), all in loaded blocks.
    void copy_bytes(std::uint64_t first, std::uint64_t n, std::uint8_t* out) const;
    // Marks a block as used in the current window (eviction goes by it).
    void touch(std::uint64_t block, std::uint32_t stamp) {
        std::atomic_ref<std::uint32_t> used(entries_[block].used);
        if (used.load(std::memory_order_relaxed) != stamp) {
            used.store(stamp, std::memory_order_relaxed);
        }
    }

private:
    friend class ValueCache;
    struct Entry {
        const std::uint8_t* data = nullptr;
        alignas(4) std::uint32_t used = 0;
    };

    std::string name_;
    std::optional<storage::TableInfo> info_;
    std::uint64_t slots_ = 0;
    std::uint32_t width_ = 1;
    unsigned shift_ = 0;
    std::uint64_t mask_ = 0;
    std::vector<Entry> entries_;
    std::vector<std::unique_ptr<std::uint8_t[]>> blocks_;
};

// A block of one table, for load().
struct BlockId {
    TableValues* table = nullptr;
    std::uint64_t block = 0;
};

class ValueCache {
public:
    // `db` answers the values; `database` the metadata.
    ValueCache(tbf_db* db, storage::Database database) : db_(db), database_(std::move(database)) {}

    [[nodiscard]] const storage::Database& database() const { return database_; }

    // The byte budget of the decoded blocks held.
    void set_budget(std::uint64_t bytes) { budget_ = bytes; }
    [[nodiscard]] std::uint64_t budget() const { return budget_; }
    [[nodiscard]] std::uint64_t held_bytes() const { return held_; }

    // A table of the database (opened once). Errors name the table; a value
    // encoding or width the verifier does not read is an error too.
    [[nodiscard]] Result<TableValues*> open(const std::string& name);

    // A new stamp for touch(): blocks with older stamps are evicted first.
    std::uint32_t next_stamp() { return ++stamp_; }
    [[nodiscard]] std::uint32_t stamp() const { return stamp_; }

    // Loads `blocks` (none loaded yet, no duplicates) from the front, as many
    // as fit in the budget after evicting the blocks used longest ago — at
    // least one — in parallel on `threads` threads; they are stamped with
    // the current stamp. Returns how many were loaded, or the first read
    // error (damaged or missing block).
    [[nodiscard]] Result<std::size_t> load(const std::vector<BlockId>& blocks, int threads);

    // Counters for the report: blocks and bytes read since the cache was made.
    [[nodiscard]] std::uint64_t blocks_read() const { return blocks_read_; }
    [[nodiscard]] std::uint64_t bytes_read() const { return bytes_read_; }

private:
    std::uint64_t block_bytes(const TableValues& t, std::uint64_t block) const;
    // Evicts least recently used blocks until `wanted` more bytes fit (or
    // nothing is left to evict).
    void make_room(std::uint64_t wanted);

    // One block's codes, read through the C API; an error names the table.
    [[nodiscard]] Status read_block(TableValues& t, std::uint64_t block) const;

    tbf_db* db_;
    storage::Database database_;
    std::vector<std::unique_ptr<TableValues>> tables_;
    std::uint64_t budget_ = 0;
    std::uint64_t held_ = 0;
    std::uint32_t stamp_ = 1;
    std::uint64_t blocks_read_ = 0;
    std::uint64_t bytes_read_ = 0;
};

}  // namespace tbf::verify::detail
