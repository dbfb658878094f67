#pragma once
// The tbprobe command line. Exit codes: 0 success, 2 bad usage or input
// (malformed FEN, unknown variant), 3 database error (missing table, corrupt
// or unreadable database).

namespace tbf::probe {

int run_cli(int argc, char** argv);

}  // namespace tbf::probe
