#pragma once
// The tbgen command line. Exit codes: 0 success, 1 a check failed,
// 2 bad usage or input, 3 database or I/O error.

namespace tbf::gen {

int run_cli(int argc, char** argv);

}  // namespace tbf::gen
