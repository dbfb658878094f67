#include <bit>

#include "db_state.hpp"
#include "records.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::storage {
namespace {

std::string table_what(const TableInfo& info) { return "table '" + info.spec.name + "'"; }

}  // namespace

Block::Block(std::uint64_t block_no, std::uint64_t first_slot, std::uint32_t slot_count,
             std::uint32_t value_width, std::unique_ptr<std::uint8_t[]> bytes)
    : block_no_(block_no),
      first_slot_(first_slot),
      slot_count_(slot_count),
      width_(value_width),
      bytes_(std::move(bytes)) {}

TableReader::TableReader(std::shared_ptr<detail::DbState> db, std::shared_ptr<const TableInfo> info)
    : db_(std::move(db)),
      info_(std::move(info)),
      decoding_(detail::make_block_decoding(*info_)),
      block_shift_(static_cast<unsigned>(std::countr_zero(info_->slots_per_block))) {}

namespace {

// Fetches, checks and decodes one block, without touching the cache.
Result<BlockRef> load_block(detail::DbState& db, const TableInfo& info,
                            const detail::BlockDecoding* decoding, std::uint64_t block_no) {
    const std::string key = detail::block_key(info.storage_id, block_no);
    rocksdb::PinnableSlice record;
    const rocksdb::Status s = db.db->Get(rocksdb::ReadOptions(), db.blocks_family, key, &record);
    if (s.IsNotFound()) {
        return Status(StatusCode::NotFound,
                      table_what(info) + " block " + std::to_string(block_no) +
                          " is missing (the table was deleted or replaced after it was opened)");
    }
    if (!s.ok()) {
        return detail::from_rocksdb(
            s, "reading " + table_what(info) + " block " + std::to_string(block_no));
    }
    const std::uint64_t first = block_no * info.slots_per_block;
    const auto slots = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(info.slots_per_block, info.spec.slot_count - first));
    const std::uint32_t width = info.spec.value_width;
    auto bytes = std::make_unique_for_overwrite<std::uint8_t[]>(std::size_t{slots} * width);
    if (Status d = detail::decode_block(info.spec.name, block_no, key, record.ToStringView(), width,
                                        slots, decoding, bytes.get());
        !d.ok()) {
        return d;
    }
    return BlockRef(std::make_shared<const Block>(block_no, first, slots, width, std::move(bytes)));
}

}  // namespace

Result<std::uint32_t> TableReader::get(std::uint64_t slot) const {
    return detail::guarded([&]() -> Result<std::uint32_t> {
        const TableInfo& info = *info_;
        if (slot >= info.spec.slot_count) {
            return Status(StatusCode::InvalidArgument,
                          table_what(info) + ": slot " + std::to_string(slot) + " out of range (" +
                              std::to_string(info.spec.slot_count) + " slots)");
        }
        const std::uint64_t block_no = slot >> block_shift_;
        const std::size_t index = slot & (info.slots_per_block - 1);
        std::uint32_t value = 0;
        if (db_->cache.lookup_value(info.storage_id, block_no, index, value)) return value;
        Result<BlockRef> block = load_block(*db_, info, decoding_.get(), block_no);
        if (!block.ok()) return block.status();
        db_->cache.insert(info.storage_id, *block);
        return (*block)->value(index);
    });
}

Result<BlockRef> TableReader::read_block(std::uint64_t block_no, CacheUse cache) const {
    return detail::guarded([&]() -> Result<BlockRef> {
        const TableInfo& info = *info_;
        if (block_no >= info.block_count) {
            return Status(StatusCode::InvalidArgument,
                          table_what(info) + ": block " + std::to_string(block_no) +
                              " out of range (" + std::to_string(info.block_count) + " blocks)");
        }
        if (BlockRef hit = db_->cache.lookup(info.storage_id, block_no)) return hit;
        Result<BlockRef> block = load_block(*db_, info, decoding_.get(), block_no);
        if (block.ok() && cache == CacheUse::Fill) db_->cache.insert(info.storage_id, *block);
        return block;
    });
}

Status TableReader::verify() const {
    return detail::guarded([&]() -> Status {
        const TableInfo& info = *info_;
        Xxh64 hash;
        for (std::uint64_t b = 0; b < info.block_count; ++b) {
            // Straight from storage: a cached copy would not test the stored bytes.
            Result<BlockRef> block = load_block(*db_, info, decoding_.get(), b);
            if (!block.ok()) return block.status();
            hash.update((*block)->bytes());
        }
        if (hash.digest() != info.values_checksum) {
            return Status(StatusCode::ChecksumMismatch,
                          table_what(info) + ": values checksum does not match the metadata");
        }
        return Status{};
    });
}

}  // namespace tbf::storage
