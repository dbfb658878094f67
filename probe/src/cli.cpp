#include "tbforge/probe/cli.hpp"

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tbforge/probe/args.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"

namespace tbf::probe {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitDatabase = 3;

constexpr const char* kUsage =
    "usage: tbprobe --db DIR --variant V --fen FEN [--json]\n"
    "       tbprobe --db DIR --variant V --fen - [--json]     one FEN per line on stdin\n"
    "       tbprobe info --db DIR [--json]\n"
    "\n"
    "Prints the value of the position for the side to move (win, draw or loss and\n"
    "DTC, the distance to conversion in plies) and its moves, best first.\n"
    "With --json, one object per position:\n"
    "  {\"fen\":...,\"category\":\"win\"|\"draw\"|\"loss\",\"dtc\":N,\"moves\":[{\"uci\":...,\n"
    "   \"category\":...,\"dtc\":N,\"conversion\":true|false},...]}\n"
    "where a move's category and dtc describe the position after it, for the side\n"
    "then to move (as the lichess tablebase API does).\n"
    "Exit status: 0 success, 2 bad usage or input, 3 database error or missing table.\n";

const char* category(Wdl wdl) {
    switch (wdl) {
        case Wdl::Win: return "win";
        case Wdl::Loss: return "loss";
        case Wdl::Draw: break;
    }
    return "draw";
}

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

int exit_code(const ProbeError& e) { return e.code == ProbeCode::BadInput ? kExitUsage : kExitDatabase; }

std::string describe(Value v) {
    if (v.wdl == Wdl::Draw) return "draw";
    return std::string(category(v.wdl)) + " in " + std::to_string(v.dtc);
}

// Probes one FEN and prints it; returns the exit code for this position.
int probe_one(const Tablebase& tb, VariantId variant, const std::string& fen, bool json) {
    auto fail = [&](int code, const std::string& message) {
        if (json) {
            std::cout << "{\"fen\":" << json_string(fen) << ",\"error\":" << json_string(message) << "}\n";
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
        out << "{\"fen\":" << json_string(to_fen(*pos)) << ",\"category\":\"" << category(value->wdl)
            << "\",\"dtc\":" << value->dtc << ",\"moves\":[";
        for (std::size_t i = 0; i < moves->size(); ++i) {
            const MoveValue& mv = (*moves)[i];
            out << (i ? "," : "") << "{\"uci\":\"" << mv.uci << "\",\"category\":\"" << category(mv.child.wdl)
                << "\",\"dtc\":" << mv.child.dtc << ",\"conversion\":" << (mv.conversion ? "true" : "false")
                << "}";
        }
        out << "]}\n";
        std::cout << out.str();
    } else {
        std::cout << to_fen(*pos) << "\n" << describe(*value) << " (DTC " << value->dtc << " plies)\n";
        for (const MoveValue& mv : *moves) {
            std::printf("  %-6s %-12s%s\n", mv.uci.c_str(), describe(mv.for_mover).c_str(),
                        mv.conversion ? "  conversion" : "");
        }
        std::fflush(stdout);
    }
    return kExitOk;
}

int run_probe(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db", "variant", "fen", "cache"}, {"json", "help"});
    if (args.flag("help")) {
        std::cout << kUsage;
        return kExitOk;
    }
    const std::string dir = args.required("db");
    const std::string variant_text = args.required("variant");
    auto variant = parse_variant(variant_text);
    if (!variant) {
        throw cli::UsageError("unknown variant '" + variant_text + "' (known: " + std::string(variant_list()) + ")");
    }
    const std::string fen = args.required("fen");
    if (!args.positional().empty()) throw cli::UsageError("unexpected argument '" + args.positional()[0] + "'");
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
            std::cout << "{\"variant\":" << json_string(t.spec.variant) << ",\"table\":" << json_string(t.spec.material)
                      << ",\"slots\":" << t.spec.slot_count << ",\"bytes\":" << t.stored_bytes
                      << ",\"checksum\":\"" << checksum << "\",\"value_width\":" << t.spec.value_width
                      << ",\"generator\":" << json_string(t.spec.generator_version)
                      << ",\"statistics\":" << (t.statistics.json.empty() ? "{}" : t.statistics.json) << "}\n";
        } else {
            std::uint64_t counters[8] = {};
            const char* names[8] = {"white.win", "white.draw", "white.loss", "black.win",
                                    "black.draw", "black.loss", "max_dtc", "white.valid"};
            for (const auto& c : t.statistics.counters) {
                for (int i = 0; i < 8; ++i) {
                    if (c.name == names[i]) counters[i] = c.value;
                }
            }
            std::printf("%-16s %-10s %12" PRIu64 " slots %10" PRIu64 " bytes  checksum %s  "
                        "wtm W/D/L %" PRIu64 "/%" PRIu64 "/%" PRIu64 "  btm W/D/L %" PRIu64 "/%" PRIu64 "/%" PRIu64
                        "  max DTC %" PRIu64 "\n",
                        t.spec.variant.c_str(), t.spec.material.c_str(), t.spec.slot_count, t.stored_bytes,
                        checksum, counters[0], counters[1], counters[2], counters[3], counters[4], counters[5],
                        counters[6]);
        }
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
