#pragma once
// A database a test writes into: opened read-write, created where missing.
// The executable must link tbf::storage.

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "tbforge/storage/database.hpp"

namespace tbf::test {

// `options` for anything beyond the mode (a block cache size, say).
inline storage::Database open_rw(const std::string& path, storage::DatabaseOptions options = {}) {
    options.mode = storage::OpenMode::ReadWrite;
    options.create_if_missing = true;
    auto db = storage::Database::open(path, options);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    return std::move(*db);
}

}  // namespace tbf::test
