#include <algorithm>
#include <array>
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

// Fetches the record of `key`, which holds block `block_no` (its own, or a
// group's). `verified`: with RocksDB's checksum of the SST block around it.
Status fetch(detail::DbState& db, const TableInfo& info, std::uint64_t block_no, std::string_view key,
             rocksdb::PinnableSlice& record, bool verified) {
    rocksdb::ReadOptions options;
    options.verify_checksums = verified;
    const rocksdb::Status s =
        db.db->Get(options, db.blocks_family, rocksdb::Slice(key.data(), key.size()), &record);
    if (s.IsNotFound()) {
        return Status(StatusCode::NotFound,
                      table_what(info) + " block " + std::to_string(block_no) +
                          " is missing (the table was deleted or replaced after it was opened)");
    }
    if (!s.ok()) {
        return detail::from_rocksdb(
            s, "reading " + table_what(info) + " block " + std::to_string(block_no));
    }
    return {};
}

// Fetches the record of `key` and checks it with `check(record)`. Every
// record carries its own XXH64 of key, header and payload, which `check`
// tests, so the first read skips RocksDB's checksum of the SST block (a
// few percent of a cold probe). Only when that read fails or `check`
// rejects what it returned is the record read again with RocksDB's
// checksum, so damage is reported as it was before: RocksDB's error where
// its check fails, `check`'s otherwise.
// `verify()` asks for RocksDB's check on every read (BlockCheck::Always):
// it vouches for the stored files, not only for the values.
enum class BlockCheck : bool { OnFailure, Always };

template <class Check>
Status fetch_checked(detail::DbState& db, const TableInfo& info, std::uint64_t block_no, std::string_view key,
                     rocksdb::PinnableSlice& record, BlockCheck block_check, Check&& check) {
    if (block_check == BlockCheck::OnFailure && fetch(db, info, block_no, key, record, false).ok()) {
        if (Status s = check(record.ToStringView()); s.ok()) return s;
    }
    record.Reset();
    if (Status s = fetch(db, info, block_no, key, record, true); !s.ok()) return s;
    return check(record.ToStringView());
}

// The record holding block `block_no`, checked: the blocks it must hold
// and their slots follow from the table's layout.
Status open_group_record(detail::DbState& db, const TableInfo& info, std::uint64_t block_no,
                         rocksdb::PinnableSlice& record, detail::GroupView& view,
                         BlockCheck block_check = BlockCheck::OnFailure) {
    const std::uint64_t record_no = block_no / info.blocks_per_record;
    const detail::RecordLayout layout = detail::record_layout(info, record_no);
    const detail::BlockKey key(info.storage_id, record_no);
    return fetch_checked(db, info, block_no, key.view(), record, block_check, [&](std::string_view bytes) {
        return detail::open_group(info.spec.name, block_no, layout.first_block, key.view(), bytes,
                                  info.spec.value_width, layout.blocks, layout.slots, view,
                                  detail::fills_in_directory(info));
    });
}

// The record holding block `block_no` as the database keeps it: found, or
// read, checked and kept. Null when the database keeps no more records (or
// none: a read-write open, a limit of 0); the caller then reads its own.
Result<const detail::KeptRecord*> kept_record(detail::DbState& db, const TableInfo& info,
                                              std::uint64_t block_no) {
    const std::uint64_t record_no = block_no / info.blocks_per_record;
    if (const detail::KeptRecord* kept = db.kept.find(info.storage_id, record_no)) return kept;
    if (!db.kept.has_room()) return nullptr;
    auto fresh = std::make_unique<detail::KeptRecord>();
    if (Status s = open_group_record(db, info, block_no, fresh->record, fresh->view); !s.ok()) return s;
    fresh->storage_id = info.storage_id;
    fresh->record_no = record_no;
    return db.kept.keep(std::move(fresh));
}

BlockRef make_block(const TableInfo& info, std::uint64_t block_no,
                    std::unique_ptr<std::uint8_t[]> bytes) {
    return std::make_shared<const Block>(block_no, block_no * info.slots_per_block,
                                         detail::block_slots(info, block_no), info.spec.value_width,
                                         std::move(bytes));
}

// Fetches, checks and decodes block `block_no` into `out` (its slots times
// the value width bytes).
Status decode_stored_block(detail::DbState& db, const TableInfo& info,
                           const detail::BlockDecoding* decoding, std::uint64_t block_no,
                           std::uint8_t* out, BlockCheck block_check = BlockCheck::OnFailure) {
    const std::uint32_t slots = detail::block_slots(info, block_no);
    const std::uint32_t width = info.spec.value_width;
    rocksdb::PinnableSlice record;
    if (info.blocks_per_record > 1) {
        // Only this block's payload is decoded; the record's checksum covers all.
        if (block_check == BlockCheck::OnFailure) {
            Result<const detail::KeptRecord*> kept = kept_record(db, info, block_no);
            if (!kept.ok()) return kept.status();
            if (*kept != nullptr) {
                return detail::decode_member(info.spec.name, block_no,
                                             (*kept)->view.members[block_no % info.blocks_per_record], width,
                                             slots, decoding, out);
            }
        }
        detail::GroupView view;
        if (Status s = open_group_record(db, info, block_no, record, view, block_check); !s.ok()) return s;
        return detail::decode_member(info.spec.name, block_no,
                                     view.members[block_no % info.blocks_per_record], width, slots,
                                     decoding, out);
    }
    const detail::BlockKey key(info.storage_id, block_no);
    return fetch_checked(db, info, block_no, key.view(), record, block_check, [&](std::string_view bytes) {
        return detail::decode_block(info.spec.name, block_no, key.view(), bytes, width, slots, decoding, out);
    });
}

// Fetches, checks and decodes one block, without touching the cache.
Result<BlockRef> load_block(detail::DbState& db, const TableInfo& info,
                            const detail::BlockDecoding* decoding, std::uint64_t block_no,
                            BlockCheck block_check = BlockCheck::OnFailure) {
    const std::size_t size = std::size_t{detail::block_slots(info, block_no)} * info.spec.value_width;
    auto bytes = std::make_unique_for_overwrite<std::uint8_t[]>(size);
    if (Status s = decode_stored_block(db, info, decoding, block_no, bytes.get(), block_check); !s.ok()) return s;
    return make_block(info, block_no, std::move(bytes));
}

// The blocks a thread's ReadScope keeps: the last kScopeBlocks read,
// found by a scan (a probe reads a handful).
constexpr std::size_t kScopeBlocks = 64;

struct ScopedBlock {
    const detail::DbState* db = nullptr;
    std::uint64_t storage_id = 0;
    BlockRef block;
};

// Trivial thread-locals for what every probe touches (no guard on access);
// the blocks themselves only when a scope reads without a cache.
thread_local int scope_depth = 0;
thread_local std::size_t scope_used = 0;  // entries filled, the oldest replaced once all are
thread_local std::size_t scope_next = 0;
thread_local std::array<ScopedBlock, kScopeBlocks> scope_kept;

bool in_scope() { return scope_depth > 0; }

// Block `block_no` of the table, from the scope or else loaded and kept there.
Result<BlockRef> scoped_block(detail::DbState& db, const TableInfo& info,
                              const detail::BlockDecoding* decoding, std::uint64_t block_no) {
    for (std::size_t i = 0; i < scope_used; ++i) {
        const ScopedBlock& k = scope_kept[i];
        if (k.db == &db && k.storage_id == info.storage_id && k.block->block_no() == block_no) {
            return k.block;
        }
    }
    Result<BlockRef> block = load_block(db, info, decoding, block_no);
    if (!block.ok()) return block;
    scope_kept[scope_next] = {&db, info.storage_id, *block};
    scope_next = (scope_next + 1) % kScopeBlocks;
    scope_used = std::max(scope_used, scope_next == 0 ? kScopeBlocks : scope_next);
    return block;
}

// A pair-coded table's records as a thread's ReadScope keeps them: a value
// is read from its sub-block of the fetched record, so what a scope saves
// is the fetch and checksum, not a decoded block. The record stays pinned
// where RocksDB read it (no copy) until the scope ends.
struct ScopedRecord {
    const detail::DbState* db = nullptr;
    std::uint64_t storage_id = 0;
    std::uint64_t record_no = 0;
    rocksdb::PinnableSlice record;
    detail::GroupView view;  // into `record`
};
thread_local std::size_t scope_records_used = 0;
thread_local std::size_t scope_records_next = 0;
thread_local std::array<ScopedRecord, kScopeBlocks> scope_records;

// One value of a pair-coded table with no cache to keep blocks: only the
// sub-block holding it is decoded, from a record kept by the scope if one
// is open.
Result<std::uint32_t> pair_coded_value(detail::DbState& db, const TableInfo& info,
                                       const detail::BlockDecoding& decoding, std::uint64_t block_no,
                                       std::size_t index) {
    const auto value_in = [&](const detail::GroupView& view) -> Result<std::uint32_t> {
        std::uint32_t value = 0;
        if (Status s = detail::member_value(info.spec.name, block_no, view.members[block_no % info.blocks_per_record],
                                            info.spec.value_width, detail::block_slots(info, block_no), decoding,
                                            static_cast<std::uint32_t>(index), value);
            !s.ok()) {
            return s;
        }
        return value;
    };
    Result<const detail::KeptRecord*> kept = kept_record(db, info, block_no);
    if (!kept.ok()) return kept.status();
    if (*kept != nullptr) return value_in((*kept)->view);
    rocksdb::PinnableSlice record;
    if (!in_scope()) {
        detail::GroupView view;
        if (Status s = open_group_record(db, info, block_no, record, view); !s.ok()) return s;
        return value_in(view);
    }
    const std::uint64_t record_no = block_no / info.blocks_per_record;
    for (std::size_t i = 0; i < scope_records_used; ++i) {
        const ScopedRecord& k = scope_records[i];
        if (k.db == &db && k.storage_id == info.storage_id && k.record_no == record_no) return value_in(k.view);
    }
    // Read into the scope and checked there, once.
    ScopedRecord& k = scope_records[scope_records_next];
    k.db = nullptr;
    k.record.Reset();
    if (Status s = open_group_record(db, info, block_no, k.record, k.view); !s.ok()) return s;
    k.db = &db;
    k.storage_id = info.storage_id;
    k.record_no = record_no;
    scope_records_next = (scope_records_next + 1) % kScopeBlocks;
    scope_records_used = std::max(scope_records_used, scope_records_next == 0 ? kScopeBlocks : scope_records_next);
    return value_in(k.view);
}

// One value read with no cache to keep its block: the block is decoded into
// the thread's scratch buffer, so a probe allocates nothing.
Result<std::uint32_t> load_value(detail::DbState& db, const TableInfo& info,
                                 const detail::BlockDecoding* decoding, std::uint64_t block_no,
                                 std::size_t index) {
    thread_local std::vector<std::uint8_t> scratch;
    scratch.resize(std::size_t{detail::block_slots(info, block_no)} * info.spec.value_width);
    if (Status s = decode_stored_block(db, info, decoding, block_no, scratch.data()); !s.ok()) return s;
    return value_at(scratch.data(), info.spec.value_width, index);
}

}  // namespace

ReadScope::ReadScope() noexcept { ++scope_depth; }

ReadScope::~ReadScope() {
    if (--scope_depth > 0) return;
    if (scope_records_used != 0) {
        // Released here, not when the thread ends: a pinned record must
        // not outlive its database.
        for (std::size_t i = 0; i < scope_records_used; ++i) {
            scope_records[i].db = nullptr;
            scope_records[i].record.Reset();
        }
        scope_records_used = 0;
        scope_records_next = 0;
    }
    if (scope_used == 0) return;
    for (std::size_t i = 0; i < scope_used; ++i) scope_kept[i] = {};
    scope_used = 0;
    scope_next = 0;
}

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
        if (!db_->cache.keeps_blocks()) {
            if (decoding_->pairs) return pair_coded_value(*db_, info, *decoding_, block_no, index);
            if (!in_scope()) return load_value(*db_, info, decoding_.get(), block_no, index);
            Result<BlockRef> block = scoped_block(*db_, info, decoding_.get(), block_no);
            if (!block.ok()) return block.status();
            return (*block)->value(index);
        }
        std::uint32_t value = 0;
        if (db_->cache.lookup_value(info.storage_id, block_no, index, value)) return value;
        Result<BlockRef> block = load_block(*db_, info, decoding_.get(), block_no);
        if (!block.ok()) return block.status();
        db_->cache.insert(info.storage_id, *block);
        return (*block)->value(index);
    });
}

bool TableReader::reads_single_values() const { return decoding_->pairs && !db_->cache.keeps_blocks(); }

Result<BlockRef> TableReader::read_block(std::uint64_t block_no, CacheUse cache) const {
    return detail::guarded([&]() -> Result<BlockRef> {
        const TableInfo& info = *info_;
        if (block_no >= info.block_count) {
            return Status(StatusCode::InvalidArgument,
                          table_what(info) + ": block " + std::to_string(block_no) +
                              " out of range (" + std::to_string(info.block_count) + " blocks)");
        }
        const bool cached = db_->cache.keeps_blocks();
        if (cached) {
            if (BlockRef hit = db_->cache.lookup(info.storage_id, block_no)) return hit;
        }
        if (!cached && in_scope()) return scoped_block(*db_, info, decoding_.get(), block_no);
        Result<BlockRef> block = load_block(*db_, info, decoding_.get(), block_no);
        if (cached && block.ok() && cache == CacheUse::Fill) db_->cache.insert(info.storage_id, *block);
        return block;
    });
}

std::uint64_t TableReader::record_count() const { return storage::record_count(*info_); }

namespace {

// The blocks of record `record_no` (< the table's record count), decoded.
Result<std::vector<BlockRef>> read_stored_record(detail::DbState& db, const TableInfo& info,
                                                 const detail::BlockDecoding* decoding, std::uint64_t record_no,
                                                 BlockCheck block_check) {
    std::vector<BlockRef> blocks;
    if (info.blocks_per_record == 1) {
        Result<BlockRef> block = load_block(db, info, decoding, record_no, block_check);
        if (!block.ok()) return block.status();
        blocks.push_back(std::move(*block));
        return blocks;
    }
    const std::uint64_t first = record_no * info.blocks_per_record;
    rocksdb::PinnableSlice record;
    detail::GroupView view;
    if (Status s = open_group_record(db, info, first, record, view, block_check); !s.ok()) return s;
    blocks.reserve(view.members.size());
    for (std::size_t i = 0; i < view.members.size(); ++i) {
        const std::uint64_t b = first + i;
        const std::uint32_t slots = detail::block_slots(info, b);
        auto bytes = std::make_unique_for_overwrite<std::uint8_t[]>(std::size_t{slots} * info.spec.value_width);
        if (Status s = detail::decode_member(info.spec.name, b, view.members[i], info.spec.value_width, slots,
                                             decoding, bytes.get());
            !s.ok()) {
            return s;
        }
        blocks.push_back(make_block(info, b, std::move(bytes)));
    }
    return blocks;
}

}  // namespace

Result<std::vector<BlockRef>> TableReader::read_record(std::uint64_t record_no) const {
    return detail::guarded([&]() -> Result<std::vector<BlockRef>> {
        const TableInfo& info = *info_;
        if (record_no >= record_count()) {
            return Status(StatusCode::InvalidArgument,
                          table_what(info) + ": record " + std::to_string(record_no) +
                              " out of range (" + std::to_string(record_count()) + " records)");
        }
        return read_stored_record(*db_, info, decoding_.get(), record_no, BlockCheck::OnFailure);
    });
}

Status TableReader::verify() const {
    return detail::guarded([&]() -> Status {
        const TableInfo& info = *info_;
        Xxh64 hash;
        // Straight from storage: a cached copy would not test the stored bytes.
        for (std::uint64_t r = 0; r < record_count(); ++r) {
            Result<std::vector<BlockRef>> blocks = read_stored_record(*db_, info, decoding_.get(), r, BlockCheck::Always);
            if (!blocks.ok()) return blocks.status();
            for (const BlockRef& block : *blocks) hash.update(block->bytes());
        }
        if (hash.digest() != info.values_checksum) {
            return Status(StatusCode::ChecksumMismatch,
                          table_what(info) + ": values checksum does not match the metadata");
        }
        return Status{};
    });
}

}  // namespace tbf::storage
