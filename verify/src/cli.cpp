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
#include "tbforge/base/exit_code.hpp"
#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"

namespace tbf::verify {
namespace {

constexpr std::string_view kProgram = "tbverify";

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

Status run_perft(const std::vector<std::string>& args, std::ostream& out, std::ostream&) {
    cli::Command options{std::string(kPerftUsage)};
    for (const char* name : {"variant", "fen", "depth"}) options.value(name);
    for (const char* name : {"divide", "json"}) options.flag(name);
    auto parsed = detail::parse_command(options, "perft", args, out);
    if (!parsed.ok() || !*parsed) return parsed.status();
    for (std::string_view required : {"variant", "fen", "depth"}) {
        if (!options.has(required)) {
            return invalid_argument("perft: missing --" + std::string(required) +
                                    " (see 'tbverify perft --help')");
        }
    }

    const std::optional<Variant> variant = variant_from_name(options.get("variant"));
    if (!variant) {
        return invalid_argument("unknown variant \"" + options.get("variant") +
                                "\" (expected antichess, antichess-fics, antichess-joint or "
                                "fourfile)");
    }
    auto depth_option = options.number("depth", 0, kMaxDepth);
    if (!depth_option.ok()) return depth_option.status();
    const int depth = static_cast<int>(**depth_option);
    const Result<Board> root = parse_fen(*variant, options.get("fen"));
    if (!root) return root.status();

    const bool divide = options.flag_set("divide");
    std::vector<DivideEntry> entries;
    std::uint64_t total = 0;
    if (depth == 0) {
        total = 1;
    } else {
        entries = perft_divide(*root, depth);
        for (const DivideEntry& e : entries) total += e.nodes;
    }

    if (options.flag_set("json")) {
        Json line{{"variant", variant_name(*variant)},
                  {"fen", options.get("fen")},
                  {"depth", depth},
                  {"nodes", total}};
        if (divide) {
            line["divide"] = Json::array();
            for (const DivideEntry& e : entries) {
                line["divide"].push_back(Json{{"move", e.uci}, {"nodes", e.nodes}});
            }
        }
        out << to_json_line(line) << '\n';
    } else {
        if (divide) {
            for (const DivideEntry& e : entries) out << e.uci << ": " << e.nodes << '\n';
        }
        out << total << '\n';
    }
    out.flush();
    if (!out) return io_error("cannot write the output");
    return {};
}

struct Command {
    std::string_view name;
    Status (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
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
        if (c.name == command) return report(err, kProgram, c.run(args, out, err));
    }
    return report(err, kProgram,
                  invalid_argument("unknown command \"" + command + "\" (see 'tbverify --help')"));
}

int run_cli(int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    try {
        return run_cli(args, std::cout, std::cerr);
    } catch (const std::exception& e) {
        // Only resource failures (e.g. out of memory) can get here.
        std::cerr << "tbverify: error: " << e.what() << '\n';
        return kExitDatabase;
    }
}

}  // namespace tbf::verify
