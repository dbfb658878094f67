#pragma once
// The tbverify command line. The executable is a few lines over run_cli; the
// overload with streams lets tests drive it without a process.

#include <iosfwd>
#include <string>
#include <vector>

#include "tbforge/base/exit_code.hpp"

namespace tbf::verify {

// Exit codes scripts can rely on (tbforge/base/exit_code.hpp): 0 ok, 1 a
// check found errors, 2 bad command line or input, 3 database or I/O error.
inline constexpr int kExitOk = tbf::kExitOk;
inline constexpr int kExitVerificationFailed = tbf::kExitCheckFailed;
inline constexpr int kExitUsage = tbf::kExitUsage;
inline constexpr int kExitIo = tbf::kExitDatabase;

// args excludes the program name. Errors go to `err` as one line
// "tbverify: error: <message>".
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

int run_cli(int argc, char** argv);  // std::cout / std::cerr

}  // namespace tbf::verify
