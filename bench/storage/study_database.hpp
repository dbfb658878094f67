// Opening the database of a storage study (bench/storage): shared by the
// study programs that read tables block by block.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tbforge/storage/database.hpp"

namespace tbf::study {

// Opens `path` without a decoded-block cache (a study reads each block
// once) and, when `names` is empty, fills it with every table of the
// database. A database error ends the program (exit 3), named by `tool`.
inline storage::Database open_study_database(const char* tool, const char* path, std::vector<std::string>& names) {
    storage::DatabaseOptions read;
    read.block_cache_bytes = 0;
    auto db = storage::Database::open(path, read);
    if (!db.ok()) {
        std::fprintf(stderr, "%s: %s\n", tool, db.status().to_string().c_str());
        std::exit(3);
    }
    if (names.empty()) {
        auto all = db->list_tables();
        if (!all.ok()) {
            std::fprintf(stderr, "%s: %s\n", tool, all.status().to_string().c_str());
            std::exit(3);
        }
        for (const storage::TableInfo& info : *all) names.push_back(info.spec.name);
    }
    return std::move(*db);
}

// What every study reports of a table: its name and sizes.
struct TableSize {
    std::string name;
    std::uint64_t slots = 0;
    std::uint64_t stored = 0;  // bytes
    std::uint64_t block_count = 0;
};

// Opens one table of a study and fills in its sizes. A database error
// ends the program (exit 3), named by `tool`.
inline storage::TableReader open_study_table(const char* tool, const storage::Database& db,
                                             const std::string& name, TableSize& size) {
    auto table = db.open_table(name);
    if (!table.ok()) {
        std::fprintf(stderr, "%s: %s\n", tool, table.status().to_string().c_str());
        std::exit(3);
    }
    const storage::TableInfo& info = table->info();
    size.name = name;
    size.slots = info.spec.slot_count;
    size.stored = info.stored_bytes;
    size.block_count = info.block_count;
    return std::move(*table);
}

// Every stored code of an opened table, in slot order (White to move
// first), read block by block without the cache. A read error ends the
// program (exit 3), named by `tool`.
template <class OpenedTable>
std::vector<std::uint32_t> read_all_codes(const char* tool, OpenedTable& table) {
    const storage::TableInfo& info = table.info();
    std::vector<std::uint32_t> codes;
    codes.reserve(info.spec.slot_count);
    for (std::uint64_t b = 0; b < info.block_count; ++b) {
        auto block = table.read_block(b, storage::CacheUse::Bypass);
        if (!block.ok()) {
            std::fprintf(stderr, "%s: %s\n", tool, block.status().to_string().c_str());
            std::exit(3);
        }
        for (std::uint32_t k = 0; k < (*block)->size(); ++k) codes.push_back((*block)->value(k));
    }
    return codes;
}

}  // namespace tbf::study
