#pragma once
// The checksum of blocks, records and whole tables is tbforge/base/xxh64.hpp;
// these names stay for callers written against storage (the out-of-core work
// files of gen/) until they include the base header.

#include "tbforge/base/xxh64.hpp"

namespace tbf::storage {

using tbf::xxh64;
using tbf::Xxh64;

}  // namespace tbf::storage
