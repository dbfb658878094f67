#include "tbforge/gen/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tbforge/base/cli.hpp"
#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/gen/plan.hpp"
#include "tbforge/gen/strategy.hpp"
#include "tbforge/index/report.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/solve/cli.hpp"

namespace tbf::gen {

namespace {

constexpr std::string_view kProgram = "tbgen";

constexpr const char* kUsage =
    "usage: tbgen <command> [options]\n"
    "\n"
    "commands:\n"
    "  gen     build tables (and every sub-table they need) into a database\n"
    "  plan    the tables a request needs, with sizes and memory, as JSON or a workflow\n"
    "  merge   copy finished tables of other databases into one database\n"
    "  index   report index sizes of tables\n"
    "  perft   count leaf nodes of the move tree (move generator check)\n"
    "  strategy         extract a strategy database from tables\n"
    "  strategy-import  load a strategy database from FEN<TAB>uci-move text\n"
    "  solve   search a closed non-loss strategy of Four File from a position\n"
    "\n"
    "Run 'tbgen <command> --help' for the options of a command.\n"
    "Exit status: 0 success, 1 a check failed, 2 bad usage or input, 3 database or I/O error.\n";

// "antichess, antichess-fics, antichess-joint or fourfile": every variant of
// the traits table, so a new one appears in the help without an edit here.
std::string variant_choices() {
    std::string text;
    for (std::size_t i = 0; i < kVariantCount; ++i) {
        if (i > 0) text += i + 1 == kVariantCount ? " or " : ", ";
        text += kVariantTraits[i].name;
    }
    return text;
}

// The variants whose unit counts include the kings (a royal king is on
// every board, so --upto counts it).
std::string royal_king_variants() {
    std::string text;
    for (const VariantTraits& traits : kVariantTraits) {
        if (!traits.royal_king) continue;
        text += (text.empty() ? "" : ", ") + std::string(traits.name);
    }
    return text;
}

std::string perft_usage() {
    return "usage: tbgen perft --variant V --fen FEN --depth N [--divide]\n"
           "\n"
           "  --variant V   " + variant_choices() + "\n"
    "  --fen FEN     the root position\n"
    "  --depth N     plies to search\n"
    "  --divide      first print '<uci>: <count>' for each root move, sorted by move\n"
    "\n"
    "The last line of output is the node count.\n";
}

std::string gen_usage() {
    const std::string kings = royal_king_variants();
    return "usage: tbgen gen --variant V --db DIR [--threads N] [--memory SIZE --work DIR]\n"
    "                 [--tables-from DB]... [--encoding E] [--blocks-per-record N]\n"
    "                 [--pair-coding off|auto|always [--pair-tolerance P]] [--quiet] [--json]\n"
    "                 [--upto K] [TABLE...]\n"
    "\n"
    "  --variant V   " + variant_choices() + "\n"
    "  --db DIR      database directory (created if missing)\n"
    "  --upto K      every table with at most K units" + (kings.empty() ? "" : " (" + kings + ": kings included)") + "\n"
    "  TABLE...      tables by name, e.g. KQvR (either colour orientation); with --upto,\n"
    "                these as well\n"
    "  --threads N   worker threads (default: all cores)\n"
    "  --memory SIZE memory cap, e.g. 4G, 512M, 1MiB or bytes: tables that do not fit\n"
    "                are built out-of-core in the work directory (needs --work)\n"
    "  --work DIR    work directory of out-of-core builds (one subdirectory per table,\n"
    "                removed when the table is stored; a rerun resumes from it)\n"
    "  --tables-from DB  a database of finished tables, opened read-only (repeatable):\n"
    "                its tables are not built again and are read from there as\n"
    "                sub-tables, so one table can be built into a database of its own\n"
    "  --encoding E  value encoding of the tables built: wdl-dtc/1 (default),\n"
    "                wdl-dtc/2 (smaller: what a one-ply search gives back is not\n"
    "                stored, and the DTC of one side only; docs/values.md) or\n"
    "                wdl-dtc/3 (wdl-dtc/2 in the index order that stores smallest) or\n"
    "                wdl-dtc/4 (wdl-dtc/3; a table with the same units on both sides\n"
    "                stores one side to move, the other read from colour-swapped images)\n"
    "                or wdl-dtc/5 (wdl-dtc/4; every table stores one side to move, the\n"
    "                other's WDL and DTC by a one-ply search over it) or wdl-dtc/6\n"
    "                (wdl-dtc/5; a table with the same units on both sides stores its\n"
    "                wins' WDL alone, their DTC by a one-ply search) or wdl-dtc/7\n"
    "                (wdl-dtc/6; where one side has pawns alone, the other side's slots\n"
    "                of some pawn structures are valued by a two-ply search; cold probes\n"
    "                of those tables cost 2-5 times as much) or wdl-dtc/8 (wdl-dtc/7;\n"
    "                knights beside those pawns in tables with a pawn, and tables of\n"
    "                pawns alone on both sides; cold probes of the tables it changes\n"
    "                cost 2-9 times wdl-dtc/7's) or wdl-dtc/9 (wdl-dtc/8; each table\n"
    "                chooses the knights' colouring that stores smaller: smallest)\n"
    "  --blocks-per-record N  blocks stored in one record: 8 (default, storage\n"
    "                format 5; compact encodings: 8 to 256, chosen per table) or\n"
    "                another power of two up to 256; 1 writes format 2\n"
    "                (docs/storage-format.md sections 4 and 11)\n"
    "  --pair-coding M  off (default): zstd frames; always: blocks coded by a grammar\n"
    "                of value pairs and a Huffman code in 64-byte sub-blocks (storage\n"
    "                format 6), so that a probe without a cache decodes one sub-block\n"
    "                instead of a whole block (cold probes 1.5-4 times faster than with\n"
    "                zstd frames; a table 0.6-2.3 times zstd's bytes, 1.3 times over\n"
    "                the 4-unit set);\n"
    "                auto: pair-coded where that stores at most 10 % more than zstd\n"
    "                (docs/storage-format.md section 4)\n"
    "  --pair-tolerance P  with --pair-coding auto: pair-coded where that stores\n"
    "                at most P % more than zstd (default 10; 0 to 1000): more tables\n"
    "                with fast cold probes for more bytes\n"
    "  --quiet       no progress or per-table lines\n"
    "  --json        one JSON object per table, then a summary object\n"
    "\n"
    "Tables already complete in the database are not rebuilt, so an interrupted\n"
    "run resumes where it stopped.\n";
}

// --encoding, if given: a known value encoding.
std::optional<Result<std::string>> encoding_option(const cli::Command& command) {
    auto encoding = command.optional("encoding");
    if (!encoding) return std::nullopt;
    if (*encoding != probe::kValueEncoding && !probe::is_compact_encoding(*encoding)) {
        return Result<std::string>(invalid_argument("unknown --encoding \"" + *encoding + "\" (known: " +
                                                    probe::value_encoding_names() + ")"));
    }
    return Result<std::string>(*encoding);
}

std::string plan_usage() {
    const std::string kings = royal_king_variants();
    return "usage: tbgen plan --variant V [--format json|snakemake|make] [--memory SIZE]\n"
    "                  [--threads N] [--db DIR] [--encoding E] [--upto K] [TABLE...]\n"
    "\n"
    "  --variant V   " + variant_choices() + "\n"
    "  --upto K      every table with at most K units" + (kings.empty() ? "" : " (" + kings + ": kings included)") + "\n"
    "  TABLE...      tables by name, e.g. KQvR (either colour orientation); with --upto,\n"
    "                these as well\n"
    "  --format F    json (default): one object, every table after its sub-tables, with\n"
    "                slots, memory and sub-tables (docs/generation.md); snakemake or make:\n"
    "                a workflow of one job per table and a final merge\n"
    "  --memory SIZE the cap the jobs get (tbgen gen --memory): tables above it are\n"
    "                planned out-of-core, with the memory that takes\n"
    "  --threads N   threads of a job on a table of 2^20 slots or more (default: this\n"
    "                machine's cores); smaller tables get one\n"
    "  --db DIR      the database the tables go to: tables complete there get no job\n"
    "  --encoding E  value encoding the jobs build with (tbgen gen --encoding): wdl-dtc/1\n"
    "                (default), wdl-dtc/2, wdl-dtc/3, wdl-dtc/4, wdl-dtc/5, wdl-dtc/6,\n"
    "                wdl-dtc/7, wdl-dtc/8 or wdl-dtc/9,\n"
    "                whose sub-tables take 3 bits a slot, not 2\n";
}

constexpr const char* kMergeUsage =
    "usage: tbgen merge --db DIR [--quiet] [--json] SOURCE_DB...\n"
    "\n"
    "Copies every table of the source databases (opened read-only, left as they are)\n"
    "into DIR (created if missing), each table in one atomic step: a merge killed at\n"
    "any moment leaves each table complete or absent, and a rerun finishes it.\n"
    "A table already there with the same values checksum is skipped. One with the\n"
    "same name but another checksum, variant, size or encoding is a conflict: the\n"
    "merge stops before copying anything (exit 1).\n"
    "  --json        one JSON object per table, then a summary object\n"
    "\n"
    "Exit status: 0 merged, 1 conflicting tables, 2 bad usage, 3 database or I/O error.\n";

constexpr const char* kIndexUsage =
    "usage: tbgen index --variant V TABLE... [--json]\n"
    "\n"
    "Prints per table the number of slots N, the valid positions per side to move\n"
    "(counted by decoding every slot) and the ratio slots/valid.\n";

#define TBF_TRY(var, expr)          \
    auto var = (expr);               \
    if (!var.ok()) return var.status()

Result<VariantId> variant_option(const cli::Command& command) {
    TBF_TRY(name, command.required("variant"));
    auto id = parse_variant(*name);
    if (!id) {
        return invalid_argument("unknown variant '" + *name + "' (known: " +
                                std::string(variant_list()) + ")");
    }
    return *id;
}

Status run_perft(const std::vector<std::string>& argv) {
    cli::Command command(perft_usage());
    for (const char* name : {"variant", "fen", "depth"}) command.value(name);
    command.flag("divide");
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    TBF_TRY(fen, command.required("fen"));
    TBF_TRY(pos, parse_fen(*fen, *variant));
    if (!command.has("depth")) return invalid_argument("missing --depth");
    TBF_TRY(depth, command.number("depth", 0, 64));
    const int d = static_cast<int>(**depth);
    if (command.flag_set("divide") && d >= 1) {
        auto counts = perft_divide(*pos, *variant, d);
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
        std::cout << perft(*pos, *variant, d) << '\n';
    }
    return {};
}

Result<std::vector<index::Material>> table_arguments(const cli::Command& command, VariantId variant) {
    std::vector<index::Material> tables;
    TBF_TRY(upto, command.number("upto", 2, 6));
    // Both given: the union (every table up to K units and the named ones).
    if (*upto) tables = index::enumerate_tables(variant, static_cast<int>(**upto));
    for (const auto& name : command.positional()) {
        TBF_TRY(m, index::parse_table(name, variant));
        tables.push_back(index::canonical(*m));
    }
    if (tables.empty()) return invalid_argument("no tables given (use --upto K or TABLE...)");
    return tables;
}

Result<int> threads_option(const cli::Command& command, int fallback) {
    TBF_TRY(threads, command.number("threads", 1, 1024));
    return *threads ? static_cast<int>(**threads) : fallback;
}

Json table_json(const gen::TableSummary& t) {
    Json line{{"table", t.name},       {"built", t.built},     {"positions", t.positions},
              {"bytes", t.stored_bytes}, {"max_dtc", t.max_dtc}, {"seconds", t.seconds},
              {"out_of_core", t.out_of_core}};
    if (t.out_of_core) {
        line["resumed"] = t.resumed;
        line["chunks"] = t.chunks;
        line["bytes_read"] = t.bytes_read;
        line["bytes_written"] = t.bytes_written;
        line["crossing_fraction"] = t.crossing_fraction;
        line["sparse_from_level"] = t.sparse_level;
        line["split_visits"] = t.split_visits;
        line["phases"] = Json{{"initial", t.phases.initial},   {"levels", t.phases.levels},
                              {"sparse", t.phases.sparse},     {"write_back", t.phases.write_back},
                              {"store", t.phases.store}};
    } else if (t.built) {
        line["phases"] = Json{{"initial", t.phases.initial},
                              {"levels", t.phases.levels},
                              {"renumber", t.phases.renumber},
                              {"store", t.phases.store}};
        if (t.phases.order > 0) line["phases"]["order"] = t.phases.order;
    }
    return line;
}

// The database opened read-write.
Result<storage::Database> open_for_writing(const std::string& dir, bool create) {
    storage::DatabaseOptions options;
    options.mode = storage::OpenMode::ReadWrite;
    options.create_if_missing = create;
    auto db = storage::Database::open(dir, options);
    if (!db.ok()) {
        return Status(db.status().code() == StatusCode::InvalidArgument ? StatusCode::IoError
                                                                         : db.status().code(),
                      "cannot open database " + dir + ": " + db.status().to_string());
    }
    return std::move(*db);
}

Status run_gen(const std::vector<std::string>& argv) {
    cli::Command command(gen_usage());
    for (const char* name : {"variant", "db", "threads", "upto", "memory", "work", "encoding",
                             "blocks-per-record", "pair-coding", "pair-tolerance"}) {
        command.value(name);
    }
    command.values("tables-from");
    for (const char* name : {"quiet", "json"}) command.flag(name);
    command.positionals();
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    TBF_TRY(dir, command.required("db"));
    TBF_TRY(tables, table_arguments(command, *variant));
    gen::GenerateOptions options;
    const auto& from = command.all("tables-from");
    for (const std::string& path : from) {
        // Sub-tables probed through the block cache (out-of-core builds)
        // share tbgen's 256 MiB among the sources.
        probe::TablebaseOptions source_options;
        source_options.cache_bytes = std::max((std::size_t{256} << 20) / from.size(), std::size_t{8} << 20);
        auto source = probe::Tablebase::open(path, source_options);
        if (!source.ok()) return source.status().with_context("--tables-from " + path);
        options.sources.push_back(std::make_shared<const probe::Tablebase>(std::move(*source)));
    }
    TBF_TRY(threads, threads_option(command, options.threads));
    options.threads = *threads;
    TBF_TRY(memory, command.byte_size("memory"));
    if (*memory) {
        if (**memory == 0) return invalid_argument("bad --memory \"0\" (e.g. 4G, 4GiB, 512M, 1048576)");
        options.memory_bytes = **memory;
        auto work = command.optional("work");
        if (!work || work->empty()) return invalid_argument("--memory needs --work DIR");
        options.work_dir = *work;
    } else if (command.has("work")) {
        return invalid_argument("--work is only used with --memory");
    }
    if (auto encoding = encoding_option(command)) {
        if (!encoding->ok()) return encoding->status();
        options.value_encoding = **encoding;
    }
    TBF_TRY(group, command.number("blocks-per-record", 1, 256));
    if (*group) {
        if (!std::has_single_bit(**group)) {
            return invalid_argument("bad --blocks-per-record " + std::to_string(**group) +
                                    " (a power of two from 1 to 256)");
        }
        options.blocks_per_record = static_cast<std::uint32_t>(**group);
    }
    if (auto pairs = command.optional("pair-coding")) {
        if (*pairs == "off") {
            options.pair_coding = storage::PairCoding::Off;
        } else if (*pairs == "auto") {
            options.pair_coding = storage::PairCoding::Auto;
        } else if (*pairs == "always") {
            options.pair_coding = storage::PairCoding::Always;
        } else {
            return invalid_argument("bad --pair-coding \"" + *pairs + "\" (off, auto or always)");
        }
        if (options.pair_coding != storage::PairCoding::Off && options.blocks_per_record == 1) {
            return invalid_argument("--pair-coding needs more than one block a record");
        }
    }
    TBF_TRY(tolerance, command.number("pair-tolerance", 0, 1000));
    if (*tolerance) {
        if (options.pair_coding != storage::PairCoding::Auto) {
            return invalid_argument("--pair-tolerance is only used with --pair-coding auto");
        }
        options.pair_size_tolerance = static_cast<double>(**tolerance) / 100.0;
    }
    const bool quiet = command.flag_set("quiet");
    const bool json = command.flag_set("json");
    options.progress = !quiet && isatty(STDERR_FILENO);

    TBF_TRY(db, open_for_writing(*dir, true));
    probe::Tablebase tablebase(std::move(*db));
    const auto start = std::chrono::steady_clock::now();
    auto on_table = [&](const gen::TableSummary& t) {
        if (json) {
            Json line = table_json(t);
            if (!t.source.empty()) line["source"] = t.source;
            std::cout << to_json_line(line) << std::endl;
        } else if (!quiet && t.built) {
            std::printf("%-28s %12llu positions  max DTC %4d  %10llu bytes  %7.2f s\n", t.name.c_str(),
                        static_cast<unsigned long long>(t.positions), t.max_dtc,
                        static_cast<unsigned long long>(t.stored_bytes), t.seconds);
            std::fflush(stdout);
        }
    };
    TBF_TRY(summaries, gen::generate(tablebase, *variant, *tables, options, on_table));
    std::uint64_t built = 0, positions = 0, bytes = 0;
    for (const auto& t : *summaries) {
        built += t.built;
        positions += t.positions;
        bytes += t.stored_bytes;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
        const Json summary{{"tables", summaries->size()}, {"built", built},     {"positions", positions},
                           {"bytes", bytes},             {"seconds", seconds}};
        std::cout << to_json_line(Json{{"summary", summary}}) << '\n';
    } else if (!quiet) {
        std::printf("%zu tables (%llu built, %llu already present), %llu positions, %.1f s, %llu bytes\n",
                    summaries->size(), static_cast<unsigned long long>(built),
                    static_cast<unsigned long long>(summaries->size() - built),
                    static_cast<unsigned long long>(positions), seconds, static_cast<unsigned long long>(bytes));
    }
    return {};
}

Status run_plan(const std::vector<std::string>& argv) {
    cli::Command command(plan_usage());
    for (const char* name : {"variant", "upto", "format", "memory", "threads", "db", "encoding"}) command.value(name);
    command.positionals();
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    TBF_TRY(tables, table_arguments(command, *variant));
    gen::PlanFormat format = gen::PlanFormat::Json;
    if (auto text = command.optional("format")) {
        if (*text == "snakemake") {
            format = gen::PlanFormat::Snakemake;
        } else if (*text == "make") {
            format = gen::PlanFormat::Make;
        } else if (*text != "json") {
            return invalid_argument("--format must be json, snakemake or make, not '" + *text + "'");
        }
    }
    gen::PlanOptions options;
    TBF_TRY(memory, command.byte_size("memory"));
    if (*memory) {
        if (**memory == 0) return invalid_argument("bad --memory \"0\" (e.g. 4G, 4GiB, 512M, 1048576)");
        options.memory_bytes = **memory;
    }
    TBF_TRY(threads, threads_option(command, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))));
    options.threads = *threads;
    if (auto encoding = encoding_option(command)) {
        if (!encoding->ok()) return encoding->status();
        options.value_encoding = **encoding;
    }
    std::optional<storage::Database> existing;
    if (auto dir = command.optional("db")) {
        storage::DatabaseOptions db_options;
        db_options.block_cache_bytes = 0;
        auto db = storage::Database::open(*dir, db_options);
        if (!db.ok()) return db.status().with_context("--db " + *dir);
        existing.emplace(std::move(*db));
        options.existing = &*existing;
    }
    TBF_TRY(plan, gen::plan_tables(*variant, *tables, options));
    std::cout << gen::render_plan(*plan, format);
    std::cout.flush();
    if (!std::cout) return io_error("cannot write the plan to stdout");
    return {};
}

// A database created under a temporary name and renamed when it is one: a
// merge killed while creating its target leaves no half-made directory that
// a rerun would refuse as "not a tbforge database".
Result<storage::Database> open_or_create_whole(const std::string& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
        const std::string staging = dir + ".creating";
        std::filesystem::remove_all(staging, ec);
        {
            TBF_TRY(fresh, open_for_writing(staging, true));
        }
        std::filesystem::rename(staging, dir, ec);
        if (ec) return io_error("cannot rename " + staging + " to " + dir + ": " + ec.message());
    }
    return open_for_writing(dir, false);
}

Status run_merge(const std::vector<std::string>& argv) {
    cli::Command command(kMergeUsage);
    command.value("db");
    for (const char* name : {"quiet", "json"}) command.flag(name);
    command.positionals();
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(dir, command.required("db"));
    if (command.positional().empty()) return invalid_argument("no source databases given");
    const bool json = command.flag_set("json");
    const bool quiet = command.flag_set("quiet");
    // A missing source is reported before the target is created.
    for (const std::string& source : command.positional()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(source, ec)) {
            return Status(StatusCode::NotFound, "source database " + source + " does not exist");
        }
    }
    TBF_TRY(db, open_or_create_whole(*dir));
    std::uint64_t copied = 0, skipped = 0, bytes = 0;
    const auto start = std::chrono::steady_clock::now();
    auto on_table = [&](const gen::MergedTable& t) {
        (t.copied ? copied : skipped) += 1;
        if (t.copied) bytes += t.stored_bytes;
        if (json) {
            char checksum[17];
            std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(t.values_checksum));
            const Json line{{"table", t.name},       {"source", t.source}, {"copied", t.copied},
                            {"checksum", checksum},  {"bytes", t.stored_bytes}};
            std::cout << to_json_line(line) << std::endl;
        }
    };
    TBF_TRY(merged, gen::merge_databases(*db, command.positional(), on_table));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
        const Json summary{{"tables", merged->size()}, {"copied", copied}, {"skipped", skipped},
                           {"bytes", bytes},            {"seconds", rounded_seconds(seconds)}};
        std::cout << to_json_line(Json{{"summary", summary}}) << '\n';
    } else if (!quiet) {
        std::printf("%llu tables copied (%llu bytes), %llu already present, %.1f s\n",
                    static_cast<unsigned long long>(copied), static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(skipped), seconds);
    }
    return {};
}

Status run_index(const std::vector<std::string>& argv) {
    cli::Command command(kIndexUsage);
    command.value("variant");
    command.flag("json");
    command.positionals();
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    if (command.positional().empty()) return invalid_argument("no tables given");
    for (const auto& name : command.positional()) {
        TBF_TRY(report, index::index_report(*variant, name));
        std::cout << (command.flag_set("json") ? index::to_json(*report) : index::to_text(*report)) << std::endl;
    }
    return {};
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

Result<Color> side_option(const std::string& text) {
    if (text == "white") return Color::White;
    if (text == "black") return Color::Black;
    return invalid_argument("--side must be white or black, not '" + text + "'");
}

Status run_strategy(const std::vector<std::string>& argv) {
    cli::Command command(kStrategyUsage);
    for (const char* name : {"db", "variant", "fen", "name", "side", "threads"}) command.value(name);
    for (const char* name : {"replace", "quiet", "json"}) command.flag(name);
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    TBF_TRY(dir, command.required("db"));
    TBF_TRY(fen, command.required("fen"));
    gen::ExtractOptions options;
    TBF_TRY(name, command.required("name"));
    options.name = *name;
    if (auto side = command.optional("side")) {
        TBF_TRY(color, side_option(*side));
        options.side = *color;
    }
    options.replace = command.flag_set("replace");
    TBF_TRY(threads, threads_option(command, options.threads));
    options.threads = *threads;
    const bool json = command.flag_set("json");
    if (!command.flag_set("quiet") && isatty(STDERR_FILENO)) {
        options.progress = [](const gen::ExtractProgress& p) {
            std::fprintf(stderr, "\r%llu entries, %llu pending\033[K",
                         static_cast<unsigned long long>(p.entries), static_cast<unsigned long long>(p.pending));
        };
    }
    TBF_TRY(db, open_for_writing(*dir, false));
    probe::Tablebase tablebase(std::move(*db));
    auto result = gen::extract_strategy(tablebase, *variant, *fen, options);
    if (options.progress) std::fprintf(stderr, "\r\033[K");
    if (!result.ok()) return result.status();
    const auto& s = *result;
    const char* kind = s.kind == storage::StrategyKind::Winning ? "winning" : "non-loss";
    const char* side = s.side == Color::White ? "white" : "black";
    if (json) {
        const Json line{{"strategy", options.name}, {"variant", variant_name(*variant)},
                        {"side", side},             {"kind", kind},
                        {"root_dtc", s.root_value.dtc}, {"entries", s.entries},
                        {"entry_bytes", s.entry_bytes}, {"replies", s.replies},
                        {"seconds", s.seconds}};
        std::cout << to_json_line(line) << '\n';
    } else if (!command.flag_set("quiet")) {
        std::printf("%s: %s strategy for %s (root %s%s), %llu entries, %llu bytes, %.2f s\n",
                    options.name.c_str(), kind, side, s.kind == storage::StrategyKind::Winning ? "win in " : "draw",
                    s.kind == storage::StrategyKind::Winning ? std::to_string(s.root_value.dtc).c_str() : "",
                    static_cast<unsigned long long>(s.entries), static_cast<unsigned long long>(s.entry_bytes),
                    s.seconds);
    }
    return {};
}

Status run_strategy_import(const std::vector<std::string>& argv) {
    cli::Command command(kStrategyImportUsage);
    for (const char* name : {"db", "variant", "name", "side", "kind"}) command.value(name);
    command.values("root");
    for (const char* name : {"replace", "quiet"}) command.flag(name);
    command.positionals();
    TBF_TRY(parsed, command.parse(argv, std::cout));
    if (!*parsed) return {};
    TBF_TRY(variant, variant_option(command));
    TBF_TRY(dir, command.required("db"));
    gen::ImportOptions options;
    TBF_TRY(name, command.required("name"));
    options.name = *name;
    TBF_TRY(side_text, command.required("side"));
    TBF_TRY(side, side_option(*side_text));
    options.side = *side;
    options.roots = command.all("root");
    if (options.roots.empty()) return invalid_argument("missing --root");
    if (auto kind = command.optional("kind")) {
        auto parsed_kind = storage::parse_strategy_kind(*kind);
        if (!parsed_kind) return invalid_argument("--kind must be non-loss or winning, not '" + *kind + "'");
        options.kind = *parsed_kind;
    }
    options.replace = command.flag_set("replace");
    if (command.positional().size() != 1) return invalid_argument("give exactly one input FILE ('-' for stdin)");
    const std::string file = command.positional()[0];
    options.source = file;
    std::ifstream input;
    if (file != "-") {
        input.open(file, std::ios::binary);
        if (!input) return invalid_argument("cannot read " + file);
    }
    TBF_TRY(db, open_for_writing(*dir, true));
    auto result = gen::import_strategy(*db, *variant, file == "-" ? std::cin : input, options);
    if (!result.ok()) return result.status().with_context(file == "-" ? "stdin" : file);
    const auto& s = *result;
    if (!command.flag_set("quiet")) {
        std::printf("%s: %llu entries from %llu lines (%llu duplicates)\n", options.name.c_str(),
                    static_cast<unsigned long long>(s.entries), static_cast<unsigned long long>(s.lines),
                    static_cast<unsigned long long>(s.duplicates));
    }
    return {};
}

#undef TBF_TRY

}  // namespace

int run_cli(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? kExitUsage : kExitOk;
    }
    const std::string command = args[0];
    if (command == "solve") return solve::run_cli(argc - 1, argv + 1);
    args.erase(args.begin());
    Status status;
    if (command == "perft") {
        status = run_perft(args);
    } else if (command == "gen") {
        status = run_gen(args);
    } else if (command == "plan") {
        status = run_plan(args);
    } else if (command == "merge") {
        status = run_merge(args);
    } else if (command == "index") {
        status = run_index(args);
    } else if (command == "strategy") {
        status = run_strategy(args);
    } else if (command == "strategy-import") {
        status = run_strategy_import(args);
    } else {
        status = invalid_argument("unknown command '" + command + "' (see tbgen --help)");
    }
    return report(std::cerr, kProgram, status);
}

}  // namespace tbf::gen
