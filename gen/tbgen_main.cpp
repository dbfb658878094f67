#include "tbforge/gen/cli.hpp"

int main(int argc, char** argv) { return tbf::gen::run_cli(argc, argv); }
