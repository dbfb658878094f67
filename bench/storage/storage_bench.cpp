// Micro-benchmarks of tbf::storage: write throughput and stored bytes per
// value, random get() with a warm and a cold block cache, sequential block
// streaming, the block-size trade-off, and the two ways of publishing a
// table atomically (SST ingestion, used; WAL-less write batches, measured
// for comparison). Values follow a realistic distribution: runs of equal
// values, mostly draws and small distances, some unused-slot markers.

#include <benchmark/benchmark.h>
#include <lz4.h>
#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tbforge/storage/database.hpp"

namespace {

using namespace tbf::storage;
using tbf::Status;
namespace fs = std::filesystem;

// A scratch directory under the system temp dir, removed at scope exit.
class Scratch {
public:
    Scratch() {
        std::string pattern = (fs::temp_directory_path() / "tbf-bench-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) std::abort();
        path_ = pattern;
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    [[nodiscard]] std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// prefix + decimal n (spelled out so that GCC 12 does not warn, PR 105329).
template <class N>
std::string numbered(std::string prefix, N n) {
    prefix += std::to_string(n);
    return prefix;
}

// Realistic table contents: a value repeats with probability 0.85, else a
// fresh one is drawn: 40% draw (0), 10% unused-slot marker (max value), 35%
// a short distance (1..16, geometric), 15% a longer one.
template <class T>
std::vector<T> realistic_values(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::geometric_distribution<int> short_dtc(0.25);
    const int long_max = sizeof(T) == 1 ? 120 : 600;
    std::vector<T> v(n);
    T current = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (u(rng) >= 0.85) {
            const double r = u(rng);
            if (r < 0.40) {
                current = 0;
            } else if (r < 0.50) {
                current = static_cast<T>(~T{0});
            } else if (r < 0.85) {
                current = static_cast<T>(1 + std::min(short_dtc(rng), 15));
            } else {
                current = static_cast<T>(17 + rng() % static_cast<std::uint64_t>(long_max - 16));
            }
        }
        v[i] = current;
    }
    return v;
}

constexpr std::size_t kWriteSlots = std::size_t{16} << 20;
constexpr std::size_t kReadSlots = std::size_t{32} << 20;

const std::vector<std::uint8_t>& values8() {
    static const auto v = realistic_values<std::uint8_t>(kWriteSlots, 1);
    return v;
}
const std::vector<std::uint16_t>& values16() {
    static const auto v = realistic_values<std::uint16_t>(kReadSlots, 2);
    return v;
}

Database open_rw(const std::string& path, std::size_t cache_bytes = std::size_t{256} << 20) {
    DatabaseOptions o;
    o.mode = OpenMode::ReadWrite;
    o.create_if_missing = true;
    o.block_cache_bytes = cache_bytes;
    auto db = Database::open(path, o);
    if (!db.ok()) {
        std::fprintf(stderr, "%s\n", db.status().to_string().c_str());
        std::abort();
    }
    return std::move(*db);
}

void check(const Status& s) {
    if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.to_string().c_str());
        std::abort();
    }
}

template <class T>
TableInfo write_table(Database& db, const std::string& name, const std::vector<T>& values,
                      const TableWriteOptions& options) {
    TableSpec spec;
    spec.name = name;
    spec.slot_count = values.size();
    spec.value_width = sizeof(T);
    auto w = db.create_table(spec, options);
    check(w.status());
    // Appended in pieces of 1 MiB, as a generator streaming its output would.
    constexpr std::size_t kPiece = std::size_t{1} << 20;
    for (std::size_t at = 0; at < values.size(); at += kPiece) {
        const std::size_t n = std::min(kPiece, values.size() - at);
        check(w->append(std::span<const T>(values.data() + at, n)));
    }
    check(w->commit());
    return *db.table_info(name);
}

template <class T>
void run_write(benchmark::State& state, const std::vector<T>& values, TableWriteOptions options) {
    Scratch dir;
    Database db = open_rw(dir.sub("db"));
    TableInfo info;
    int n = 0;
    for (auto _ : state) {
        info = write_table(db, numbered("t", n++), values, options);
    }
    const double count = static_cast<double>(values.size());
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * values.size()));
    state.SetBytesProcessed(
        static_cast<std::int64_t>(state.iterations() * values.size() * sizeof(T)));
    state.counters["stored_bytes_per_value"] = static_cast<double>(info.stored_bytes) / count;
    state.counters["ratio"] = count * sizeof(T) / static_cast<double>(info.stored_bytes);
}

// Args: compression (0 none, 1 LZ4, 2 LZ4HC), LZ4HC level, compression threads.
void write_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"codec", "level", "threads"});
    b->Args({0, 0, 1})->Args({1, 0, 1})->Args({1, 0, 2});
    b->Args({2, 4, 1})->Args({2, 4, 2})->Args({2, 9, 1})->Args({2, 9, 2});
    b->Unit(benchmark::kMillisecond)->UseRealTime();
}

TableWriteOptions write_options(const benchmark::State& state) {
    TableWriteOptions o;
    o.compression = static_cast<Compression>(state.range(0));
    o.lz4hc_level = state.range(1) > 0 ? static_cast<int>(state.range(1)) : o.lz4hc_level;
    o.compression_threads = static_cast<int>(state.range(2));
    return o;
}

void BM_Storage_Write8(benchmark::State& state) {
    run_write(state, values8(), write_options(state));
}
BENCHMARK(BM_Storage_Write8)->Apply(write_args);

void BM_Storage_Write16(benchmark::State& state) {
    run_write(state, values16(), write_options(state));
}
BENCHMARK(BM_Storage_Write16)->Apply(write_args);

// A database with one 32M-slot 2-byte table per block size, shared by the
// read benchmarks; built on first use.
class ReadFixture {
public:
    static ReadFixture& get() {
        static ReadFixture f;
        return f;
    }
    [[nodiscard]] std::string path() const { return dir_.sub("db"); }
    [[nodiscard]] static std::string name(std::uint32_t spb) { return numbered("t", spb); }
    [[nodiscard]] const TableInfo& info(std::uint32_t spb) const {
        for (const auto& i : infos_) {
            if (i.slots_per_block == spb) return i;
        }
        std::abort();
    }

private:
    ReadFixture() {
        Database db = open_rw(path());
        for (std::uint32_t spb : kBlockSizes) {
            TableWriteOptions o;
            o.slots_per_block = spb;
            infos_.push_back(write_table(db, name(spb), values16(), o));
        }
    }

public:
    static constexpr std::uint32_t kBlockSizes[] = {4096, 8192, 16384, 32768, 65536, 131072};

private:
    Scratch dir_;
    std::vector<TableInfo> infos_;
};

Database open_reader(std::size_t cache_bytes) {
    DatabaseOptions o;
    o.block_cache_bytes = cache_bytes;
    auto db = Database::open(ReadFixture::get().path(), o);
    check(db.status());
    return std::move(*db);
}

// Random get() with every block already cached (the whole table fits).
void BM_Storage_GetWarm(benchmark::State& state) {
    static Database db = open_reader(std::size_t{1} << 30);
    // Static initialisation runs once, before any thread starts timing.
    static const TableReader reader = [] {
        TableReader r = *db.open_table(ReadFixture::name(kDefaultSlotsPerBlock));
        for (std::uint64_t b = 0; b < r.info().block_count; ++b) check(r.read_block(b).status());
        return r;
    }();
    std::mt19937_64 rng(42 + state.thread_index());
    const std::uint64_t slots = reader.info().spec.slot_count;
    const auto& expected = values16();
    std::uint64_t wrong = 0;
    for (auto _ : state) {
        const std::uint64_t slot = rng() % slots;
        auto v = reader.get(slot);
        wrong += !v.ok() || *v != expected[slot];
    }
    if (wrong != 0) state.SkipWithError("wrong values");
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Storage_GetWarm)->Threads(1)->Threads(2)->UseRealTime();

// Random get() with no block cache: every call fetches, checks and decodes a
// block (the OS page cache still holds the file). Arg: slots per block.
void BM_Storage_GetCold(benchmark::State& state) {
    static Database db = open_reader(0);
    const auto spb = static_cast<std::uint32_t>(state.range(0));
    const TableReader reader = *db.open_table(ReadFixture::name(spb));
    std::mt19937_64 rng(7 + state.thread_index());
    const std::uint64_t slots = reader.info().spec.slot_count;
    const auto& expected = values16();
    std::uint64_t wrong = 0;
    for (auto _ : state) {
        const std::uint64_t slot = rng() % slots;
        auto v = reader.get(slot);
        wrong += !v.ok() || *v != expected[slot];
    }
    if (wrong != 0) state.SkipWithError("wrong values");
    state.SetItemsProcessed(state.iterations());
    state.counters["stored_bytes_per_value"] = benchmark::Counter(
        static_cast<double>(ReadFixture::get().info(spb).stored_bytes) / static_cast<double>(slots),
        benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_Storage_GetCold)
    ->ArgName("spb")
    ->Arg(4096)
    ->Arg(8192)
    ->Arg(16384)
    ->Arg(32768)
    ->Arg(65536)
    ->Arg(131072)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_Storage_GetCold)
    ->ArgName("spb")
    ->Arg(kDefaultSlotsPerBlock)
    ->Threads(2)
    ->UseRealTime();

// Every block in order, as a verifier streams a table (cache bypassed).
void BM_Storage_StreamBlocks(benchmark::State& state) {
    static Database db = open_reader(0);
    const auto spb = static_cast<std::uint32_t>(state.range(0));
    const TableReader reader = *db.open_table(ReadFixture::name(spb));
    const auto& expected = values16();
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (std::uint64_t b = 0; b < reader.info().block_count; ++b) {
            auto block = reader.read_block(b, CacheUse::Bypass);
            check(block.status());
            sum += (*block)->value(0);
        }
    }
    benchmark::DoNotOptimize(sum);
    if (sum != state.iterations() * [&] {
            std::uint64_t s = 0;
            for (std::uint64_t b = 0; b < reader.info().block_count; ++b) s += expected[b * spb];
            return s;
        }()) {
        state.SkipWithError("wrong values");
    }
    const auto slots = reader.info().spec.slot_count;
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * slots));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * slots * 2));
}
BENCHMARK(BM_Storage_StreamBlocks)
    ->ArgName("spb")
    ->Arg(4096)
    ->Arg(kDefaultSlotsPerBlock)
    ->Arg(131072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- Publishing: SST ingestion (what TableWriter does) against WAL-less
// write batches followed by a flush and a synced metadata write. Both write
// kTables tables of 16M one-byte values into one database; the counter
// disk_bytes_per_value counts everything RocksDB wrote (flushes, compactions,
// ingested files), i.e. the write amplification on top of the LZ4 data.
constexpr int kTables = 8;

void BM_Storage_PublishIngest(benchmark::State& state) {
    std::uint64_t stored = 0;
    for (auto _ : state) {
        state.PauseTiming();
        {
            Scratch dir;
            Database db = open_rw(dir.sub("db"));
            state.ResumeTiming();
            for (int t = 0; t < kTables; ++t) {
                stored += write_table(db, numbered("t", t), values8(), {}).stored_bytes;
            }
            state.PauseTiming();
        }
        state.ResumeTiming();
    }
    const double values = static_cast<double>(state.iterations()) * kTables * kWriteSlots;
    state.SetItemsProcessed(static_cast<std::int64_t>(values));
    // Ingestion links the staged file: the data is written exactly once.
    state.counters["disk_bytes_per_value"] = static_cast<double>(stored) / values;
}
BENCHMARK(BM_Storage_PublishIngest)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

void BM_Storage_PublishWriteBatch(benchmark::State& state) {
    const auto& values = values8();
    const std::size_t spb = kDefaultSlotsPerBlock;
    std::uint64_t disk_bytes = 0;
    for (auto _ : state) {
        state.PauseTiming();
        Scratch dir;
        rocksdb::Options o;
        o.create_if_missing = true;
        o.compression = rocksdb::kNoCompression;
        o.statistics = rocksdb::CreateDBStatistics();
        rocksdb::BlockBasedTableOptions t;
        t.no_block_cache = true;
        o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
        rocksdb::DB* db = nullptr;
        if (!rocksdb::DB::Open(o, dir.sub("db"), &db).ok()) std::abort();
        state.ResumeTiming();
        std::string compressed(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(spb))),
                               '\0');
        for (int table = 0; table < kTables; ++table) {
            rocksdb::WriteOptions no_wal;
            no_wal.disableWAL = true;
            rocksdb::WriteBatch batch;
            for (std::size_t at = 0, block = 0; at < values.size(); at += spb, ++block) {
                const int n = LZ4_compress_default(
                    reinterpret_cast<const char*>(values.data() + at), compressed.data(),
                    static_cast<int>(spb), static_cast<int>(compressed.size()));
                std::string key = numbered("b", table) + numbered("/", 1000000 + block);
                batch.Put(key, rocksdb::Slice(compressed.data(), static_cast<std::size_t>(n)));
                if (batch.GetDataSize() > (std::size_t{4} << 20)) {
                    if (!db->Write(no_wal, &batch).ok()) std::abort();
                    batch.Clear();
                }
            }
            if (!db->Write(no_wal, &batch).ok()) std::abort();
            // Durable blocks first, then the metadata that makes them visible.
            if (!db->Flush(rocksdb::FlushOptions()).ok()) std::abort();
            rocksdb::WriteOptions synced;
            synced.sync = true;
            if (!db->Put(synced, numbered("m", table), "metadata").ok()) std::abort();
        }
        state.PauseTiming();
        // Let the compactions the flushes triggered finish: they are part of
        // the cost of this scheme.
        for (;;) {
            std::uint64_t pending = 0;
            std::uint64_t running = 0;
            db->GetIntProperty("rocksdb.compaction-pending", &pending);
            db->GetIntProperty("rocksdb.num-running-compactions", &running);
            if (pending == 0 && running == 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        disk_bytes += o.statistics->getTickerCount(rocksdb::FLUSH_WRITE_BYTES) +
                      o.statistics->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
        delete db;
        state.ResumeTiming();
    }
    const double values_written = static_cast<double>(state.iterations()) * kTables * kWriteSlots;
    state.SetItemsProcessed(static_cast<std::int64_t>(values_written));
    state.counters["disk_bytes_per_value"] = static_cast<double>(disk_bytes) / values_written;
}
BENCHMARK(BM_Storage_PublishWriteBatch)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace
