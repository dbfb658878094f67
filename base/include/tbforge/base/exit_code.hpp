#pragma once
// Exit status of every tool (README.md): 0 success, 1 a check failed or a
// claim is not proven, 2 bad usage or input, 3 database or I/O error. Only the
// run_cli functions turn a Status into one.

#include <ostream>
#include <string_view>

#include "tbforge/base/status.hpp"

namespace tbf {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDatabase = 3;

[[nodiscard]] int exit_code(StatusCode code);
[[nodiscard]] inline int exit_code(const Status& status) { return exit_code(status.code()); }

// Of two outcomes, the one with the higher exit status (the first on a tie):
// a batch reports its worst line.
[[nodiscard]] const Status& worse(const Status& a, const Status& b);

// Writes "<program>: error: <message>" as one line to `err` and returns the
// exit status of `status`. Nothing is written for an ok status, nor for an
// empty message: a failure already reported where it happened.
int report(std::ostream& err, std::string_view program, const Status& status);

}  // namespace tbf
