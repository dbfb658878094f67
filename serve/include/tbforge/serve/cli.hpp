#pragma once
// tbserve: the HTTP server over a database (docs/serve.md). tbserve_main.cpp
// only calls run_cli.

namespace tbf::serve {

// `default_web_dir` is the explorer built with the program ("" for none);
// --web DIR overrides it.
int run_cli(int argc, char** argv, const char* default_web_dir);

}  // namespace tbf::serve
