// tbverify's command line: a table of subcommands, each parsing its own
// options (`tables` lives in tables_cli.cpp).

#include "tbforge/verify/cli.hpp"

#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_support.hpp"
#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"

namespace tbf::verify {
namespace {

using detail::fail;
using detail::json_string;
using detail::Options;
using detail::OptionSpec;
using detail::parse_options;

constexpr int kMaxDepth = 64;

constexpr std::string_view kMainUsage =
    "Usage: tbverify <command> [options]\n"
    "\n"
    "Independent checks with tbverify's own move generator, which shares no\n"
    "code with tbgen.\n"
    "\n"
    "Commands:\n"
    "  perft     count the positions a fixed number of plies below a FEN\n"
    "  tables    re-derive every stored value of tables from their moves\n"
    "  strategy  check that a strategy database is closed under every reply\n"
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
    {"tables", detail::run_tables},
    {"strategy", detail::run_strategy},
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
