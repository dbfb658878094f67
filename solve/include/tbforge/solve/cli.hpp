#pragma once
// `tbgen solve`: the whole command (options, progress, storing the strategy).
// Exit codes (tbforge/base/exit_code.hpp): 0 a closed strategy was stored,
// 1 not proven (nothing stored), 2 bad usage or input, 3 database or I/O error.

namespace tbf::solve {

// argv[0] is the command name ("solve"); the options follow.
int run_cli(int argc, char** argv);

}  // namespace tbf::solve
