#include "tbforge/gen/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "tbforge/gen/args.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"
#include "tbforge/rules/uci.hpp"

namespace tbf::gen {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: tbgen <command> [options]\n"
    "\n"
    "commands:\n"
    "  perft   count leaf nodes of the move tree (move generator check)\n"
    "\n"
    "Run 'tbgen <command> --help' for the options of a command.\n"
    "Exit status: 0 success, 1 a check failed, 2 bad usage or input, 3 database or I/O error.\n";

constexpr const char* kPerftUsage =
    "usage: tbgen perft --variant V --fen FEN --depth N [--divide]\n"
    "\n"
    "  --variant V   antichess, antichess-fics, antichess-joint or fourfile\n"
    "  --fen FEN     the root position\n"
    "  --depth N     plies to search\n"
    "  --divide      first print '<uci>: <count>' for each root move, sorted by move\n"
    "\n"
    "The last line of output is the node count.\n";

VariantId variant_option(const cli::Args& args) {
    const std::string name = args.required("variant");
    auto id = parse_variant(name);
    if (!id) {
        throw cli::UsageError("unknown variant '" + name + "' (known: " +
                              std::string(variant_list()) + ")");
    }
    return *id;
}

int run_perft(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"variant", "fen", "depth"}, {"divide", "help"});
    if (args.flag("help")) {
        std::cout << kPerftUsage;
        return kExitOk;
    }
    const VariantId variant = variant_option(args);
    auto pos = parse_fen(args.required("fen"), variant);
    if (!pos) throw cli::UsageError(pos.error());
    const auto depth = args.number("depth");
    if (!depth) throw cli::UsageError("missing required option --depth");
    if (*depth > 64) throw cli::UsageError("--depth must be at most 64");
    const int d = static_cast<int>(*depth);
    if (args.flag("divide") && d >= 1) {
        auto counts = perft_divide(*pos, variant, d);
        std::vector<std::pair<std::string, std::uint64_t>> lines;
        std::uint64_t total = 0;
        for (const auto& [move, nodes] : counts) {
            lines.emplace_back(to_uci(move), nodes);
            total += nodes;
        }
        std::sort(lines.begin(), lines.end());
        for (const auto& [uci, nodes] : lines) std::cout << uci << ": " << nodes << '\n';
        std::cout << total << '\n';
    } else {
        std::cout << perft(*pos, variant, d) << '\n';
    }
    return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? kExitUsage : kExitOk;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "perft") return run_perft(args);
        throw cli::UsageError("unknown command '" + command + "' (see tbgen --help)");
    } catch (const cli::UsageError& e) {
        std::cerr << "tbgen: error: " << e.message() << '\n';
        return kExitUsage;
    }
}

}  // namespace tbf::gen
