#include "tbforge/storage/database.hpp"

#include <bit>
#include <tuple>

#include "db_state.hpp"
#include "records.hpp"
#include "strategy_writer.hpp"
#include "table_writer.hpp"

namespace tbf::storage {
namespace {

Status invalid(std::string message) { return {StatusCode::InvalidArgument, std::move(message)}; }

// Reads and decodes every catalog record with `tag`, in name order.
template <class Info, class Decode>
Result<std::vector<Info>> list_catalog(const detail::DbState& db, char tag, Decode decode) {
    std::vector<Info> out;
    std::unique_ptr<rocksdb::Iterator> it(
        db.db->NewIterator(rocksdb::ReadOptions(), db.catalog_family));
    const std::string start(1, tag);
    for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
        Info info;
        const std::string_view name = it->key().ToStringView().substr(1);
        if (Status s = decode(name, it->value().ToStringView(), info); !s.ok()) return s;
        out.push_back(std::move(info));
    }
    if (!it->status().ok()) return detail::from_rocksdb(it->status(), "listing the catalog");
    return out;
}

template <class Info, class Decode>
Result<Info> read_info(const detail::DbState& db, char tag, std::string_view name,
                       std::string_view what, Decode decode) {
    std::string value;
    bool found = false;
    if (Status s = db.read_catalog(tag, name, value, found); !s.ok()) return s;
    if (!found) {
        return Status(StatusCode::NotFound, std::string(what) + " '" + std::string(name) +
                                               "' does not exist in '" + db.path + "'");
    }
    Info info;
    if (Status s = decode(name, value, info); !s.ok()) return s;
    return info;
}

// Checks a new table or strategy name against the catalog before any data is
// written; commit checks again under the write lock.
Status check_absent(const detail::DbState& db, char tag, const std::string& name, bool replace,
                    std::string_view what) {
    if (replace) return {};
    std::string value;
    bool found = false;
    if (Status s = db.read_catalog(tag, name, value, found); !s.ok()) return s;
    if (found) {
        return {StatusCode::AlreadyExists,
                std::string(what) + " '" + name + "' already exists (replace not requested)"};
    }
    return {};
}

}  // namespace

Database::Database(std::shared_ptr<detail::DbState> state) : state_(std::move(state)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Result<Database> Database::open(const std::string& path, const DatabaseOptions& options) {
    return detail::guarded([&]() -> Result<Database> {
        auto state = detail::DbState::open(path, options);
        if (!state.ok()) return state.status();
        return Database(std::move(*state));
    });
}

const std::string& Database::path() const { return state_->path; }
bool Database::read_only() const { return state_->read_only; }

Result<std::vector<TableInfo>> Database::list_tables() const {
    return detail::guarded([&] {
        return list_catalog<TableInfo>(*state_, detail::kTableTag, detail::decode_table_info);
    });
}

Result<TableInfo> Database::table_info(std::string_view name) const {
    return detail::guarded([&] {
        return read_info<TableInfo>(*state_, detail::kTableTag, name, "table",
                                    detail::decode_table_info);
    });
}

Result<TableReader> Database::open_table(std::string_view name) const {
    return detail::guarded([&]() -> Result<TableReader> {
        Result<TableInfo> info = table_info(name);
        if (!info.ok()) return info.status();
        return TableReader(state_, std::make_shared<const TableInfo>(std::move(*info)));
    });
}

Result<TableWriter> Database::create_table(const TableSpec& spec,
                                           const TableWriteOptions& options) {
    return detail::guarded([&]() -> Result<TableWriter> {
        if (Status s = state_->check_writable(); !s.ok()) return s;
        if (Status s = detail::validate_table_spec(spec); !s.ok()) return s;
        const std::uint32_t spb = options.slots_per_block;
        if (!std::has_single_bit(spb) || spb < kMinSlotsPerBlock || spb > kMaxSlotsPerBlock) {
            return invalid("slots per block must be a power of two in [" +
                           std::to_string(kMinSlotsPerBlock) + ", " +
                           std::to_string(kMaxSlotsPerBlock) + "], not " + std::to_string(spb));
        }
        if (const std::uint32_t g = options.blocks_per_record;
            !std::has_single_bit(g) || g > detail::kMaxBlocksPerRecord) {
            return invalid("blocks per record must be a power of two in [1, " +
                           std::to_string(detail::kMaxBlocksPerRecord) + "], not " + std::to_string(g));
        }
        if (options.compression == Compression::Lz4Hc &&
            (options.lz4hc_level < 1 || options.lz4hc_level > 12)) {
            return invalid("LZ4HC level must be in [1, 12]");
        }
        if (options.zstd_min_match != 0 && (options.zstd_min_match < 3 || options.zstd_min_match > 7)) {
            return invalid("zstd minimum match must be 0 (the level's) or in [3, 7]");
        }
        for (const auto& [parameter, value, what] :
             {std::tuple{ZSTD_c_strategy, options.zstd_strategy, "strategy"},
              std::tuple{ZSTD_c_searchLog, options.zstd_search_log, "search log"},
              std::tuple{ZSTD_c_targetLength, options.zstd_target_length, "target length"}}) {
            const ZSTD_bounds bounds = ZSTD_cParam_getBounds(parameter);
            if (value != 0 && (value < bounds.lowerBound || value > bounds.upperBound)) {
                return invalid(std::string("zstd ") + what + " must be 0 (the level's) or in [" +
                               std::to_string(bounds.lowerBound) + ", " +
                               std::to_string(bounds.upperBound) + "]");
            }
        }
        if (options.zstd_retry_level != 0 &&
            (options.zstd_retry_level < 1 || options.zstd_retry_level > ZSTD_maxCLevel())) {
            return invalid("zstd retry level must be 0 (none) or in [1, " + std::to_string(ZSTD_maxCLevel()) + "]");
        }
        if (options.compression == Compression::Zstd && options.blocks_per_record > 1 &&
            options.bare_zstd_frames && !detail::zstd_has_bare_frames()) {
            return invalid("this zstd library cannot write bare frames (format 4); write format 3 instead");
        }
        if (options.compression_threads < 1 || options.compression_threads > 256) {
            return invalid("compression threads must be in [1, 256]");
        }
        if (Status s =
                check_absent(*state_, detail::kTableTag, spec.name, options.replace, "table");
            !s.ok()) {
            return s;
        }
        std::uint64_t id = 0;
        if (Status s = state_->allocate_id(id); !s.ok()) return s;
        return TableWriter(std::make_unique<detail::TableWriterImpl>(state_, spec, options, id));
    });
}

Status Database::delete_table(std::string_view name) {
    return detail::guarded([&] { return state_->remove(detail::kTableTag, name); });
}

Result<std::vector<StrategyInfo>> Database::list_strategies() const {
    return detail::guarded([&] {
        return list_catalog<StrategyInfo>(*state_, detail::kStrategyTag,
                                          detail::decode_strategy_info);
    });
}

Result<StrategyInfo> Database::strategy_info(std::string_view name) const {
    return detail::guarded([&] {
        return read_info<StrategyInfo>(*state_, detail::kStrategyTag, name, "strategy",
                                       detail::decode_strategy_info);
    });
}

Result<StrategyReader> Database::open_strategy(std::string_view name) const {
    return detail::guarded([&]() -> Result<StrategyReader> {
        Result<StrategyInfo> info = strategy_info(name);
        if (!info.ok()) return info.status();
        return StrategyReader(state_, std::make_shared<const StrategyInfo>(std::move(*info)));
    });
}

Result<StrategyWriter> Database::create_strategy(const StrategySpec& spec,
                                                 const StrategyWriteOptions& options) {
    return detail::guarded([&]() -> Result<StrategyWriter> {
        if (Status s = state_->check_writable(); !s.ok()) return s;
        if (Status s = detail::validate_strategy_spec(spec); !s.ok()) return s;
        if (!options.sorted_input && options.sort_buffer_bytes == 0) {
            return invalid("sort buffer of 0 bytes");
        }
        if (Status s =
                check_absent(*state_, detail::kStrategyTag, spec.name, options.replace, "strategy");
            !s.ok()) {
            return s;
        }
        std::uint64_t id = 0;
        if (Status s = state_->allocate_id(id); !s.ok()) return s;
        return StrategyWriter(
            std::make_unique<detail::StrategyWriterImpl>(state_, spec, options, id));
    });
}

Status Database::delete_strategy(std::string_view name) {
    return detail::guarded([&] { return state_->remove(detail::kStrategyTag, name); });
}

CacheStats Database::block_cache_stats() const { return state_->cache.stats(); }

void Database::clear_block_cache() { state_->cache.clear(); }

KeptRecordStats Database::kept_record_stats() const { return state_->kept.stats(); }

}  // namespace tbf::storage
