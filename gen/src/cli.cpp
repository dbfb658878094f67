#include "tbforge/gen/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/probe/args.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/gen/strategy.hpp"
#include "tbforge/gen/work_files.hpp"
#include "tbforge/index/report.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/solve/cli.hpp"

namespace tbf::gen {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitDatabase = 3;

constexpr const char* kUsage =
    "usage: tbgen <command> [options]\n"
    "\n"
    "commands:\n"
    "  gen     build tables (and every sub-table they need) into a database\n"
    "  index   report index sizes of tables\n"
    "  perft   count leaf nodes of the move tree (move generator check)\n"
    "  strategy         extract a strategy database from tables\n"
    "  strategy-import  load a strategy database from FEN<TAB>uci-move text\n"
    "  solve   search a closed non-loss strategy of Four File from a position\n"
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

constexpr const char* kGenUsage =
    "usage: tbgen gen --variant V --db DIR [--threads N] [--memory SIZE --work DIR] [--quiet] [--json]\n"
    "                 (--upto K | TABLE...)\n"
    "\n"
    "  --variant V   antichess, antichess-fics, antichess-joint or fourfile\n"
    "  --db DIR      database directory (created if missing)\n"
    "  --upto K      every table with at most K units (Four File: kings included)\n"
    "  TABLE...      tables by name, e.g. KQvR (either colour orientation)\n"
    "  --threads N   worker threads (default: all cores)\n"
    "  --memory SIZE memory cap, e.g. 4G, 512M, 1MiB or bytes: tables that do not fit\n"
    "                are built out-of-core in the work directory (needs --work)\n"
    "  --work DIR    work directory of out-of-core builds (one subdirectory per table,\n"
    "                removed when the table is stored; a rerun resumes from it)\n"
    "  --quiet       no progress or per-table lines\n"
    "  --json        one JSON object per table, then a summary object\n"
    "\n"
    "Tables already complete in the database are not rebuilt, so an interrupted\n"
    "run resumes where it stopped.\n";

constexpr const char* kIndexUsage =
    "usage: tbgen index --variant V TABLE... [--json]\n"
    "\n"
    "Prints per table the number of slots N, the valid positions per side to move\n"
    "(counted by decoding every slot) and the ratio slots/valid.\n";

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

std::vector<index::Material> table_arguments(const cli::Args& args, VariantId variant) {
    std::vector<index::Material> tables;
    if (auto upto = args.number("upto")) {
        if (*upto < 2 || *upto > 6) throw cli::UsageError("--upto must be between 2 and 6");
        if (!args.positional().empty()) throw cli::UsageError("give either --upto or table names");
        return index::enumerate_tables(variant, static_cast<int>(*upto));
    }
    for (const auto& name : args.positional()) {
        auto m = index::parse_table(name, variant);
        if (!m.ok()) throw cli::UsageError(m.error());
        tables.push_back(index::canonical(*m));
    }
    if (tables.empty()) throw cli::UsageError("no tables given (use --upto K or TABLE...)");
    return tables;
}

int run_gen(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"variant", "db", "threads", "upto", "memory", "work"}, {"quiet", "json", "help"});
    if (args.flag("help")) {
        std::cout << kGenUsage;
        return kExitOk;
    }
    const VariantId variant = variant_option(args);
    const std::string dir = args.required("db");
    const auto tables = table_arguments(args, variant);
    gen::GenerateOptions options;
    if (auto threads = args.number("threads")) {
        if (*threads == 0 || *threads > 1024) throw cli::UsageError("--threads must be 1..1024");
        options.threads = static_cast<int>(*threads);
    }
    if (auto memory = args.value("memory")) {
        auto bytes = gen::ooc::parse_byte_size(*memory);
        if (!bytes) throw cli::UsageError("bad --memory '" + *memory + "' (e.g. 4G, 512M, 1MiB, 1048576)");
        options.memory_bytes = *bytes;
        auto work = args.value("work");
        if (!work || work->empty()) throw cli::UsageError("--memory needs --work DIR");
        options.work_dir = *work;
    } else if (args.value("work")) {
        throw cli::UsageError("--work is only used with --memory");
    }
    const bool quiet = args.flag("quiet");
    const bool json = args.flag("json");
    options.progress = !quiet && isatty(STDERR_FILENO);

    storage::DatabaseOptions db_options;
    db_options.mode = storage::OpenMode::ReadWrite;
    db_options.create_if_missing = true;
    auto db = storage::Database::open(dir, db_options);
    if (!db.ok()) {
        std::cerr << "tbgen: error: cannot open database " << dir << ": " << db.status().to_string() << '\n';
        return kExitDatabase;
    }
    probe::Tablebase tablebase(std::move(*db));
    const auto start = std::chrono::steady_clock::now();
    auto on_table = [&](const gen::TableSummary& t) {
        if (json) {
            std::cout << "{\"table\":" << cli::json_string(t.name) << ",\"built\":" << (t.built ? "true" : "false")
                      << ",\"positions\":" << t.positions << ",\"bytes\":" << t.stored_bytes
                      << ",\"max_dtc\":" << t.max_dtc << ",\"seconds\":" << t.seconds
                      << ",\"out_of_core\":" << (t.out_of_core ? "true" : "false");
            if (t.out_of_core) {
                std::cout << ",\"resumed\":" << (t.resumed ? "true" : "false") << ",\"chunks\":" << t.chunks
                          << ",\"bytes_read\":" << t.bytes_read << ",\"bytes_written\":" << t.bytes_written
                          << ",\"crossing_fraction\":" << t.crossing_fraction << ",\"sparse_from_level\":" << t.sparse_level
                          << ",\"split_visits\":" << t.split_visits
                          << ",\"phases\":{\"initial\":" << t.phases.initial << ",\"levels\":" << t.phases.levels
                          << ",\"sparse\":" << t.phases.sparse << ",\"write_back\":" << t.phases.write_back
                          << ",\"store\":" << t.phases.store << '}';
            } else if (t.built) {
                std::cout << ",\"phases\":{\"initial\":" << t.phases.initial << ",\"levels\":" << t.phases.levels
                          << ",\"renumber\":" << t.phases.renumber << ",\"store\":" << t.phases.store << '}';
            }
            std::cout << "}" << std::endl;
        } else if (!quiet && t.built) {
            std::printf("%-28s %12llu positions  max DTC %4d  %10llu bytes  %7.2f s\n", t.name.c_str(),
                        static_cast<unsigned long long>(t.positions), t.max_dtc,
                        static_cast<unsigned long long>(t.stored_bytes), t.seconds);
            std::fflush(stdout);
        }
    };
    auto result = gen::generate(tablebase, variant, tables, options, on_table);
    if (auto* error = std::get_if<gen::GenerateError>(&result)) {
        std::cerr << "tbgen: error: " << error->message << '\n';
        return error->exit_code;
    }
    const auto& summaries = std::get<std::vector<gen::TableSummary>>(result);
    std::uint64_t built = 0, positions = 0, bytes = 0;
    for (const auto& t : summaries) {
        built += t.built;
        positions += t.positions;
        bytes += t.stored_bytes;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
        std::cout << "{\"summary\":{\"tables\":" << summaries.size() << ",\"built\":" << built
                  << ",\"positions\":" << positions << ",\"bytes\":" << bytes << ",\"seconds\":" << seconds
                  << "}}\n";
    } else if (!quiet) {
        std::printf("%zu tables (%llu built, %llu already present), %llu positions, %.1f s, %llu bytes\n",
                    summaries.size(), static_cast<unsigned long long>(built),
                    static_cast<unsigned long long>(summaries.size() - built),
                    static_cast<unsigned long long>(positions), seconds, static_cast<unsigned long long>(bytes));
    }
    return kExitOk;
}

int run_index(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"variant"}, {"json", "help"});
    if (args.flag("help")) {
        std::cout << kIndexUsage;
        return kExitOk;
    }
    const VariantId variant = variant_option(args);
    if (args.positional().empty()) throw cli::UsageError("no tables given");
    for (const auto& name : args.positional()) {
        auto report = index::index_report(variant, name);
        if (!report.ok()) throw cli::UsageError(report.error());
        std::cout << (args.flag("json") ? index::to_json(*report) : index::to_text(*report)) << std::endl;
    }
    return kExitOk;
}

constexpr const char* kStrategyUsage =
    "usage: tbgen strategy --db DIR --variant V --fen ROOT --name NAME [--side white|black]\n"
    "                      [--replace] [--threads N] [--quiet] [--json]\n"
    "\n"
    "Extracts from the tables the strategy that keeps the value of ROOT for the side\n"
    "to move there (or --side): a winning strategy from a won root (each move the\n"
    "smallest-DTC win), a non-loss strategy from a drawn one. Every opponent reply is\n"
    "followed across sub-tables; each position where the side moves is stored with\n"
    "its move. Exit status: 0 stored, 1 the side loses at ROOT, 2 bad input,\n"
    "3 database error or missing table.\n";

constexpr const char* kStrategyImportUsage =
    "usage: tbgen strategy-import --db DIR --variant V --name NAME --side white|black\n"
    "                             --root FEN [--root FEN...] [--kind non-loss|winning]\n"
    "                             [--replace] FILE\n"
    "\n"
    "Loads a strategy from FILE ('-' for stdin): one 'FEN<TAB>uci-move' per line,\n"
    "blank lines and '#' comments skipped. Every FEN must have the side to move\n"
    "and the move must be legal. The first bad line is reported with its number\n"
    "and nothing is stored. Exit status: 0 stored, 2 bad input, 3 database error.\n";

Color side_option(const std::string& text) {
    if (text == "white") return Color::White;
    if (text == "black") return Color::Black;
    throw cli::UsageError("--side must be white or black, not '" + text + "'");
}

// The database opened read-write, or nothing after printing why.
std::optional<storage::Database> open_for_writing(const std::string& dir, bool create) {
    storage::DatabaseOptions options;
    options.mode = storage::OpenMode::ReadWrite;
    options.create_if_missing = create;
    auto db = storage::Database::open(dir, options);
    if (!db.ok()) {
        std::cerr << "tbgen: error: cannot open database " << dir << ": " << db.status().to_string() << '\n';
        return std::nullopt;
    }
    return std::move(*db);
}

int run_strategy(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db", "variant", "fen", "name", "side", "threads"},
                   {"replace", "quiet", "json", "help"});
    if (args.flag("help")) {
        std::cout << kStrategyUsage;
        return kExitOk;
    }
    if (!args.positional().empty()) throw cli::UsageError("unexpected argument '" + args.positional()[0] + "'");
    const VariantId variant = variant_option(args);
    const std::string dir = args.required("db");
    const std::string fen = args.required("fen");
    gen::ExtractOptions options;
    options.name = args.required("name");
    if (auto side = args.value("side")) options.side = side_option(*side);
    options.replace = args.flag("replace");
    if (auto threads = args.number("threads")) {
        if (*threads == 0 || *threads > 1024) throw cli::UsageError("--threads must be 1..1024");
        options.threads = static_cast<int>(*threads);
    }
    const bool json = args.flag("json");
    if (!args.flag("quiet") && isatty(STDERR_FILENO)) {
        options.progress = [](const gen::ExtractProgress& p) {
            std::fprintf(stderr, "\r%llu entries, %llu pending\033[K",
                         static_cast<unsigned long long>(p.entries), static_cast<unsigned long long>(p.pending));
        };
    }
    auto db = open_for_writing(dir, false);
    if (!db) return kExitDatabase;
    probe::Tablebase tablebase(std::move(*db));
    auto result = gen::extract_strategy(tablebase, variant, fen, options);
    if (options.progress) std::fprintf(stderr, "\r\033[K");
    if (auto* error = std::get_if<gen::StrategyError>(&result)) {
        std::cerr << "tbgen: error: " << error->message << '\n';
        return error->exit_code;
    }
    const auto& s = std::get<gen::ExtractSummary>(result);
    const char* kind = s.kind == storage::StrategyKind::Winning ? "winning" : "non-loss";
    const char* side = s.side == Color::White ? "white" : "black";
    if (json) {
        std::cout << "{\"strategy\":" << cli::json_string(options.name) << ",\"variant\":\""
                  << variant_name(variant) << "\",\"side\":\"" << side << "\",\"kind\":\"" << kind
                  << "\",\"root_dtc\":" << s.root_value.dtc << ",\"entries\":" << s.entries
                  << ",\"entry_bytes\":" << s.entry_bytes << ",\"replies\":" << s.replies
                  << ",\"seconds\":" << s.seconds << "}\n";
    } else if (!args.flag("quiet")) {
        std::printf("%s: %s strategy for %s (root %s%s), %llu entries, %llu bytes, %.2f s\n",
                    options.name.c_str(), kind, side, s.kind == storage::StrategyKind::Winning ? "win in " : "draw",
                    s.kind == storage::StrategyKind::Winning ? std::to_string(s.root_value.dtc).c_str() : "",
                    static_cast<unsigned long long>(s.entries), static_cast<unsigned long long>(s.entry_bytes),
                    s.seconds);
    }
    return kExitOk;
}

int run_strategy_import(const std::vector<std::string>& argv) {
    cli::Args args(argv, {"db", "variant", "name", "side", "root", "kind"}, {"replace", "quiet", "help"});
    if (args.flag("help")) {
        std::cout << kStrategyImportUsage;
        return kExitOk;
    }
    const VariantId variant = variant_option(args);
    const std::string dir = args.required("db");
    gen::ImportOptions options;
    options.name = args.required("name");
    options.side = side_option(args.required("side"));
    options.roots = args.values("root");
    if (options.roots.empty()) throw cli::UsageError("missing required option --root");
    if (auto kind = args.value("kind")) {
        auto parsed = storage::parse_strategy_kind(*kind);
        if (!parsed) throw cli::UsageError("--kind must be non-loss or winning, not '" + *kind + "'");
        options.kind = *parsed;
    }
    options.replace = args.flag("replace");
    if (args.positional().size() != 1) throw cli::UsageError("give exactly one input FILE ('-' for stdin)");
    const std::string file = args.positional()[0];
    options.source = file;
    std::ifstream input;
    if (file != "-") {
        input.open(file, std::ios::binary);
        if (!input) throw cli::UsageError("cannot read " + file);
    }
    auto db = open_for_writing(dir, true);
    if (!db) return kExitDatabase;
    auto result = gen::import_strategy(*db, variant, file == "-" ? std::cin : input, options);
    if (auto* error = std::get_if<gen::StrategyError>(&result)) {
        std::cerr << "tbgen: error: " << (file == "-" ? "stdin" : file) << ": " << error->message << '\n';
        return error->exit_code;
    }
    const auto& s = std::get<gen::ImportSummary>(result);
    if (!args.flag("quiet")) {
        std::printf("%s: %llu entries from %llu lines (%llu duplicates)\n", options.name.c_str(),
                    static_cast<unsigned long long>(s.entries), static_cast<unsigned long long>(s.lines),
                    static_cast<unsigned long long>(s.duplicates));
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
    if (command == "solve") return solve::run_cli(argc - 1, argv + 1, ooc::parse_byte_size);
    args.erase(args.begin());
    try {
        if (command == "perft") return run_perft(args);
        if (command == "gen") return run_gen(args);
        if (command == "index") return run_index(args);
        if (command == "strategy") return run_strategy(args);
        if (command == "strategy-import") return run_strategy_import(args);
        throw cli::UsageError("unknown command '" + command + "' (see tbgen --help)");
    } catch (const cli::UsageError& e) {
        std::cerr << "tbgen: error: " << e.message() << '\n';
        return kExitUsage;
    }
}

}  // namespace tbf::gen
