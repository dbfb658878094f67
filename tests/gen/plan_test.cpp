// tbgen plan: every table after all its sub-tables, sizes as `tbgen index`
// counts them, memory as the generator plans it, tables present in a
// database left out with what only they needed; the JSON text says the same.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "tbforge/base/json.hpp"
#include "tbforge/gen/plan.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/index/report.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

// The placement maps of a sub-table kept by its WDL, both sides: 2 bits per
// placement of three or four units (64^3 or 64^4 a side), none otherwise.
std::uint64_t placement_map_bytes(const index::Material& sub) {
    if (sub.total() == 3) return 2 * (64 * 64 * 64 / 4);
    if (sub.total() == 4) return 2 * (64 * 64 * 64 * 64 / 4);
    return 0;
}

gen::Plan plan_or_fail(VariantId variant, const std::vector<index::Material>& tables,
                       const gen::PlanOptions& options = {}) {
    auto plan = gen::plan_tables(variant, tables, options);
    REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
    return std::move(*plan);
}

index::Material table(VariantId variant, const char* name) {
    auto m = index::parse_table(name, variant);
    REQUIRE_MESSAGE(m.ok(), m.status().to_string());
    return index::canonical(*m);
}

// The structural promises of a plan, checked against index/ directly.
void check_order_and_sizes(const gen::Plan& plan) {
    std::map<index::Material, std::size_t> position;
    for (std::size_t k = 0; k < plan.tables.size(); ++k) {
        const auto& t = plan.tables[k];
        CAPTURE(t.name);
        CHECK(position.emplace(t.material, k).second);  // listed once
        CHECK(t.sub_tables == index::sub_tables(t.material, plan.variant));
        CHECK(t.name == probe::table_name(plan.variant, t.material));
        int level = 0;
        for (const auto& sub : t.sub_tables) {
            // Every sub-table of a table to be built comes earlier.
            if (t.present) continue;
            auto it = position.find(sub);
            REQUIRE_MESSAGE(it != position.end(), sub.name() << " is not listed before " << t.name);
            level = std::max(level, plan.tables[it->second].level + 1);
        }
        if (!t.present) CHECK(t.level == level);
        auto indexer = index::Indexer::create(plan.variant, t.material);
        REQUIRE(indexer.ok());
        CHECK(t.slots == indexer->size());
        std::uint64_t subtable_bytes = 0;
        for (const auto& sub : t.sub_tables) {
            // 2 bits per stored slot (both sides), in whole 8-byte words;
            // and the placement maps.
            subtable_bytes += (2 * index::Indexer::create(plan.variant, sub)->size() + 31) / 32 * 8;
            subtable_bytes += placement_map_bytes(sub);
        }
        CHECK(t.memory.subtable_bytes == subtable_bytes);
        const std::uint64_t own = t.work_slots ? 5 * t.work_slots + 4 * t.slots : 5 * t.slots;
        CHECK(t.memory.in_ram_bytes == own + subtable_bytes);
        CHECK(t.threads == (t.slots < gen::kSingleThreadSlots ? 1 : plan.options.threads));
    }
}

}  // namespace

TEST_CASE("a plan lists every needed table once, after all its sub-tables") {
    for (const VariantId variant : {VariantId::Antichess, VariantId::FourFile}) {
        CAPTURE(variant_name(variant));
        const auto wanted = index::enumerate_tables(variant, 4);
        gen::PlanOptions options;
        options.threads = 3;
        const gen::Plan plan = plan_or_fail(variant, wanted, options);
        check_order_and_sizes(plan);
        // Exactly the closure that tbgen gen builds.
        const auto closure = index::dependency_order(variant, wanted);
        REQUIRE(plan.tables.size() == closure.size());
        for (std::size_t k = 0; k < closure.size(); ++k) CHECK(plan.tables[k].material == closure[k]);
    }
    // A single table: only what it reaches.
    const gen::Plan one = plan_or_fail(VariantId::Antichess, {table(VariantId::Antichess, "KRPvKN")});
    check_order_and_sizes(one);
    CHECK(one.tables.back().material == table(VariantId::Antichess, "KRPvKN"));
    CHECK(one.tables.size() == index::dependency_order(VariantId::Antichess,
                                                       std::vector{table(VariantId::Antichess, "KRPvKN")})
                                   .size());
}

TEST_CASE("plan sizes are tbgen index's slots; in antichess every slot is a position") {
    for (const VariantId variant : {VariantId::Antichess, VariantId::FourFile}) {
        const gen::Plan plan = plan_or_fail(variant, index::enumerate_tables(variant, 3));
        for (const auto& t : plan.tables) {
            CAPTURE(t.name);
            auto report = index::index_report(variant, t.material.name());
            REQUIRE(report.ok());
            CHECK(t.slots == report->slots);
            if (variant == VariantId::Antichess) CHECK(report->valid[0] + report->valid[1] == 2 * t.slots);
        }
    }
}

TEST_CASE("under a cap, the plan marks the tables generate builds out-of-core") {
    const auto variant = VariantId::Antichess;
    const auto target = table(variant, "RBNvKN");
    gen::PlanOptions options;
    options.memory_bytes = std::uint64_t{72} << 20;
    const gen::Plan plan = plan_or_fail(variant, {target}, options);
    check_order_and_sizes(plan);
    const auto& t = plan.tables.back();
    CHECK(t.memory.out_of_core);
    CHECK(t.reserve_bytes > options.memory_bytes);
    CHECK(t.reserve_bytes < t.memory.in_ram_bytes);
    for (const auto& small : plan.tables) {
        if (small.memory.in_ram_bytes <= options.memory_bytes) {
            CHECK_FALSE(small.memory.out_of_core);
            CHECK(small.reserve_bytes == small.memory.in_ram_bytes + small.memory.in_ram_bytes / 10 +
                                             gen::kProcessOverheadBytes);
        }
    }
    // Without a cap nothing is out-of-core.
    for (const auto& u : plan_or_fail(variant, {target}).tables) CHECK_FALSE(u.memory.out_of_core);
}

TEST_CASE("tables present in the database get no job, nor do the tables only they need") {
    const auto variant = VariantId::Antichess;
    test::ScratchDir dir;
    {
        probe::Tablebase tb(test::open_rw(dir.sub("db")));
        gen::GenerateOptions options;
        options.threads = 1;
        REQUIRE(gen::generate(tb, variant, {table(variant, "KQvK")}, options).ok());
    }
    auto existing = storage::Database::open(dir.sub("db"));
    REQUIRE(existing.ok());
    gen::PlanOptions options;
    options.existing = &*existing;
    const auto request = std::vector{table(variant, "KQvK"), table(variant, "KRvK")};
    const gen::Plan plan = plan_or_fail(variant, request, options);
    check_order_and_sizes(plan);
    std::map<std::string, bool> present;
    for (const auto& t : plan.tables) present[t.material.name()] = t.present;
    CHECK(present.at("KQvK"));
    // KvQ is needed by KQvK only, which is present; KvK by KRvK as well.
    CHECK(present.count("KvQ") == 0);
    CHECK(present.at("KvK"));
    CHECK_FALSE(present.at("KRvK"));
    CHECK_FALSE(present.at("KvR"));
}

TEST_CASE("the JSON plan holds the same tables and figures") {
    const auto variant = VariantId::Antichess;
    gen::PlanOptions options;
    options.memory_bytes = std::uint64_t{1} << 20;
    options.threads = 2;
    const gen::Plan plan = plan_or_fail(variant, {table(variant, "KRvKN"), table(variant, "PvP")}, options);
    const Json json = Json::parse(gen::render_plan(plan, gen::PlanFormat::Json));
    CHECK(json["variant"] == "antichess");
    CHECK(json["memory_cap"] == options.memory_bytes);
    CHECK(json["requested"] == Json::array({"KRvKN", "PvP"}));
    REQUIRE(json["tables"].size() == plan.tables.size());
    std::uint64_t positions = 0, out_of_core = 0;
    for (std::size_t k = 0; k < plan.tables.size(); ++k) {
        const auto& t = plan.tables[k];
        const Json& j = json["tables"][k];
        CAPTURE(t.name);
        CHECK(j["table"] == t.material.name());
        CHECK(j["name"] == t.name);
        CHECK(j["units"] == t.material.total());
        CHECK(j["slots"] == t.slots);
        CHECK(j["positions"] == 2 * t.slots);
        CHECK(j["work_slots"] == t.work_slots);
        CHECK(j["level"] == t.level);
        CHECK(j["in_ram_bytes"] == t.memory.in_ram_bytes);
        CHECK(j["out_of_core"] == t.memory.out_of_core);
        CHECK(j["reserve_bytes"] == t.reserve_bytes);
        CHECK(j["threads"] == t.threads);
        CHECK(j["present"] == false);
        REQUIRE(j["sub_tables"].size() == t.sub_tables.size());
        for (std::size_t s = 0; s < t.sub_tables.size(); ++s) CHECK(j["sub_tables"][s] == t.sub_tables[s].name());
        positions += 2 * t.slots;
        out_of_core += t.memory.out_of_core;
    }
    CHECK(out_of_core > 0);
    CHECK(json["totals"]["tables"] == plan.tables.size());
    CHECK(json["totals"]["jobs"] == plan.tables.size());
    CHECK(json["totals"]["positions"] == positions);
    CHECK(json["totals"]["out_of_core"] == out_of_core);
}

TEST_CASE("the workflow formats have one job per table, after its sub-tables' jobs") {
    const auto variant = VariantId::Antichess;
    const gen::Plan plan = plan_or_fail(variant, {table(variant, "KPvK")});
    const std::string make = gen::render_plan(plan, gen::PlanFormat::Make);
    const std::string snake = gen::render_plan(plan, gen::PlanFormat::Snakemake);
    for (const auto& t : plan.tables) {
        CAPTURE(t.name);
        const std::string name = t.material.name();
        // The make target and its prerequisites on one line.
        const auto at = make.find("\n$(PARTS)/" + name + ".json:");
        REQUIRE(at != std::string::npos);
        const std::string line = make.substr(at + 1, make.find('\n', at + 1) - at - 1);
        std::size_t prerequisites = 0;
        for (std::size_t p = line.find("$(PARTS)/", line.find(':')); p != std::string::npos;
             p = line.find("$(PARTS)/", p + 1)) {
            ++prerequisites;
        }
        CHECK(prerequisites == t.sub_tables.size());
        for (const auto& sub : t.sub_tables) CHECK(line.find("$(PARTS)/" + sub.name() + ".json") != std::string::npos);
        CHECK(snake.find("rule table_" + name + ":\n") != std::string::npos);
        CHECK(make.find(" " + name + " > $@.tmp") != std::string::npos);
    }
    CHECK(make.find("merge --db $(DB)") != std::string::npos);
    CHECK(snake.find("rule merge:") != std::string::npos);
}

TEST_CASE("a wdl-dtc/2 plan holds its sub-tables at 3 bits a slot and builds with that encoding") {
    const auto variant = VariantId::Antichess;
    gen::PlanOptions options;
    options.value_encoding = std::string(probe::kCompactValueEncoding);
    const gen::Plan compact = plan_or_fail(variant, {table(variant, "KRvKN")}, options);
    const gen::Plan plain = plan_or_fail(variant, {table(variant, "KRvKN")});
    REQUIRE(compact.tables.size() == plain.tables.size());
    bool any_sub_tables = false;
    for (std::size_t k = 0; k < compact.tables.size(); ++k) {
        const auto& t = compact.tables[k];
        CAPTURE(t.name);
        std::uint64_t subtable_bytes = 0;
        for (const auto& sub : t.sub_tables) {
            // 2 bits of WDL and 1 bit "read already" per stored slot (both
            // sides), each in whole 8-byte words.
            const std::uint64_t slots = 2 * index::Indexer::create(variant, sub)->size();
            subtable_bytes += (slots + 31) / 32 * 8 + (slots + 63) / 64 * 8;
        }
        CHECK(t.memory.subtable_bytes == subtable_bytes);
        if (!t.sub_tables.empty()) {
            any_sub_tables = true;
            // More than the plain slots' bits, which three-unit sub-tables
            // hold with placement maps (64^3 x 2 bits a side) besides.
            std::uint64_t plain_maps = 0;
            for (const auto& sub : t.sub_tables) plain_maps += placement_map_bytes(sub);
            CHECK(t.memory.subtable_bytes > plain.tables[k].memory.subtable_bytes - plain_maps);
        }
    }
    CHECK(any_sub_tables);
    const Json json = Json::parse(gen::render_plan(compact, gen::PlanFormat::Json));
    CHECK(json["encoding"] == probe::kCompactValueEncoding);
    CHECK(Json::parse(gen::render_plan(plain, gen::PlanFormat::Json))["encoding"] == probe::kValueEncoding);
    for (const auto format : {gen::PlanFormat::Make, gen::PlanFormat::Snakemake}) {
        const std::string workflow = gen::render_plan(compact, format);
        const auto count = [&](const std::string& text) {
            std::size_t n = 0;
            for (std::size_t p = workflow.find(text); p != std::string::npos; p = workflow.find(text, p + 1)) ++n;
            return n;
        };
        // Every `tbgen gen` command (a job has one to resume and one to start).
        CHECK(count(" gen --variant ") >= compact.tables.size());
        CHECK(count("--encoding wdl-dtc/2 ") == count(" gen --variant "));
        CHECK(gen::render_plan(plain, format).find("--encoding") == std::string::npos);
    }
}

// A sub-table the database already holds is counted at its own encoding's
// bits a slot, whatever encoding the plan builds with; the sub-tables the
// plan builds at the plan's.
// A wdl-dtc/2 sub-table probes its own sub-tables, and they theirs: a job
// of a wdl-dtc/2 workflow reads every part below its table, a wdl-dtc/1
// job its sub-tables' only.
TEST_CASE("a wdl-dtc/2 job reads every table below its own") {
    const auto variant = VariantId::Antichess;
    const index::Material top = table(variant, "KRvKN");
    std::set<std::string> below;
    std::vector<index::Material> stack{top};
    while (!stack.empty()) {
        const index::Material m = stack.back();
        stack.pop_back();
        for (const auto& sub : index::sub_tables(m, variant)) {
            if (below.insert(sub.name()).second) stack.push_back(sub);
        }
    }
    std::set<std::string> direct;
    for (const auto& sub : index::sub_tables(top, variant)) direct.insert(sub.name());
    REQUIRE(below.size() > direct.size());
    for (const bool compact : {true, false}) {
        CAPTURE(compact);
        gen::PlanOptions options;
        if (compact) options.value_encoding = std::string(probe::kCompactValueEncoding);
        const std::string make = gen::render_plan(plan_or_fail(variant, {top}, options), gen::PlanFormat::Make);
        // The job line that builds KRvKN into a fresh part.
        const std::size_t end = make.find(" KRvKN > $@.tmp 2> $(PARTS)/KRvKN.log && mv");
        REQUIRE(end != std::string::npos);
        const std::string job = make.substr(make.rfind('\n', end) + 1, end - make.rfind('\n', end));
        std::set<std::string> read;
        const std::string flag = "--tables-from $(PARTS)/";
        for (std::size_t p = job.find(flag); p != std::string::npos; p = job.find(flag, p + 1)) {
            const std::size_t from = p + flag.size();
            read.insert(job.substr(from, job.find(' ', from) - from));
        }
        CHECK(read == (compact ? below : direct));
    }
}

TEST_CASE("a sub-table present in the database is counted by its own encoding") {
    const auto variant = VariantId::Antichess;
    const auto bytes_at = [&](const index::Material& sub, bool compact) {
        const std::uint64_t slots = 2 * index::Indexer::create(variant, sub)->size();
        // 2 bits of WDL a slot, and with wdl-dtc/2 1 bit "read already";
        // else, for three units, the placement maps (64^3 x 2 bits a side).
        const std::uint64_t maps = compact ? 0 : placement_map_bytes(sub);
        return (slots + 31) / 32 * 8 + (compact ? (slots + 63) / 64 * 8 : maps);
    };
    for (const bool present_compact : {true, false}) {
        CAPTURE(present_compact);
        test::ScratchDir dir;
        {
            probe::Tablebase tb(test::open_rw(dir.sub("db")));
            gen::GenerateOptions options;
            options.threads = 1;
            if (present_compact) options.value_encoding = std::string(probe::kCompactValueEncoding);
            REQUIRE(gen::generate(tb, variant, {table(variant, "KQvK")}, options).ok());
        }
        auto existing = storage::Database::open(dir.sub("db"));
        REQUIRE(existing.ok());
        gen::PlanOptions options;
        options.existing = &*existing;
        // The plan builds in the other encoding than the database holds.
        if (!present_compact) options.value_encoding = std::string(probe::kCompactValueEncoding);
        const gen::Plan plan = plan_or_fail(variant, {table(variant, "KQvKR")}, options);
        std::size_t mixed = 0;
        for (const auto& t : plan.tables) {
            if (t.present) continue;
            CAPTURE(t.name);
            std::uint64_t expected = 0;
            bool any_present = false, any_built = false;
            for (const auto& sub : t.sub_tables) {
                const bool present = existing->table_info(probe::table_name(variant, sub)).ok();
                any_present |= present;
                any_built |= !present;
                expected += bytes_at(sub, present ? present_compact : !present_compact);
            }
            CHECK(t.memory.subtable_bytes == expected);
            mixed += any_present && any_built;
        }
        // KQvKR reads KQvK (present) and sub-tables the plan builds.
        CHECK(mixed > 0);
    }
}

TEST_CASE("a bad request is refused") {
    auto none = gen::plan_tables(VariantId::Antichess, {}, {});
    CHECK(none.status().code() == StatusCode::InvalidArgument);
    index::Material kings_missing;
    kings_missing.add(Color::White, UnitType::Queen);
    kings_missing.add(Color::Black, UnitType::Rook);
    auto bad = gen::plan_tables(VariantId::FourFile, {kings_missing}, {});
    CHECK(bad.status().code() == StatusCode::InvalidArgument);
}
