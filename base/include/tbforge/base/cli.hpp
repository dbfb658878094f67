#pragma once
// The options of one command, parsed with CLI11: "--name value",
// "--name=value", bare "--flag", positional arguments where the command takes
// them, and --help / -h printing the command's usage text. Every mistake comes
// back as an InvalidArgument Status naming the bad input, in one wording for
// all tools:
//   unknown option "--x", unexpected argument "x", option --x needs a value,
//   option --x takes no value, option --x given twice, missing --x,
//   bad --x "v" (expected an integer from A to B), bad --x "v" (e.g. 4G, ...)

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "tbforge/base/status.hpp"

namespace tbf::cli {

class Command {
public:
    explicit Command(std::string usage);

    // Declarations, before parse(). Names are given without the dashes.
    void value(const std::string& name);   // --name VALUE, at most once
    void values(const std::string& name);  // --name VALUE, any number of times
    void flag(const std::string& name);    // --name
    void positionals();                    // words that are not options are allowed

    // False when --help was asked for: the usage text is then on `out`.
    [[nodiscard]] Result<bool> parse(const std::vector<std::string>& args, std::ostream& out);

    [[nodiscard]] const std::string& usage() const { return usage_; }
    [[nodiscard]] bool has(std::string_view name) const;
    // The value of an option given once. Precondition: has(name).
    [[nodiscard]] const std::string& get(std::string_view name) const;
    [[nodiscard]] std::optional<std::string> optional(std::string_view name) const;
    [[nodiscard]] Result<std::string> required(std::string_view name) const;
    [[nodiscard]] const std::vector<std::string>& all(std::string_view name) const;
    [[nodiscard]] bool flag_set(std::string_view name) const { return has(name); }
    [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }

    // An integer option in [min, max], if given.
    [[nodiscard]] Result<std::optional<std::uint64_t>> number(std::string_view name, std::uint64_t min,
                                                              std::uint64_t max) const;
    // A byte-size option (tbforge/base/byte_size.hpp), if given.
    [[nodiscard]] Result<std::optional<std::uint64_t>> byte_size(std::string_view name) const;

private:
    struct Slot {
        CLI::Option* option = nullptr;
        std::vector<std::string> values;
        bool flag = false;
    };
    const Slot& slot(std::string_view name) const;
    Status translate(const CLI::ParseError& error) const;

    std::string usage_;
    CLI::App app_;
    std::map<std::string, Slot, std::less<>> slots_;
    std::vector<std::string> positional_;
};

// A decimal integer in [min, max]: `bad --<option> "<text>" (expected an
// integer from <min> to <max>)` otherwise.
[[nodiscard]] Result<std::uint64_t> parse_number(std::string_view option, std::string_view text,
                                                 std::uint64_t min, std::uint64_t max);

}  // namespace tbf::cli
