// `tbverify tables`: choose the tables, check each, print one report per
// table and a summary, and turn the outcome into an exit code.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli_support.hpp"
#include "tbforge/verify/cli.hpp"
#include "tbforge/verify/tables.hpp"

namespace tbf::verify::detail {
namespace {

constexpr std::string_view kTablesUsage =
    "Usage: tbverify tables --db DIR [--variant V] [TABLE...] [--threads N] [--json]\n"
    "                       [--memory SIZE] [--sample N [--seed S]] [--max-errors N]\n"
    "\n"
    "Re-derives every stored value of each table with tbverify's own move\n"
    "generator: a position's value must equal the minimax of its moves\n"
    "(docs/ARCHITECTURE.md section 4), the children valued through the probe API. Also\n"
    "checks that slots holding no position store a draw, the values checksum,\n"
    "the slot count and the generator's statistics.\n"
    "\n"
    "Options:\n"
    "  --db DIR        the database directory (opened read-only)\n"
    "  --variant V     only tables of this variant; lets TABLE omit it\n"
    "  TABLE...        tables to check, e.g. antichess/KQvR, or KQvR with --variant\n"
    "                  (either colour orientation); default: every table\n"
    "  --threads N     worker threads (default: all cores)\n"
    "  --memory SIZE   bound on the memory holding values (e.g. 4G, 512M; default:\n"
    "                  half of physical memory); a larger table is checked a\n"
    "                  window at a time\n"
    "  --sample N      check N positions per table drawn uniformly at random\n"
    "                  instead of all (the checksum and statistics are not checked)\n"
    "  --seed S        seed of the random sample (default 1)\n"
    "  --max-errors N  wrong positions listed per table (default 10)\n"
    "  --json          one JSON object per table, then a summary object\n"
    "  --help          print this help\n"
    "\n"
    "Exit codes: 0 every check holds, 1 a check failed, 2 bad command line,\n"
    "3 database error (missing table or sub-table, corrupt block, I/O).\n";

bool is_material(std::string_view s) {
    const std::size_t v = s.find('v');
    if (v == std::string_view::npos || v == 0 || v + 1 == s.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i != v && std::string_view("KQRBNP").find(s[i]) == std::string_view::npos) {
            return false;
        }
    }
    return true;
}

// Rounded to whole positions: a rate, not a count.
std::uint64_t positions_per_second(std::uint64_t positions, double seconds) {
    return seconds > 0 ? static_cast<std::uint64_t>(static_cast<double>(positions) / seconds + 0.5)
                       : 0;
}

Json json_value(const std::optional<DtcValue>& v) {
    if (!v) return nullptr;
    return Json{{"category", wdl_name(v->wdl)}, {"dtc", v->dtc}};
}

void print_json(std::ostream& out, const TableReport& r) {
    Json line{{"table", r.name},         {"variant", r.variant},     {"slots", r.slots},
              {"sampled", r.sampled},    {"positions", r.positions}, {"errors", r.errors},
              {"first_errors", Json::array()}};
    for (const PositionError& e : r.first_errors) {
        line["first_errors"].push_back(Json{{"slot", e.slot},
                                            {"fen", e.fen.empty() ? Json(nullptr) : Json(e.fen)},
                                            {"stored", json_value(e.stored)},
                                            {"derived", json_value(e.derived)},
                                            {"message", e.message}});
    }
    line["checksum_ok"] = r.checksum_ok ? Json(*r.checksum_ok) : Json(nullptr);
    line["metadata_errors"] = r.metadata_errors;
    if (!r.database_error.empty()) line["database_error"] = r.database_error;
    line["seconds"] = rounded_seconds(r.seconds);
    line["positions_per_second"] = positions_per_second(r.positions, r.seconds);
    line["ok"] = r.ok();
    out << to_json_line(line) << '\n';
}

void print_text(std::ostream& out, const TableReport& r) {
    out << r.name << ": ";
    if (!r.database_error.empty()) {
        out << "not verified (database error)\n";
        return;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", r.seconds);
    out << r.positions << (r.sampled ? " sampled" : "") << " positions, " << r.errors
        << (r.errors == 1 ? " error, " : " errors, ")
        << (r.checksum_ok ? (*r.checksum_ok ? "checksum ok" : "CHECKSUM MISMATCH")
                          : "checksum not checked")
        << " (" << seconds << " s, " << positions_per_second(r.positions, r.seconds)
        << " positions/s";
    // A table checked a window at a time under --memory says so.
    if (r.windows > 2) out << ", " << r.windows << " windows, " << r.blocks_read << " blocks read";
    out << ")\n";
    for (const PositionError& e : r.first_errors) {
        out << "  error: " << (e.fen.empty() ? "slot " + std::to_string(e.slot) : e.fen) << ": "
            << e.message << '\n';
    }
    if (r.errors > r.first_errors.size()) {
        out << "  ... and " << r.errors - r.first_errors.size() << " more\n";
    }
    for (const std::string& m : r.metadata_errors) out << "  metadata error: " << m << '\n';
}

}  // namespace

Status run_tables(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    cli::Command options{std::string(kTablesUsage)};
    for (const char* name : {"db", "variant", "threads", "memory", "sample", "seed", "max-errors"}) {
        options.value(name);
    }
    options.flag("json");
    options.positionals();
    auto parsed = parse_command(options, "tables", args, out);
    if (!parsed.ok() || !*parsed) return parsed.status();
    if (!options.has("db")) return invalid_argument("tables: missing --db (see 'tbverify tables --help')");

    TableCheckOptions check;
    std::optional<Variant> variant;
    if (options.has("variant")) {
        variant = variant_from_name(options.get("variant"));
        if (!variant) {
            return invalid_argument("unknown variant \"" + options.get("variant") +
                                    "\" (expected antichess, antichess-fics, antichess-joint or "
                                    "fourfile)");
        }
    }
    const auto number = [&](std::string_view name, std::uint64_t min, std::uint64_t max,
                            auto& target) -> Status {
        auto n = options.number(name, min, max);
        if (!n.ok()) return n.status();
        if (*n) target = static_cast<std::remove_reference_t<decltype(target)>>(**n);
        return {};
    };
    int threads = 0;
    for (Status s : {number("threads", 1, 1024, threads),
                     number("sample", 1, std::uint64_t{1} << 62, check.sample),
                     number("seed", 0, ~std::uint64_t{0}, check.seed),
                     number("max-errors", 0, 1000000, check.max_listed_errors)}) {
        if (!s.ok()) return s;
    }
    auto memory = options.byte_size("memory");
    if (!memory.ok()) return memory.status();
    if (*memory) {
        if (**memory < (std::uint64_t{1} << 16)) {
            return invalid_argument("bad --memory \"" + options.get("memory") +
                                    "\" (at least 64K)");
        }
        check.memory_bytes = **memory;
    }
    if (options.has("seed") && !options.has("sample")) {
        return invalid_argument("tables: --seed needs --sample");
    }
    check.threads = threads;

    // Requested names as "variant/material", checked for syntax before the
    // database is opened.
    std::vector<std::string> requested;
    for (const std::string& arg : options.positional()) {
        const std::size_t slash = arg.find('/');
        std::string name = arg;
        if (slash == std::string::npos) {
            if (!variant) {
                return invalid_argument("table \"" + arg + "\" needs a variant: write antichess/" +
                                        arg + " or give --variant");
            }
            name = std::string(variant_name(*variant)) + "/" + arg;
        } else {
            const auto named = variant_from_name(std::string_view(arg).substr(0, slash));
            if (!named) return invalid_argument("unknown variant in table name \"" + arg + "\"");
            if (variant && *named != *variant) {
                return invalid_argument("table \"" + arg + "\" is not of variant " +
                                        std::string(variant_name(*variant)));
            }
        }
        if (!is_material(std::string_view(name).substr(name.find('/') + 1))) {
            return invalid_argument("bad table name \"" + arg + "\" (expected e.g. KQvR)");
        }
        requested.push_back(name);
    }

    auto db = TableDatabase::open(options.get("db"));
    if (!db.ok()) return db.status();
    const std::vector<TableListing> listed = db->tables();

    std::vector<std::string> names;
    if (requested.empty()) {
        for (const TableListing& t : listed) {
            if (!variant || t.variant == variant_name(*variant)) names.push_back(t.name);
        }
        if (names.empty()) {
            return io_error("no " + (variant ? std::string(variant_name(*variant)) + " " : "") +
                            "tables in database " + options.get("db"));
        }
    }
    for (const std::string& name : requested) {
        // The database holds one colour orientation of each material.
        const std::size_t slash = name.find('/');
        const std::string material = name.substr(slash + 1);
        const std::size_t v = material.find('v');
        const std::string swapped =
            name.substr(0, slash + 1) + material.substr(v + 1) + "v" + material.substr(0, v);
        std::string found;
        for (const TableListing& t : listed) {
            if (t.name == name || t.name == swapped) found = t.name;
        }
        if (found.empty()) return not_found("table " + name + " is not in database " + options.get("db"));
        // A table named twice (e.g. in both orientations) is checked once.
        if (std::find(names.begin(), names.end(), found) == names.end()) names.push_back(found);
    }

    const bool json = options.flag_set("json");
    const bool progress = &err == &std::cerr && isatty(STDERR_FILENO) != 0;
    // The current table's start, for its rate and time left.
    auto table_start = std::chrono::steady_clock::now();
    if (progress) {
        check.progress = [&err, &table_start](const TableCheckProgress& p) {
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - table_start)
                    .count();
            const double rate = seconds > 0 ? static_cast<double>(p.positions) / seconds : 0.0;
            const double share =
                p.total ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
            char eta[32] = "-";
            if (share > 0 && share < 1) {
                const auto left = static_cast<long long>(seconds * (1 - share) / share);
                std::snprintf(eta, sizeof eta, "%lld:%02lld:%02lld", left / 3600, left / 60 % 60,
                              left % 60);
            }
            char line[200];
            std::snprintf(line, sizeof line,
                          "\r%.*s  %5.1f%%  %llu positions  %.0f positions/s  ETA %s\033[K",
                          static_cast<int>(p.table.size()), p.table.data(), 100.0 * share,
                          static_cast<unsigned long long>(p.positions), rate, eta);
            err << line << std::flush;
        };
    }

    const auto start = std::chrono::steady_clock::now();
    std::uint64_t positions = 0;
    std::uint64_t errors = 0;
    std::size_t failed = 0;
    std::size_t database_errors = 0;
    for (const std::string& name : names) {
        table_start = std::chrono::steady_clock::now();
        const TableReport report = db->check(name, check);
        if (progress) err << "\r\033[K" << std::flush;
        positions += report.positions;
        errors += report.errors;
        if (!report.database_error.empty()) {
            ++database_errors;
            err << "tbverify: error: " << name << ": " << report.database_error << '\n';
        } else if (!report.ok()) {
            ++failed;
        }
        if (json) {
            print_json(out, report);
        } else {
            print_text(out, report);
        }
        out.flush();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = failed == 0 && database_errors == 0;
    char rate[64];
    if (json) {
        const Json summary{{"tables", names.size()},        {"positions", positions},
                           {"errors", errors},              {"failed_tables", failed},
                           {"database_errors", database_errors},
                           {"seconds", rounded_seconds(seconds)},
                           {"positions_per_second", positions_per_second(positions, seconds)},
                           {"ok", ok}};
        out << to_json_line(Json{{"summary", summary}}) << '\n';
    } else {
        std::snprintf(rate, sizeof rate, "%.1f s, %.0f positions/s", seconds,
                      seconds > 0 ? static_cast<double>(positions) / seconds : 0.0);
        out << names.size() << (names.size() == 1 ? " table, " : " tables, ") << positions
            << " positions, " << errors << (errors == 1 ? " error" : " errors") << " (" << rate
            << "): ";
        if (ok) {
            out << "all verified\n";
        } else {
            out << failed + database_errors << " of " << names.size() << " tables FAILED\n";
        }
    }
    out.flush();
    if (!out) return io_error("cannot write the output");
    // Each table's database error is already on the error stream.
    if (database_errors > 0) return already_reported(StatusCode::IoError);
    return ok ? Status() : already_reported(StatusCode::CheckFailed);
}

}  // namespace tbf::verify::detail
