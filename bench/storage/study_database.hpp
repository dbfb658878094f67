// Opening the database of a storage study (bench/storage): shared by the
// study programs that read tables block by block.
#pragma once

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

}  // namespace tbf::study
