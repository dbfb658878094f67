// tbverify's command line: a table of subcommands, each parsing its own
// options. `tables` and `strategy` join the table later.

#include "tbforge/verify/cli.hpp"

#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"

namespace tbf::verify {
namespace {

constexpr int kMaxDepth = 64;

constexpr std::string_view kMainUsage =
    "Usage: tbverify <command> [options]\n"
    "\n"
    "Independent checks with tbverify's own move generator, which shares no\n"
    "code with tbgen.\n"
    "\n"
    "Commands:\n"
    "  perft     count the positions a fixed number of plies below a FEN\n"
    "\n"
    "Run 'tbverify <command> --help' for the options of a command.\n"
    "Exit codes: 0 success, 1 verification found errors, 2 bad command line\n"
    "or input, 3 database or I/O error.\n";

constexpr std::string_view kPerftUsage =
    "Usage: tbverify perft --variant V --fen FEN --depth N [--divide] [--json]\n"
    "\n"
    "Counts the leaf positions exactly N plies below FEN.\n"
    "\n"
    "Options:\n"
    "  --variant V   antichess, antichess-fics, antichess-joint or fourfile\n"
    "  --fen FEN     the root position (quote it: it contains spaces)\n"
    "  --depth N     plies, 0 to 64\n"
    "  --divide      first print '<uci>: <count>' per root move, sorted by UCI\n"
    "  --json        print one JSON object instead of text\n"
    "  --help        print this help\n"
    "\n"
    "Output: the total node count, alone on the last line.\n"
    "Exit codes: 0 success, 2 bad command line or input.\n";

int fail(std::ostream& err, const std::string& message) {
    err << "tbverify: error: " << message << '\n';
    return kExitUsage;
}

// Options of one subcommand: `--name value`, `--name=value` or a bare flag.
struct OptionSpec {
    std::string_view name;
    bool takes_value;
};

struct Options {
    std::map<std::string, std::string, std::less<>> values;
    bool help = false;

    [[nodiscard]] bool has(std::string_view name) const { return values.contains(name); }
    [[nodiscard]] const std::string& get(std::string_view name) const {
        return values.find(name)->second;
    }
};

// Parses args[first..]; returns an error message, or "" on success.
std::string parse_options(const std::vector<std::string>& args, std::size_t first,
                          const std::vector<OptionSpec>& specs, Options& options) {
    for (std::size_t i = first; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            options.help = true;
            continue;
        }
        if (!arg.starts_with("--")) return "unexpected argument \"" + arg + "\"";
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

std::optional<int> parse_depth(const std::string& text) {
    if (text.empty() || text.size() > 3) return std::nullopt;
    int depth = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        depth = depth * 10 + (c - '0');
    }
    if (depth > kMaxDepth) return std::nullopt;
    return depth;
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

int run_perft(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    const std::vector<OptionSpec> specs = {
        {"variant", true}, {"fen", true}, {"depth", true}, {"divide", false}, {"json", false}};
    Options options;
    if (const std::string error = parse_options(args, 1, specs, options); !error.empty()) {
        return fail(err, "perft: " + error + " (see 'tbverify perft --help')");
    }
    if (options.help) {
        out << kPerftUsage;
        return kExitOk;
    }
    for (std::string_view required : {"variant", "fen", "depth"}) {
        if (!options.has(required)) {
            return fail(err, "perft: missing --" + std::string(required) +
                                 " (see 'tbverify perft --help')");
        }
    }

    const std::optional<Variant> variant = variant_from_name(options.get("variant"));
    if (!variant) {
        return fail(err, "unknown variant \"" + options.get("variant") +
                             "\" (expected antichess, antichess-fics, antichess-joint or "
                             "fourfile)");
    }
    const std::optional<int> depth = parse_depth(options.get("depth"));
    if (!depth) {
        return fail(err, "bad depth \"" + options.get("depth") +
                             "\" (expected an integer from 0 to " + std::to_string(kMaxDepth) +
                             ")");
    }
    const BoardResult root = parse_fen(*variant, options.get("fen"));
    if (!root) return fail(err, root.error);

    const bool divide = options.has("divide");
    std::vector<DivideEntry> entries;
    std::uint64_t total = 0;
    if (*depth == 0) {
        total = 1;
    } else {
        entries = perft_divide(*root.board, *depth);
        for (const DivideEntry& e : entries) total += e.nodes;
    }

    if (options.has("json")) {
        out << "{\"variant\":" << json_string(variant_name(*variant))
            << ",\"fen\":" << json_string(options.get("fen")) << ",\"depth\":" << *depth
            << ",\"nodes\":" << total;
        if (divide) {
            out << ",\"divide\":[";
            for (std::size_t i = 0; i < entries.size(); ++i) {
                out << (i > 0 ? "," : "") << "{\"move\":" << json_string(entries[i].uci)
                    << ",\"nodes\":" << entries[i].nodes << '}';
            }
            out << ']';
        }
        out << "}\n";
    } else {
        if (divide) {
            for (const DivideEntry& e : entries) out << e.uci << ": " << e.nodes << '\n';
        }
        out << total << '\n';
    }
    out.flush();
    if (!out) {
        err << "tbverify: error: cannot write the output\n";
        return kExitIo;
    }
    return kExitOk;
}

struct Command {
    std::string_view name;
    int (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
};

constexpr Command kCommands[] = {
    {"perft", run_perft},
};

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    if (args.empty()) {
        err << kMainUsage;
        return kExitUsage;
    }
    const std::string& command = args[0];
    if (command == "--help" || command == "-h" || command == "help") {
        out << kMainUsage;
        return kExitOk;
    }
    for (const Command& c : kCommands) {
        if (c.name == command) return c.run(args, out, err);
    }
    return fail(err, "unknown command \"" + command + "\" (see 'tbverify --help')");
}

int run_cli(int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    try {
        return run_cli(args, std::cout, std::cerr);
    } catch (const std::exception& e) {
        // Only resource failures (e.g. out of memory) can get here.
        std::cerr << "tbverify: error: " << e.what() << '\n';
        return kExitIo;
    }
}

}  // namespace tbf::verify
