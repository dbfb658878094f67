// tbverify: see verify/README.md and `tbverify --help`.

#include "tbforge/verify/cli.hpp"

int main(int argc, char** argv) { return tbf::verify::run_cli(argc, argv); }
