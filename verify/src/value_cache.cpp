// Decoded value blocks under a byte budget, least recently used out first.

#include "value_cache.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "fork_join.hpp"

namespace tbf::verify::detail {

namespace {

// The value encoding this verifier reads (docs/values.md).
constexpr std::string_view kValueEncoding = "wdl-dtc/1";

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
    auto reader = database_.open_table(name);
    if (!reader.ok()) return reader.status();
    const storage::TableInfo& info = reader->info();
    if (info.spec.value_encoding != kValueEncoding) {
        return Status(StatusCode::Corruption, "table " + name + " has value encoding \"" +
                                                   info.spec.value_encoding +
                                                   "\", which tbverify does not read");
    }
    const std::uint32_t width = info.spec.value_width;
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
    t->reader_.emplace(std::move(*reader));
    tables_.push_back(std::move(t));
    return tables_.back().get();
}

std::uint64_t ValueCache::block_bytes(const TableValues& t, std::uint64_t block) const {
    const std::uint64_t first = block << t.shift_;
    return std::min<std::uint64_t>(t.mask_ + 1, t.slots_ - first) * t.width_;
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
        auto block = id.table->reader_->read_block(id.block, storage::CacheUse::Bypass);
        if (!block.ok()) {
            errors[i] = block.status();
            return;
        }
        const storage::Block& b = **block;
        const std::uint64_t expected = block_bytes(*id.table, id.block);
        if (b.value_width() != id.table->width_ || b.bytes().size() != expected) {
            errors[i] = Status(StatusCode::Corruption,
                               "table '" + id.table->name_ + "' block " + std::to_string(id.block) +
                                   " has " + std::to_string(b.bytes().size()) + " bytes, not " +
                                   std::to_string(expected));
            return;
        }
        id.table->entries_[id.block] = {b.bytes().data(), stamp_};
        id.table->blocks_[id.block] = std::move(*block);
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
