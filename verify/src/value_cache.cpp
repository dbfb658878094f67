// Value blocks under a byte budget, least recently used out first, read
// through the probe's C API.

#include "value_cache.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "fork_join.hpp"

namespace tbf::verify::detail {

namespace {

// The value encoding the table checksum is computed over (docs/values.md):
// the codes held here re-encode the C API's values in it, which gives back
// the stored bytes of a table stored in it.
constexpr std::string_view kValueEncoding = "wdl-dtc/1";

// The wdl-dtc/1 code of a value.
std::uint64_t code_of(const tbf_value& v) {
    if (v.wdl == 0) return 0;
    return (v.wdl > 0 ? 1 : 2) + 2 * static_cast<std::uint64_t>(v.dtc);
}

}  // namespace

void TableValues::copy_bytes(std::uint64_t first, std::uint64_t n, std::uint8_t* out) const {
    while (n > 0) {
        const std::uint64_t block = first >> shift_;
        const std::uint64_t offset = first & mask_;
        const std::uint64_t take = std::min(n, (mask_ + 1) - offset);
        const std::uint64_t stop = std::min<std::uint64_t>(take, slots_ - first);
        std::memcpy(out, entries_[block].data + offset * width_, stop * width_);
        out += stop * width_;
        first += stop;
        n -= stop;
    }
}

Result<TableValues*> ValueCache::open(const std::string& name) {
    for (const auto& t : tables_) {
        if (t->name_ == name) return t.get();
    }
    auto found = database_.table_info(name);
    if (!found.ok()) return found.status();
    const storage::TableInfo& info = *found;
    // wdl-dtc/3 is wdl-dtc/2 in another slot order, which the probe's index
    // (tbf_table_decode) follows; wdl-dtc/4 is wdl-dtc/3 with one side to
    // move stored for some tables, wdl-dtc/5 for all, wdl-dtc/6 with some
    // wins stored as their WDL, wdl-dtc/7 with some pawn structures stored
    // as nothing, wdl-dtc/8 with some knights' squares too, wdl-dtc/9 with
    // the knights' worth chosen per table. tbf_table_values resolves all eight.
    const bool compact = info.spec.value_encoding == "wdl-dtc/2" || info.spec.value_encoding == "wdl-dtc/3" ||
                         info.spec.value_encoding == "wdl-dtc/4" || info.spec.value_encoding == "wdl-dtc/5" ||
                         info.spec.value_encoding == "wdl-dtc/6" || info.spec.value_encoding == "wdl-dtc/7" ||
                         info.spec.value_encoding == "wdl-dtc/8" || info.spec.value_encoding == "wdl-dtc/9";
    if (info.spec.value_encoding != kValueEncoding && !compact) {
        return Status(StatusCode::Corruption, "table " + name + " has value encoding \"" +
                                                   info.spec.value_encoding +
                                                   "\", which tbverify does not read");
    }
    std::uint32_t width = info.spec.value_width;
    if (compact) {
        // The values are read as wdl-dtc/1 codes: the width wdl-dtc/1 would choose.
        std::uint64_t max_dtc = 0;
        for (const auto& c : info.statistics.counters)
            if (c.name == "max_dtc") max_dtc = c.value;
        width = 2 + 2 * max_dtc <= 0xFF ? 1 : 2;
    }
    const std::uint32_t per_block = info.slots_per_block;
    if ((width != 1 && width != 2 && width != 4) || per_block == 0 ||
        !std::has_single_bit(per_block) ||
        info.block_count != (info.spec.slot_count + per_block - 1) / per_block) {
        return Status(StatusCode::Corruption,
                      "table " + name + " has an impossible layout (value width " +
                          std::to_string(width) + ", " + std::to_string(per_block) +
                          " slots per block, " + std::to_string(info.block_count) + " blocks)");
    }
    auto t = std::make_unique<TableValues>();
    t->name_ = name;
    t->slots_ = info.spec.slot_count;
    t->width_ = width;
    t->shift_ = static_cast<unsigned>(std::countr_zero(per_block));
    t->mask_ = per_block - 1;
    t->entries_.resize(info.block_count);
    t->blocks_.resize(info.block_count);
    t->info_.emplace(std::move(*found));
    tables_.push_back(std::move(t));
    return tables_.back().get();
}

std::uint64_t ValueCache::block_bytes(const TableValues& t, std::uint64_t block) const {
    const std::uint64_t first = block << t.shift_;
    return std::min<std::uint64_t>(t.mask_ + 1, t.slots_ - first) * t.width_;
}

Status ValueCache::read_block(TableValues& t, std::uint64_t block) const {
    const std::uint64_t first = block << t.shift_;
    const std::uint64_t n = std::min<std::uint64_t>(t.mask_ + 1, t.slots_ - first);
    std::vector<tbf_value> values(n);
    if (tbf_table_values(db_, t.name_.c_str(), first, n, values.data()) != TBF_OK) {
        return Status(StatusCode::Corruption, tbf_last_error());
    }
    auto bytes = std::make_unique_for_overwrite<std::uint8_t[]>(n * t.width_);
    const std::uint64_t limit = t.width_ == 4 ? 0xFFFFFFFFull : (std::uint64_t{1} << (8 * t.width_)) - 1;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t code = code_of(values[i]);
        if (values[i].wdl < -1 || values[i].wdl > 1 || code > limit) {
            return Status(StatusCode::Corruption,
                          "table '" + t.name_ + "' slot " + std::to_string(first + i) +
                              ": a value that no " + std::to_string(t.width_) +
                              "-byte code holds");
        }
        for (std::uint32_t b = 0; b < t.width_; ++b) {
            bytes[i * t.width_ + b] = static_cast<std::uint8_t>(code >> (8 * b));
        }
    }
    t.blocks_[block] = std::move(bytes);
    return Status();
}

void ValueCache::make_room(std::uint64_t wanted) {
    if (held_ + wanted <= budget_) return;
    struct Held {
        std::uint32_t used;
        TableValues* table;
        std::uint64_t block;
    };
    std::vector<Held> held;
    for (const auto& t : tables_) {
        for (std::uint64_t b = 0; b < t->entries_.size(); ++b) {
            if (t->entries_[b].data != nullptr) held.push_back({t->entries_[b].used, t.get(), b});
        }
    }
    std::sort(held.begin(), held.end(),
              [](const Held& a, const Held& b) { return a.used < b.used; });
    for (const Held& h : held) {
        if (held_ + wanted <= budget_) break;
        h.table->entries_[h.block].data = nullptr;
        h.table->blocks_[h.block].reset();
        held_ -= block_bytes(*h.table, h.block);
    }
}

Result<std::size_t> ValueCache::load(const std::vector<BlockId>& blocks, int threads) {
    if (blocks.empty()) return std::size_t{0};
    std::uint64_t wanted = 0;
    for (const BlockId& id : blocks) wanted += block_bytes(*id.table, id.block);
    make_room(wanted);
    // As many as fit, at least one, so that every call makes progress.
    std::size_t count = 0;
    std::uint64_t bytes = 0;
    while (count < blocks.size()) {
        const std::uint64_t next = block_bytes(*blocks[count].table, blocks[count].block);
        if (count > 0 && held_ + bytes + next > budget_) break;
        bytes += next;
        ++count;
    }
    std::vector<Status> errors(count);
    std::atomic<std::size_t> next{0};
    const auto read = [&](std::size_t i) {
        const BlockId& id = blocks[i];
        errors[i] = read_block(*id.table, id.block);
        if (errors[i].ok()) {
            id.table->entries_[id.block] = {id.table->blocks_[id.block].get(), stamp_};
        }
    };
    // A thread for every 4 blocks at most: a few blocks are read faster than
    // a thread starts.
    const int used = static_cast<int>(std::clamp<std::size_t>(count / 4, 1,
                                                              static_cast<std::size_t>(std::max(threads, 1))));
    run_on_threads(used, [&](int) {
        for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) read(i);
    });
    for (std::size_t i = 0; i < count; ++i) {
        if (!errors[i].ok()) {
            // Keep the cache consistent: drop whatever this call loaded.
            for (std::size_t j = 0; j < count; ++j) {
                const BlockId& id = blocks[j];
                if (id.table->entries_[id.block].data == nullptr) continue;
                id.table->entries_[id.block].data = nullptr;
                id.table->blocks_[id.block].reset();
            }
            return errors[i];
        }
    }
    held_ += bytes;
    blocks_read_ += count;
    bytes_read_ += bytes;
    return count;
}

}  // namespace tbf::verify::detail
