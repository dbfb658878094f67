#include "tbforge/probe/cli.hpp"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tbforge/probe/args.hpp"
#include "tbforge/probe/strategy.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"

namespace tbf::probe {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitDatabase = 3;

constexpr const char* kUsage =
    "usage: tbprobe --db DIR --variant V --fen FEN [--json] [--cache BYTES]\n"
    "       tbprobe --db DIR --variant V --fen - [--json]     one FEN per line on stdin\n"
    "       tbprobe info --db DIR [--json]\n"
    "       tbprobe strategy-export --db DIR --name NAME [--output FILE]\n"
    "\n"
    "  --variant V    antichess, antichess-fics, antichess-joint or fourfile\n"
    "  --cache BYTES  decompressed-block cache limit, e.g. 64M (default 256M)\n"
    "\n"
    "Prints the value of the position for the side to move (win, draw or loss in\n"
    "N: the distance to conversion in plies), the best move and every move with\n"
    "its value for the side making it, best first.\n"
    "With --json, one object per position:\n"
    "  {\"fen\":...,\"category\":\"win\"|\"draw\"|\"loss\",\"dtc\":N,\"moves\":[{\"uci\":...,\n"
    "   \"category\":...,\"dtc\":N,\"conversion\":true|false},...]}\n"
    "where a move's category and dtc describe the position after it, for the side\n"
    "then to move (as the lichess tablebase API does). With --fen -, each input\n"
    "line gets one output line; a bad line gets {\"fen\":...,\"error\":...}.\n"
    "Exit status: 0 success, 2 bad usage or input (bad FEN), 3 database error or\n"
    "missing table; with --fen -, the highest status of all lines.\n";

const char* category(Wdl wdl) {
    switch (wdl) {
        case Wdl::Win:
            return "win";
        case Wdl::Loss:
            return "loss";
        case Wdl::Draw:
            break;
    }
    return "draw";
}

// A line of standard input without surrounding blanks (and the \r of CRLF).
std::string trimmed(const std::string& line) {
    const auto first = line.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    const auto last = line.find_last_not_of(" \t\r\n");
    return line.substr(first, last - first + 1);
}

int exit_code(const ProbeError& e) {
    return e.code == ProbeCode::BadInput ? kExitUsage : kExitDatabase;
}

std::string describe(Value v) {
    if (v.wdl == Wdl::Draw) return "draw";
    return std::string(category(v.wdl)) + " in " + std::to_string(v.dtc);
}

// Probes one FEN and prints it; returns the exit code for this position.
int probe_one(const Tablebase& tb, VariantId variant, const std::string& fen, bool json) {
    auto fail = [&](int code, const std::string& message) {
        if (json) {
            std::cout << "{\"fen\":" << cli::json_string(fen) << ",\"error\":" << cli::json_string(message)
                      << "}\n"
                      << std::flush;
        } else {
            std::cerr << "tbprobe: error: " << message << '\n';
        }
        return code;
    };
    auto pos = parse_fen(fen, variant);
    if (!pos.ok()) return fail(kExitUsage, pos.error());
    auto value = tb.probe(variant, *pos);
    if (!value.ok()) return fail(exit_code(value.error()), value.error().message);
    auto moves = tb.probe_moves(variant, *pos);
    if (!moves.ok()) return fail(exit_code(moves.error()), moves.error().message);
    if (json) {
        std::ostringstream out;
        out << "{\"fen\":" << cli::json_string(to_fen(*pos)) << ",\"category\":\""
            << category(value->wdl) << "\",\"dtc\":" << value->dtc << ",\"moves\":[";
        for (std::size_t i = 0; i < moves->size(); ++i) {
            const MoveValue& mv = (*moves)[i];
            out << (i ? "," : "") << "{\"uci\":\"" << mv.uci << "\",\"category\":\""
                << category(mv.child.wdl) << "\",\"dtc\":" << mv.child.dtc
                << ",\"conversion\":" << (mv.conversion ? "true" : "false") << "}";
        }
        out << "]}\n";
        // Flushed per position: a program driving --fen - through pipes
        // waits for each answer before sending the next FEN.
        std::cout << out.str() << std::flush;
    } else {
        std::ostringstream out;
        out << to_fen(*pos) << '\n' << describe(*value) << '\n';
        if (!moves->empty()) out << "best move " << moves->front().uci << '\n';
        for (const MoveValue& mv : *moves) {
            char line[64];
            if (mv.conversion) {
                std::snprintf(line, sizeof line, "  %-6s %-12s  conversion\n", mv.uci.c_str(),
                              describe(mv.for_mover).c_str());
            } else {
                std::snprintf(line, sizeof line, "  %-6s %s\n", mv.uci.c_str(),
                              describe(mv.for_mover).c_str());
            }
            out << line;
        }
        std::cout << out.str() << std::flush;
    }
    return kExitOk;
}

int run_probe(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db", "variant", "fen", "cache"}, {"json", "help"});
    if (args.flag("help")) {
        std::cout << kUsage;
        return kExitOk;
    }
    if (!args.positional().empty())
        throw cli::UsageError("unexpected argument '" + args.positional()[0] + "'");
    const std::string dir = args.required("db");
    const std::string variant_text = args.required("variant");
    auto variant = parse_variant(variant_text);
    if (!variant) {
        throw cli::UsageError("unknown variant '" + variant_text +
                              "' (known: " + std::string(variant_list()) + ")");
    }
    const std::string fen = args.required("fen");
    TablebaseOptions options;
    if (auto bytes = args.bytes("cache")) options.cache_bytes = *bytes;
    auto tb = Tablebase::open(dir, options);
    if (!tb.ok()) {
        std::cerr << "tbprobe: error: " << tb.error().message << '\n';
        return kExitDatabase;
    }
    const bool json = args.flag("json");
    if (fen != "-") return probe_one(*tb, *variant, fen, json);
    int worst = kExitOk;
    std::string line;
    while (std::getline(std::cin, line)) {
        line = trimmed(line);
        if (line.empty() || line[0] == '#') continue;
        worst = std::max(worst, probe_one(*tb, *variant, line, json));
    }
    return worst;
}

int run_info(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db"}, {"json", "help"});
    if (args.flag("help")) {
        std::cout << "usage: tbprobe info --db DIR [--json]\n\nLists the tables of a database.\n";
        return kExitOk;
    }
    const std::string dir = args.required("db");
    auto tb = Tablebase::open(dir);
    if (!tb.ok()) {
        std::cerr << "tbprobe: error: " << tb.error().message << '\n';
        return kExitDatabase;
    }
    auto tables = tb->database().list_tables();
    if (!tables.ok()) {
        std::cerr << "tbprobe: error: " << tables.status().to_string() << '\n';
        return kExitDatabase;
    }
    const bool json = args.flag("json");
    for (const auto& t : *tables) {
        char checksum[24];
        std::snprintf(checksum, sizeof checksum, "%016" PRIx64, t.values_checksum);
        if (json) {
            std::cout << "{\"variant\":" << cli::json_string(t.spec.variant)
                      << ",\"table\":" << cli::json_string(t.spec.material)
                      << ",\"slots\":" << t.spec.slot_count << ",\"bytes\":" << t.stored_bytes
                      << ",\"checksum\":\"" << checksum
                      << "\",\"value_width\":" << t.spec.value_width
                      << ",\"generator\":" << cli::json_string(t.spec.generator_version)
                      << ",\"statistics\":"
                      << (t.statistics.json.empty() ? "{}" : t.statistics.json) << "}\n";
        } else {
            std::uint64_t counters[8] = {};
            const char* names[8] = {"white.win",  "white.draw", "white.loss", "black.win",
                                    "black.draw", "black.loss", "max_dtc",    "white.valid"};
            for (const auto& c : t.statistics.counters) {
                for (int i = 0; i < 8; ++i) {
                    if (c.name == names[i]) counters[i] = c.value;
                }
            }
            std::printf("%-16s %-10s %12" PRIu64 " slots %10" PRIu64
                        " bytes  checksum %s  "
                        "wtm W/D/L %" PRIu64 "/%" PRIu64 "/%" PRIu64 "  btm W/D/L %" PRIu64
                        "/%" PRIu64 "/%" PRIu64 "  max DTC %" PRIu64 "\n",
                        t.spec.variant.c_str(), t.spec.material.c_str(), t.spec.slot_count,
                        t.stored_bytes, checksum, counters[0], counters[1], counters[2],
                        counters[3], counters[4], counters[5], counters[6]);
        }
    }
    return kExitOk;
}

constexpr const char* kStrategyExportUsage =
    "usage: tbprobe strategy-export --db DIR --name NAME [--output FILE]\n"
    "\n"
    "Writes the strategy NAME as text: '#' header lines (name, variant, side, kind,\n"
    "roots, entry count), then one 'FEN<TAB>uci-move' line per entry in key order.\n"
    "tbgen strategy-import reads the same format. Default output: stdout.\n"
    "Exit status: 0 success, 2 bad usage, 3 missing strategy, database or I/O error.\n";

int run_strategy_export(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db", "name", "output"}, {"help"});
    if (args.flag("help")) {
        std::cout << kStrategyExportUsage;
        return kExitOk;
    }
    if (!args.positional().empty())
        throw cli::UsageError("unexpected argument '" + args.positional()[0] + "'");
    const std::string dir = args.required("db");
    const std::string name = args.required("name");
    const auto output = args.value("output");
    auto db = storage::Database::open(dir);
    if (!db.ok()) {
        std::cerr << "tbprobe: error: cannot open database " << dir << ": "
                  << db.status().to_string() << '\n';
        return kExitDatabase;
    }
    std::ofstream file;
    if (output) {
        file.open(*output, std::ios::binary | std::ios::trunc);
        if (!file) {
            std::cerr << "tbprobe: error: cannot write " << *output << '\n';
            return kExitDatabase;
        }
    }
    auto written = export_strategy(*db, name, output ? static_cast<std::ostream&>(file) : std::cout);
    if (!written.ok()) {
        std::cerr << "tbprobe: error: " << written.error().message << '\n';
        return kExitDatabase;
    }
    return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cout << kUsage;
        return kExitUsage;
    }
    try {
        if (args[0] == "info") return run_info({args.begin() + 1, args.end()});
        if (args[0] == "strategy-export") return run_strategy_export({args.begin() + 1, args.end()});
        if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            std::cout << kUsage;
            return kExitOk;
        }
        return run_probe(args);
    } catch (const cli::UsageError& e) {
        std::cerr << "tbprobe: error: " << e.message() << '\n';
        return kExitUsage;
    }
}

}  // namespace tbf::probe
