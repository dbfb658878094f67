// Micro-benchmarks of tbf::probe: probes per second on random positions of
// 3- and 4-unit antichess tables with a warm block cache and without one
// (every probe reads and decodes its block), on 1 and 2 threads; probe_moves
// and the C API's FEN path. Each table reports the bytes it stores per
// position (counter bytes_per_position).
//
// The tables are built by the generator on first use, into $TBF_BENCH_DB if
// set (kept, and reused by later runs) or else a scratch directory, in the
// value encoding $TBF_BENCH_ENCODING (default wdl-dtc/1), with blocks
// pair-coded as $TBF_BENCH_PAIR_CODING says (off, auto or always; default
// off: zstd).

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tbforge/gen/generate.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/rules/fen.hpp"

namespace {

using namespace tbf;
namespace fs = std::filesystem;

constexpr VariantId kVariant = VariantId::Antichess;
constexpr const char* kTables[] = {"KQvK", "KPvK", "KRvKN", "QBvK"};
constexpr std::size_t kSample = 1 << 16;

struct Workload {
    std::vector<Position> positions;
    std::vector<std::string> fens;
    double bytes_per_position = 0;
};

class Environment {
public:
    static Environment& get() {
        static Environment env;
        return env;
    }
    const std::string& path() const { return path_; }
    const Workload& workload(const std::string& table) const { return workloads_.at(table); }

    // One Tablebase per cache size and kept-record limit, shared by the
    // benchmark threads; a warm one has probed every sampled position once.
    const probe::Tablebase& tablebase(std::size_t cache_bytes, bool warm,
                                      std::size_t kept_record_bytes = probe::TablebaseOptions{}.kept_record_bytes) {
        std::lock_guard lock(mutex_);
        auto& slot = tablebases_[{cache_bytes, warm, kept_record_bytes}];
        if (!slot) {
            probe::TablebaseOptions options;
            options.cache_bytes = cache_bytes;
            options.kept_record_bytes = kept_record_bytes;
            auto tb = probe::Tablebase::open(path_, options);
            if (!tb.ok()) throw std::runtime_error(tb.status().message());
            slot = std::make_unique<probe::Tablebase>(std::move(tb).value());
            if (warm) {
                for (const auto& [name, w] : workloads_) {
                    for (const auto& pos : w.positions)
                        benchmark::DoNotOptimize(slot->probe(kVariant, pos).ok());
                }
            }
        }
        return *slot;
    }

private:
    Environment() {
        if (const char* dir = std::getenv("TBF_BENCH_DB")) {
            path_ = dir;
        } else {
            std::string pattern = (fs::temp_directory_path() / "tbf-probe-bench-XXXXXX").string();
            if (mkdtemp(pattern.data()) == nullptr) std::abort();
            scratch_ = pattern;
            path_ = scratch_ + "/db";
        }
        build();
        sample();
    }
    ~Environment() {
        tablebases_.clear();
        std::error_code ec;
        if (!scratch_.empty()) fs::remove_all(scratch_, ec);
    }

    static index::Material material(const std::string& name) {
        return index::canonical(*index::parse_table(name, kVariant));
    }

    void build() {
        storage::DatabaseOptions options;
        options.mode = storage::OpenMode::ReadWrite;
        options.create_if_missing = true;
        auto db = storage::Database::open(path_, options);
        if (!db.ok()) throw std::runtime_error(db.status().to_string());
        probe::Tablebase writer(std::move(*db));
        std::vector<index::Material> tables;
        for (const char* t : kTables) tables.push_back(material(t));
        gen::GenerateOptions generate;
        if (const char* encoding = std::getenv("TBF_BENCH_ENCODING")) generate.value_encoding = encoding;
        if (const char* pairs = std::getenv("TBF_BENCH_PAIR_CODING")) {
            const std::string coding = pairs;
            if (coding == "always") {
                generate.pair_coding = storage::PairCoding::Always;
            } else if (coding == "auto") {
                generate.pair_coding = storage::PairCoding::Auto;
            } else if (coding != "off") {
                throw std::runtime_error("TBF_BENCH_PAIR_CODING: off, auto or always, not '" + coding + "'");
            }
        }
        auto result = gen::generate(writer, kVariant, tables, generate);
        if (!result.ok()) throw std::runtime_error(result.status().message());
    }

    // Random positions of each table, half of them given in the flipped
    // colour orientation (callers do not know which one is stored).
    void sample() {
        auto tb = probe::Tablebase::open(path_);
        if (!tb.ok()) throw std::runtime_error(tb.status().message());
        std::mt19937_64 rng(2024);
        for (const char* name : kTables) {
            auto table = tb->table(kVariant, material(name));
            if (!table.ok()) throw std::runtime_error(table.status().message());
            const index::Indexer& ix = (*table)->indexer();
            Workload w;
            while (w.positions.size() < kSample) {
                auto pos = ix.position(rng() % ix.size(), static_cast<Color>(rng() & 1));
                if (!pos) continue;
                w.positions.push_back(rng() & 1 ? pos->color_flipped() : *pos);
                w.fens.push_back(to_fen(w.positions.back()));
            }
            w.bytes_per_position = static_cast<double>((*table)->info().stored_bytes) /
                                   static_cast<double>((*table)->info().spec.slot_count);
            workloads_.emplace(name, std::move(w));
        }
    }

    std::string scratch_;
    std::string path_;
    std::map<std::string, Workload> workloads_;
    std::mutex mutex_;
    std::map<std::tuple<std::size_t, bool, std::size_t>, std::unique_ptr<probe::Tablebase>> tablebases_;
};

void report(benchmark::State& state, const Workload& w) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
    state.counters["bytes_per_position"] =
        benchmark::Counter(w.bytes_per_position, benchmark::Counter::kAvgThreads);
}

// Each thread starts at its own point of the sample.
std::size_t start_of(const benchmark::State& state) {
    return static_cast<std::size_t>(state.thread_index()) * (kSample / 2 + 7919);
}

void run_probes(benchmark::State& state, const char* table, std::size_t cache_bytes, bool warm,
                std::size_t kept_record_bytes = probe::TablebaseOptions{}.kept_record_bytes) {
    auto& env = Environment::get();
    const probe::Tablebase& tb = env.tablebase(cache_bytes, warm, kept_record_bytes);
    const Workload& w = env.workload(table);
    std::size_t i = start_of(state);
    for (auto _ : state) {
        auto v = tb.probe(kVariant, w.positions[i++ % kSample]);
        if (!v.ok()) state.SkipWithError(v.status().message().c_str());
        benchmark::DoNotOptimize(v);
    }
    report(state, w);
}

// Block cache holding the whole sample's blocks.
void BM_Probe_Warm(benchmark::State& state, const char* table) {
    run_probes(state, table, std::size_t{256} << 20, true);
}

// No decoded-block cache: each probe decodes what it reads from the stored
// record (the files stay in the OS page cache), which the database finds
// without a lookup once it has read and checked it (kept records, the
// default), as a reader of a mapped file does.
void BM_Probe_Cold(benchmark::State& state, const char* table) {
    run_probes(state, table, 0, false);
}

// Cold, and no record kept either: each probe also fetches its records from
// RocksDB and checks their checksums.
void BM_Probe_ColdFetch(benchmark::State& state, const char* table) {
    run_probes(state, table, 0, false, 0);
}

// Every move with its value (one probe per child), warm cache; items are
// positions.
void BM_Probe_Moves(benchmark::State& state, const char* table) {
    auto& env = Environment::get();
    const probe::Tablebase& tb = env.tablebase(std::size_t{256} << 20, true);
    const Workload& w = env.workload(table);
    std::size_t i = start_of(state);
    for (auto _ : state) {
        auto moves = tb.probe_moves(kVariant, w.positions[i++ % kSample]);
        if (!moves.ok()) state.SkipWithError(moves.status().message().c_str());
        benchmark::DoNotOptimize(moves);
    }
    report(state, w);
}

// The C API from a FEN string: parsing and validation included.
void BM_Probe_CApiFen(benchmark::State& state, const char* table) {
    auto& env = Environment::get();
    env.tablebase(std::size_t{256} << 20, true);  // builds the tables and samples
    static tbf_db* db = [&] {
        tbf_db* handle = nullptr;
        if (tbf_open(env.path().c_str(), 0, &handle) != TBF_OK)
            throw std::runtime_error(tbf_last_error());
        return handle;
    }();
    const Workload& w = env.workload(table);
    std::size_t i = start_of(state);
    for (auto _ : state) {
        tbf_value v;
        if (tbf_probe_fen(db, "antichess", w.fens[i++ % kSample].c_str(), &v) != TBF_OK) {
            state.SkipWithError(tbf_last_error());
        }
        benchmark::DoNotOptimize(v);
    }
    report(state, w);
}

#define TBF_PROBE_BENCH(fn)                                                       \
    BENCHMARK_CAPTURE(fn, KQvK, "KQvK")->Threads(1)->Threads(2)->UseRealTime();   \
    BENCHMARK_CAPTURE(fn, KPvK, "KPvK")->Threads(1)->Threads(2)->UseRealTime();   \
    BENCHMARK_CAPTURE(fn, KRvKN, "KRvKN")->Threads(1)->Threads(2)->UseRealTime(); \
    BENCHMARK_CAPTURE(fn, QBvK, "QBvK")->Threads(1)->Threads(2)->UseRealTime()

TBF_PROBE_BENCH(BM_Probe_Warm);
TBF_PROBE_BENCH(BM_Probe_Cold);
TBF_PROBE_BENCH(BM_Probe_ColdFetch);
BENCHMARK_CAPTURE(BM_Probe_Moves, KQvK, "KQvK")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_Probe_Moves, KRvKN, "KRvKN")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_Probe_CApiFen, KRvKN, "KRvKN")->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
