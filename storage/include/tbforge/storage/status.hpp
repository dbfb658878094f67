#pragma once
// Errors of the storage library are tbf::Status / tbf::Result<T>
// (tbforge/base/status.hpp); storage code and its callers use those names.
// These aliases remain only for gen/src/generate.cpp and gen/src/strategy.cpp,
// which still write storage::Status and storage::ErrorCode; delete this file
// (and its include in database.hpp) when they use the base names.

#include "tbforge/base/status.hpp"

namespace tbf::storage {

using tbf::Status;
using ErrorCode = tbf::StatusCode;

}  // namespace tbf::storage
