#pragma once
// Internal: what the tbverify subcommands share — option parsing, error
// lines and JSON strings.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tbf::verify::detail {

// Writes "tbverify: error: <message>" and returns kExitUsage.
int fail(std::ostream& err, const std::string& message);

// Options of one subcommand: `--name value`, `--name=value` or a bare flag.
struct OptionSpec {
    std::string_view name;
    bool takes_value;
};

struct Options {
    std::map<std::string, std::string, std::less<>> values;
    std::vector<std::string> positional;  // only where the subcommand allows them
    bool help = false;

    [[nodiscard]] bool has(std::string_view name) const { return values.contains(name); }
    [[nodiscard]] const std::string& get(std::string_view name) const {
        return values.find(name)->second;
    }
};

// Parses args[first..]; returns an error message, or "" on success.
// Arguments not starting with "--" are errors unless `allow_positional`.
std::string parse_options(const std::vector<std::string>& args, std::size_t first,
                          const std::vector<OptionSpec>& specs, Options& options,
                          bool allow_positional = false);

// A decimal number in [min, max], or nothing.
std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t min,
                                          std::uint64_t max);

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

// `tbverify tables` (tables_cli.cpp). args[0] is the command name.
int run_tables(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `tbverify strategy` (strategy_cli.cpp).
int run_strategy(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tbf::verify::detail
