#pragma once
// The checksum of blocks, records and whole tables is tbforge/base/xxh64.hpp
// (tbf::xxh64, tbf::Xxh64). These aliases remain only for
// gen/src/ooc_sparse.cpp and gen/src/work_files.cpp, which include this file
// and write storage::xxh64; delete it when they include the base header.

#include "tbforge/base/xxh64.hpp"

namespace tbf::storage {

using tbf::xxh64;
using tbf::Xxh64;

}  // namespace tbf::storage
