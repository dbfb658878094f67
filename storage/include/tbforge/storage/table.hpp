#pragma once
// Tables: fixed-width values (1, 2 or 4 bytes) indexed by slot number, stored
// as checksummed compressed blocks of a fixed number of slots (zstd, with a
// per-table dictionary for small blocks, or LZ4). A table is written in
// slot order by a TableWriter and becomes visible only when commit() succeeds;
// a TableReader answers get(slot) through a shared decompressed-block cache.
// The on-disk format is described in docs/storage-format.md.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tbforge/base/status.hpp"

namespace tbf::storage {

namespace detail {
struct DbState;
struct BlockDecoding;
class TableWriterImpl;
}  // namespace detail

// Chosen from bench/storage measurements (docs/storage-format.md, "Block size").
inline constexpr std::uint32_t kDefaultSlotsPerBlock = 32768;
inline constexpr std::uint32_t kMinSlotsPerBlock = 1024;
inline constexpr std::uint32_t kMaxSlotsPerBlock = 1u << 20;
// Every block record, single block or group, starts with a header of this
// many bytes (docs/storage-format.md section 4).
inline constexpr std::size_t kRecordHeaderBytes = 16;

// A named 64-bit statistic, e.g. {"white.win", 123456}.
struct Counter {
    std::string name;
    std::uint64_t value = 0;

    bool operator==(const Counter&) const = default;
};

// Filled by the generator when a table is complete; storage keeps it as given.
struct TableStatistics {
    std::vector<Counter> counters;
    std::string json;  // UTF-8 JSON text (W/D/L per side, DTC histogram, ...), opaque here

    bool operator==(const TableStatistics&) const = default;
};

// What the caller says about a table before writing it.
struct TableSpec {
    std::string name;  // unique key in the database, e.g. "antichess/KQvK"; UTF-8, no NUL
    std::string variant;
    std::string material;
    std::uint64_t slot_count = 0;
    std::uint32_t value_width = 1;  // bytes per slot: 1, 2 or 4
    std::string value_encoding;     // e.g. "wdl-dtc/1": how the values are to be read
    std::string generator_version;

    bool operator==(const TableSpec&) const = default;
};

// Everything stored about a published table.
struct TableInfo {
    TableSpec spec;
    TableStatistics statistics;
    // XXH64 (seed 0) of all values in slot order, each little-endian: depends
    // only on the values, not on block size or compression.
    std::uint64_t values_checksum = 0;
    std::uint32_t format_version = 0;  // storage format version that wrote the table
    std::uint32_t slots_per_block = 0;
    std::uint64_t block_count = 0;
    std::uint64_t stored_bytes = 0;  // sum of the stored block records
    std::uint64_t storage_id = 0;    // key prefix of this version's blocks
    // Format 2: the zstd dictionary of the table's blocks (empty when it has
    // none), kept in the metadata record; not counted in stored_bytes.
    std::string dictionary;
    // Format 3: consecutive blocks stored together in one record (1 before
    // format 3), and the bytes of their compressed payloads alone (0 when
    // not recorded: tables of formats 1 and 2).
    std::uint32_t blocks_per_record = 1;
    std::uint64_t payload_bytes = 0;
    // Format 6: the pair grammar and code of a table whose compressed blocks
    // are pair-coded (docs/storage-format.md section 4; empty for zstd),
    // kept in the metadata record and counted in stored_bytes.
    std::string pair_model;

    bool operator==(const TableInfo&) const = default;
};

// The records a table's blocks are stored in: one a block before format 3,
// blocks_per_record of them to a record (the last one holding the rest)
// from format 3 on.
[[nodiscard]] inline std::uint64_t record_count(const TableInfo& info) {
    return (info.block_count + info.blocks_per_record - 1) / info.blocks_per_record;
}

// Zstd: each block is one zstd frame of the values' byte planes
// (docs/storage-format.md section 4), with a dictionary trained per table.
enum class Compression : std::uint8_t { None, Lz4, Lz4Hc, Zstd };

// Zstd tables in records of several blocks: whether their blocks are coded
// instead by a grammar of value pairs shared by the whole table and a
// Huffman code, in sub-blocks of 64 bytes that each decode on their own
// (format 6), so that reading one value without a cache decodes 64 bytes
// rather than a whole zstd frame. Auto takes the pair code where it stores
// at most (1 + pair_size_tolerance) times zstd's bytes.
enum class PairCoding : std::uint8_t { Off, Auto, Always };
inline constexpr double kDefaultPairSizeTolerance = 0.10;

struct TableWriteOptions {
    Compression compression = Compression::Lz4;
    int lz4hc_level = 9;                                    // 1..12, used with Compression::Lz4Hc
    int zstd_level = 9;                                     // 1..19, used with Compression::Zstd
    // Zstd: the shortest match its parser looks for, 3..7; 0 keeps the
    // level's own. Readers do not depend on it.
    int zstd_min_match = 0;
    // Zstd: the match finder and parser beyond the level (ZSTD_c_strategy
    // 1..9, ZSTD_c_searchLog, ZSTD_c_targetLength); 0 keeps the level's own.
    // Readers do not depend on them either (docs/storage-format.md section 12).
    int zstd_strategy = 0;
    int zstd_search_log = 0;
    int zstd_target_length = 0;
    // Zstd without a dictionary: a block whose frame takes at least
    // 1/zstd_retry_divisor of its values' bytes (it compresses least) is
    // compressed again at level zstd_retry_level with that level's own
    // parameters, and the smaller frame is kept (0: never). Readers do not
    // depend on it either.
    int zstd_retry_level = 0;
    std::size_t zstd_retry_divisor = 0;
    // Zstd: the largest dictionary (0: none), and how many raw bytes of
    // values the writer holds back to train it on.
    std::uint32_t dictionary_bytes = 4096;
    std::size_t dictionary_sample_bytes = std::size_t{16} << 20;
    std::uint32_t slots_per_block = kDefaultSlotsPerBlock;  // power of two in [kMin, kMax]
    // Blocks stored together in one record (a power of two, 1 to 256): one
    // key, header and checksum for all of them, each block still decoded on
    // its own. More than 1 writes a table of format 4 (3 without bare
    // frames).
    std::uint32_t blocks_per_record = 1;
    // Records of several blocks: their zstd blocks stored as bare frames,
    // without zstd's magic number and content size (5 bytes a block), which
    // the record already implies (format 4). false writes format 3, for
    // readers of that format.
    bool bare_zstd_frames = true;
    // With bare zstd frames: a block whose slots all hold one value is that
    // value in the group's directory, with no payload (format 5). false
    // writes format 4, for readers of that format.
    bool fills_in_directory = true;
    // Pair-coded blocks (format 6; Zstd, more than one block a record). The
    // writer then holds the table's values until commit, where the grammar
    // is built over all of them; Always falls back to zstd for a table of
    // more distinct values than the code has symbols.
    PairCoding pair_coding = PairCoding::Off;
    double pair_size_tolerance = kDefaultPairSizeTolerance;
    bool replace = false;  // allow replacing an existing table of the same name
    // Threads compressing blocks in parallel (OpenMP); worth it for LZ4HC.
    // The stored table is the same for any number.
    int compression_threads = 1;
};

// The settings of generated tables (docs/storage-format.md sections 4 and
// 12): zstd level 7 (about 25 MB/s of values on one core, within the
// generation time budget) in blocks of 16384 slots, where a trained
// dictionary no longer pays for its training time, 8 blocks a record
// (format 4: a key, header and checksum for 8 blocks instead of each, zstd
// blocks as bare frames).
[[nodiscard]] inline TableWriteOptions compact_write_options() {
    TableWriteOptions options;
    options.compression = Compression::Zstd;
    options.zstd_level = 7;
    options.slots_per_block = 16384;
    options.dictionary_bytes = 0;
    options.blocks_per_record = 8;
    return options;
}

// The zstd parser settings the generator stores values with, on top of
// compact_write_options() (docs/storage-format.md section 12): wdl-dtc/1's
// codes with matches of 6 bytes or more and a search log of 5 (1.4 % fewer
// bytes than level 7's own in 0.55 of its CPU); the compact encodings'
// codes (wdl-dtc/2 on) with the optimal parser (strategy 7), a search log
// of 6, a target length of 4095 (11 % fewer bytes) and matches of 3 bytes
// or more (0.6 % fewer than 6, for 1.09x the compression CPU), and a
// block whose frame takes an eighth of its values' bytes or more (2048 of
// a 16384-slot block of one-byte codes) compressed again at level 19 (2 %
// fewer of its bytes). Zero keeps the level's own value.
struct ZstdParser {
    int min_match = 0;
    int strategy = 0;
    int search_log = 0;
    int target_length = 0;
    int retry_level = 0;
    std::size_t retry_divisor = 0;
};
inline constexpr ZstdParser kCodesParser{6, 0, 5, 0, 0, 0};
inline constexpr ZstdParser kCompactCodesParser{3, 7, 6, 4095, 19, 8};
// The shortest match of the samples that choose a compact table's DTC side
// and group order (level 7's own parser otherwise): its codes come in runs,
// and matches of 6 bytes or more compress them faster and 2 % smaller than
// the level's 5.
inline constexpr int kCompactSampleMinMatch = 6;

inline void set_parser(const ZstdParser& parser, TableWriteOptions& options) {
    options.zstd_min_match = parser.min_match;
    options.zstd_strategy = parser.strategy;
    options.zstd_search_log = parser.search_log;
    options.zstd_target_length = parser.target_length;
    options.zstd_retry_level = parser.retry_level;
    options.zstd_retry_divisor = parser.retry_divisor;
}

// The bytes block `values` takes as the payload of a group record of the
// current format written with `options` (bare zstd frames when
// options.blocks_per_record > 1; 0 for a block of one value, which the
// group's directory holds): what a block's content costs apart from the
// record's header, key and directory. Thread-safe.
[[nodiscard]] std::size_t block_payload_bytes(std::span<const std::uint8_t> values, std::uint32_t value_width,
                                              const TableWriteOptions& options);

// The bytes of a record holding only the block `values` (little-endian, of
// `value_width` bytes each) in a table written with `options`, a trained
// dictionary aside and whatever options.blocks_per_record (in a group the
// block takes its payload and a directory entry of 1-3 bytes instead): for
// a writer choosing between candidate contents before it writes
// (docs/values.md, the DTC side of wdl-dtc/2). Thread-safe.
[[nodiscard]] std::size_t block_record_bytes(std::span<const std::uint8_t> values, std::uint32_t value_width,
                                             const TableWriteOptions& options);

// Value i of little-endian values of `width` bytes each at `bytes`.
[[nodiscard]] inline std::uint32_t value_at(const std::uint8_t* bytes, std::uint32_t width, std::size_t i) {
    const std::uint8_t* p = bytes + i * width;
    switch (width) {
        case 1: return p[0];
        case 2: return static_cast<std::uint32_t>(p[0] | (p[1] << 8));
        default:
            return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                   (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
    }
}

// The decoded values of one block. Immutable, shared between the cache and
// callers.
class Block {
public:
    Block(std::uint64_t block_no, std::uint64_t first_slot, std::uint32_t slot_count,
          std::uint32_t value_width, std::unique_ptr<std::uint8_t[]> bytes);

    [[nodiscard]] std::uint64_t block_no() const { return block_no_; }
    [[nodiscard]] std::uint64_t first_slot() const { return first_slot_; }
    [[nodiscard]] std::uint32_t size() const { return slot_count_; }  // number of slots
    [[nodiscard]] std::uint32_t value_width() const { return width_; }

    // Value of slot first_slot() + i. Precondition: i < size().
    [[nodiscard]] std::uint32_t value(std::size_t i) const { return value_at(bytes_.get(), width_, i); }
    // size() * value_width() bytes, little-endian values.
    [[nodiscard]] std::span<const std::uint8_t> bytes() const {
        return {bytes_.get(), static_cast<std::size_t>(slot_count_) * width_};
    }

private:
    std::uint64_t block_no_;
    std::uint64_t first_slot_;
    std::uint32_t slot_count_;
    std::uint32_t width_;
    std::unique_ptr<std::uint8_t[]> bytes_;
};

using BlockRef = std::shared_ptr<const Block>;

enum class CacheUse : std::uint8_t {
    Fill,    // keep the decoded block in the cache (random probing)
    Bypass,  // use a cached copy if present, but do not insert (one pass over a table)
};

// While one lives on a thread, the blocks that thread reads from a
// database without a decoded-block cache (block_cache_bytes 0) are kept
// until the outermost scope ends: one lookup that reads the same block
// again (a probe's one-ply search, and the probes of its children) decodes
// it once. Scopes nest; only the outermost one keeps blocks. Blocks are not
// kept from one scope to the next: across lookups that is the cache's job.
class ReadScope {
public:
    ReadScope() noexcept;
    ~ReadScope();
    ReadScope(const ReadScope&) = delete;
    ReadScope& operator=(const ReadScope&) = delete;
};

// Read access to one published table. Cheap to copy; all const methods may be
// called from many threads at once. Keeps its database open while it exists.
// Reads see the table version that was opened: if the table is deleted or
// replaced by this process afterwards, reads of uncached blocks report
// NotFound.
class TableReader {
public:
    [[nodiscard]] const TableInfo& info() const { return *info_; }

    // Value of `slot`. Errors: InvalidArgument (slot out of range),
    // ChecksumMismatch / Corruption (a damaged block: never a wrong value),
    // NotFound (block missing), IoError.
    [[nodiscard]] Result<std::uint32_t> get(std::uint64_t slot) const;

    // Whether get() reads a value without decoding its whole block (a
    // pair-coded table read without a block cache): a caller reading several
    // values of one block then does better with get() than read_block().
    [[nodiscard]] bool reads_single_values() const;

    // All values of block `block_no` (slots [block_no * slots_per_block, ...)).
    [[nodiscard]] Result<BlockRef> read_block(std::uint64_t block_no,
                                              CacheUse cache = CacheUse::Fill) const;

    // Blocks are stored in records of info().blocks_per_record blocks
    // (format 3; one block a record before). A pass over the whole table
    // reads record by record: one fetch and checksum for all its blocks,
    // decoded and returned in order, the cache neither read nor filled.
    [[nodiscard]] std::uint64_t record_count() const;
    [[nodiscard]] Result<std::vector<BlockRef>> read_record(std::uint64_t record_no) const;

    // Reads every block once (bypassing the cache), checks every record's
    // checksum, RocksDB's checksum of every SST block holding one (which
    // value reads check only when a record's own check fails) and the
    // whole-table values checksum.
    [[nodiscard]] Status verify() const;

private:
    friend class Database;
    TableReader(std::shared_ptr<detail::DbState> db, std::shared_ptr<const TableInfo> info);

    std::shared_ptr<detail::DbState> db_;
    std::shared_ptr<const TableInfo> info_;
    std::shared_ptr<const detail::BlockDecoding> decoding_;
    unsigned block_shift_ = 0;
};

// Streams the values of one table, in slot order, into a staging file; the
// table is published atomically by commit(). Destroying a writer that was not
// committed discards everything it wrote. Not thread-safe: one thread at a
// time per writer (different writers may run in parallel).
class TableWriter {
public:
    TableWriter(TableWriter&&) noexcept;
    TableWriter& operator=(TableWriter&&) noexcept;
    ~TableWriter();

    [[nodiscard]] const TableSpec& spec() const;
    [[nodiscard]] std::uint64_t slots_written() const;

    // Appends the next values; the overload must match spec().value_width.
    // After any error the writer is failed and later calls return Aborted.
    [[nodiscard]] Status append(std::span<const std::uint8_t> values);
    [[nodiscard]] Status append(std::span<const std::uint16_t> values);
    [[nodiscard]] Status append(std::span<const std::uint32_t> values);

    // Requires exactly spec().slot_count values. Publishes the table (and, with
    // `replace`, retires the previous version) in one atomic step.
    [[nodiscard]] Status commit(const TableStatistics& statistics = {});

    // Discards the staged data; the database is unchanged.
    void abort();

private:
    friend class Database;
    explicit TableWriter(std::unique_ptr<detail::TableWriterImpl> impl);

    std::unique_ptr<detail::TableWriterImpl> impl_;
};

}  // namespace tbf::storage
