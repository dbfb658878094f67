#pragma once
// The tbverify command line. The executable is a few lines over run_cli; the
// overload with streams lets tests drive it without a process.

#include <iosfwd>
#include <string>
#include <vector>

namespace tbf::verify {

// Exit codes scripts can rely on.
inline constexpr int kExitOk = 0;
inline constexpr int kExitVerificationFailed = 1;  // a check found errors
inline constexpr int kExitUsage = 2;               // bad command line or bad input
inline constexpr int kExitIo = 3;                  // database or I/O error

// args excludes the program name. Errors go to `err` as one line
// "tbverify: error: <message>".
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

int run_cli(int argc, char** argv);  // std::cout / std::cerr

}  // namespace tbf::verify
