// `tbgen solve` (docs/fourfile.md): options, progress on the terminal, the
// run, and the strategy stored when proven.

#include "tbforge/solve/cli.hpp"

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/solve/solver.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::solve {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitNotProven = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDatabase = 3;

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) { g_interrupted.store(true); }

std::uint64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

int fail(int code, const std::string& message) {
    std::cerr << "tbgen solve: error: " << message << '\n';
    return code;
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

}  // namespace

int run_cli(int argc, char** argv, const ByteSizeParser& parse_byte_size) {
    CLI::App app{
        "Searches for a closed non-loss strategy of Four File chess from ROOT for the side to\n"
        "move there, and stores it under NAME (kind non-loss) for `tbverify strategy`.\n"
        "Exit status: 0 stored, 1 not proven (nothing stored), 2 bad usage or input,\n"
        "3 database or I/O error.",
        "tbgen solve"};
    std::string variant, db_path, fen, side_text, name, tables_path, memory_text, work_dir;
    int threads = 1;
    std::uint64_t max_nodes = 0;
    double checkpoint_seconds = 600;
    bool json = false, quiet = false, replace = false, fixed_moves = false;
    app.add_option("--variant", variant, "fourfile (the only variant solved)")->required();
    app.add_option("--db", db_path, "database that receives the strategy (created if missing)")->required();
    app.add_option("--fen", fen, "the root position")->required();
    app.add_option("--side", side_text, "white|black: the side X, which must be to move at ROOT")->required();
    app.add_option("--name", name, "name of the strategy")->required();
    app.add_option("--tables", tables_path, "database of Four File tables deciding positions of <= 5 units");
    app.add_option("--memory", memory_text, "cap on the search graph, e.g. 12G; reached: not proven");
    app.add_option("--threads", threads, "worker threads (default 1)")->check(CLI::Range(1, 1024));
    app.add_option("--work", work_dir, "directory of the checkpoint file (default DB.solve)");
    app.add_option("--max-nodes", max_nodes, "stop, not proven, once the graph holds N positions");
    app.add_option("--checkpoint-seconds", checkpoint_seconds, "seconds between checkpoints (default 600)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--fixed-moves", fixed_moves,
                 "X changes a move only when it is proven to lose (no proof-number switching)");
    app.add_flag("--replace", replace, "replace a strategy of the same name");
    app.add_flag("--json", json, "print one JSON summary object");
    app.add_flag("--quiet", quiet, "no progress lines");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(kExitUsage, e.what());
    }

    if (variant != "fourfile") {
        return fail(kExitUsage, "--variant '" + variant + "': tbgen solve solves fourfile only");
    }
    auto root = parse_fen(fen, VariantId::FourFile);
    if (!root.ok()) return fail(kExitUsage, "--fen: " + root.error());
    Color side = Color::White;
    if (side_text == "white") {
        side = Color::White;
    } else if (side_text == "black") {
        side = Color::Black;
    } else {
        return fail(kExitUsage, "--side must be white or black, got '" + side_text + "'");
    }
    if (root->side_to_move() != side) {
        return fail(kExitUsage, "--side " + side_text + ": " +
                                    (side == Color::White ? "black" : "white") + " is to move at " + fen);
    }
    if (!has_legal_move<FourFile>(*root)) return fail(kExitUsage, "the root " + fen + " is terminal");
    std::uint64_t memory = 0;
    if (!memory_text.empty()) {
        auto bytes = parse_byte_size(memory_text);
        if (!bytes) return fail(kExitUsage, "bad --memory '" + memory_text + "' (e.g. 12G, 512M)");
        memory = *bytes;
    }
    if (name.empty()) return fail(kExitUsage, "--name must not be empty");

    storage::DatabaseOptions db_options;
    db_options.mode = storage::OpenMode::ReadWrite;
    db_options.create_if_missing = true;
    auto opened = storage::Database::open(db_path, db_options);
    if (!opened.ok()) return fail(kExitDatabase, db_path + ": " + opened.status().to_string());
    if (!replace && opened->strategy_info(name).ok()) {
        return fail(kExitUsage, "strategy '" + name + "' already exists (use --replace)");
    }
    std::optional<probe::Tablebase> tables;
    std::optional<storage::Database> own_db;
    storage::Database* db = nullptr;
    std::error_code ec;
    if (!tables_path.empty() && std::filesystem::equivalent(tables_path, db_path, ec)) {
        tables.emplace(std::move(*opened));  // one handle: the database is open read-write once
        db = &tables->database();
    } else {
        own_db.emplace(std::move(*opened));
        db = &*own_db;
        if (!tables_path.empty()) {
            auto tb = probe::Tablebase::open(tables_path);
            if (!tb.ok()) return fail(kExitDatabase, "--tables " + tables_path + ": " + tb.error().message);
            tables.emplace(std::move(tb).value());
        }
    }

    if (work_dir.empty()) work_dir = std::filesystem::path(db_path).lexically_normal().string() + ".solve";
    std::filesystem::create_directories(work_dir, ec);
    if (ec) return fail(kExitDatabase, "--work " + work_dir + ": " + ec.message());

    SolveOptions options;
    options.side = side;
    options.tables = tables ? &*tables : nullptr;
    options.memory_bytes = memory;
    options.max_nodes = max_nodes;
    options.threads = threads;
    options.proof_number_switching = !fixed_moves;
    options.checkpoint_path = Solver::checkpoint_file(work_dir, name);
    options.checkpoint_seconds = checkpoint_seconds;
    options.interrupt = &g_interrupted;
    if (!quiet) {
        options.progress = [](const SolveProgress& p) {
            std::fprintf(stderr,
                         "solve: %.0f s  nodes %llu  expanded %llu  open %llu  reached %llu  lost %llu  "
                         "%s  %.0f nodes/s\n",
                         p.seconds, static_cast<unsigned long long>(p.nodes),
                         static_cast<unsigned long long>(p.expanded), static_cast<unsigned long long>(p.open),
                         static_cast<unsigned long long>(p.reachable), static_cast<unsigned long long>(p.lost),
                         human_bytes(p.memory_bytes).c_str(), p.seconds > 0 ? p.nodes / p.seconds : 0.0);
        };
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    const std::string root_fen = to_fen(*root);
    Solver solver(*root, options);
    auto ran = solver.run();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (auto* e = std::get_if<SolveError>(&ran)) return fail(e->exit_code, e->message);
    const SolveSummary& summary = std::get<SolveSummary>(ran);

    StoreSummary stored;
    if (summary.verdict == Verdict::Proven) {
        nlohmann::json meta = {{"source", "solve"},
                               {"nodes", summary.final.nodes},
                               {"expanded", summary.final.expanded},
                               {"tables", !tables_path.empty()}};
        auto written = store_strategy(*db, solver, *root, side, name, replace, meta.dump());
        if (auto* e = std::get_if<SolveError>(&written)) return fail(e->exit_code, e->message);
        stored = std::get<StoreSummary>(written);
    }
    const double seconds = summary.final.seconds;
    if (json) {
        nlohmann::ordered_json out = {{"strategy", name},
                              {"variant", "fourfile"},
                              {"side", side_text},
                              {"root", root_fen},
                              {"verdict", std::string(verdict_name(summary.verdict))},
                              {"reason", summary.reason},
                              {"entries", stored.entries},
                              {"nodes", summary.final.nodes},
                              {"expanded", summary.final.expanded},
                              {"open", summary.final.open},
                              {"lost", summary.final.lost},
                              {"resumed", summary.resumed_nodes},
                              {"seconds", seconds},
                              {"graph_bytes", summary.final.memory_bytes},
                              {"peak_rss_bytes", peak_rss_bytes()},
                              {"open_lines", summary.open_lines},
                              {"checkpoint", summary.verdict == Verdict::NotProven ? options.checkpoint_path : ""}};
        std::cout << out.dump() << '\n';
    } else {
        if (summary.verdict == Verdict::Proven) {
            std::printf("%s: proven: non-loss strategy for %s, %llu entries, %llu nodes, %.1f s, peak RSS %s\n",
                        name.c_str(), side_text.c_str(), static_cast<unsigned long long>(stored.entries),
                        static_cast<unsigned long long>(summary.final.nodes), seconds,
                        human_bytes(peak_rss_bytes()).c_str());
        } else {
            std::printf("%s: %s (%s): %llu nodes, %llu open, %.1f s, peak RSS %s; nothing stored\n",
                        name.c_str(), std::string(verdict_name(summary.verdict)).c_str(),
                        summary.reason.c_str(), static_cast<unsigned long long>(summary.final.nodes),
                        static_cast<unsigned long long>(summary.final.open), seconds,
                        human_bytes(peak_rss_bytes()).c_str());
            for (const std::string& line : summary.open_lines) std::printf("  open: %s\n", line.c_str());
            if (summary.verdict == Verdict::NotProven) {
                std::printf("  checkpoint: %s (run the same command to resume)\n", options.checkpoint_path.c_str());
            }
        }
    }
    return summary.verdict == Verdict::Proven ? kExitOk : kExitNotProven;
}

}  // namespace tbf::solve
