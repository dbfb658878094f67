// `tbgen solve` (docs/fourfile.md): options, progress on the terminal, the
// run, and the strategy stored when proven.

#include "tbforge/solve/cli.hpp"

#include <sys/resource.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/solve/solver.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::solve {
namespace {

constexpr std::string_view kProgram = "tbgen solve";

constexpr const char* kUsage =
    "usage: tbgen solve --variant fourfile --db DIR --fen ROOT --side white|black --name NAME\n"
    "                   [--tables TABLE_DB] [--memory SIZE] [--threads N] [--work DIR]\n"
    "                   [--max-nodes N] [--checkpoint-seconds S] [--fixed-moves]\n"
    "                   [--no-regions] [--region-depth D] [--region-budget N]\n"
    "                   [--quiet-budget N] [--exchanges] [--no-dense] [--dense-conversions]\n"
    "                   [--pieces-budget N] [--pieces-depth D]\n"
    "                   [--guarded]\n"
    "                   [--mate-depth D] [--no-mate-threats] [--replace]\n"
    "                   [--quiet] [--json]\n"
    "\n"
    "Searches for a closed non-loss strategy of Four File chess from ROOT for the side\n"
    "to move there (X), and stores it under NAME (kind non-loss) for `tbverify strategy`.\n"
    "\n"
    "  --variant V           fourfile (the only variant solved)\n"
    "  --db DIR              database that receives the strategy (created if missing)\n"
    "  --fen ROOT            the root position\n"
    "  --side white|black    X, which must be to move at ROOT\n"
    "  --name NAME           name of the strategy\n"
    "  --tables TABLE_DB     database of Four File tables deciding positions of <= 5 units\n"
    "  --memory SIZE         cap on the search graph, e.g. 12G, 512M; reached: not proven\n"
    "  --threads N           worker threads (default 1)\n"
    "  --work DIR            directory of the checkpoint file (default DIR.solve)\n"
    "  --max-nodes N         stop, not proven, once the graph holds N positions\n"
    "  --checkpoint-seconds S  seconds between checkpoints (default 600)\n"
    "  --fixed-moves         X changes a move only when it is proven to lose\n"
    "                        (no proof-number switching)\n"
    "  --no-regions          no region leaves (locked pawn structures solved whole)\n"
    "  --region-depth D      captures followed into smaller regions, 0-3 (default 1)\n"
    "  --region-budget N     positions one region exploration may hold (default 20000)\n"
    "  --quiet-budget N      positions one quiet game may explore (X's pawns step too,\n"
    "                        a capture ends it; default 2000000, 0: no quiet games)\n"
    "  --exchanges           quiet games follow exchanges: the opponent's captures are\n"
    "                        moves of the game, X recaptures to keep its lead in material\n"
    "  --no-dense            quiet games by hash-table exploration only (by default a\n"
    "                        material of at most three pieces besides kings and pawns\n"
    "                        is solved whole over a dense index, structure by structure)\n"
    "  --dense-conversions   the dense game plays captures and promotions too (the\n"
    "                        whole game of every material that fits the index)\n"
    "  --guarded             fortress leaves may also wait with units the opponent\n"
    "                        attacks, where every capture is an exchange X takes back\n"
    "  --replace             replace a strategy of the same name\n"
    "  --pieces-budget N     positions one pieces game may explore (X's pawns stay,\n"
    "                        its pieces and all the opponent's units move; default 0:\n"
    "                        no pieces games)\n"
    "  --pieces-depth D      captures a pieces game follows (default 0)\n"
    "  --mate-depth D        X's move order avoids moves after which the opponent mates\n"
    "                        by checks within D of its moves, 1-4 (default 3)\n"
    "  --no-mate-threats     ...but not those after which a quiet move threatens a\n"
    "                        mate in one that no reply meets\n"
    "  --quiet               no progress lines\n"
    "  --json                print one JSON summary object\n"
    "\n"
    "Exit status: 0 stored, 1 not proven (nothing stored), 2 bad usage or input,\n"
    "3 database or I/O error.\n";

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) { g_interrupted.store(true); }

std::uint64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

std::string human_bytes(std::uint64_t n) {
    char text[32];
    if (n >= (std::uint64_t{1} << 30)) {
        std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(n) / (1 << 30));
    } else {
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(n) / (1 << 20));
    }
    return text;
}

// A database that cannot be opened is a database error (exit 3), even where
// storage calls the path a bad argument.
Status database_failure(const Status& status, const std::string& message) {
    const bool input = status.code() == StatusCode::InvalidArgument || status.code() == StatusCode::AlreadyExists;
    return Status(input ? StatusCode::IoError : status.code(), message);
}

Result<double> positive_seconds(const cli::Command& command, std::string_view name, double fallback) {
    if (!command.has(name)) return fallback;
    const std::string& text = command.get(name);
    double seconds = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) || seconds <= 0) {
        return invalid_argument("bad --" + std::string(name) + " \"" + text +
                                "\" (expected a positive number of seconds)");
    }
    return seconds;
}

// Ok when a strategy was stored; CheckFailed without a message when not
// proven (the outcome is already printed); the error otherwise.
Status run(const std::vector<std::string>& args) {
    cli::Command command(kUsage);
    for (const char* name : {"variant", "db", "fen", "side", "name", "tables", "memory", "threads", "work",
                             "max-nodes", "checkpoint-seconds", "region-depth", "region-budget", "quiet-budget",
                             "pieces-budget", "pieces-depth", "mate-depth"}) {
        command.value(name);
    }
    for (const char* name : {"fixed-moves", "no-regions", "no-mate-threats", "exchanges", "no-dense", "dense-conversions", "guarded", "replace", "json",
                             "quiet"}) command.flag(name);
    auto parsed = command.parse(args, std::cout);
    if (!parsed.ok()) return parsed.status();
    if (!*parsed) return {};
    auto variant = command.required("variant");
    if (!variant.ok()) return variant.status();
    auto db_path = command.required("db");
    if (!db_path.ok()) return db_path.status();
    auto fen = command.required("fen");
    if (!fen.ok()) return fen.status();
    auto side_text = command.required("side");
    if (!side_text.ok()) return side_text.status();
    auto name = command.required("name");
    if (!name.ok()) return name.status();

    if (*variant != "fourfile") {
        return invalid_argument("--variant '" + *variant + "': tbgen solve solves fourfile only");
    }
    auto root = parse_fen(*fen, VariantId::FourFile);
    if (!root.ok()) return root.status().with_context("--fen");
    Color side = Color::White;
    if (*side_text == "white") {
        side = Color::White;
    } else if (*side_text == "black") {
        side = Color::Black;
    } else {
        return invalid_argument("--side must be white or black, got '" + *side_text + "'");
    }
    if (root->side_to_move() != side) {
        return invalid_argument("--side " + *side_text + ": " + (side == Color::White ? "black" : "white") +
                                " is to move at " + *fen);
    }
    if (!has_legal_move<FourFile>(*root)) return invalid_argument("the root " + *fen + " is terminal");
    auto memory = command.byte_size("memory");
    if (!memory.ok()) return memory.status();
    if (*memory && **memory == 0) {
        return invalid_argument("bad --memory \"" + command.get("memory") + "\" (a cap above 0, e.g. 12G, 512M)");
    }
    if (name->empty()) return invalid_argument("--name must not be empty");
    auto threads = command.number("threads", 1, 1024);
    if (!threads.ok()) return threads.status();
    auto max_nodes = command.number("max-nodes", 0, std::numeric_limits<std::uint64_t>::max());
    if (!max_nodes.ok()) return max_nodes.status();
    auto region_depth = command.number("region-depth", 0, 3);
    if (!region_depth.ok()) return region_depth.status();
    auto region_budget = command.number("region-budget", 1, 1'000'000'000);
    if (!region_budget.ok()) return region_budget.status();
    auto quiet_budget = command.number("quiet-budget", 0, 1'000'000'000);
    if (!quiet_budget.ok()) return quiet_budget.status();
    auto pieces_budget = command.number("pieces-budget", 0, 1'000'000'000);
    if (!pieces_budget.ok()) return pieces_budget.status();
    auto pieces_depth = command.number("pieces-depth", 0, 3);
    if (!pieces_depth.ok()) return pieces_depth.status();
    auto mate_depth = command.number("mate-depth", 1, 4);
    if (!mate_depth.ok()) return mate_depth.status();
    auto checkpoint_seconds = positive_seconds(command, "checkpoint-seconds", 600);
    if (!checkpoint_seconds.ok()) return checkpoint_seconds.status();
    const std::string tables_path = command.optional("tables").value_or("");
    const bool replace = command.flag_set("replace");

    storage::DatabaseOptions db_options;
    db_options.mode = storage::OpenMode::ReadWrite;
    db_options.create_if_missing = true;
    auto opened = storage::Database::open(*db_path, db_options);
    if (!opened.ok()) return database_failure(opened.status(), *db_path + ": " + opened.status().to_string());
    if (!replace && opened->strategy_info(*name).ok()) {
        return invalid_argument("strategy '" + *name + "' already exists (use --replace)");
    }
    std::optional<probe::Tablebase> tables;
    std::optional<storage::Database> own_db;
    storage::Database* db = nullptr;
    std::error_code ec;
    if (!tables_path.empty() && std::filesystem::equivalent(tables_path, *db_path, ec)) {
        tables.emplace(std::move(*opened));  // one handle: the database is open read-write once
        db = &tables->database();
    } else {
        own_db.emplace(std::move(*opened));
        db = &*own_db;
        if (!tables_path.empty()) {
            auto tb = probe::Tablebase::open(tables_path);
            if (!tb.ok()) return database_failure(tb.status(), "--tables " + tables_path + ": " + tb.status().message());
            tables.emplace(std::move(tb).value());
        }
    }

    std::string work_dir = command.optional("work").value_or("");
    if (work_dir.empty()) work_dir = std::filesystem::path(*db_path).lexically_normal().string() + ".solve";
    std::filesystem::create_directories(work_dir, ec);
    if (ec) return io_error("--work " + work_dir + ": " + ec.message());

    SolveOptions options;
    options.side = side;
    options.tables = tables ? &*tables : nullptr;
    options.memory_bytes = memory->value_or(0);
    options.max_nodes = max_nodes->value_or(0);
    options.threads = static_cast<int>(threads->value_or(1));
    options.proof_number_switching = !command.flag_set("fixed-moves");
    options.region_leaves = !command.flag_set("no-regions");
    options.region_capture_depth = static_cast<int>(region_depth->value_or(1));
    options.region_budget = region_budget->value_or(options.region_budget);
    options.quiet_budget = quiet_budget->value_or(options.quiet_budget);
    options.quiet_exchanges = command.flag_set("exchanges");
    options.dense_quiet = !command.flag_set("no-dense");
    options.dense_conversions = command.flag_set("dense-conversions");
    if (options.dense_conversions && !options.dense_quiet) {
        return invalid_argument("--dense-conversions needs the dense game (drop --no-dense)");
    }
    options.guarded_fortresses = command.flag_set("guarded");
    options.pieces_budget = pieces_budget->value_or(options.pieces_budget);
    options.pieces_capture_depth = static_cast<int>(pieces_depth->value_or(options.pieces_capture_depth));
    options.mate_check_moves = static_cast<int>(mate_depth->value_or(options.mate_check_moves));
    options.mate_threats = !command.flag_set("no-mate-threats");
    options.checkpoint_path = Solver::checkpoint_file(work_dir, *name);
    options.checkpoint_seconds = *checkpoint_seconds;
    options.interrupt = &g_interrupted;
    if (!command.flag_set("quiet")) {
        options.progress = [](const SolveProgress& p) {
            std::fprintf(stderr,
                         "solve: %.0f s  nodes %llu  expanded %llu  open %llu  reached %llu  lost %llu  fortresses %llu  "
                         "regions %llu (%llu positions)  quiet %llu (%llu positions)  pieces %llu (%llu positions)  %s  "
                         "%.0f nodes/s\n",
                         p.seconds, static_cast<unsigned long long>(p.nodes),
                         static_cast<unsigned long long>(p.expanded), static_cast<unsigned long long>(p.open),
                         static_cast<unsigned long long>(p.reachable), static_cast<unsigned long long>(p.lost),
                         static_cast<unsigned long long>(p.fortress_leaves),
                         static_cast<unsigned long long>(p.region_explorations),
                         static_cast<unsigned long long>(p.region_positions),
                         static_cast<unsigned long long>(p.quiet_explorations),
                         static_cast<unsigned long long>(p.quiet_positions),
                         static_cast<unsigned long long>(p.pieces_explorations),
                         static_cast<unsigned long long>(p.pieces_positions), human_bytes(p.memory_bytes).c_str(),
                         p.seconds > 0 ? p.nodes / p.seconds : 0.0);
        };
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    const std::string root_fen = to_fen(*root);
    Solver solver(*root, options);
    auto ran = solver.run();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!ran.ok()) return ran.status();
    const SolveSummary& summary = *ran;

    StoreSummary stored;
    if (summary.verdict == Verdict::Proven) {
        const Json meta{{"source", "solve"},
                        {"nodes", summary.final.nodes},
                        {"expanded", summary.final.expanded},
                        {"tables", !tables_path.empty()}};
        auto written = store_strategy(*db, solver, *root, side, *name, replace, to_json_line(meta));
        if (!written.ok()) return written.status();
        stored = *written;
    }
    const double seconds = summary.final.seconds;
    if (command.flag_set("json")) {
        const Json out{{"strategy", *name},
                       {"variant", "fourfile"},
                       {"side", *side_text},
                       {"root", root_fen},
                       {"verdict", std::string(verdict_name(summary.verdict))},
                       {"reason", summary.reason},
                       {"entries", stored.entries},
                       {"nodes", summary.final.nodes},
                       {"expanded", summary.final.expanded},
                       {"open", summary.final.open},
                       {"lost", summary.final.lost},
                       {"fortress_leaves", summary.final.fortress_leaves},
                       {"region_explorations", summary.final.region_explorations},
                       {"region_positions", summary.final.region_positions},
                       {"region_safe", summary.final.region_safe},
                       {"region_given_up", summary.final.region_given_up},
                       {"quiet_explorations", summary.final.quiet_explorations},
                       {"quiet_positions", summary.final.quiet_positions},
                       {"quiet_cut", summary.final.quiet_cut},
                       {"quiet_cut_safe", summary.final.quiet_cut_safe},
                       {"quiet_cut_kept", summary.final.quiet_cut_kept},
                       {"quiet_dense_structures", summary.final.quiet_dense_structures},
                       {"quiet_dense_positions", summary.final.quiet_dense_positions},
                       {"pieces_explorations", summary.final.pieces_explorations},
                       {"pieces_positions", summary.final.pieces_positions},
                       {"pieces_cut", summary.final.pieces_cut},
                       {"pieces_safe", summary.final.pieces_safe},
                       {"resumed", summary.resumed_nodes},
                       {"seconds", seconds},
                       {"graph_bytes", summary.final.memory_bytes},
                       {"peak_rss_bytes", peak_rss_bytes()},
                       {"open_lines", summary.open_lines},
                       {"checkpoint", summary.verdict == Verdict::NotProven ? options.checkpoint_path : ""}};
        std::cout << to_json_line(out) << '\n';
    } else if (summary.verdict == Verdict::Proven) {
        std::printf("%s: proven: non-loss strategy for %s, %llu entries, %llu nodes, %.1f s, peak RSS %s\n",
                    name->c_str(), side_text->c_str(), static_cast<unsigned long long>(stored.entries),
                    static_cast<unsigned long long>(summary.final.nodes), seconds,
                    human_bytes(peak_rss_bytes()).c_str());
    } else {
        std::printf("%s: %s (%s): %llu nodes, %llu open, %.1f s, peak RSS %s; nothing stored\n", name->c_str(),
                    std::string(verdict_name(summary.verdict)).c_str(), summary.reason.c_str(),
                    static_cast<unsigned long long>(summary.final.nodes),
                    static_cast<unsigned long long>(summary.final.open), seconds,
                    human_bytes(peak_rss_bytes()).c_str());
        for (const std::string& line : summary.open_lines) std::printf("  open: %s\n", line.c_str());
        if (summary.verdict == Verdict::NotProven) {
            std::printf("  checkpoint: %s (run the same command to resume)\n", options.checkpoint_path.c_str());
        }
    }
    std::fflush(stdout);
    if (summary.verdict != Verdict::Proven) return check_failed("");
    return {};
}

}  // namespace

int run_cli(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    return report(std::cerr, kProgram, run(args));
}

}  // namespace tbf::solve
