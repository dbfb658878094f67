#pragma once
// Values a compact table answers without storing them (a one-ply search,
// captures probed in sub-tables) cost a search on every probe; the
// decoded-block cache keeps only what is stored. This cache keeps the
// answers: a direct-mapped array of 64-bit entries, each one slot's value
// with the slot's full key, read and written with single atomic loads and
// stores, so a hit is exact and costs one memory access, with no lock.
// A newer answer replaces whatever shared its entry.
//
// Entry: bits 0-15 the value's code (value.hpp), bit 16 set when the DTC
// is exact (clear: the WDL alone, DTC 0), bits 17-39 the table's ordinal
// (never 0, so a zero entry is empty), bits 40-63 the slot shifted right by
// the entry count's bits (the low bits are the entry's position). A
// Tablebase also probes tables another one opened (look_also_in), so
// ordinals are unique in the process, not per Tablebase.

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "tbforge/base/mix64.hpp"
#include "tbforge/probe/value.hpp"

namespace tbf::probe::detail {

// A table's slot spread over an array of entries: tables fall in different
// places, and the slot's low bits are recoverable from the position given
// the ordinal.
inline std::uint64_t spread(std::uint32_t ordinal, std::uint64_t slot) {
    return slot ^ (std::uint64_t{ordinal} * kGoldenGamma >> 20);
}

// Without a cache of answers (a Tablebase opened with no cache; ResolvedCache
// falls back to this), one probe still keeps the answers its own searches
// reach: a derived position's
// search and the searches of its children meet the same positions again,
// and computing each once bounds a cold probe's work. Lives on the thread
// from the outermost Scope to its end; entries of earlier probes are told
// apart by a generation, so ending a scope clears nothing. (A value kept
// under a table's ordinal stays true: after 2^32 probes an old entry could
// answer again, rightly.)
class ProbeMemo {
public:
    // Begins or nests a probe on this thread; the outermost end forgets.
    class Scope {
    public:
        Scope() noexcept { ++depth(); }
        ~Scope() {
            if (--depth() == 0 && ++generation() == 0) generation() = 1;
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    };

    static std::optional<Value> find(std::uint32_t ordinal, std::uint64_t slot, bool exact_dtc) {
        if (depth() == 0 || ordinal == 0) return std::nullopt;
        const Entry& e = entries()[position(ordinal, slot)];
        if (e.generation != generation() || e.ordinal != ordinal || e.slot != slot) return std::nullopt;
        if (exact_dtc && !e.exact_dtc) return std::nullopt;
        return decode_value(e.code);
    }

    static void keep(std::uint32_t ordinal, std::uint64_t slot, Value value, bool exact_dtc) {
        if (depth() == 0 || ordinal == 0) return;  // 0: a table without an ordinal
        if (!exact_dtc) value.dtc = 0;
        entries()[position(ordinal, slot)] = {slot, generation(), ordinal, encode_value(value), exact_dtc};
    }

private:
    static constexpr std::size_t kEntries = 8192;
    struct Entry {
        std::uint64_t slot = 0;
        std::uint32_t generation = 0;  // 0: never written (generations start at 1)
        std::uint32_t ordinal = 0;
        std::uint16_t code = 0;
        bool exact_dtc = false;
    };
    static int& depth() {
        thread_local int d = 0;
        return d;
    }
    static std::uint32_t& generation() {
        thread_local std::uint32_t g = 1;
        return g;
    }
    static Entry* entries() {
        thread_local std::unique_ptr<Entry[]> table(new Entry[kEntries]);
        return table.get();
    }
    static std::size_t position(std::uint32_t ordinal, std::uint64_t slot) {
        return static_cast<std::size_t>(spread(ordinal, slot) & (kEntries - 1));
    }
};

class ResolvedCache {
public:
    // Ordinals a table may have: 1 .. kMaxOrdinal.
    static constexpr std::uint32_t kMaxOrdinal = (1u << 23) - 1;

    // A new ordinal for a table opened; 0 once they run out (not kept).
    static std::uint32_t next_ordinal() {
        static std::atomic<std::uint32_t> last{0};
        const std::uint32_t n = last.fetch_add(1, std::memory_order_relaxed) + 1;
        return n <= kMaxOrdinal ? n : 0;
    }

    // At most `bytes` of entries (a power of two of them); fewer than 1024
    // entries keep nothing.
    explicit ResolvedCache(std::size_t bytes) {
        const std::size_t entries = std::bit_floor(bytes / sizeof(std::uint64_t));
        if (entries < 1024) return;
        bits_ = static_cast<unsigned>(std::countr_zero(entries));
        entries_ = std::make_unique<std::atomic<std::uint64_t>[]>(entries);
    }

    [[nodiscard]] bool enabled() const { return entries_ != nullptr; }
    [[nodiscard]] std::size_t bytes() const { return enabled() ? sizeof(std::uint64_t) << bits_ : 0; }

    // The value kept for (ordinal, slot), if any; with `exact_dtc`, only one
    // whose DTC is exact.
    [[nodiscard]] std::optional<Value> find(std::uint32_t ordinal, std::uint64_t slot, bool exact_dtc) const {
        if (!enabled()) return ProbeMemo::find(ordinal, slot, exact_dtc);
        if (!keepable(ordinal, slot)) return std::nullopt;
        const std::uint64_t entry = entries_[position(ordinal, slot)].load(std::memory_order_relaxed);
        if ((entry >> 17) != tag(ordinal, slot)) return std::nullopt;
        if (exact_dtc && !(entry & kExactDtc)) return std::nullopt;
        return decode_value(static_cast<std::uint16_t>(entry));
    }

    void keep(std::uint32_t ordinal, std::uint64_t slot, Value value, bool exact_dtc) {
        if (!enabled()) return ProbeMemo::keep(ordinal, slot, value, exact_dtc);
        if (!keepable(ordinal, slot)) return;
        if (!exact_dtc) value.dtc = 0;
        const std::uint64_t entry = tag(ordinal, slot) << 17 | (exact_dtc ? kExactDtc : 0) | encode_value(value);
        entries_[position(ordinal, slot)].store(entry, std::memory_order_relaxed);
    }

private:
    static constexpr std::uint64_t kExactDtc = std::uint64_t{1} << 16;

    [[nodiscard]] bool keepable(std::uint32_t ordinal, std::uint64_t slot) const {
        return enabled() && ordinal != 0 && ordinal <= kMaxOrdinal && (slot >> bits_) < (1u << 24);
    }
    // Tables spread over the array; the slot's low bits are recoverable
    // from the position given the ordinal, so the tag leaves them out.
    [[nodiscard]] std::size_t position(std::uint32_t ordinal, std::uint64_t slot) const {
        return static_cast<std::size_t>(spread(ordinal, slot) & ((std::uint64_t{1} << bits_) - 1));
    }
    [[nodiscard]] std::uint64_t tag(std::uint32_t ordinal, std::uint64_t slot) const {
        return (slot >> bits_) << 23 | ordinal;
    }

    unsigned bits_ = 0;
    std::unique_ptr<std::atomic<std::uint64_t>[]> entries_;
};

}  // namespace tbf::probe::detail
