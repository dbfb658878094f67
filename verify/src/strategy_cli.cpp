// `tbverify strategy`: run the closure check on one strategy and print each
// problem, then a summary line (or one JSON object), and the exit code.

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli_support.hpp"
#include "tbforge/verify/cli.hpp"
#include "tbforge/verify/strategy.hpp"

namespace tbf::verify::detail {
namespace {

constexpr std::string_view kStrategyUsage =
    "Usage: tbverify strategy --db DIR --name NAME [--threads N] [--max-errors N] [--json]\n"
    "\n"
    "Streams every entry of the strategy NAME and checks, with tbverify's own\n"
    "move generator, that it is closed (docs/ARCHITECTURE.md section 8):\n"
    "  - each key is a legal position with the strategy side to move, and its\n"
    "    stored move is legal there;\n"
    "  - after the move, every opponent reply reaches a stored position or ends\n"
    "    the game in a result that is not a loss for the strategy side (for a\n"
    "    winning strategy: a win);\n"
    "  - every root is stored (or, the opponent to move, all its replies are);\n"
    "  - a winning strategy has no cycle, so every line ends in a win.\n"
    "Each problem is listed with the position, the stored move, the escaping\n"
    "reply and the position it reaches.\n"
    "\n"
    "Options:\n"
    "  --db DIR        the database directory (opened read-only)\n"
    "  --name NAME     the strategy\n"
    "  --threads N     worker threads (default: all cores)\n"
    "  --max-errors N  problems listed (default 20; all are counted)\n"
    "  --json          one JSON object instead of text\n"
    "  --help          print this help\n"
    "\n"
    "Exit codes: 0 closed, 1 problems found, 2 bad command line, 3 database\n"
    "error (no database or strategy, unreadable entries, unknown encoding).\n";

Json json_fields(const StrategyProblem& p) {
    const auto field = [](const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); };
    Json out{{"kind", problem_kind_name(p.kind)}, {"fen", field(p.fen)},
             {"move", field(p.move)},             {"reply", field(p.reply)},
             {"reached", field(p.reached)},       {"message", p.message}};
    if (p.kind == ProblemKind::Cycle) out["cycle"] = p.cycle;
    return out;
}

void print_text(std::ostream& out, const StrategyReport& r) {
    for (const StrategyProblem& p : r.listed) {
        out << problem_kind_name(p.kind) << ": ";
        if (!p.fen.empty()) out << p.fen;
        if (!p.move.empty()) out << " plays " << p.move;
        out << (p.fen.empty() && p.move.empty() ? "" : ": ") << p.message << '\n';
        if (p.kind == ProblemKind::Cycle) {
            for (const std::string& fen : p.cycle) out << "  " << fen << '\n';
        }
    }
    if (r.problems > r.listed.size()) {
        out << "... and " << r.problems - r.listed.size() << " more\n";
    }
    char rate[96];
    std::snprintf(rate, sizeof rate, "%.2f s, %.0f entries/s", r.seconds,
                  r.seconds > 0 ? static_cast<double>(r.entries) / r.seconds : 0.0);
    out << r.name << " (" << r.variant << ", " << r.side << ", " << r.kind << "): " << r.entries
        << " entries, " << r.roots.size() << (r.roots.size() == 1 ? " root, " : " roots, ")
        << r.replies << " replies, " << r.problems << (r.problems == 1 ? " problem" : " problems")
        << " (" << rate
        << "): " << (r.closed() ? (r.cycles_checked ? "closed, no cycle" : "closed") : "NOT CLOSED")
        << '\n';
}

void print_json(std::ostream& out, const StrategyReport& r) {
    Json line{{"strategy", r.name}, {"variant", r.variant}, {"side", r.side},
              {"kind", r.kind},     {"roots", r.roots},     {"entries", r.entries},
              {"replies", r.replies}, {"problems", r.problems}, {"listed", Json::array()}};
    for (const StrategyProblem& p : r.listed) line["listed"].push_back(json_fields(p));
    line["cycles_checked"] = r.cycles_checked;
    if (!r.database_error.empty()) line["database_error"] = r.database_error;
    line["seconds"] = rounded_seconds(r.seconds);
    line["closed"] = r.closed();
    out << to_json_line(line) << '\n';
}

}  // namespace

Status run_strategy(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    cli::Command options{std::string(kStrategyUsage)};
    for (const char* name : {"db", "name", "threads", "max-errors"}) options.value(name);
    options.flag("json");
    auto parsed = parse_command(options, "strategy", args, out);
    if (!parsed.ok() || !*parsed) return parsed.status();
    for (std::string_view required : {"db", "name"}) {
        if (!options.has(required)) {
            return invalid_argument("strategy: missing --" + std::string(required) +
                                    " (see 'tbverify strategy --help')");
        }
    }
    StrategyCheckOptions check;
    auto threads = options.number("threads", 1, 1024);
    if (!threads.ok()) return threads.status();
    if (*threads) check.threads = static_cast<int>(**threads);
    auto max_errors = options.number("max-errors", 0, 1000000);
    if (!max_errors.ok()) return max_errors.status();
    if (*max_errors) check.max_listed = static_cast<std::size_t>(**max_errors);
    const bool progress = &err == &std::cerr && isatty(STDERR_FILENO) != 0;
    if (progress) {
        check.progress = [&err](std::uint64_t entries) {
            err << "\r" << entries << " entries\033[K" << std::flush;
        };
    }
    const StrategyReport report = check_strategy(options.get("db"), options.get("name"), check);
    if (progress) err << "\r\033[K" << std::flush;
    if (options.flag_set("json")) {
        print_json(out, report);
    } else if (report.database_error.empty()) {
        print_text(out, report);
    }
    out.flush();
    if (!report.database_error.empty()) return io_error(report.database_error);
    if (!out) return io_error("cannot write the output");
    return report.closed() ? Status() : already_reported(StatusCode::CheckFailed);
}

}  // namespace tbf::verify::detail
