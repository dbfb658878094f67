#include "tbforge/probe/cli.hpp"

int main(int argc, char** argv) { return tbf::probe::run_cli(argc, argv); }
