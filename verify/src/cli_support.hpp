#pragma once
// Internal: what the tbverify subcommands share. Options are parsed with
// tbforge/base/cli.hpp and JSON written with tbforge/base/json.hpp; each
// subcommand returns a Status that run_cli turns into the exit code.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/base/status.hpp"

namespace tbf::verify::detail {

// Parses the options of `command` (args[0] is the command name). False with
// an ok Status: --help was printed. A mistake reads
// "<command>: <problem> (see 'tbverify <command> --help')".
[[nodiscard]] Result<bool> parse_command(cli::Command& options, std::string_view command,
                                         const std::vector<std::string>& args, std::ostream& out);

// A failure whose lines are already on the error stream: only its exit code.
[[nodiscard]] inline Status already_reported(StatusCode code) { return {code, ""}; }

// `tbverify tables` (tables_cli.cpp).
Status run_tables(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `tbverify strategy` (strategy_cli.cpp).
Status run_strategy(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tbf::verify::detail
