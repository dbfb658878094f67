#pragma once
// rules/ reports bad input (a FEN, a table name) as an InvalidArgument
// tbf::Status inside a tbf::Result<T> (tbforge/base/status.hpp).

#include "tbforge/base/status.hpp"
