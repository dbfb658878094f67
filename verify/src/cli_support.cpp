// Option parsing shared by the tbverify subcommands.

#include "cli_support.hpp"

namespace tbf::verify::detail {

Result<bool> parse_command(cli::Command& options, std::string_view command,
                           const std::vector<std::string>& args, std::ostream& out) {
    const std::vector<std::string> words(args.begin() + 1, args.end());
    auto parsed = options.parse(words, out);
    if (parsed.ok()) return parsed;
    return invalid_argument(std::string(command) + ": " + parsed.status().message() +
                            " (see 'tbverify " + std::string(command) + " --help')");
}

}  // namespace tbf::verify::detail
