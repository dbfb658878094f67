// Database::copy_table: a published table of one database into another,
// block records copied as stored (re-keyed), published like a writer's commit.

#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db_state.hpp"
#include "records.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage {
namespace {

// Staging files removed on every way out; after a successful publication
// they are only links RocksDB may have left.
class StagingFiles {
public:
    StagingFiles(const std::string& dir, std::uint64_t id)
        : blocks(dir + "/" + std::to_string(id) + ".blocks.sst"),
          catalog(dir + "/" + std::to_string(id) + ".catalog.sst") {}
    ~StagingFiles() {
        std::error_code ec;
        std::filesystem::remove(blocks, ec);
        std::filesystem::remove(catalog, ec);
    }
    StagingFiles(const StagingFiles&) = delete;
    StagingFiles& operator=(const StagingFiles&) = delete;

    const std::string blocks;
    const std::string catalog;
};

}  // namespace

Result<TableInfo> Database::copy_table(const TableReader& source, bool replace) {
    return detail::guarded([&]() -> Result<TableInfo> {
        detail::DbState& target = *state_;
        const detail::DbState& from = *source.db_;
        const TableInfo& info = *source.info_;
        const std::string what = "copying table '" + info.spec.name + "' from '" + from.path + "'";
        if (Status s = target.check_writable(); !s.ok()) return s;
        if (!replace) {
            std::string value;
            bool found = false;
            if (Status s = target.read_catalog(detail::kTableTag, info.spec.name, value, found); !s.ok()) {
                return s;
            }
            if (found) {
                return Status(StatusCode::AlreadyExists,
                              "table '" + info.spec.name + "' already exists (replace not requested)");
            }
        }
        std::uint64_t id = 0;
        if (Status s = target.allocate_id(id); !s.ok()) return s;
        StagingFiles files(target.staging_dir, id);

        // The source's blocks in key order, checked and decoded one by one
        // (a damaged block must not be carried into the target), re-keyed.
        rocksdb::SstFileWriter sst(rocksdb::EnvOptions(), target.blocks_options, target.blocks_family);
        if (info.block_count > 0) {
            if (rocksdb::Status s = sst.Open(files.blocks); !s.ok()) return detail::from_rocksdb(s, what);
        }
        const std::string upper = detail::id_prefix(info.storage_id + 1);
        const rocksdb::Slice upper_slice(upper);
        rocksdb::ReadOptions read;
        read.iterate_upper_bound = info.storage_id + 1 != 0 ? &upper_slice : nullptr;
        read.readahead_size = std::size_t{2} << 20;
        read.fill_cache = false;
        std::unique_ptr<rocksdb::Iterator> it(from.db->NewIterator(read, from.blocks_family));
        it->Seek(detail::id_prefix(info.storage_id));
        const std::uint32_t width = info.spec.value_width;
        std::vector<std::uint8_t> values(std::size_t{info.slots_per_block} * width);
        std::string record;
        const auto decoding = detail::make_block_decoding(info);
        Xxh64 hash;
        std::uint64_t stored_bytes = 0;
        // Format 3 stores several blocks in a record: records are numbered
        // apart from blocks, and a group's checksum is re-keyed the same way.
        const std::uint64_t records = record_count(info);
        detail::GroupView view;
        for (std::uint64_t r = 0; r < records; ++r, it->Next()) {
            const std::string key = detail::block_key(info.storage_id, r);
            const detail::RecordLayout layout = detail::record_layout(info, r);
            if (!it->Valid() || it->key().ToStringView() != key) {
                if (!it->status().ok()) return detail::from_rocksdb(it->status(), what);
                return Status(StatusCode::Corruption,
                              what + ": block " + std::to_string(layout.first_block) + " is missing");
            }
            const std::string_view stored = it->value().ToStringView();
            if (info.blocks_per_record > 1) {
                if (Status s = detail::open_group(info.spec.name, layout.first_block, layout.first_block,
                                                   key, stored, width, layout.blocks, layout.slots, view,
                                                   detail::fills_in_directory(info));
                    !s.ok()) {
                    return s.with_context(what);
                }
            }
            for (std::uint64_t b = layout.first_block; b < layout.first_block + layout.blocks; ++b) {
                const std::uint32_t slots = detail::block_slots(info, b);
                const Status s = info.blocks_per_record > 1
                                     ? detail::decode_member(info.spec.name, b, view.members[b - layout.first_block],
                                                             width, slots, decoding.get(), values.data())
                                     : detail::decode_block(info.spec.name, b, key, stored, width, slots,
                                                            decoding.get(), values.data());
                if (!s.ok()) return s.with_context(what);
                hash.update(std::span<const std::uint8_t>(values.data(), std::size_t{slots} * width));
            }
            detail::rekey_block(detail::block_key(id, r), stored, record);
            stored_bytes += record.size();
            if (rocksdb::Status s = sst.Put(detail::block_key(id, r), record); !s.ok()) {
                return detail::from_rocksdb(s, what);
            }
        }
        if (!it->status().ok()) return detail::from_rocksdb(it->status(), what);
        if (hash.digest() != info.values_checksum) {
            return Status(StatusCode::ChecksumMismatch,
                          what + ": values checksum does not match the source's metadata");
        }
        if (stored_bytes + info.pair_model.size() != info.stored_bytes) {
            return Status(StatusCode::Corruption, what + ": stored bytes do not match the source's metadata");
        }
        if (info.block_count > 0) {
            if (rocksdb::Status s = sst.Finish(); !s.ok()) return detail::from_rocksdb(s, what);
        }

        TableInfo copy = info;
        copy.storage_id = id;
        detail::Publication pub{detail::kTableTag,
                                info.spec.name,
                                detail::encode_table_info(copy),
                                target.blocks_family,
                                info.block_count > 0 ? files.blocks : std::string(),
                                files.catalog,
                                replace};
        if (Status s = target.publish(pub); !s.ok()) return s;
        return copy;
    });
}

}  // namespace tbf::storage
