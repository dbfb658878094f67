#pragma once
// Errors of the storage library are tbf::Status / tbf::Result<T>
// (tbforge/base/status.hpp). No function of the public API throws; failures,
// including allocation failure, come back as a Status.

#include "tbforge/base/status.hpp"

namespace tbf::storage {

// The former storage names, for callers not yet moved to the base names
// (gen/ internals); new code writes tbf::Status and tbf::StatusCode.
using tbf::Result;
using tbf::Status;
using ErrorCode = tbf::StatusCode;

}  // namespace tbf::storage
