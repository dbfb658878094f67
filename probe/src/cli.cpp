#include "tbforge/probe/cli.hpp"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/probe/strategy.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"

namespace tbf::probe {

namespace {

constexpr std::string_view kProgram = "tbprobe";

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

std::string describe(Value v) {
    if (v.wdl == Wdl::Draw) return "draw";
    return std::string(category(v.wdl)) + " in " + std::to_string(v.dtc);
}

// Probes one FEN and prints it; the outcome of this position. Errors go to
// stderr, or with --json into the position's output line.
Status probe_one(const Tablebase& tb, VariantId variant, const std::string& fen, bool json) {
    auto fail = [&](const Status& status) {
        if (json) {
            std::cout << to_json_line(Json{{"fen", fen}, {"error", status.message()}}) << '\n'
                      << std::flush;
        } else {
            report(std::cerr, kProgram, status);
        }
        return status;
    };
    auto pos = parse_fen(fen, variant);
    if (!pos.ok()) return fail(pos.status());
    auto value = tb.probe(variant, *pos);
    if (!value.ok()) return fail(value.status());
    auto moves = tb.probe_moves(variant, *pos);
    if (!moves.ok()) return fail(moves.status());
    if (json) {
        Json line;
        line["fen"] = to_fen(*pos);
        line["category"] = category(value->wdl);
        line["dtc"] = value->dtc;
        line["moves"] = Json::array();
        for (const MoveValue& mv : *moves) {
            line["moves"].push_back(Json{{"uci", mv.uci},
                                         {"category", category(mv.child.wdl)},
                                         {"dtc", mv.child.dtc},
                                         {"conversion", mv.conversion}});
        }
        // Flushed per position: a program driving --fen - through pipes
        // waits for each answer before sending the next FEN.
        std::cout << to_json_line(line) << '\n' << std::flush;
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
    return {};
}

Result<VariantId> variant_option(const cli::Command& command) {
    auto name = command.required("variant");
    if (!name.ok()) return name.status();
    auto variant = parse_variant(*name);
    if (!variant) {
        return invalid_argument("unknown variant '" + *name + "' (known: " +
                                std::string(variant_list()) + ")");
    }
    return *variant;
}

// A Status that was already reported (printed) where it happened: run_cli
// only turns it into the exit code.
struct Outcome {
    Status status;
    bool reported = false;
};

Outcome run_probe(const std::vector<std::string>& argv) {
    cli::Command command(kUsage);
    for (const char* name : {"db", "variant", "fen", "cache"}) command.value(name);
    command.flag("json");
    auto parsed = command.parse(argv, std::cout);
    if (!parsed.ok() || !*parsed) return {parsed.status()};
    auto dir = command.required("db");
    if (!dir.ok()) return {dir.status()};
    auto variant = variant_option(command);
    if (!variant.ok()) return {variant.status()};
    auto fen = command.required("fen");
    if (!fen.ok()) return {fen.status()};
    TablebaseOptions options;
    auto cache = command.byte_size("cache");
    if (!cache.ok()) return {cache.status()};
    if (*cache) options.cache_bytes = **cache;
    auto tb = Tablebase::open(*dir, options);
    if (!tb.ok()) return {tb.status()};
    const bool json = command.flag_set("json");
    if (*fen != "-") return {probe_one(*tb, *variant, *fen, json), true};
    Status worst;
    std::string line;
    while (std::getline(std::cin, line)) {
        line = trimmed(line);
        if (line.empty() || line[0] == '#') continue;
        worst = worse(worst, probe_one(*tb, *variant, line, json));
    }
    return {worst, true};
}

constexpr const char* kInfoUsage =
    "usage: tbprobe info --db DIR [--json] [--split]\n\n"
    "Lists the tables of a database: slots, stored bytes, checksum, W/D/L counts,\n"
    "storage format, bytes per position and where the bytes go: compressed values\n"
    "and index metadata (block record headers, group directories, block keys and\n"
    "the table's zstd dictionary), the value encoding and, for the compact\n"
    "encodings, the side to move whose DTC is stored, the index order and, for a\n"
    "wdl-dtc/9 table deriving knights' squares, their colouring (docs/values.md).\n\n"
    "WDL and DTC are coded together. --split also splits the values' bytes: the\n"
    "WDL alone compressed in the table's own blocks, and what the DTC adds to it\n"
    "(reads and compresses every table: about a minute for the 4-unit set).\n";

Status run_info(const std::vector<std::string>& argv) {
    cli::Command command(kInfoUsage);
    command.value("db");
    command.flag("json");
    command.flag("split");
    auto parsed = command.parse(argv, std::cout);
    if (!parsed.ok() || !*parsed) return parsed.status();
    auto dir = command.required("db");
    if (!dir.ok()) return dir.status();
    auto tb = Tablebase::open(*dir);
    if (!tb.ok()) return tb.status();
    auto tables = tb->database().list_tables();
    if (!tables.ok()) return probe_status(tables.status());
    const bool json = command.flag_set("json");
    const bool split_values = command.flag_set("split");
    for (const auto& t : *tables) {
        // A table that cannot be split (not grouped zstd frames) is listed
        // without the split; a damaged one stops the listing.
        std::optional<WdlDtcSplit> wdl_dtc;
        if (split_values) {
            auto measured = wdl_dtc_split(tb->database(), t);
            if (measured.ok()) {
                wdl_dtc = *measured;
            } else if (measured.status().code() != StatusCode::InvalidArgument) {
                return measured.status();
            }
        }
        char checksum[24];
        std::snprintf(checksum, sizeof checksum, "%016" PRIx64, t.values_checksum);
        if (json) {
            Json line;
            line["variant"] = t.spec.variant;
            line["table"] = t.spec.material;
            line["slots"] = t.spec.slot_count;
            line["bytes"] = t.stored_bytes;
            line["checksum"] = checksum;
            line["value_width"] = t.spec.value_width;
            line["generator"] = t.spec.generator_version;
            line["encoding"] = t.spec.value_encoding;
            const std::string dtc_side = dtc_side_name(t);
            line["dtc_side"] = dtc_side.empty() ? Json() : Json(dtc_side);
            const std::string order = index_order_name(t);
            line["index_order"] = order.empty() ? Json() : Json(order);
            const std::string colouring = knight_colouring_name(t);
            line["knight_colouring"] = colouring.empty() ? Json() : Json(colouring);
            const ByteSplit split = byte_split(t);
            line["format"] = t.format_version;
            line["bytes_per_position"] = split.per_position;
            line["split"] = {{"values", split.values}, {"index_metadata", split.index}};
            if (wdl_dtc) {
                line["split"]["wdl"] = wdl_dtc->wdl;
                line["split"]["dtc"] = wdl_dtc->dtc;
            }
            // Statistics are stored as JSON text; a damaged text is shown as
            // an empty object rather than breaking the line.
            line["statistics"] = Json::parse(t.statistics.json.empty() ? "{}" : t.statistics.json,
                                             nullptr, false);
            if (line["statistics"].is_discarded()) line["statistics"] = Json::object();
            std::cout << to_json_line(line) << '\n';
        } else {
            std::uint64_t counters[8] = {};
            const char* names[8] = {"white.win",  "white.draw", "white.loss", "black.win",
                                    "black.draw", "black.loss", "max_dtc",    "white.valid"};
            for (const auto& c : t.statistics.counters) {
                for (int i = 0; i < 8; ++i) {
                    if (c.name == names[i]) counters[i] = c.value;
                }
            }
            const ByteSplit split = byte_split(t);
            const std::string values_split =
                wdl_dtc ? " = WDL " + std::to_string(wdl_dtc->wdl) + " + DTC " + std::to_string(wdl_dtc->dtc)
                        : std::string();
            std::printf("%-16s %-10s %12" PRIu64 " slots %10" PRIu64
                        " bytes  format %u  %.4f B/position (values %" PRIu64
                        "%s, index metadata %" PRIu64 ")  checksum %s  "
                        "wtm W/D/L %" PRIu64 "/%" PRIu64 "/%" PRIu64 "  btm W/D/L %" PRIu64
                        "/%" PRIu64 "/%" PRIu64 "  max DTC %" PRIu64 "  %s%s%s%s%s%s%s\n",
                        t.spec.variant.c_str(), t.spec.material.c_str(), t.spec.slot_count,
                        t.stored_bytes, t.format_version, split.per_position, split.values,
                        values_split.c_str(), split.index, checksum, counters[0], counters[1], counters[2],
                        counters[3], counters[4], counters[5], counters[6],
                        t.spec.value_encoding.c_str(), dtc_side_name(t).empty() ? "" : " DTC side ",
                        dtc_side_name(t).c_str(), index_order_name(t).empty() ? "" : " index order ",
                        index_order_name(t).c_str(), knight_colouring_name(t).empty() ? "" : " knights ",
                        knight_colouring_name(t).c_str());
        }
    }
    return {};
}

constexpr const char* kStrategyExportUsage =
    "usage: tbprobe strategy-export --db DIR --name NAME [--output FILE]\n"
    "\n"
    "Writes the strategy NAME as text: '#' header lines (name, variant, side, kind,\n"
    "roots, entry count), then one 'FEN<TAB>uci-move' line per entry in key order.\n"
    "tbgen strategy-import reads the same format. Default output: stdout.\n"
    "Exit status: 0 success, 2 bad usage, 3 missing strategy, database or I/O error.\n";

Status run_strategy_export(const std::vector<std::string>& argv) {
    cli::Command command(kStrategyExportUsage);
    for (const char* name : {"db", "name", "output"}) command.value(name);
    auto parsed = command.parse(argv, std::cout);
    if (!parsed.ok() || !*parsed) return parsed.status();
    auto dir = command.required("db");
    if (!dir.ok()) return dir.status();
    auto name = command.required("name");
    if (!name.ok()) return name.status();
    const auto output = command.optional("output");
    auto db = storage::Database::open(*dir);
    if (!db.ok()) {
        return Status(probe_status(db.status()).code(),
                      "cannot open database " + *dir + ": " + db.status().to_string());
    }
    std::ofstream file;
    if (output) {
        file.open(*output, std::ios::binary | std::ios::trunc);
        if (!file) return io_error("cannot write " + *output);
    }
    auto written = export_strategy(*db, *name, output ? static_cast<std::ostream&>(file) : std::cout);
    return written.status();
}

}  // namespace

int run_cli(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cout << kUsage;
        return kExitUsage;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "info") return report(std::cerr, kProgram, run_info(rest));
    if (args[0] == "strategy-export") return report(std::cerr, kProgram, run_strategy_export(rest));
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return kExitOk;
    }
    const Outcome outcome = run_probe(args);
    return outcome.reported ? exit_code(outcome.status) : report(std::cerr, kProgram, outcome.status);
}

}  // namespace tbf::probe
