// Per-table databases and their merge: a copied table keeps its stored bytes
// and checksums; tables built one per database (GenerateOptions::sources)
// equal a build in one database; merging skips identical tables, refuses
// conflicting ones before copying anything, and a merge killed at random
// moments leaves every table complete or absent (the pattern of
// tests/storage/process_test.cpp, on the tbgen merge command).
#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "storage_support.hpp"
#include "tbforge/gen/plan.hpp"
#include "tbforge/rules/fen.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;
using tbf::test::TempDir;

namespace {

using test::open_rw;

storage::Database open_ro(const std::string& path) {
    auto db = storage::Database::open(path);
    REQUIRE_MESSAGE(db.ok(), db.status().to_string());
    return std::move(*db);
}

index::Material table(const char* name) {
    auto m = index::parse_table(name, VariantId::Antichess);
    REQUIRE(m.ok());
    return index::canonical(*m);
}

// Builds `tables` into the database at `path`, reading finished tables from
// `sources`.
void build(const std::string& path, const std::vector<index::Material>& tables,
           const std::vector<std::string>& sources = {},
           std::string_view encoding = probe::kValueEncoding) {
    probe::Tablebase tb(open_rw(path));
    gen::GenerateOptions options;
    options.threads = 1;
    options.value_encoding = std::string(encoding);
    for (const auto& source : sources) {
        auto opened = probe::Tablebase::open(source);
        REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
        options.sources.push_back(std::make_shared<const probe::Tablebase>(std::move(*opened)));
    }
    auto built = gen::generate(tb, VariantId::Antichess, tables, options);
    REQUIRE_MESSAGE(built.ok(), built.status().to_string());
}

std::map<std::string, storage::TableInfo> tables_of(const storage::Database& db) {
    auto list = db.list_tables();
    REQUIRE_MESSAGE(list.ok(), list.status().to_string());
    std::map<std::string, storage::TableInfo> out;
    for (auto& info : *list) out[info.spec.name] = std::move(info);
    return out;
}

// One database per table of the closure of `wanted`, under dir/parts/<table>,
// each built with its sub-tables read from their own databases.
std::vector<std::string> build_parts(const TempDir& dir, const std::vector<index::Material>& wanted) {
    std::vector<std::string> parts;
    for (const auto& m : index::dependency_order(VariantId::Antichess, wanted)) {
        std::vector<std::string> sources;
        for (const auto& sub : index::sub_tables(m, VariantId::Antichess)) sources.push_back(dir.sub("parts/" + sub.name()));
        parts.push_back(dir.sub("parts/" + m.name()));
        build(parts.back(), {m}, sources);
    }
    return parts;
}

// The database opened with plain RocksDB (the documented key layout), to
// plant damage.
void damage_block(const std::string& path, std::uint64_t storage_id, std::uint64_t block_no) {
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), path, descriptors, &handles, &db).ok());
    rocksdb::ColumnFamilyHandle* blocks = handles[std::find(names.begin(), names.end(), "blocks") - names.begin()];
    std::string key;
    for (std::uint64_t v : {storage_id, block_no}) {
        for (int i = 7; i >= 0; --i) key.push_back(static_cast<char>(v >> (8 * i)));
    }
    std::string record;
    REQUIRE(db->Get(rocksdb::ReadOptions(), blocks, key, &record).ok());
    record[record.size() / 2] = static_cast<char>(record[record.size() / 2] ^ 0x20);
    rocksdb::WriteOptions synced;
    synced.sync = true;
    REQUIRE(db->Put(synced, blocks, key, record).ok());
    for (auto* h : handles) REQUIRE(db->DestroyColumnFamilyHandle(h).ok());
    delete db;
}

// tbgen with `args`; stdout and stderr into files; the child's pid.
pid_t spawn_tbgen(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
        std::vector<std::string> copy = args;
        std::vector<char*> argv;
        static std::string program = TBF_TBGEN;
        argv.push_back(program.data());
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> merge_args(const std::string& target, const std::vector<std::string>& sources) {
    std::vector<std::string> args{"merge", "--db", target, "--json"};
    args.insert(args.end(), sources.begin(), sources.end());
    return args;
}

}  // namespace

TEST_CASE("a copied table keeps its stored bytes, statistics and values checksum") {
    TempDir dir;
    const storage::TableStatistics stats{{{"white.win", 7}, {"max_dtc", 3}}, R"({"max_dtc":3})"};
    struct Case {
        std::uint32_t width;
        std::uint64_t seed;
        storage::Compression compression;
        std::uint32_t slots_per_block;
    };
    const Case cases[] = {{1, 2, storage::Compression::Lz4, storage::kDefaultSlotsPerBlock},
                          {2, 4, storage::Compression::Lz4Hc, 1024},
                          {2, 5, storage::Compression::Lz4, 4096},
                          {4, 6, storage::Compression::None, 2048}};
    {
        storage::Database source = open_rw(dir.sub("source"));
        for (const Case& c : cases) {
            storage::TableWriteOptions options;
            options.compression = c.compression;
            options.slots_per_block = c.slots_per_block;
            REQUIRE(test::write_synthetic(source, test::numbered("t", c.seed), 70001, c.width, c.seed, options, stats)
                        .ok());
        }
    }
    storage::Database source = open_ro(dir.sub("source"));
    storage::Database target = open_rw(dir.sub("target"));
    REQUIRE(test::write_synthetic(target, "already", 5000, 1, 8).ok());  // another storage id in use
    for (const Case& c : cases) {
        const std::string name = test::numbered("t", c.seed);
        CAPTURE(name);
        auto reader = source.open_table(name);
        REQUIRE(reader.ok());
        auto copy = target.copy_table(*reader);
        REQUIRE_MESSAGE(copy.ok(), copy.status().to_string());
        CHECK(copy->storage_id != reader->info().storage_id);
        storage::TableInfo expected = reader->info();
        expected.storage_id = copy->storage_id;
        CHECK(*copy == expected);
        auto stored = target.table_info(name);
        REQUIRE(stored.ok());
        CHECK(*stored == expected);
        auto copied = target.open_table(name);
        REQUIRE(copied.ok());
        CHECK(copied->verify().ok());
        auto mismatches = test::count_mismatches(*copied, c.seed);
        REQUIRE(mismatches.ok());
        CHECK(*mismatches == 0);
        CHECK(target.copy_table(*reader).status().code() == StatusCode::AlreadyExists);
        CHECK(target.copy_table(*reader, true).ok());
        CHECK(target.open_table(name)->verify().ok());
    }
    // The source is untouched; a read-only database takes no copy.
    for (const Case& c : cases) CHECK(source.open_table(test::numbered("t", c.seed))->verify().ok());
    auto reader = target.open_table("already");
    CHECK(source.copy_table(*reader).status().code() == StatusCode::ReadOnly);
}

TEST_CASE("a damaged source block is refused and nothing is published") {
    TempDir dir;
    std::uint64_t id = 0;
    {
        storage::Database source = open_rw(dir.sub("source"));
        storage::TableWriteOptions options;
        options.slots_per_block = 1024;
        REQUIRE(test::write_synthetic(source, "t", 20000, 2, 10, options).ok());
        id = source.table_info("t")->storage_id;
    }
    damage_block(dir.sub("source"), id, 7);
    storage::Database source = open_ro(dir.sub("source"));
    storage::Database target = open_rw(dir.sub("target"));
    auto copy = target.copy_table(*source.open_table("t"));
    CHECK(copy.status().code() == StatusCode::ChecksumMismatch);
    CHECK(copy.status().message().find("block 7") != std::string::npos);
    CHECK(target.table_info("t").status().code() == StatusCode::NotFound);
    CHECK(std::filesystem::is_empty(dir.sub("target") + "/tbf-staging"));
}

TEST_CASE("tables built one per database equal one build; merging them skips identical tables") {
    TempDir dir;
    const std::vector wanted{table("KQvK"), table("RNvB"), table("NPvK")};
    build(dir.sub("whole"), wanted);
    const std::vector<std::string> parts = build_parts(dir, wanted);
    // Each part holds its own table only: sub-tables were read, not copied.
    for (const auto& part : parts) CHECK(tables_of(open_ro(part)).size() == 1);

    const auto whole = tables_of(open_ro(dir.sub("whole")));
    REQUIRE(whole.size() == parts.size());
    {
        storage::Database target = open_rw(dir.sub("merged"));
        auto merged = gen::merge_databases(target, parts);
        REQUIRE_MESSAGE(merged.ok(), merged.status().to_string());
        CHECK(merged->size() == parts.size());
        for (const auto& t : *merged) CHECK(t.copied);
        const auto result = tables_of(target);
        REQUIRE(result.size() == whole.size());
        for (const auto& entry : whole) {
            const auto& name = entry.first;
            const auto& info = entry.second;
            CAPTURE(name);
            const auto& copy = result.at(name);
            CHECK(copy.values_checksum == info.values_checksum);
            CHECK(copy.stored_bytes == info.stored_bytes);
            CHECK(copy.statistics == info.statistics);
            CHECK(copy.spec == info.spec);
            CHECK(target.open_table(name)->verify().ok());
        }
        // Again, and the one-process build too: everything is identical.
        auto again = gen::merge_databases(target, {parts[0], dir.sub("whole")});
        REQUIRE_MESSAGE(again.ok(), again.status().to_string());
        CHECK(again->size() == 1 + whole.size());
        for (const auto& t : *again) CHECK_FALSE(t.copied);
        CHECK(tables_of(target).size() == whole.size());
    }
    // Probing the merged database gives the one-process values.
    auto merged = probe::Tablebase::open(dir.sub("merged"));
    auto single = probe::Tablebase::open(dir.sub("whole"));
    REQUIRE(merged.ok());
    REQUIRE(single.ok());
    for (const char* fen : {"8/8/8/3k4/8/8/1Q6/4K3 w - - 0 1", "8/8/2b5/8/3R4/8/5N2/8 b - - 0 1",
                            "8/8/8/8/8/5k2/1P6/2N5 w - - 0 1"}) {
        CAPTURE(fen);
        auto pos = parse_fen(fen, VariantId::Antichess);
        REQUIRE(pos.ok());
        auto a = merged->probe(VariantId::Antichess, *pos);
        auto b = single->probe(VariantId::Antichess, *pos);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(*a == *b);
    }
}

// A wdl-dtc/2 sub-table values the slots a one-ply search resolves by
// probing its own sub-tables: those may be in another source, or in the
// database being written, not in the source holding the sub-table.
TEST_CASE("a wdl-dtc/2 sub-table from a source reads its own sub-tables from the other databases") {
    TempDir dir;
    const auto compact = probe::kCompactValueEncoding;
    build(dir.sub("whole"), {table("KPvK")}, {}, compact);
    // KRvK (a promotion of KPvK) alone in its database, its sub-tables in
    // another; KPvK's other promotions are built with it.
    const auto subs = index::sub_tables(table("KRvK"), VariantId::Antichess);
    build(dir.sub("low"), subs, {}, compact);
    build(dir.sub("rook"), {table("KRvK")}, {dir.sub("low")}, compact);
    REQUIRE(tables_of(open_ro(dir.sub("rook"))).size() == 1);
    build(dir.sub("target"), {table("KPvK")}, {dir.sub("rook"), dir.sub("low")}, compact);
    const auto whole = tables_of(open_ro(dir.sub("whole")));
    const auto built = tables_of(open_ro(dir.sub("target")));
    CHECK(built.count("antichess/KRvK") == 0);  // read from "rook"
    REQUIRE(built.count("antichess/KPvK") == 1);
    for (const auto& entry : built) {
        const auto& name = entry.first;
        const auto& info = entry.second;
        CAPTURE(name);
        CHECK(info.spec.value_encoding == compact);
        CHECK(info.values_checksum == whole.at(name).values_checksum);
        CHECK(info.stored_bytes == whole.at(name).stored_bytes);
    }
}

TEST_CASE("a conflicting table is refused before anything is copied") {
    TempDir dir;
    build(dir.sub("target"), {table("KvK")});
    build(dir.sub("other"), {table("KvQ")});
    {
        // The same name with other values, and the same name with another variant.
        storage::Database forged = open_rw(dir.sub("forged"));
        auto original = open_ro(dir.sub("target")).table_info("antichess/KvK");
        REQUIRE(original.ok());
        const storage::TableSpec spec = original->spec;
        auto writer = forged.create_table(spec);
        REQUIRE(writer.ok());
        REQUIRE(test::append_synthetic(*writer, 3, 0, spec.slot_count).ok());
        REQUIRE(writer->commit().ok());
        storage::Database fics = open_rw(dir.sub("fics"));
        auto info = open_ro(dir.sub("other")).table_info("antichess/KvQ");
        REQUIRE(info.ok());
        auto fics_spec = info->spec;
        fics_spec.variant = "antichess-fics";
        auto fics_writer = fics.create_table(fics_spec);
        REQUIRE(fics_writer.ok());
        REQUIRE(test::append_synthetic(*fics_writer, 4, 0, fics_spec.slot_count).ok());
        REQUIRE(fics_writer->commit().ok());
    }
    const auto before = tables_of(open_ro(dir.sub("target")));
    {
        storage::Database target = open_rw(dir.sub("target"));
        auto refused = gen::merge_databases(target, {dir.sub("other"), dir.sub("forged")});
        CHECK(refused.status().code() == StatusCode::CheckFailed);
        const std::string& message = refused.status().message();
        CAPTURE(message);
        CHECK(message.find("table antichess/KvK differs: values checksum") != std::string::npos);
        CHECK(message.find(dir.sub("forged")) != std::string::npos);
        CHECK(message.find(dir.sub("target")) != std::string::npos);
        CHECK(message.find("nothing merged") != std::string::npos);
        // Two sources that disagree, the target not involved: a variant conflict.
        auto variants = gen::merge_databases(target, {dir.sub("other"), dir.sub("fics")});
        CHECK(variants.status().code() == StatusCode::CheckFailed);
        CHECK(variants.status().message().find("variant antichess-fics against antichess") != std::string::npos);
        CHECK(tables_of(target) == before);  // KvQ of "other" was not copied either
    }
    // The command line: one line, exit 1.
    const pid_t pid = spawn_tbgen(merge_args(dir.sub("target"), {dir.sub("other"), dir.sub("forged")}),
                                  dir.sub("out"), dir.sub("err"));
    CHECK(test::wait_child(pid) == 1);
    const std::string err = read_file(dir.sub("err"));
    CHECK(err.rfind("tbgen: error: table antichess/KvK differs: values checksum ", 0) == 0);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("a merge killed at random moments leaves every table complete or absent") {
    TempDir dir;
    const std::vector<std::string> parts =
        build_parts(dir, {table("KQvK"), table("RNvB"), table("NPvK"), table("BBvN"), table("QvP")});
    std::map<std::string, std::uint64_t> checksums;
    for (const auto& part : parts) {
        for (const auto& [name, info] : tables_of(open_ro(part))) checksums[name] = info.values_checksum;
    }
    // How long a whole merge takes here, to spread the kills over it.
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(test::wait_child(spawn_tbgen(merge_args(dir.sub("timing"), parts), dir.sub("out"), dir.sub("err"))) == 0);
    const auto full = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);

    std::mt19937 rng(20);
    const int rounds = test::kSanitized ? 3 : 6;
    for (int round = 0; round < rounds; ++round) {
        CAPTURE(round);
        const std::string target = dir.sub(test::numbered("target", round));
        const pid_t pid = spawn_tbgen(merge_args(target, parts), dir.sub("out"), dir.sub("err"));
        REQUIRE(pid > 0);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % full.count()));
        kill(pid, SIGKILL);
        const int status = test::wait_child(pid);
        CHECK((status == -SIGKILL || status == 0));
        // Killed before the target was created, or it is a whole database
        // holding whole tables.
        std::size_t present = 0;
        if (std::filesystem::exists(target)) {
            for (const storage::OpenMode mode : {storage::OpenMode::ReadOnly, storage::OpenMode::ReadWrite}) {
                storage::DatabaseOptions o;
                o.mode = mode;
                auto db = storage::Database::open(target, o);
                REQUIRE_MESSAGE(db.ok(), db.status().to_string());
                const auto tables = tables_of(*db);
                present = tables.size();
                for (const auto& entry : tables) {
                    const auto& name = entry.first;
                    const auto& info = entry.second;
                    CAPTURE(name);
                    CHECK(info.values_checksum == checksums.at(name));
                    CHECK(db->open_table(name)->verify().ok());
                }
            }
        }
        MESSAGE("round " << round << ": killed with " << present << " of " << checksums.size() << " tables merged");
        // The rerun finishes the merge and copies only what is missing.
        REQUIRE(test::wait_child(spawn_tbgen(merge_args(target, parts), dir.sub("out"), dir.sub("err"))) == 0);
        const std::string out = read_file(dir.sub("out"));
        CHECK(out.find("\"skipped\":" + std::to_string(present) + ",") != std::string::npos);
        const auto final_tables = tables_of(open_ro(target));
        REQUIRE(final_tables.size() == checksums.size());
        for (const auto& [name, info] : final_tables) CHECK(info.values_checksum == checksums.at(name));
    }
}
