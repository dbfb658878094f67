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
    "move generator, that it is closed (DESIGN.md section 8):\n"
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

std::string json_fields(const StrategyProblem& p) {
    const auto field = [](const std::string& s) { return s.empty() ? "null" : json_string(s); };
    std::string out = "{\"kind\":" + json_string(problem_kind_name(p.kind)) +
                      ",\"fen\":" + field(p.fen) + ",\"move\":" + field(p.move) +
                      ",\"reply\":" + field(p.reply) + ",\"reached\":" + field(p.reached) +
                      ",\"message\":" + json_string(p.message);
    if (p.kind == ProblemKind::Cycle) {
        out += ",\"cycle\":[";
        for (std::size_t i = 0; i < p.cycle.size(); ++i) {
            if (i > 0) out += ',';
            out += json_string(p.cycle[i]);
        }
        out += ']';
    }
    return out + '}';
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
    out << "{\"strategy\":" << json_string(r.name) << ",\"variant\":" << json_string(r.variant)
        << ",\"side\":" << json_string(r.side) << ",\"kind\":" << json_string(r.kind)
        << ",\"roots\":[";
    for (std::size_t i = 0; i < r.roots.size(); ++i) {
        out << (i > 0 ? "," : "") << json_string(r.roots[i]);
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", r.seconds);
    out << "],\"entries\":" << r.entries << ",\"replies\":" << r.replies
        << ",\"problems\":" << r.problems << ",\"listed\":[";
    for (std::size_t i = 0; i < r.listed.size(); ++i) {
        out << (i > 0 ? "," : "") << json_fields(r.listed[i]);
    }
    out << "],\"cycles_checked\":" << (r.cycles_checked ? "true" : "false");
    if (!r.database_error.empty()) out << ",\"database_error\":" << json_string(r.database_error);
    out << ",\"seconds\":" << seconds << ",\"closed\":" << (r.closed() ? "true" : "false") << "}\n";
}

}  // namespace

int run_strategy(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    const std::vector<OptionSpec> specs = {
        {"db", true}, {"name", true}, {"threads", true}, {"max-errors", true}, {"json", false}};
    Options options;
    if (const std::string error = parse_options(args, 1, specs, options); !error.empty()) {
        return fail(err, "strategy: " + error + " (see 'tbverify strategy --help')");
    }
    if (options.help) {
        out << kStrategyUsage;
        return kExitOk;
    }
    for (std::string_view required : {"db", "name"}) {
        if (!options.has(required)) {
            return fail(err, "strategy: missing --" + std::string(required) +
                                 " (see 'tbverify strategy --help')");
        }
    }
    StrategyCheckOptions check;
    if (options.has("threads")) {
        const auto n = parse_number(options.get("threads"), 1, 1024);
        if (!n)
            return fail(err,
                        "bad --threads \"" + options.get("threads") + "\" (expected 1 to 1024)");
        check.threads = static_cast<int>(*n);
    }
    if (options.has("max-errors")) {
        const auto n = parse_number(options.get("max-errors"), 0, 1000000);
        if (!n) {
            return fail(err, "bad --max-errors \"" + options.get("max-errors") +
                                 "\" (expected 0 to 1000000)");
        }
        check.max_listed = static_cast<std::size_t>(*n);
    }
    const bool progress = &err == &std::cerr && isatty(STDERR_FILENO) != 0;
    if (progress) {
        check.progress = [&err](std::uint64_t entries) {
            err << "\r" << entries << " entries\033[K" << std::flush;
        };
    }
    const StrategyReport report = check_strategy(options.get("db"), options.get("name"), check);
    if (progress) err << "\r\033[K" << std::flush;
    if (options.has("json")) {
        print_json(out, report);
    } else if (report.database_error.empty()) {
        print_text(out, report);
    }
    out.flush();
    if (!report.database_error.empty()) {
        err << "tbverify: error: " << report.database_error << '\n';
        return kExitIo;
    }
    if (!out) {
        err << "tbverify: error: cannot write the output\n";
        return kExitIo;
    }
    return report.closed() ? kExitOk : kExitVerificationFailed;
}

}  // namespace tbf::verify::detail
