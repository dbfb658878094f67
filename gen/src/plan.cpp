// tbgen plan: the tables a request needs, their sizes and memory, as JSON or
// as a Snakemake or Make workflow of one job per table.

#include "tbforge/gen/plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "out_of_core.hpp"
#include "table_build.hpp"
#include "wdl_table.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"

namespace tbf::gen {

namespace {

struct Sizes {
    std::uint64_t slots = 0;
    std::uint64_t work_slots = 0;
};

// Index sizes, each indexer built once.
class SizeCache {
public:
    explicit SizeCache(VariantId variant) : variant_(variant) {}
    Result<Sizes> get(const index::Material& m) {
        auto it = sizes_.find(m);
        if (it != sizes_.end()) return it->second;
        auto indexer = index::Indexer::create(variant_, m);
        if (!indexer.ok()) return indexer.status();
        Sizes sizes{indexer->size(), 0};
        if (auto work = work_index_for(*indexer)) sizes.work_slots = work->size();
        sizes_.emplace(m, sizes);
        return sizes;
    }

private:
    VariantId variant_;
    std::map<index::Material, Sizes> sizes_;
};

std::uint64_t reserve_for(const MemoryPlan& memory, std::uint64_t slots, std::uint64_t cap) {
    if (!memory.out_of_core) {
        return memory.in_ram_bytes + memory.in_ram_bytes / kEstimateMarginDivisor + kProcessOverheadBytes;
    }
    // docs/generation.md, "Memory": the cap's share, the block cache when the
    // sub-tables are probed through it, one chunk side of values (2 bytes a
    // slot) while the table is stored.
    return cap + (memory.resident_subtables ? 0 : kSubtableCacheBytes) +
           2 * chunk_slots_for(memory.state_bytes, slots) + kProcessOverheadBytes;
}

}  // namespace

Result<Plan> plan_tables(VariantId variant, const std::vector<index::Material>& requested,
                         const PlanOptions& options) {
    Plan plan;
    plan.variant = variant;
    plan.options = options;
    plan.options.threads = std::max(1, options.threads);
    for (const auto& m : requested) {
        if (auto error = index::material_error(m, variant)) return invalid_argument(*error);
        const index::Material c = index::canonical(m);
        if (std::find(plan.requested.begin(), plan.requested.end(), c) == plan.requested.end()) {
            plan.requested.push_back(c);
        }
    }
    if (plan.requested.empty()) return invalid_argument("no tables requested");
    const std::vector<index::Material> closure = index::dependency_order(variant, plan.requested);

    std::set<index::Material> present;
    // Tables held at wdl-dtc/2 as sub-tables: those the plan builds so, and
    // those the database already holds so.
    std::set<index::Material> compact;
    if (options.existing != nullptr) {
        for (const auto& m : closure) {
            auto info = options.existing->table_info(probe::table_name(variant, m));
            if (info.ok()) {
                present.insert(m);
                if (probe::is_compact_encoding(info->spec.value_encoding)) compact.insert(m);
            } else if (info.status().code() != StatusCode::NotFound) {
                return info.status().with_context("reading " + options.existing->path());
            }
        }
    }
    // What is needed: the request, and the sub-tables of every needed table
    // that is not present.
    std::set<index::Material> needed;
    std::vector<index::Material> stack(plan.requested.begin(), plan.requested.end());
    while (!stack.empty()) {
        const index::Material m = stack.back();
        stack.pop_back();
        if (!needed.insert(m).second || present.contains(m)) continue;
        for (const auto& sub : index::sub_tables(m, variant)) stack.push_back(sub);
    }

    SizeCache sizes(variant);
    std::map<index::Material, int> levels;
    for (const auto& m : closure) {  // each table after its sub-tables
        const auto subs = index::sub_tables(m, variant);
        int level = 0;
        for (const auto& sub : subs) level = std::max(level, levels.at(sub) + 1);
        levels[m] = level;
        if (!needed.contains(m)) continue;
        PlannedTable t;
        t.material = m;
        t.name = probe::table_name(variant, m);
        t.sub_tables = subs;
        t.level = level;
        t.present = present.contains(m);
        auto own = sizes.get(m);
        if (!own.ok()) return own.status();
        t.slots = own->slots;
        t.work_slots = own->work_slots;
        std::uint64_t subtable_bytes = 0;
        for (const auto& sub : subs) {
            auto s = sizes.get(sub);
            if (!s.ok()) return s.status();
            const bool sub_compact = present.contains(sub) ? compact.contains(sub)
                                                           : probe::is_compact_encoding(options.value_encoding);
            // as generate counts them
            subtable_bytes += WdlTable::bytes_for(2 * s->slots, sub_compact) + 2 * WdlTable::map_bytes(sub.total(), sub_compact);
        }
        t.memory = plan_memory(t.slots, subtable_bytes, options.memory_bytes, t.work_slots);
        t.reserve_bytes = reserve_for(t.memory, t.slots, options.memory_bytes);
        t.threads = t.slots < kSingleThreadSlots ? 1 : plan.options.threads;
        plan.tables.push_back(std::move(t));
    }
    return plan;
}

namespace {

Json plan_json(const Plan& plan) {
    Json requested = Json::array();
    for (const auto& m : plan.requested) requested.push_back(m.name());
    Json tables = Json::array();
    std::uint64_t positions = 0, jobs = 0, out_of_core = 0, max_reserve = 0;
    int levels = 0;
    for (const auto& t : plan.tables) {
        Json subs = Json::array();
        for (const auto& s : t.sub_tables) subs.push_back(s.name());
        const int pawns = t.material.count(Color::White, UnitType::Pawn) +
                          t.material.count(Color::Black, UnitType::Pawn);
        tables.push_back(Json{{"table", t.material.name()},
                              {"name", t.name},
                              {"units", t.material.total()},
                              {"pawns", pawns},
                              {"level", t.level},
                              {"slots", t.slots},
                              {"positions", 2 * t.slots},
                              {"work_slots", t.work_slots},
                              {"sub_tables", subs},
                              {"in_ram_bytes", t.memory.in_ram_bytes},
                              {"subtable_bytes", t.memory.subtable_bytes},
                              {"out_of_core", t.memory.out_of_core},
                              {"resident_subtables", t.memory.resident_subtables},
                              {"reserve_bytes", t.reserve_bytes},
                              {"threads", t.threads},
                              {"present", t.present}});
        if (t.present) continue;
        ++jobs;
        positions += 2 * t.slots;
        out_of_core += t.memory.out_of_core;
        max_reserve = std::max(max_reserve, t.reserve_bytes);
        levels = std::max(levels, t.level + 1);
    }
    Json memory_cap = nullptr;
    if (plan.options.memory_bytes != 0) memory_cap = plan.options.memory_bytes;
    return Json{{"variant", variant_name(plan.variant)},
                {"requested", requested},
                {"memory_cap", memory_cap},
                {"threads", plan.options.threads},
                {"encoding", plan.options.value_encoding},
                {"tables", tables},
                {"totals", Json{{"tables", plan.tables.size()},
                                {"jobs", jobs},
                                {"positions", positions},
                                {"out_of_core", out_of_core},
                                {"max_reserve_bytes", max_reserve},
                                {"levels", levels}}}};
}

std::uint64_t mebibytes(std::uint64_t bytes) { return (bytes + (1u << 20) - 1) >> 20; }

// The options of one table's `tbgen gen` job after --db, in a syntax with
// `parts` and `db` standing for the directories (make variables or Snakemake
// names).
std::string job_arguments(const Plan& plan, const PlannedTable& t, const std::string& parts,
                          const std::string& db, const std::string& threads) {
    std::map<index::Material, const PlannedTable*> planned;
    for (const auto& p : plan.tables) planned[p.material] = &p;
    std::string args = " --threads " + threads + " --quiet --json";
    if (plan.options.value_encoding != probe::kValueEncoding) args += " --encoding " + plan.options.value_encoding;
    // A wdl-dtc/2 (or /3) sub-table values some slots by probing its own sub-tables,
    // and so on down: such a job reads every table below it.
    std::vector<index::Material> sources = t.sub_tables;
    if (probe::is_compact_encoding(plan.options.value_encoding)) {
        std::set<index::Material> below(t.sub_tables.begin(), t.sub_tables.end());
        for (std::size_t k = 0; k < sources.size(); ++k) {
            const PlannedTable* p = planned.at(sources[k]);
            if (p->present) continue;  // its sub-tables are with it in the database
            for (const auto& sub : p->sub_tables) {
                if (below.insert(sub).second) sources.push_back(sub);
            }
        }
    }
    std::map<index::Material, bool> present;
    for (const auto& p : plan.tables) present[p.material] = p.present;
    bool from_db = false;
    for (const auto& sub : sources) {
        if (present[sub]) {
            if (!from_db) args += " --tables-from " + db;
            from_db = true;
        } else {
            args += " --tables-from " + parts + "/" + sub.name();
        }
    }
    if (plan.options.memory_bytes != 0) {
        args += " --memory " + std::to_string(plan.options.memory_bytes) + " --work " + parts + "/" +
                t.material.name() + ".work";
    }
    return args + " " + t.material.name();
}

// The shell command of one job. The table is built into DB.tmp, renamed DB
// when done: a directory DB is a finished part, and whatever a killed job
// left in DB.tmp is removed by the rerun (out-of-core work files live in
// their own directory and are kept). A rerun after the rename only reports.
// `dollar` is how the workflow's syntax writes a shell '$'.
std::string job_command(const std::string& tbgen, const std::string& variant, const std::string& db,
                        const std::string& arguments, const std::string& report, const std::string& log,
                        const std::string& dollar) {
    const std::string gen = tbgen + " gen --variant " + variant + " --db ";
    const std::string rest = arguments + " > " + report + ".tmp 2> " + log;
    return "d=" + db + "; if [ -d " + dollar + "d ]; then " + gen + dollar + "d" + rest + "; else rm -rf " +
           dollar + "d.tmp && " + gen + dollar + "d.tmp" + rest + " && mv " + dollar + "d.tmp " + dollar +
           "d; fi && mv " + report + ".tmp " + report;
}

std::vector<const PlannedTable*> jobs_of(const Plan& plan) {
    std::vector<const PlannedTable*> jobs;
    for (const auto& t : plan.tables) {
        if (!t.present) jobs.push_back(&t);
    }
    return jobs;
}

std::string header(const Plan& plan, const char* how) {
    std::string text = "# tbforge build plan: ";
    text += variant_name(plan.variant);
    if (plan.requested.size() <= 12) {
        for (const auto& m : plan.requested) {
            text += ' ';
            text += m.name();
        }
    } else {
        text += ", ";
        text += std::to_string(plan.requested.size());
        text += " tables requested";
    }
    text += "\n# One job per table, each into its own database PARTS/<table>, its sub-tables read\n"
            "# from their jobs' databases; then every part is merged into DB.\n";
    text += how;
    return text;
}

std::string plan_make(const Plan& plan) {
    const auto jobs = jobs_of(plan);
    std::ostringstream out;
    out << header(plan, "# make -f FILE -j N TBGEN=path/to/tbgen DB=tables.db [PARTS=DIR]\n\n");
    out << "TBGEN ?= tbgen\nDB ?= tables.db\nPARTS ?= $(DB).parts\n\n";
    out << ".PHONY: all\nall: $(PARTS)/merged.json\n\n";
    const std::string variant(variant_name(plan.variant));
    for (const PlannedTable* t : jobs) {
        const std::string name = t->material.name();
        out << "$(PARTS)/" << name << ".json:";
        for (const auto& sub : t->sub_tables) {
            auto it = std::find_if(jobs.begin(), jobs.end(), [&](const PlannedTable* j) { return j->material == sub; });
            if (it != jobs.end()) out << " $(PARTS)/" << sub.name() << ".json";
        }
        out << "\n\t@mkdir -p $(PARTS)\n\t"
            << job_command("$(TBGEN)", variant, "$(PARTS)/" + name,
                           job_arguments(plan, *t, "$(PARTS)", "$(DB)", std::to_string(t->threads)), "$@",
                           "$(PARTS)/" + name + ".log", "$$")
            << "\n\n";
    }
    out << "$(PARTS)/merged.json:";
    for (const PlannedTable* t : jobs) out << " $(PARTS)/" << t->material.name() << ".json";
    out << "\n\t@mkdir -p $(PARTS)\n\t@rm -f $@.tmp\n";
    // Batches keep each command line short; merging is idempotent.
    constexpr std::size_t kBatch = 200;
    for (std::size_t first = 0; first < jobs.size(); first += kBatch) {
        out << "\t$(TBGEN) merge --db $(DB) --json";
        for (std::size_t k = first; k < std::min(jobs.size(), first + kBatch); ++k) {
            out << " $(PARTS)/" << jobs[k]->material.name();
        }
        out << " >> $@.tmp\n";
    }
    out << "\ttouch $@.tmp && mv $@.tmp $@\n";
    return out.str();
}

std::string python_string(const std::string& s) { return Json(s).dump(); }

std::string plan_snakemake(const Plan& plan) {
    const auto jobs = jobs_of(plan);
    std::ostringstream out;
    out << header(plan, "# snakemake -s FILE --cores N --config tbgen=path/to/tbgen db=tables.db [parts=DIR]\n\n");
    out << "import os\nimport subprocess\n\n";
    out << "TBGEN = config.get(\"tbgen\", \"tbgen\")\n"
           "DB = config.get(\"db\", \"tables.db\")\n"
           "PARTS = config.get(\"parts\", DB.rstrip(\"/\") + \".parts\")\n\n";
    out << "rule all:\n    input: PARTS + \"/merged.json\"\n\n";
    const std::string variant(variant_name(plan.variant));
    for (const PlannedTable* t : jobs) {
        const std::string name = t->material.name();
        out << "rule table_" << name << ":\n";
        std::string inputs;
        for (const auto& sub : t->sub_tables) {
            auto it = std::find_if(jobs.begin(), jobs.end(), [&](const PlannedTable* j) { return j->material == sub; });
            if (it != jobs.end()) inputs += (inputs.empty() ? "" : ", ") + std::string("PARTS + \"/") + sub.name() + ".json\"";
        }
        if (!inputs.empty()) out << "    input: " << inputs << "\n";
        out << "    output: PARTS + \"/" << name << ".json\"\n"
            << "    log: PARTS + \"/" << name << ".log\"\n"
            << "    threads: " << t->threads << "\n"
            << "    resources: mem_mb=" << mebibytes(t->reserve_bytes) << "\n"
            << "    shell: "
            << python_string(job_command("{TBGEN}", variant, "{PARTS}/" + name,
                                         job_arguments(plan, *t, "{PARTS}", "{DB}", "{threads}"), "{output}",
                                         "{log}", "$"))
            << "\n\n";
    }
    out << "rule merge:\n    input: [";
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        out << (k ? ", " : "") << "PARTS + \"/" << jobs[k]->material.name() << ".json\"";
    }
    out << "]\n    output: PARTS + \"/merged.json\"\n    run:\n"
           "        # Arguments passed as a list: no shell, no limit on one command line's length.\n"
           "        parts = [f[:-len(\".json\")] for f in input]\n"
           "        with open(output[0] + \".tmp\", \"w\") as report:\n"
           "            if parts:\n"
           "                subprocess.run([TBGEN, \"merge\", \"--db\", DB, \"--json\"] + parts, stdout=report, check=True)\n"
           "        os.replace(output[0] + \".tmp\", output[0])\n";
    return out.str();
}

}  // namespace

std::string render_plan(const Plan& plan, PlanFormat format) {
    switch (format) {
        case PlanFormat::Snakemake: return plan_snakemake(plan);
        case PlanFormat::Make: return plan_make(plan);
        case PlanFormat::Json: break;
    }
    return to_json_line(plan_json(plan)) + "\n";
}

}  // namespace tbf::gen
