// Option parsing and output helpers shared by the tbverify subcommands.

#include "cli_support.hpp"

#include <limits>

#include "tbforge/verify/cli.hpp"

namespace tbf::verify::detail {

int fail(std::ostream& err, const std::string& message) {
    err << "tbverify: error: " << message << '\n';
    return kExitUsage;
}

std::string parse_options(const std::vector<std::string>& args, std::size_t first,
                          const std::vector<OptionSpec>& specs, Options& options,
                          bool allow_positional) {
    for (std::size_t i = first; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            options.help = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            if (!allow_positional) return "unexpected argument \"" + arg + "\"";
            options.positional.push_back(arg);
            continue;
        }
        const std::size_t eq = arg.find('=');
        const std::string name =
            arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs) {
            if (s.name == name) spec = &s;
        }
        if (spec == nullptr) return "unknown option \"--" + name + "\"";
        if (options.has(name)) return "option --" + name + " given twice";
        if (!spec->takes_value) {
            if (eq != std::string::npos) return "option --" + name + " takes no value";
            options.values[name] = "";
        } else if (eq != std::string::npos) {
            options.values[name] = arg.substr(eq + 1);
        } else if (i + 1 < args.size()) {
            options.values[name] = args[++i];
        } else {
            return "option --" + name + " needs a value";
        }
    }
    return "";
}

std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t min,
                                          std::uint64_t max) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    std::uint64_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
        n = n * 10 + digit;
    }
    if (n < min || n > max) return std::nullopt;
    return n;
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            constexpr char kHex[] = "0123456789abcdef";
            out += "\\u00";
            out += kHex[(c >> 4) & 0xf];
            out += kHex[c & 0xf];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

}  // namespace tbf::verify::detail
