#include "tbforge/serve/cli.hpp"

int main(int argc, char** argv) { return tbf::serve::run_cli(argc, argv, TBF_WEB_DIR); }
