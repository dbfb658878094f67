// Out-of-core generation: tables forced out-of-core by a tiny memory cap (many
// chunks) store exactly the bytes and metadata of the in-RAM build, for any
// chunk size and thread count, whether or not the last levels run in memory;
// a run stopped after any step resumes to the same bytes; damaged work files
// give an error, never wrong values.
#include <doctest/doctest.h>

#include <omp.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/record.hpp"
#include "tbforge/gen/generate.hpp"
#include "work_files.hpp"
#include "compact_checks.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;
namespace fs = std::filesystem;

namespace {

// One read-write database in its own scratch directory, plus a work directory.
class Db {
public:
    Db() {
        tb_ = std::make_unique<probe::Tablebase>(test::open_rw(dir_.sub("db")));
    }
    probe::Tablebase& tb() { return *tb_; }
    std::string work() const { return dir_.sub("work"); }

    using Outcome = Result<std::vector<gen::TableSummary>>;
    Outcome run(VariantId variant, const std::vector<std::string>& tables, gen::GenerateOptions options) {
        std::vector<index::Material> materials;
        for (const auto& t : tables) materials.push_back(index::canonical(*index::parse_table(t, variant)));
        return gen::generate(*tb_, variant, materials, options);
    }
    std::vector<gen::TableSummary> build(VariantId variant, const std::vector<std::string>& tables,
                                         gen::GenerateOptions options) {
        auto outcome = run(variant, tables, std::move(options));
        if (!outcome.ok()) FAIL(outcome.status().message());
        return std::move(*outcome);
    }

private:
    test::ScratchDir dir_;
    std::unique_ptr<probe::Tablebase> tb_;
};

gen::GenerateOptions in_ram(int threads = 2) {
    gen::GenerateOptions options;
    options.threads = threads;
    return options;
}

// Without fsync unless asked: the tests stop builds, they do not cut power,
// and thousands of tiny steps would wait for the disk.
gen::GenerateOptions out_of_core(const Db& db, std::uint64_t memory, int threads = 2, bool sync = false) {
    gen::GenerateOptions options;
    options.sync_work_files = sync;
    options.threads = threads;
    options.memory_bytes = memory;
    options.work_dir = db.work();
    return options;
}

// Everything stored about a table that does not depend on when it was
// written: metadata, statistics, checksums and every block's values.
struct Stored {
    storage::TableInfo info;
    std::vector<std::vector<std::uint8_t>> blocks;
};

Stored stored(const probe::Tablebase& tb, const std::string& name) {
    auto reader = tb.database().open_table(name);
    REQUIRE_MESSAGE(reader.ok(), name << ": " << reader.status().to_string());
    Stored out;
    out.info = reader->info();
    out.info.storage_id = 0;  // a key prefix: depends on the order tables were created
    for (std::uint64_t b = 0; b < out.info.block_count; ++b) {
        auto block = reader->read_block(b, storage::CacheUse::Bypass);
        REQUIRE(block.ok());
        const auto bytes = (*block)->bytes();
        out.blocks.emplace_back(bytes.begin(), bytes.end());
    }
    return out;
}

// The in-RAM build of one antichess table, made once per test run.
const Stored& in_ram_table(const std::string& table) {
    static std::map<std::string, Stored> built;
    auto it = built.find(table);
    if (it == built.end()) {
        Db db;
        const auto summaries = db.build(VariantId::Antichess, {table}, in_ram());
        it = built.emplace(table, stored(db.tb(), summaries.back().name)).first;
    }
    return it->second;
}

void check_same_tables(const probe::Tablebase& expected, const probe::Tablebase& actual,
                       const std::vector<gen::TableSummary>& tables) {
    for (const auto& t : tables) {
        INFO(t.name);
        const Stored a = stored(expected, t.name);
        const Stored b = stored(actual, t.name);
        CHECK(a.info == b.info);
        CHECK(a.blocks == b.blocks);
    }
}

int out_of_core_count(const std::vector<gen::TableSummary>& tables) {
    int n = 0;
    for (const auto& t : tables) n += t.out_of_core;
    return n;
}

bool empty_or_missing(const std::string& dir) {
    std::error_code ec;
    return !fs::exists(dir, ec) || fs::is_empty(dir, ec);
}

// A stopping hook: stops after step `stop_at` (1-based), counts all steps.
struct StepCounter {
    int steps = 0;
    int stop_at = 0;  // 0: never stop
    std::function<bool()> hook() {
        return [this] { return ++steps == stop_at; };
    }
};

// Builds `tables` in RAM and out-of-core under `memory`, and compares.
void check_against_in_ram(VariantId variant, const std::vector<std::string>& tables, std::uint64_t memory,
                          int min_out_of_core, bool sync = false) {
    Db ram, ooc;
    const auto expected = ram.build(variant, tables, in_ram());
    const auto built = ooc.build(variant, tables, out_of_core(ooc, memory, 2, sync));
    REQUIRE(built.size() == expected.size());
    int chunked = 0;  // out-of-core in several chunks (small sub-tables fit one)
    for (const auto& t : built) {
        if (!t.out_of_core) continue;
        INFO(t.name);
        CHECK(t.chunks >= 1);
        chunked += t.chunks > 1;
        if (t.chunks > 1) CHECK(t.crossing_fraction > 0.0);
        // Without a royal king the big levels are split (reads inside the
        // chunk); with one (Four File) the builder always pushes.
        if (t.chunks > 1) CHECK((t.split_visits > 0) == !variant_traits(variant).royal_king);
        CHECK(t.crossing_fraction < 0.5);
        CHECK(t.bytes_written > 0);
        CHECK(t.bytes_read > 0);
    }
    CHECK(chunked >= min_out_of_core);
    check_same_tables(ram.tb(), ooc.tb(), expected);
    CHECK(empty_or_missing(ooc.work()));
}

// The table's work directory while a build is stopped.
std::string table_work(const Db& db, const std::string& name) {
    std::string leaf = name;
    std::replace(leaf.begin(), leaf.end(), '/', '_');
    return db.work() + "/" + leaf;
}

// Builds the sub-tables of `table` in RAM, so that steps count only its own.
void prepare(Db& db, VariantId variant, const std::string& table) {
    std::vector<std::string> subs;
    for (const auto& m : index::sub_tables(index::canonical(*index::parse_table(table, variant)), variant)) {
        subs.push_back(m.name());
    }
    if (!subs.empty()) db.build(variant, subs, in_ram());
}

// Stops a build of `table` after its step `k` (sub-tables built in RAM first).
void stop_after(Db& db, VariantId variant, const std::string& table, std::uint64_t memory, int k) {
    prepare(db, variant, table);
    StepCounter counter;
    counter.stop_at = k;
    auto options = out_of_core(db, memory);
    options.stop_after_step = counter.hook();
    auto outcome = db.run(variant, {table}, options);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.status().message().find("stopped after a step") != std::string::npos);
}

const std::vector<std::string> kSmall = {"PvP", "KvQ", "NPvQ", "KQvR"};
const std::vector<std::string> kSmallSanitized = {"PvP", "KvQ"};

}  // namespace

TEST_CASE("bucket frames give back every update, level by level") {
    using gen::ooc::Update;
    test::ScratchDir scratch;
    gen::ooc::IoCounters io;
    gen::ooc::WorkDir dir(scratch.sub("work"), io, false);
    dir.create();
    std::mt19937_64 rng(7);
    // Two appends: levels 3 and 4 mixed in the first, 4 in the second; the
    // usual one-un-move updates and explicit ones, repeats, slot 0 and
    // the largest slot, a dense and a sparse range.
    std::vector<Update> sent;
    std::uint64_t length = 0;
    for (int append = 0; append < 2; ++append) {
        std::vector<Update> batch;
        for (int k = 0; k < 20000; ++k) {
            Update u{};
            const std::uint64_t r = rng();
            u.slot = (r & 1) ? static_cast<std::uint32_t>(r >> 40) % 3000 : static_cast<std::uint32_t>(r >> 32);
            u.level = static_cast<std::uint16_t>(append == 0 ? 3 + (r >> 8 & 1) : 4);
            u.repeats = (r >> 12 & 7) == 0 ? static_cast<std::uint8_t>(2 + (r >> 16 & 3)) : 1;
            u.child = static_cast<std::uint8_t>(((r >> 20) & 1 ? gen::ooc::kLossChild : 0) |
                                                ((r >> 24 & 7) == 0 ? 2 : 1));
            batch.push_back(u);
        }
        batch.push_back(Update{0, 4, 1, 1});
        batch.push_back(Update{0xFFFFFFFFu, 4, 3, gen::ooc::kLossChild | 8});
        sent.insert(sent.end(), batch.begin(), batch.end());
        length += gen::ooc::append_updates(dir, "bucket", batch);
    }
    CHECK(length == dir.size("bucket"));
    // Far below the 8 bytes of a raw update for the dense part.
    CHECK(length < 6 * sent.size());
    std::vector<Update> received;
    int frames = 0;
    gen::ooc::for_each_update_frame(dir, "bucket", length, [&](std::span<const Update> frame) {
        ++frames;
        CHECK(std::all_of(frame.begin(), frame.end(), [&](const Update& u) { return u.level == frame.front().level; }));
        CHECK(std::is_sorted(frame.begin(), frame.end(),
                             [](const Update& a, const Update& b) { return a.slot < b.slot; }));
        received.insert(received.end(), frame.begin(), frame.end());
    });
    CHECK(frames == 3);
    // Levels never go back within the bucket.
    CHECK(std::is_sorted(received.begin(), received.end(),
                         [](const Update& a, const Update& b) { return a.level < b.level; }));
    auto key = [](const Update& u) { return std::tuple(u.level, u.slot, u.repeats, u.child); };
    auto order = [&](const Update& a, const Update& b) { return key(a) < key(b); };
    std::sort(sent.begin(), sent.end(), order);
    std::sort(received.begin(), received.end(), order);
    REQUIRE(received.size() == sent.size());
    bool same = true;
    for (std::size_t k = 0; k < sent.size(); ++k) same = same && key(sent[k]) == key(received[k]);
    CHECK(same);
    // A frame cut short, or read past the valid length, is an error.
    CHECK_THROWS_AS(gen::ooc::for_each_update_frame(dir, "bucket", length - 1, [](auto) {}),
                    gen::StatusError);
}

namespace {

// The Corruption message a decoder throws, or "" if it throws nothing.
template <class F>
std::string damage_of(F&& decode) {
    try {
        decode();
    } catch (const gen::StatusError& e) {
        CHECK(e.status().code() == StatusCode::Corruption);
        return e.status().message();
    }
    return "";
}

}  // namespace

// Found by fuzzing (docs/fuzzing.md): a frame header whose update count its
// payload cannot hold made the reader size its output from the count, up to
// 32 GiB, before decoding a byte; the checksum did not stop it.
TEST_CASE("a frame counting more updates than its payload holds is damaged") {
    using gen::ooc::Update;
    std::vector<Update> one = {Update{5, 2, 1, 1}};
    std::vector<std::uint8_t> frame = gen::ooc::encode_update_frames(one);
    REQUIRE(frame.size() == 25);  // 24-byte header, one varint byte
    // Count (bytes 4-7) 0x3f000003; the payload and its checksum stay valid.
    frame[4] = 0x03, frame[5] = 0, frame[6] = 0, frame[7] = 0x3f;
    CHECK(damage_of([&] {
              std::vector<Update> out;
              gen::ooc::decode_update_frame(frame, 0, "bucket", out);
          }).find("update count exceeds the payload") != std::string::npos);

    test::ScratchDir scratch;
    gen::ooc::IoCounters io;
    gen::ooc::WorkDir dir(scratch.sub("work"), io, false);
    dir.create();
    dir.append("bucket", frame);
    CHECK(damage_of([&] { gen::ooc::for_each_update_frame(dir, "bucket", frame.size(), [](auto) {}); })
              .find("update count exceeds the payload") != std::string::npos);
}

// Found by fuzzing: a sparse level of 2^31 in a sealed manifest was signed
// overflow when read back (level + 1 is stored). Levels past INT_MAX are
// damage, wherever the manifest stores one.
TEST_CASE("a manifest holding a level past INT_MAX is damaged") {
    gen::ooc::Manifest m;  // no chunks, empty names: fixed offsets below
    const std::string good = gen::ooc::encode_manifest(m);
    const auto with_field = [&](std::size_t offset, std::uint64_t value) {
        std::string record = good.substr(0, good.size() - kSealBytes);
        for (int i = 0; i < 8; ++i) record[offset + i] = static_cast<char>(value >> (8 * i));
        seal(record);
        return std::vector<std::uint8_t>(record.begin(), record.end());
    };
    // magic 8, format 4, two empty strings 8 + 8, index size, chunk slots,
    // phase: the level at 52. At the end: sparse level + 1, words, checksum, seal.
    const std::size_t level_at = 52;
    const std::size_t sparse_at = good.size() - kSealBytes - 3 * 8;
    CHECK(gen::ooc::decode_manifest(with_field(level_at, 7), "manifest").level == 7);
    CHECK(gen::ooc::decode_manifest(with_field(sparse_at, 5), "manifest").sparse_level == 4);
    for (const std::uint64_t bad : {std::uint64_t{0x80000000}, ~std::uint64_t{0}}) {
        CHECK(damage_of([&] { (void)gen::ooc::decode_manifest(with_field(level_at, bad), "manifest"); })
                  .find("bad level") != std::string::npos);
        CHECK(damage_of([&] { (void)gen::ooc::decode_manifest(with_field(sparse_at, bad), "manifest"); })
                  .find("bad level") != std::string::npos);
    }
}

TEST_CASE("updates sort as a comparison sort would, on any spread of keys") {
    using gen::ooc::Update;
    auto key = [](const Update& u) { return std::tuple(u.level, u.slot, u.repeats, u.child); };
    std::mt19937_64 rng(11);
    // Uniform slots; a narrow dense range with many equal keys; one slot
    // with varying child bytes; several levels; identical updates; sizes
    // around the comparison-sort threshold and large enough to recurse.
    const std::vector<std::function<Update()>> spreads = {
        [&] { return Update{static_cast<std::uint32_t>(rng()), 7, 1, 1}; },
        [&] { return Update{static_cast<std::uint32_t>(1000000 + rng() % 5000), 2, 1, static_cast<std::uint8_t>(rng() & 0x81)}; },
        [&] { return Update{42, 9, static_cast<std::uint8_t>(rng() % 4), static_cast<std::uint8_t>(rng())}; },
        [&] {
            const std::uint64_t r = rng();
            return Update{static_cast<std::uint32_t>(r >> 32), static_cast<std::uint16_t>(r % 5), 1,
                          static_cast<std::uint8_t>(r >> 8 & 0x81)};
        },
        [&] { return Update{0xFFFFFFFFu, 0xFFFF, 0xFF, 0xFF}; },
        [&] { return Update{static_cast<std::uint32_t>(rng() >> 40) << 20, 3, 1, 1}; },
    };
    for (std::size_t s = 0; s < spreads.size(); ++s) {
        for (const std::size_t n : {0u, 1u, 255u, 256u, 257u, 5000u, 300000u}) {
            std::vector<Update> updates(n);
            for (auto& u : updates) u = spreads[s]();
            auto expected = updates;
            std::sort(expected.begin(), expected.end(), [&](const Update& a, const Update& b) { return key(a) < key(b); });
            gen::ooc::sort_updates(updates);
            bool same = true;
            for (std::size_t k = 0; k < n; ++k) same = same && key(updates[k]) == key(expected[k]);
            INFO("spread " << s << ", " << n << " updates");
            CHECK(same);
        }
    }
}

TEST_CASE("the memory plan chooses out-of-core only above the cap") {
    const auto unlimited = gen::plan_memory(1000000, 500000, 0);
    CHECK_FALSE(unlimited.out_of_core);
    CHECK(unlimited.in_ram_bytes == 5 * 1000000 + 500000);
    CHECK_FALSE(gen::plan_memory(1000000, 500000, 5500000).out_of_core);
    CHECK(gen::plan_memory(1000000, 500000, 5499999).out_of_core);
    CHECK(gen::plan_memory(1000000, 500000, 0, 1300000).in_ram_bytes == 5 * 1300000 + 4 * 1000000 + 500000);
    const auto tight = gen::plan_memory(1000000, 500000, 2000000);
    CHECK(tight.out_of_core);
    CHECK(tight.resident_subtables);
    CHECK(tight.state_bytes == 1500000);
    const auto big_subtables = gen::plan_memory(1000000, 1500000, 2000000);
    CHECK(big_subtables.out_of_core);
    CHECK_FALSE(big_subtables.resident_subtables);
    CHECK(big_subtables.state_bytes == 2000000);
}

TEST_CASE("out-of-core builds store the same bytes as in-RAM builds") {
    // 64 KiB: chunks of 7560 slots; 3-unit tables get 2 to 13 chunks.
    if (test::kSanitized) {
        check_against_in_ram(VariantId::Antichess, kSmallSanitized, 4 << 10, 2, true);
    } else {
        check_against_in_ram(VariantId::Antichess, kSmall, 64 << 10, 2, true);
    }
    // Four File: invalid slots (the side not to move in check), royal kings.
    check_against_in_ram(VariantId::FourFile, {test::kSanitized ? "KNvKN" : "KRvKN"}, 16 << 10, 1);
}

TEST_CASE("chunk size and thread count do not change the stored bytes") {
    const std::string table = "KQvR";
    Db ram;
    const auto expected = ram.build(VariantId::Antichess, {table}, in_ram());
    for (const auto& entry : std::vector<std::pair<std::uint64_t, int>>{{4 << 10, 1}, {40 << 10, 2}}) {
        const auto& memory = entry.first;
        const auto& threads = entry.second;
        INFO(memory << " bytes, " << threads << " threads");
        Db ooc;
        const auto built = ooc.build(VariantId::Antichess, {table}, out_of_core(ooc, memory, threads));
        CHECK(built.back().out_of_core);
        check_same_tables(ram.tb(), ooc.tb(), expected);
    }
    omp_set_num_threads(2);
}

TEST_CASE("wdl-dtc/2: in-RAM and out-of-core builds, 1 and 2 threads, store the same bytes") {
    // KQvR: no pawns; NPvQ: promotions and the kinds of slots they make.
    for (const std::string& table : {std::string("KQvR"), std::string(test::kSanitized ? "PvP" : "NPvQ")}) {
        INFO(table);
        auto compact = [](gen::GenerateOptions options) {
            options.value_encoding = std::string(probe::kCompactValueEncoding);
            return options;
        };
        Db ram;
        const auto expected = ram.build(VariantId::Antichess, {table}, compact(in_ram(2)));
        Db ram1;
        check_same_tables(ram.tb(), ram1.tb(), ram1.build(VariantId::Antichess, {table}, compact(in_ram(1))));
        // Caps below each table's in-RAM plan (PvP's is 15,992 bytes), so
        // that every build here goes out of core.
        const std::uint64_t second_cap = table == "PvP" ? 12 << 10 : 40 << 10;
        for (const auto& entry : std::vector<std::pair<std::uint64_t, int>>{{8 << 10, 1}, {second_cap, 2}}) {
            const auto& memory = entry.first;
            const auto& threads = entry.second;
            INFO(memory << " bytes, " << threads << " threads");
            Db ooc;
            const auto built = ooc.build(VariantId::Antichess, {table}, compact(out_of_core(ooc, memory, threads)));
            CHECK(built.back().out_of_core);
            check_same_tables(ram.tb(), ooc.tb(), expected);
        }
        const Stored last = stored(ram.tb(), expected.back().name);
        CHECK(last.info.spec.value_encoding == probe::kCompactValueEncoding);
        // Not the wdl-dtc/1 bytes.
        CHECK(last.info.values_checksum != in_ram_table(table).info.values_checksum);
    }
    omp_set_num_threads(2);
}

TEST_CASE("wdl-dtc/4 to /9 out of core: a table storing one side to move reads back every value") {
    // Out of core the DTC side comes from a survey of every value (not the
    // in-RAM sample) and the rule's order is kept, so every resolved code
    // must equal the wdl-dtc/1 build's stored one, slot for slot. NvP's
    // sides differ: wdl-dtc/5 values its other side by one ply. PvP as
    // wdl-dtc/6: its wins by one ply too. PPvN as wdl-dtc/7: some of
    // Black's pawn structures by two plies; as wdl-dtc/8 NPvN some knights'
    // squares, PvP some structures of both sides' pawns; as wdl-dtc/9 NPvN
    // with the colouring its survey chooses.
    for (const auto& job : {std::pair{"PvP", probe::kMirroredCompactValueEncoding},
                            std::pair{"NvN", probe::kMirroredCompactValueEncoding},
                            std::pair{"NvP", probe::kOneSideCompactValueEncoding},
                            std::pair{"PvP", probe::kSearchedWinsCompactValueEncoding},
                            std::pair{"PPvN", probe::kDerivedStructuresCompactValueEncoding},
                            std::pair{"NPvN", probe::kDerivedKnightsCompactValueEncoding},
                            std::pair{"PvP", probe::kDerivedKnightsCompactValueEncoding},
                            std::pair{"NPvN", probe::kChosenColouringCompactValueEncoding}}) {
        const std::string table = job.first;
        INFO(table);
        Db ooc;
        // Caps below each table's in-RAM plan.
        gen::GenerateOptions options = out_of_core(ooc, table == "NvN" ? 2 << 10 : 8 << 10, 2);
        options.value_encoding = std::string(job.second);
        const auto built = ooc.build(VariantId::Antichess, {table}, options);
        CHECK(built.back().out_of_core);
        const auto material = index::canonical(*index::parse_table(table, VariantId::Antichess));
        auto opened = ooc.tb().table(VariantId::Antichess, material);
        REQUIRE(opened.ok());
        const probe::Table& t = **opened;
        CHECK(t.dtc_side_alone());
        CHECK(t.derives_slots() == (job.second == probe::kDerivedStructuresCompactValueEncoding ||
                                    job.second == probe::kDerivedKnightsCompactValueEncoding ||
                                    job.second == probe::kChosenColouringCompactValueEncoding));
        const std::uint64_t slots = 2 * t.indexer().size();
        std::vector<std::uint16_t> codes(slots);
        auto read = t.read_codes(0, slots, codes.data());
        REQUIRE_MESSAGE(read.ok(), read.status().to_string());
        std::vector<std::uint16_t> expected;
        for (const auto& block : in_ram_table(table).blocks) expected.insert(expected.end(), block.begin(), block.end());
        REQUIRE(in_ram_table(table).info.spec.value_width == 1);
        CHECK(codes == expected);
        // And the side off the DTC side stores nothing.
        CHECK(test::codes_off_dtc_side(t) == 0);
    }
    omp_set_num_threads(2);
}

TEST_CASE("buckets beyond their disk limit are applied at once, to the same bytes") {
    // NPvQ: late wins and losses, a pawn's promotions; PvP under sanitizers.
    const std::string table = test::kSanitized ? "PvP" : "NPvQ";
    const std::uint64_t memory = test::kSanitized ? 5 << 10 : 16 << 10;  // two chunks of PvP
    Db ram;
    const auto expected = ram.build(VariantId::Antichess, {table}, in_ram());
    auto steps_with_limit = [&](std::uint64_t bucket_bytes) {
        Db ooc;
        prepare(ooc, VariantId::Antichess, table);
        StepCounter counter;
        auto options = out_of_core(ooc, memory);
        options.stop_after_step = counter.hook();
        options.bucket_bytes = bucket_bytes;
        const auto built = ooc.build(VariantId::Antichess, {table}, options);
        REQUIRE(out_of_core_count(built) == 1);
        REQUIRE(built.back().chunks >= 2);
        check_same_tables(ram.tb(), ooc.tb(), expected);
        return counter.steps;
    };
    const int plain = steps_with_limit(0);
    // One byte: every bucket is applied right after the visit that filled it.
    const int drained = steps_with_limit(1);
    CHECK(drained > plain);
}

TEST_CASE("a build stopped after any step resumes to the same bytes") {
    // PvP: en-passant late wins and losses, which only pass 1 settles.
    const std::string table = test::kSanitized ? "PvP" : "NPvQ";
    const std::string name = "antichess/" + std::string(test::kSanitized ? "PvP" : "NPvQ");
    // Below PvP's in-RAM plan (16 KB with its sub-tables held by WDL).
    const std::uint64_t kMemory = test::kSanitized ? 8 << 10 : 16 << 10;
    Db ram;
    const auto expected = ram.build(VariantId::Antichess, {table}, in_ram());

    // Steps of an uninterrupted build (the sub-tables are built in RAM).
    int total_steps = 0;
    {
        Db ooc;
        prepare(ooc, VariantId::Antichess, table);
        StepCounter counter;
        auto options = out_of_core(ooc, kMemory);
        options.stop_after_step = counter.hook();
        const auto built = ooc.build(VariantId::Antichess, {table}, options);
        REQUIRE(out_of_core_count(built) == 1);
        total_steps = counter.steps;
    }
    REQUIRE(total_steps > 10);

    // Stop at the first step, in the initial pass, in the level passes and
    // at the very end; stop twice in one build.
    for (const std::vector<int>& stops : std::vector<std::vector<int>>{
             {1}, {3, 2}, {total_steps / 2}, {total_steps - 1}, {total_steps}}) {
        CAPTURE(stops.front());
        Db ooc;
        for (const int k : stops) stop_after(ooc, VariantId::Antichess, table, kMemory, k);
        CHECK(fs::exists(table_work(ooc, name) + "/manifest"));
        CHECK_FALSE(ooc.tb().database().table_info(name).ok());
        const auto built = ooc.build(VariantId::Antichess, {table}, out_of_core(ooc, kMemory));
        CHECK(built.back().resumed);
        check_same_tables(ram.tb(), ooc.tb(), expected);
        CHECK(empty_or_missing(ooc.work()));
    }
}

TEST_CASE("damaged work files give an error, never wrong values") {
    const std::string table = "PvP";
    const std::string name = "antichess/PvP";
    constexpr std::uint64_t kMemory = 5 << 10;  // several chunks of PvP
    auto check_built = [&](Db& db, const gen::TableSummary& t) {
        const Stored& expected = in_ram_table(table);
        const Stored actual = stored(db.tb(), t.name);
        CHECK(expected.info == actual.info);
        CHECK(expected.blocks == actual.blocks);
    };

    auto expect_error = [&](Db& db, const std::string& needle) {
        auto outcome = db.run(VariantId::Antichess, {table}, out_of_core(db, kMemory));
        REQUIRE_FALSE(outcome.ok());
        const Status& e = outcome.status();
        CHECK(exit_code(e) == kExitDatabase);
        CHECK_MESSAGE(e.message().find(needle) != std::string::npos, e.message());
        CHECK(e.message().find('\n') == std::string::npos);
        CHECK_FALSE(db.tb().database().table_info(name).ok());
    };
    auto flip_byte = [](const std::string& file, std::uint64_t offset) {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        REQUIRE(f);
        f.seekg(static_cast<std::streamoff>(offset));
        char c = 0;
        f.get(c);
        f.seekp(static_cast<std::streamoff>(offset));
        f.put(static_cast<char>(c ^ 0x5A));
    };
    auto files_named = [](const std::string& dir, const std::string& prefix) {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir)) {
            if (e.path().filename().string().rfind(prefix, 0) == 0 && fs::file_size(e.path()) > 0) {
                out.push_back(e.path().string());
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    };

    SUBCASE("a flipped byte in a chunk file") {
        Db db;
        stop_after(db, VariantId::Antichess, table, kMemory, 5);
        const auto chunks = files_named(table_work(db, name), "chunk-");
        REQUIRE(!chunks.empty());
        flip_byte(chunks.front(), 64 + 10);
        expect_error(db, "damaged work file");
    }
    SUBCASE("a truncated manifest") {
        Db db;
        stop_after(db, VariantId::Antichess, table, kMemory, 5);
        const std::string manifest = table_work(db, name) + "/manifest";
        fs::resize_file(manifest, fs::file_size(manifest) - 3);
        expect_error(db, "damaged work file");
    }
    // A build stopped in a level pass with updates waiting in a bucket.
    auto stopped_with_bucket = [&](std::string& bucket) {
        for (int k = 2; k < 40; ++k) {
            auto db = std::make_unique<Db>();
            stop_after(*db, VariantId::Antichess, table, kMemory, k);
            const auto buckets = files_named(table_work(*db, name), "bucket-");
            if (buckets.empty()) continue;
            bucket = buckets.front();
            return db;
        }
        FAIL("no step leaves updates in a bucket");
        return std::unique_ptr<Db>();
    };
    SUBCASE("a bucket shorter than the manifest says") {
        std::string bucket;
        auto db = stopped_with_bucket(bucket);
        fs::resize_file(bucket, fs::file_size(bucket) - 1);
        expect_error(*db, "damaged work file");
    }
    SUBCASE("a flipped byte in a bucket") {
        std::string bucket;
        auto db = stopped_with_bucket(bucket);
        flip_byte(bucket, 20);
        expect_error(*db, "damaged work file");
    }
    SUBCASE("a manifest of another table starts the table over") {
        Db db;
        // Stop a build of KvP, then pass its work directory off as PvP's.
        stop_after(db, VariantId::Antichess, "KvP", kMemory, 2);
        prepare(db, VariantId::Antichess, table);
        fs::rename(table_work(db, "antichess/KvP"), table_work(db, name));
        const auto built = db.build(VariantId::Antichess, {table}, out_of_core(db, kMemory));
        CHECK_FALSE(built.back().resumed);
        check_built(db, built.back());
        CHECK(empty_or_missing(table_work(db, name)));
    }
    SUBCASE("another memory cap starts the table over") {
        Db db;
        stop_after(db, VariantId::Antichess, table, kMemory, 4);
        auto options = out_of_core(db, 2 * kMemory);
        const auto built = db.build(VariantId::Antichess, {table}, options);
        CHECK_FALSE(built.back().resumed);
        check_built(db, built.back());
    }
}

TEST_CASE("after the big levels, the open positions are passed in memory") {
    // Caps at which the first levels go through the chunks and the rest
    // through the sparse set.
    const std::vector<std::pair<std::string, std::uint64_t>> cases =
        test::kSanitized ? std::vector<std::pair<std::string, std::uint64_t>>{{"PvP", 5 << 10}}
                         : std::vector<std::pair<std::string, std::uint64_t>>{{"NPvQ", 64 << 10}, {"KRvN", 40 << 10}};
    for (const auto& entry : cases) {
        const auto& table = entry.first;
        const auto& memory = entry.second;
        INFO(table);
        Db ooc;
        const auto built = ooc.build(VariantId::Antichess, {table}, out_of_core(ooc, memory));
        const auto& t = built.back();
        REQUIRE(t.out_of_core);
        CHECK(t.chunks > 1);
        CHECK(t.sparse_level > 0);
        CHECK(t.sparse_level < t.max_dtc);
        const Stored& expected = in_ram_table(table);
        const Stored actual = stored(ooc.tb(), t.name);
        CHECK(expected.info == actual.info);
        CHECK(expected.blocks == actual.blocks);
        CHECK(empty_or_missing(ooc.work()));
    }
}

TEST_CASE("a build stopped in the sparse phase or its write-back resumes to the same bytes") {
    const std::string table = test::kSanitized ? "PvP" : "NPvQ";
    const std::string name = "antichess/" + table;
    const std::uint64_t memory = test::kSanitized ? 5 << 10 : 64 << 10;
    // The phase the manifest records after each step of an uninterrupted build.
    std::vector<gen::ooc::Phase> phases;
    {
        Db ooc;
        prepare(ooc, VariantId::Antichess, table);
        auto options = out_of_core(ooc, memory);
        const std::string work = table_work(ooc, name);
        options.stop_after_step = [&] {
            gen::ooc::IoCounters io;
            const auto manifest = gen::ooc::read_manifest(gen::ooc::WorkDir(work, io, false));
            REQUIRE(manifest);
            phases.push_back(manifest->phase);
            return false;
        };
        ooc.build(VariantId::Antichess, {table}, options);
    }
    auto steps_in = [&](gen::ooc::Phase phase) {
        std::vector<int> out;
        for (std::size_t k = 0; k < phases.size(); ++k) {
            if (phases[k] == phase) out.push_back(static_cast<int>(k) + 1);
        }
        return out;
    };
    const auto sparse = steps_in(gen::ooc::Phase::Sparse);
    const auto write_back = steps_in(gen::ooc::Phase::WriteBack);
    REQUIRE(sparse.size() >= 3);
    REQUIRE(write_back.size() >= 2);
    // Entering the phase, in the middle, the last level, the first and the
    // last chunk written back; twice in one build (the second count starts
    // at the resume).
    for (const std::vector<int>& stops : std::vector<std::vector<int>>{
             {sparse.front()},
             {sparse[sparse.size() / 2]},
             {sparse.back()},
             {write_back.front()},
             {write_back.back()},
             {sparse.front() + 1, 2}}) {
        CAPTURE(stops.front());
        Db ooc;
        for (const int k : stops) stop_after(ooc, VariantId::Antichess, table, memory, k);
        const auto built = ooc.build(VariantId::Antichess, {table}, out_of_core(ooc, memory));
        CHECK(built.back().resumed);
        const Stored& expected = in_ram_table(table);
        const Stored actual = stored(ooc.tb(), name);
        CHECK(expected.info == actual.info);
        CHECK(expected.blocks == actual.blocks);
        CHECK(empty_or_missing(ooc.work()));
    }

    SUBCASE("a damaged sparse words file gives an error") {
        Db db;
        stop_after(db, VariantId::Antichess, table, memory, sparse[1]);
        std::string words;
        for (const auto& e : fs::directory_iterator(table_work(db, name))) {
            if (e.path().filename().string().rfind("sparse-", 0) == 0) words = e.path().string();
        }
        REQUIRE(!words.empty());
        REQUIRE(fs::file_size(words) > 0);
        {
            std::fstream f(words, std::ios::in | std::ios::out | std::ios::binary);
            char c = 0;
            f.get(c);
            f.seekp(0);
            f.put(static_cast<char>(c ^ 0x5A));
        }
        auto outcome = db.run(VariantId::Antichess, {table}, out_of_core(db, memory));
        REQUIRE_FALSE(outcome.ok());
        const Status& e = outcome.status();
        CHECK(e.code() == StatusCode::Corruption);
        CHECK(exit_code(e) == kExitDatabase);
        CHECK_MESSAGE(e.message().find("damaged work file") != std::string::npos, e.message());
        CHECK_FALSE(db.tb().database().table_info(name).ok());
    }
}

TEST_CASE("4-unit tables out-of-core equal the in-RAM build" * doctest::test_suite("slow")) {
    // Pawnless with 8 symmetries (stabilisers), and pawns with en passant.
    check_against_in_ram(VariantId::Antichess, {"KRvKN", "PPvP", "KPvKP"}, 1 << 20, 3);
}

TEST_CASE("a 5-unit table out-of-core equals the in-RAM build" * doctest::test_suite("slow")) {
    check_against_in_ram(VariantId::Antichess, {"RBNvK"}, 4 << 20, 1);
}

TEST_CASE("a 4-unit build stopped in a level pass resumes to the same bytes" * doctest::test_suite("slow")) {
    Db ram, ooc;
    const auto expected = ram.build(VariantId::Antichess, {"KPvKP"}, in_ram());
    prepare(ooc, VariantId::Antichess, "KPvKP");  // steps then count KPvKP's own
    StepCounter counter;
    auto options = out_of_core(ooc, 1 << 20);
    options.stop_after_step = [&] { return ++counter.steps == 60; };
    auto outcome = ooc.run(VariantId::Antichess, {"KPvKP"}, options);
    REQUIRE_FALSE(outcome.ok());
    const auto built = ooc.build(VariantId::Antichess, {"KPvKP"}, out_of_core(ooc, 1 << 20));
    CHECK(built.back().resumed);
    check_same_tables(ram.tb(), ooc.tb(), expected);
}
