#include "tbforge/gen/generate.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <span>
#include <unordered_map>

#include "free_slots.hpp"
#include "group_order.hpp"
#include "out_of_core.hpp"
#include "table_build.hpp"
#include "wdl_table.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/rules/fen.hpp"

namespace tbf::gen {

namespace {

// 4 bits per (colour, unit type): a key for the material of a position.
std::uint64_t material_key(const Position& pos) {
    std::uint64_t key = 0;
    for (int c = 0; c < 2; ++c) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 |
                  static_cast<std::uint64_t>(popcount(pos.units(static_cast<Color>(c), static_cast<UnitType>(t))));
        }
    }
    return key;
}

std::uint64_t material_key(const index::Material& m) {
    std::uint64_t key = 0;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 | static_cast<std::uint64_t>(m.count(c, static_cast<UnitType>(t)));
        }
    }
    return key;
}

// Sub-tables of one table, found by the material of a child position in
// either colour orientation: resident by their WDL (wdl_table.hpp), or, in
// an out-of-core build whose sub-tables do not fit, read through the
// database's block cache.
class SubtableValues {
public:
    void add(const index::Material& m, std::shared_ptr<const WdlTable> table) {
        tables_.push_back({material_key(m), false, table, nullptr});
        tables_.push_back({material_key(m.flipped()), true, std::move(table), nullptr});
    }
    void add(const index::Material& m, std::shared_ptr<const probe::Table> table) {
        tables_.push_back({material_key(m), false, nullptr, table});
        tables_.push_back({material_key(m.flipped()), true, nullptr, std::move(table)});
    }
    // Called from parallel loops, so failures are recorded, not thrown.
    // Only the WDL counts: every move into a sub-table converts.
    probe::Value value(const Position& pos) const {
        if (pos.units(pos.side_to_move()) == 0) return {Wdl::Win, 0};
        if (pos.units(~pos.side_to_move()) == 0) return {Wdl::Loss, 0};
        const std::uint64_t key = material_key(pos);
        for (const Entry& entry : tables_) {
            if (entry.key != key) continue;
            const index::Indexer& ix = entry.wdl ? entry.wdl->indexer() : entry.table->indexer();
            const index::Index slot = ix.index_oriented(pos, entry.color_flipped);
            if (slot == index::kNoIndex) break;
            const Color side = entry.color_flipped ? ~pos.side_to_move() : pos.side_to_move();
            if (entry.wdl) return entry.wdl->value(side, slot);
            // A wdl-dtc/2 table answers by its stored WDL or a one-ply look
            // at its own sub-tables.
            auto wdl = entry.table->wdl(side, slot);
            if (wdl.ok()) return probe::Value{*wdl, 0};
            break;
        }
        std::lock_guard lock(mutex_);
        if (error_.empty()) error_ = "no sub-table value for " + to_fen(pos);
        return {};
    }
    // The resident table value() reads for a material, if any.
    ResidentSubtable resident(const index::Material& m) const {
        const std::uint64_t key = material_key(m);
        for (const Entry& entry : tables_) {
            if (entry.key == key) return {entry.wdl.get(), entry.color_flipped};
        }
        return {};
    }
    // Drops every table, keeping the first failure any of them recorded.
    void release() {
        std::string first = error();
        std::lock_guard lock(mutex_);
        error_ = std::move(first);
        tables_.clear();
    }
    // The first failure of value() or of a resident table's, empty if none.
    std::string error() const {
        {
            std::lock_guard lock(mutex_);
            if (!error_.empty()) return error_;
        }
        for (const Entry& entry : tables_) {
            if (!entry.wdl) continue;
            if (std::string error = entry.wdl->error(); !error.empty()) return error;
        }
        return {};
    }

private:
    struct Entry {
        std::uint64_t key;  // material_key of the positions it holds
        bool color_flipped;
        std::shared_ptr<const WdlTable> wdl;        // resident, or
        std::shared_ptr<const probe::Table> table;  // through the block cache
    };
    mutable std::mutex mutex_;
    mutable std::string error_;
    // A table converts into a dozen sub-tables at most: a scan beats hashing.
    std::vector<Entry> tables_;
};

class ProgressLine {
public:
    ProgressLine(bool enabled, std::string table) : enabled_(enabled), table_(std::move(table)) {}
    void update(const char* pass, int level, std::uint64_t done, std::uint64_t total) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(250)) return;
        last_ = now;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        char line[200];
        if (level < 0) {
            const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
            const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
            std::snprintf(line, sizeof line, "\r%s: %s %5.1f%%  %.2fM pos/s  ETA %.0fs   ",
                          table_.c_str(), pass, 100.0 * static_cast<double>(done) / static_cast<double>(total),
                          rate / 1e6, eta);
        } else {
            std::snprintf(line, sizeof line, "\r%s: level %d  %llu/%llu  %.0fs elapsed        ",
                          table_.c_str(), level, static_cast<unsigned long long>(done),
                          static_cast<unsigned long long>(total), elapsed);
        }
        std::fputs(line, stderr);
    }
    void finish() {
        if (enabled_) std::fputs("\r\033[K", stderr);
    }

private:
    bool enabled_;
    std::string table_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_{};
};

struct Statistics {
    storage::TableStatistics stored;
    int max_dtc = 0;
};

// Statistics of a table from its final values, fed in slot order (White to
// move first): W/D/L per side, DTC histograms, the first longest win.
class StatisticsAccumulator {
public:
    // Codes are counted, and turned into values once at the end: the loop
    // over every code of the table is then an increment per code, spread
    // over four count arrays so that a run of equal codes does not wait on
    // the increment before. A long span is split between the threads, each
    // with counts of its own (the store's producer runs between the
    // writer's parallel batches, so its serial part is what they wait for).
    void add(Color side, std::uint64_t first, std::span<const std::uint16_t> codes) {
        const int c = to_index(side);
        const std::size_t n = codes.size();
        constexpr std::size_t kParallelCodes = std::size_t{1} << 18;
        const int team = n >= kParallelCodes ? omp_get_max_threads() : 1;
        if (threads_.size() < static_cast<std::size_t>(team)) threads_.resize(static_cast<std::size_t>(team));
        std::vector<Longest> longest(static_cast<std::size_t>(team));
#pragma omp parallel num_threads(team) if (team > 1)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num());
            const auto parts = static_cast<std::size_t>(omp_get_num_threads());
            const std::size_t begin = n * t / parts;
            const std::size_t end = n * (t + 1) / parts;
            SideCounts& counts = threads_[t][c];
            // Local pointers to the codes and the lanes: an increment through
            // a lane then cannot be taken for a write to them, and they stay
            // in registers.
            const std::uint16_t* const in = codes.data();
            std::uint32_t* const lane0 = counts.lanes[0].data();
            std::uint32_t* const lane1 = counts.lanes[1].data();
            std::uint32_t* const lane2 = counts.lanes[2].data();
            std::uint32_t* const lane3 = counts.lanes[3].data();
            std::size_t k = begin;
            for (; k + 4 <= end; k += 4) {
                count(counts, lane0, in[k]);
                count(counts, lane1, in[k + 1]);
                count(counts, lane2, in[k + 2]);
                count(counts, lane3, in[k + 3]);
            }
            for (; k < end; ++k) count(counts, lane0, in[k]);
            // The first slot of the longest win: the largest odd code of the
            // range in one vectorised pass (even codes masked to 0), its
            // first slot looked for only when it is new.
            std::uint16_t largest = 0;
            for (k = begin; k < end; ++k) {
                const unsigned code = in[k];
                largest = std::max(largest, static_cast<std::uint16_t>(code & (0u - (code & 1u))));
            }
            if (largest > longest[t].code) {
                k = begin;
                while (in[k] != largest) ++k;
                longest[t] = {largest, first + k};
            }
            counts.pending += end - begin;
            if (counts.pending > kFlushAfter) flush(counts);
        }
        // In slot order, a longer win only where strictly longer: the first.
        for (const Longest& found : longest) {
            if (found.code > longest_[c].code) longest_[c] = found;
        }
    }

    Statistics finish(const index::Indexer& ix) {
        std::array<std::array<std::uint64_t, 3>, 2> wdl{};  // loss, draw, win
        std::vector<std::uint64_t> win_histogram, loss_histogram;
        int max_dtc = 0;
        for (int c = 0; c < 2; ++c) {
            std::vector<std::uint64_t> totals;
            for (auto& thread : threads_) {
                flush(thread[c]);
                if (totals.size() < thread[c].totals.size()) totals.resize(thread[c].totals.size(), 0);
                for (std::size_t code = 0; code < thread[c].totals.size(); ++code) totals[code] += thread[c].totals[code];
            }
            for (std::size_t code = 1; code < totals.size(); ++code) {
                if (totals[code] == 0) continue;
                const probe::Value value = probe::decode_value(static_cast<std::uint16_t>(code));
                auto& histogram = value.wdl == Wdl::Win ? win_histogram : loss_histogram;
                if (histogram.size() <= value.dtc) histogram.resize(value.dtc + 1);
                histogram[value.dtc] += totals[code];
                wdl[c][value.wdl == Wdl::Win ? 2 : 0] += totals[code];
                max_dtc = std::max<int>(max_dtc, value.dtc);
            }
        }
        // White's first longest win, unless Black's is longer (slot order).
        const int longest_c = longest_[1].code > longest_[0].code ? 1 : 0;
        const int longest_win = longest_[longest_c].code == 0 ? -1 : (longest_[longest_c].code - 1) / 2;
        Statistics out;
        out.max_dtc = max_dtc;
        // Draws are what remains of the valid positions: stored zeros include
        // invalid slots.
        std::array<std::uint64_t, 2> valid_per_side{};
        for (int c = 0; c < 2; ++c) {
            std::uint64_t n = 0;
            const auto side = static_cast<Color>(c);
            if (ix.every_slot_valid()) {
                n = ix.size();
            } else {
#pragma omp parallel for reduction(+ : n) schedule(static)
                for (std::int64_t i = 0; i < static_cast<std::int64_t>(ix.size()); ++i) {
                    n += ix.is_valid(static_cast<std::uint64_t>(i), side);
                }
            }
            valid_per_side[c] = n;
            wdl[c][1] = n - wdl[c][0] - wdl[c][2];
        }
        const char* sides[2] = {"white", "black"};
        Json json = Json::object();
        for (int c = 0; c < 2; ++c) {
            json[sides[c]] = Json{{"win", wdl[c][2]}, {"draw", wdl[c][1]}, {"loss", wdl[c][0]}};
            out.stored.counters.push_back({std::string(sides[c]) + ".valid", valid_per_side[c]});
            out.stored.counters.push_back({std::string(sides[c]) + ".win", wdl[c][2]});
            out.stored.counters.push_back({std::string(sides[c]) + ".draw", wdl[c][1]});
            out.stored.counters.push_back({std::string(sides[c]) + ".loss", wdl[c][0]});
        }
        out.stored.counters.push_back({"max_dtc", static_cast<std::uint64_t>(out.max_dtc)});
        json["max_dtc"] = out.max_dtc;
        json["win_dtc_histogram"] = win_histogram;
        json["loss_dtc_histogram"] = loss_histogram;
        if (longest_win >= 0) {
            auto pos = ix.position(longest_[longest_c].index, static_cast<Color>(longest_c));
            json["longest_win"] = Json{{"dtc", longest_win}, {"fen", pos ? to_fen(*pos) : std::string()}};
        }
        out.stored.json = to_json_line(json);
        return out;
    }

private:
    // Codes below kSmallCodes (distances below 2048) are counted in 32-bit
    // lanes, flushed into the 64-bit totals before any lane could overflow;
    // larger ones straight into the totals.
    static constexpr std::size_t kSmallCodes = 4096;
    static constexpr std::uint64_t kFlushAfter = std::uint64_t{1} << 31;
    struct SideCounts {
        SideCounts() {
            for (std::vector<std::uint32_t>& lane : lanes) lane.assign(kSmallCodes, 0);
        }
        std::array<std::vector<std::uint32_t>, 4> lanes;
        std::vector<std::uint64_t> totals;
        std::uint64_t pending = 0;  // codes counted in the lanes since the last flush
    };
    struct Longest {
        std::uint16_t code = 0;  // the largest odd (winning) code, 0 if none
        std::uint64_t index = 0;
    };
    static void count(SideCounts& counts, std::uint32_t* lane, std::uint16_t code) {
        if (code < kSmallCodes) [[likely]] {
            ++lane[code];
            return;
        }
        if (counts.totals.size() <= code) counts.totals.resize(std::size_t{code} + 1, 0);
        ++counts.totals[code];
    }
    static void flush(SideCounts& counts) {
        if (counts.totals.size() < kSmallCodes) counts.totals.resize(kSmallCodes, 0);
        for (std::vector<std::uint32_t>& lane : counts.lanes) {
            for (std::size_t code = 0; code < lane.size(); ++code) counts.totals[code] += lane[code];
            std::fill(lane.begin(), lane.end(), 0);
        }
        counts.pending = 0;
    }

    std::vector<std::array<SideCounts, 2>> threads_ = std::vector<std::array<SideCounts, 2>>(1);
    std::array<Longest, 2> longest_{};
};

// Final values of a table in slot order, White to move first, handed to a
// sink piece by piece: whichever builder produced them, they are stored and
// counted by the same code. A source may be run more than once (wdl-dtc/2
// reads the values twice); `last` says it will not be run again.
using ValueSink = std::function<void(Color side, std::uint64_t first, std::span<const std::uint16_t> codes)>;
using ValueSource = std::function<void(const ValueSink&, bool last)>;

struct Stored {
    std::uint64_t stored_bytes = 0;
    int max_dtc = 0;
};

// A database failure keeps its code; the message names the step and the table.
Status database_failure(const char* step, const std::string& name, const Status& cause) {
    return {cause.code(), std::string(step) + " " + name + ": " + cause.to_string()};
}

// Tables of at most this many slots a side are read for storing both sides
// at once, Black's codes kept meanwhile (2 bytes a slot: 128 MiB at most,
// within the 4 bytes an exact slot that plan_memory counts for renumbered
// values).
constexpr std::uint64_t kBothSidesReadSlots = std::uint64_t{1} << 26;

// How a compact table's blocks are laid out, from the sampled blocks that
// hold more than one code (one record each, of the default size; a block
// of one code is a fill in any layout). A table whose blocks compress to a
// few hundred bytes loses much of each to the fixed parts of a frame (its
// headers and entropy tables) and to its record's directory: it is stored
// in blocks of 4 times the slots below kSmallBlockPayload, twice below
// kMidBlockPayload, where the same values take a third and a sixth fewer
// bytes, for a cold probe that decodes 64 or 32 KiB of long repeats
// (docs/storage-format.md section 11). Blocks share a record (its key,
// 16-byte header and checksum) as many at a time as keep it near
// kRecordTargetBytes, from the writer's eight up to the 256 a record may
// hold, so a cold read still fetches and checks about that much at most.
// A table of fewer than kLargerBlocksMinBlocks blocks keeps its blocks:
// larger ones would save a few dozen bytes in all (3 % of the tables of up
// to 3 units, 10 KB), while every cold read of it, and the small tables are
// read by each table that converts into them, would decode up to 4 times
// the slots (bench/storage/README.md, "small tables keep their blocks").
constexpr std::uint64_t kSmallBlockPayload = 256;
constexpr std::uint64_t kMidBlockPayload = 1024;
constexpr std::uint64_t kRecordTargetBytes = 4096;
constexpr std::uint64_t kLargerBlocksMinBlocks = 16;

void choose_compact_layout(std::uint64_t slot_count, std::uint64_t sampled_record_bytes, std::uint64_t sampled_blocks,
                           bool group_given, storage::TableWriteOptions& write_options) {
    // Every sampled block a fill: the table's blocks are as small as they get.
    const std::uint64_t record = sampled_blocks == 0 ? 0 : sampled_record_bytes / sampled_blocks;
    std::uint64_t payload = record > storage::kRecordHeaderBytes ? record - storage::kRecordHeaderBytes : 1;
    const bool small_table = slot_count < kLargerBlocksMinBlocks * write_options.slots_per_block;
    const std::uint32_t factor = small_table                   ? 1
                                 : payload < kSmallBlockPayload ? 4
                                 : payload < kMidBlockPayload   ? 2
                                                                : 1;
    write_options.slots_per_block *= factor;
    payload *= factor;
    if (group_given) return;
    const std::uint64_t fit = std::bit_floor(std::max<std::uint64_t>(kRecordTargetBytes / payload, 1));
    write_options.blocks_per_record =
        static_cast<std::uint32_t>(std::clamp<std::uint64_t>(fit, write_options.blocks_per_record, 256));
}

// The write options of a table's blocks before the compact encodings'
// parser settings (which the DTC side's and the group order's samples
// leave out).
storage::TableWriteOptions sample_write_options(const GenerateOptions& options) {
    storage::TableWriteOptions write_options;
    if (options.compression == storage::Compression::Zstd) {
        write_options = storage::compact_write_options();
        if (options.blocks_per_record != 0) write_options.blocks_per_record = options.blocks_per_record;
    }
    write_options.compression = options.compression;
    // Blocks are compressed on every thread of the run, a batch at a time:
    // storing was otherwise one core's work (zstd 7 at about 50 MB/s) while
    // the other waited. The stored bytes do not depend on the count.
    write_options.compression_threads = std::clamp(omp_get_max_threads(), 1, 256);
    // The DTC side's and the group order's samples keep level 7's own parser
    // with the samples' shortest match: the choice costs little and stays
    // what it was; the store takes the whole compact parser
    // (choose_compact_layout's caller).
    if (probe::is_compact_encoding(options.value_encoding)) {
        write_options.zstd_min_match = storage::kCompactSampleMinMatch;
    } else if (options.compression == storage::Compression::Zstd) {
        storage::set_parser(storage::kCodesParser, write_options);
    }
    return write_options;
}

// Adds codes to a values checksum as a wdl-dtc/1 table stores them:
// little-endian, `width` bytes each.
void hash_codes(Xxh64& hash, std::span<const std::uint16_t> codes, unsigned width) {
    // A piece at a time: the digest does not depend on how the bytes are split.
    std::array<std::uint8_t, 4096> bytes;
    const std::size_t per_piece = bytes.size() / width;
    for (std::size_t at = 0; at < codes.size(); at += per_piece) {
        const std::size_t count = std::min(per_piece, codes.size() - at);
        for (std::size_t k = 0; k < count; ++k) {
            bytes[k * width] = static_cast<std::uint8_t>(codes[at + k]);
            if (width == 2) bytes[k * 2 + 1] = static_cast<std::uint8_t>(codes[at + k] >> 8);
        }
        hash.update(std::span(bytes).first(count * width));
    }
}

// XXH64 of a table's codes in slot order, little-endian at the width the
// table stores them (the values checksum of a wdl-dtc/1 table).
std::uint64_t values_checksum(ExactValues& values, std::uint64_t n) {
    const unsigned width = values.code_width();
    constexpr std::size_t kRead = 1 << 20;
    std::vector<std::uint16_t> codes(kRead);
    Xxh64 hash;
    for (int c = 0; c < 2; ++c) {
        for (std::uint64_t first = 0; first < n; first += kRead) {
            const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kRead, n - first));
            values.read(static_cast<Color>(c), first, std::span(codes).first(count));
            hash_codes(hash, std::span(codes).first(count), width);
        }
    }
    return hash.digest();
}

// Stores a table's values. `ix` is the stored index: the rule's order, or
// for wdl-dtc/3 the one chosen, whose slots `source` and `read` follow.
// `width` is the bytes a code of the table needs (1 when every code is
// below 256); `read`, if given, reads
// values in any order, which lets wdl-dtc/2 read every value once instead
// of twice. `rule_order_checksum`: wdl-dtc/3 in another order than the
// rule's, the checksum of the values in the rule's order.
template <Ruleset R>
Result<Stored> store_table(probe::Tablebase& tb, const index::Indexer& ix, const std::string& name,
                           const index::Material& material, const GenerateOptions& options,
                           unsigned width, const ValueSource& source, const ValueReader& read = {},
                           std::optional<std::uint64_t> rule_order_checksum = std::nullopt,
                           std::optional<Color> preferred_dtc_side = std::nullopt) {
    const bool compact = probe::is_compact_encoding(options.value_encoding);
    const bool ordered = probe::is_ordered_encoding(options.value_encoding);
    // wdl-dtc/4 with the same units on both sides, /5 and /6: the DTC side
    // alone; /6 with the same units: its wins as their WDL.
    const StoredSides sides = stored_sides(options.value_encoding, material);
    storage::TableWriteOptions write_options = sample_write_options(options);
    StatisticsAccumulator statistics;
    std::optional<FreeSlots<R>> free_slots;
    const unsigned resolved_width = width;
    if (compact) {
        free_slots.emplace(ix, write_options.slots_per_block, sides);
        // The DTC side from a sample of blocks. A full survey of the values
        // (a pass of its own) only where the sample cannot be read directly,
        // the sample ties, or the stored width depends on the side.
        std::optional<Color> side;
        if (read && width == 1) {
            free_slots->sample(read);
            side = free_slots->choose_dtc_side(write_options);
        }
        if (!side) {
            free_slots->clear_sample();
            source([&](Color s, std::uint64_t first, std::span<const std::uint16_t> codes) {
                free_slots->add(s, first, codes);
            }, false);
            side = free_slots->choose_dtc_side(write_options);
        }
        // The side the group order was chosen with (wdl-dtc/5 and /6: children
        // near each other), whatever the sample here says.
        if (preferred_dtc_side) free_slots->prefer_dtc_side(*preferred_dtc_side);
        // Every code fits a byte unless the table's largest does not; then
        // the survey tells what the DTC side stores.
        if (free_slots->surveyed()) width = free_slots->max_code() <= 0xFF ? 1 : 2;
        choose_compact_layout(2 * ix.size(), free_slots->sampled_record_bytes(), free_slots->sampled_blocks(),
                              options.blocks_per_record != 0, write_options);
        storage::set_parser(storage::kCompactCodesParser, write_options);
    }
    storage::TableSpec spec;
    spec.name = name;
    spec.variant = std::string(R::kName);
    spec.material = material.name();
    spec.slot_count = 2 * ix.size();
    spec.value_encoding = options.value_encoding;
    spec.generator_version = std::string(kGeneratorVersion);
    spec.value_width = width;
    if (write_options.compression == storage::Compression::Zstd && write_options.blocks_per_record > 1) {
        write_options.pair_coding = options.pair_coding;
        write_options.pair_size_tolerance = options.pair_size_tolerance;
    }
    auto writer = tb.database().create_table(spec, write_options);
    if (!writer.ok()) return database_failure("writing", name, writer.status());
    Status status;
    std::vector<std::uint8_t> narrow;
    std::vector<std::uint16_t> stored;
    // wdl-dtc/2: the checksum the values would have as wdl-dtc/1 codes
    // (what a reader that resolves every slot, such as tbverify, can
    // recompute).
    Xxh64 resolved;
    const Color dtc_side = compact ? free_slots->dtc_side() : Color::White;
    std::uint16_t previous = 0;  // wdl-dtc/2: the code stored in the slot before
    source([&](Color side, std::uint64_t first, std::span<const std::uint16_t> codes) {
        statistics.add(side, first, codes);
        if (!status.ok()) return;
        if (compact) {
            hash_codes(resolved, codes, resolved_width);
            // Free slots store stored_code(); the others repeat the code
            // before them, from 0 at each side's start.
            stored.resize(codes.size());
            if (first == 0) previous = 0;
            for (std::size_t k = 0; k < codes.size(); ++k) {
                if (free_slots->is_free(side, first + k)) {
                    if (auto code = stored_code(codes[k], side, dtc_side, sides)) previous = *code;
                }
                stored[k] = previous;
            }
            codes = stored;
        }
        if (spec.value_width == 1) {
            narrow.resize(codes.size());
            const auto count = static_cast<std::int64_t>(codes.size());
            std::uint8_t* const out = narrow.data();
            const std::uint16_t* const in = codes.data();
#pragma omp parallel for schedule(static) if (count >= (std::int64_t{1} << 18))
            for (std::int64_t k = 0; k < count; ++k) out[k] = static_cast<std::uint8_t>(in[k]);
            status = writer->append(std::span<const std::uint8_t>(narrow));
        } else {
            status = writer->append(codes);
        }
    }, true);
    if (!status.ok()) return database_failure("writing", name, status);
    Statistics stats = statistics.finish(ix);
    if (compact) {
        stats.stored.counters.push_back({std::string(probe::kDtcSideCounter), static_cast<std::uint64_t>(to_index(dtc_side))});
        if (probe::chooses_knight_colouring(options.value_encoding, material, dtc_side)) {
            stats.stored.counters.push_back({std::string(probe::kKnightColouringCounter),
                                             static_cast<std::uint64_t>(free_slots->colouring())});
        }
        stats.stored.counters.push_back({std::string(probe::kResolvedChecksumCounter), resolved.digest()});
    }
    if (ordered) {
        stats.stored.counters.push_back({std::string(probe::kIndexOrderCounter), probe::pack_group_order(ix.group_order())});
        stats.stored.counters.push_back({std::string(probe::kRuleOrderChecksumCounter),
                                         rule_order_checksum.value_or(resolved.digest())});
    }
    if (auto committed = writer->commit(stats.stored); !committed.ok()) {
        return database_failure("writing", name, committed);
    }
    auto info = tb.database().table_info(name);
    return Stored{info.ok() ? info->stored_bytes : 0, stats.max_dtc};
}

// "antichess/KQvK" -> "antichess_KQvK": one work subdirectory per table.
std::string work_subdir(const std::string& work_dir, const std::string& name) {
    std::string leaf = name;
    std::replace(leaf.begin(), leaf.end(), '/', '_');
    return work_dir + "/" + leaf;
}

// Sub-tables resident for the tables being built, by their WDL, each
// dropped after the last table of the run that converts into it. A table's
// blocks are read on every thread and reduced to its WDL as they come
// (WdlTable::from), one table at a time. Only the sides to move that the
// run's conversions read are kept.
//
// A compact table built in this run is offered here from its values in RAM
// (WdlTable::from_codes) while later tables of the run will read it and the
// offered tables stay within `offer_budget` bytes: read back from storage,
// its slots off the DTC side and those bound to convert would each be
// valued by one ply when first read, which cost the pawn tables' initial
// passes three to ten times their time under wdl-dtc/1 (promotions reach
// such slots in their 4-unit sub-tables).
class ResidentTables {
public:
    ResidentTables(VariantId variant, const std::vector<index::Material>& order, std::uint64_t offer_budget)
        : offer_budget_(offer_budget) {
        for (std::size_t k = 0; k < order.size(); ++k) {
            // The mover hands the move over; a sub-table stored with the
            // colours swapped is read with them swapped.
            for (const auto& c : index::conversions(order[k], variant)) {
                const std::string name = index::canonical(c.after).name();
                last_use_[name] = k;
                sides_[name] |= WdlTable::side_bit(index::needs_color_flip(c.after) ? c.mover : ~c.mover);
                // Placement maps pay for captures, the commonest conversion,
                // not for promotions (RBPvKN reads ten 4-unit tables only
                // after a pawn takes and promotes).
                const bool plain_capture = c.after.total() == order[k].total() - 1 &&
                                           c.after.count(c.mover, UnitType::Pawn) ==
                                               order[k].count(c.mover, UnitType::Pawn);
                if (plain_capture) last_capture_use_[name] = k;
            }
        }
    }
    // For table k of the order.
    Result<std::shared_ptr<const WdlTable>> get(const probe::Tablebase& tb, VariantId variant,
                                               const index::Material& m, std::size_t k) {
        auto it = tables_.find(m.name());
        if (it != tables_.end()) return std::shared_ptr<const WdlTable>(it->second);
        auto opened = tb.table(variant, m);
        if (!opened.ok()) return opened.status();
        // A wdl-dtc/2 table values its slots when read, through the table
        // as opened (block cache).
        std::shared_ptr<const probe::Table> resolver;
        if ((*opened)->compact()) resolver = *opened;
        const auto capture_use = last_capture_use_.find(m.name());
        const bool map = capture_use != last_capture_use_.end() && capture_use->second >= k;
        // A side stored as nothing but one ply over the other (wdl-dtc/5, /6)
        // keeps that other side too, where its positions are valued once.
        unsigned sides = sides_[m.name()];
        const probe::Table& t = **opened;
        for (const Color side : {Color::White, Color::Black}) {
            if ((sides & WdlTable::side_bit(side)) && !t.stores_free_slots(side) && !t.same_units()) {
                sides |= WdlTable::side_bit(~side);
            }
        }
        auto wdl = WdlTable::from(**opened, std::move(resolver), sides, map);
        if (!wdl.ok()) return wdl.status();
        auto table = std::make_shared<WdlTable>(std::move(*wdl));
        tables_.emplace(m.name(), table);
        return std::shared_ptr<const WdlTable>(table);
    }
    // Offers table k of the order, just built, through `make(sides, map)`
    // (a WdlTable of those sides to move, with its placement map if `map`),
    // when a later table reads it and its bytes fit the budget.
    template <class Make>
    void offer(const index::Material& m, const index::Indexer& ix, std::size_t k, Make&& make) {
        const std::string name = m.name();
        const auto use = last_use_.find(name);
        if (use == last_use_.end() || use->second <= k || tables_.contains(name)) return;
        const auto capture_use = last_capture_use_.find(name);
        const bool map = capture_use != last_capture_use_.end() && capture_use->second > k;
        const unsigned sides = sides_[name];
        const auto kept = static_cast<std::uint64_t>(std::popcount(sides));
        const std::uint64_t bytes = WdlTable::bytes_for(kept * ix.size()) +
                                    (map ? kept * WdlTable::map_bytes(ix.unit_count()) : 0);
        if (offered_bytes_ + bytes > offer_budget_) return;
        tables_.emplace(name, std::make_shared<WdlTable>(make(sides, map)));
        offered_bytes_ += bytes;
        offered_[name] = bytes;
    }

    // Table k of the order is done (with its conversions: tables are built
    // one after the other, so no build reads a map as it goes).
    void done(std::size_t k) {
        std::erase_if(offered_, [&](const auto& entry) {
            if (last_use_[entry.first] > k) return false;
            offered_bytes_ -= entry.second;
            return true;
        });
        std::erase_if(tables_, [&](const auto& entry) { return last_use_[entry.first] <= k; });
        for (auto& [name, table] : tables_) {
            const auto capture_use = last_capture_use_.find(name);
            if (capture_use == last_capture_use_.end() || capture_use->second <= k) table->drop_placements();
        }
    }

private:
    std::unordered_map<std::string, std::size_t> last_use_;
    std::unordered_map<std::string, unsigned> sides_;  // WdlTable::side_bit
    std::unordered_map<std::string, std::size_t> last_capture_use_;  // the last table reading it by a capture
    std::unordered_map<std::string, std::shared_ptr<WdlTable>> tables_;
    std::uint64_t offer_budget_ = 0;
    std::uint64_t offered_bytes_ = 0;
    std::unordered_map<std::string, std::uint64_t> offered_;  // offered tables still kept, with their bytes
};

// Where a finished table is read from: the database being written, else
// the first source that holds it.
class TableHolders {
public:
    TableHolders(const probe::Tablebase& target, const GenerateOptions& options)
        : target_(target), sources_(options.sources) {}

    // The holder of `name` and the table's metadata; NotFound if none has it.
    Result<std::pair<const probe::Tablebase*, storage::TableInfo>> find(const std::string& name) const {
        auto info = target_.database().table_info(name);
        if (info.ok()) return std::pair{&target_, std::move(*info)};
        if (info.status().code() != StatusCode::NotFound) return info.status();
        for (const auto& source : sources_) {
            auto found = source->database().table_info(name);
            if (found.ok()) return std::pair{source.get(), std::move(*found)};
            if (found.status().code() != StatusCode::NotFound) {
                return found.status().with_context(source->database().path());
            }
        }
        return info.status();
    }
    // The holder, or NotFound, among the sources only.
    Result<const probe::Tablebase*> find_in_sources(const std::string& name) const {
        for (const auto& source : sources_) {
            auto found = source->database().table_info(name);
            if (found.ok()) return source.get();
            if (found.status().code() != StatusCode::NotFound) {
                return found.status().with_context(source->database().path());
            }
        }
        return Status(StatusCode::NotFound, name);
    }

private:
    const probe::Tablebase& target_;
    const std::vector<std::shared_ptr<const probe::Tablebase>>& sources_;
};

std::uint64_t physical_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return ~std::uint64_t{0};
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::string gib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
    return text;
}

// Without a cap a build larger than the machine would run until the kernel
// kills it.
std::optional<Status> larger_than_machine(const std::string& name, std::uint64_t in_ram_bytes) {
    if (in_ram_bytes <= physical_memory()) return std::nullopt;
    return invalid_argument(name + " needs about " + gib(in_ram_bytes) + " in RAM, more than this machine's " +
                                gib(physical_memory()) + ": give --memory and --work to build it out-of-core");
}

template <Ruleset R>
Result<TableSummary> build_one(probe::Tablebase& tb, const index::Material& material,
                               const GenerateOptions& options, ResidentTables& resident,
                               std::size_t order_index, const TableHolders& holders) {
    const auto start = std::chrono::steady_clock::now();
    const std::string name = probe::table_name(R::kId, material);
    auto indexer = index::Indexer::create(R::kId, material);
    if (!indexer.ok()) return indexer.status();
    const auto subs = index::sub_tables(material, R::kId);
    // Both sides and every placement map: an upper bound (ResidentTables
    // keeps the sides the run reads, and maps only for captures).
    std::uint64_t subtable_bytes = 0;
    std::vector<const probe::Tablebase*> sub_holders;
    for (const auto& sub : subs) {
        auto found = holders.find(probe::table_name(R::kId, sub));
        if (!found.ok()) return database_failure("building", name, found.status());
        sub_holders.push_back(found->first);
        const bool sub_compact = probe::is_compact_encoding(found->second.spec.value_encoding);
        subtable_bytes += WdlTable::bytes_for(found->second.spec.slot_count, sub_compact) +
                          2 * WdlTable::map_bytes(sub.total(), sub_compact);
    }
    const auto work = work_index_for(*indexer);
    const MemoryPlan plan =
        plan_memory(indexer->size(), subtable_bytes, options.memory_bytes, work ? work->size() : 0);
    if (options.memory_bytes == 0) {
        if (auto error = larger_than_machine(name, plan.in_ram_bytes)) return *error;
    }
    if (plan.out_of_core && options.work_dir.empty()) {
        return invalid_argument(name + " needs an out-of-core build under the memory cap: give a work directory");
    }
    SubtableValues subtables;
    for (std::size_t k = 0; k < subs.size(); ++k) {
        const index::Material& sub = subs[k];
        const probe::Tablebase& holder = *sub_holders[k];
        if (plan.resident_subtables) {
            auto table = resident.get(holder, R::kId, sub, order_index);
            if (!table.ok()) return Status(table.status().code(), "building " + name + ": " + table.status().message());
            subtables.add(sub, *table);
        } else {
            auto table = holder.table(R::kId, sub);
            if (!table.ok()) return Status(table.status().code(), "building " + name + ": " + table.status().message());
            subtables.add(sub, *table);
        }
    }
    ProgressLine progress(options.progress, name);
    // Once the build has valued its conversions, the sub-tables this table
    // was the last to need leave memory before its level passes.
    const ChildValue child_value([&](const Position& child) { return subtables.value(child); },
                                 [&](const index::Material& m) { return subtables.resident(m); },
                                 [&] {
                                     subtables.release();
                                     resident.done(order_index);
                                 });
    auto on_progress = [&](const char* pass, int level, std::uint64_t done, std::uint64_t total) {
        progress.update(pass, level, done, total);
    };
    TableSummary summary;
    summary.name = name;
    summary.built = true;
    Result<Stored> stored = Stored{};  // set by either branch
    if (!plan.out_of_core) {
        ExactValues values = build_table_values<R>(*indexer, child_value, on_progress);
        progress.finish();
        if (!subtables.error().empty()) return io_error("building " + name + ": " + subtables.error());
        if (probe::is_compact_encoding(options.value_encoding)) {
            resident.offer(index::canonical(material), *indexer, order_index, [&](unsigned sides, bool map) {
                return WdlTable::from_codes(*indexer, sides, map,
                                            [&](Color side, std::uint64_t first, std::span<std::uint16_t> out) {
                                                values.read(side, first, out);
                                            });
            });
        }
        const auto store_start = std::chrono::steady_clock::now();
        const double renumbered_before_store = values.renumber_seconds();  // the offer's read
        // wdl-dtc/3 to /6: the group order whose sampled blocks are smallest, and
        // the values' checksum in the rule's order before they are read in it.
        const index::Indexer* stored_index = &*indexer;
        std::optional<ChosenOrder> chosen;
        std::optional<std::uint64_t> rule_order_checksum;
        double order_seconds = 0;
        if (probe::is_ordered_encoding(options.value_encoding)) {
            const auto order_start = std::chrono::steady_clock::now();
            chosen = choose_group_order<R>(*indexer, values, sample_write_options(options), options.value_encoding);
            order_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - order_start).count();
            if (chosen->indexer.group_order() != indexer->group_order()) {
                rule_order_checksum = values_checksum(values, indexer->size());
                values.set_stored_order(chosen->indexer);
            }
            stored_index = &chosen->indexer;
        }
        stored = store_table<R>(tb, *stored_index, name, material, options, values.code_width(),
                                [&](const ValueSink& sink, bool last) {
            // Renumbered a million slots at a time and handed over whole:
            // the sink splits what it can between the threads.
            constexpr std::size_t kRead = std::size_t{1} << 20;
            std::vector<std::uint16_t> codes(kRead);
            const std::uint64_t n = stored_index->size();
            if (n <= kBothSidesReadSlots) {
                // Black's codes read with White's and kept until White's are
                // stored: each slot of the stored order is placed into the
                // built index once rather than once a side.
                std::vector<std::uint16_t> black(n);
                for (std::uint64_t read = 0; read < n; read += kRead) {
                    const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(kRead, n - read));
                    values.read_both(read, std::span(codes).first(count), std::span(black).subspan(read, count));
                    sink(Color::White, read, std::span<const std::uint16_t>(codes).first(count));
                }
                if (last) values.release(Color::White);
                for (std::uint64_t read = 0; read < n; read += kRead) {
                    const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(kRead, n - read));
                    sink(Color::Black, read, std::span<const std::uint16_t>(black).subspan(read, count));
                }
                if (last) values.release(Color::Black);
                return;
            }
            for (int c = 0; c < 2; ++c) {
                const auto side = static_cast<Color>(c);
                for (std::uint64_t read = 0; read < n; read += kRead) {
                    const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(kRead, n - read));
                    values.read(side, read, std::span(codes).first(count));
                    sink(side, read, std::span<const std::uint16_t>(codes).first(count));
                }
                if (last) values.release(side);
            }
        }, [&](Color side, std::uint64_t first, std::span<std::uint16_t> out) { values.read(side, first, out); },
           rule_order_checksum, chosen ? chosen->dtc_side : std::nullopt);
        summary.positions = values.stats().positions;
        summary.phases.initial = values.stats().initial_seconds;
        summary.phases.levels = values.stats().seconds - values.stats().initial_seconds;
        summary.phases.renumber = values.renumber_seconds();
        // Storing includes the renumbering it drives and the order's choice;
        // the phases count each once.
        summary.phases.order = order_seconds;
        summary.phases.store =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - store_start).count() -
            (summary.phases.renumber - renumbered_before_store) - order_seconds;
    } else {
        OutOfCoreOptions ooc_options;
        ooc_options.work_dir = work_subdir(options.work_dir, name);
        ooc_options.table = name;
        ooc_options.generator_version = std::string(kGeneratorVersion);
        ooc_options.state_bytes = plan.state_bytes;
        ooc_options.stop_after_step = options.stop_after_step;
        ooc_options.durable = options.sync_work_files;
        ooc_options.bucket_bytes = options.bucket_bytes;
        // A failed sub-table read must not be recorded as a completed step.
        ooc_options.child_error = [&] { return subtables.error(); };
        OutOfCoreBuilder<R, index::Indexer> builder(*indexer, child_value, ooc_options, on_progress);
        double store_seconds = 0;
        try {
            const bool finished = builder.build();
            progress.finish();
            if (!finished) {
                return Status(StatusCode::Aborted, "building " + name +
                                                            ": stopped after a step; run again to resume from " +
                                                            ooc_options.work_dir);
            }
            const auto store_start = std::chrono::steady_clock::now();
            // The pair code's writer would hold the whole table in memory.
            GenerateOptions store_options = options;
            store_options.pair_coding = storage::PairCoding::Off;
            stored = store_table<R>(tb, *indexer, name, material, store_options, builder.max_code() <= 0xFF ? 1 : 2,
                                    [&](const ValueSink& sink, bool) { builder.stream_values(sink); });
            store_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - store_start).count();
            if (stored.ok()) builder.remove_work();
        } catch (const StatusError& e) {
            progress.finish();
            Status status = e.status().with_context("building " + name);
            if (status.code() == StatusCode::Corruption) {
                status = Status(status.code(), status.message() + "; remove " + ooc_options.work_dir +
                                                   " to build the table from the start");
            }
            return status;
        }
        const OutOfCoreReport report = builder.report();
        summary.positions = report.positions;
        summary.out_of_core = true;
        summary.resumed = report.resumed;
        summary.chunks = report.chunks;
        summary.bytes_read = report.io.read;
        summary.bytes_written = report.io.written;
        summary.crossing_fraction = report.crossing_fraction();
        summary.sparse_level = report.sparse_level;
        summary.split_visits = report.split_visits;
        summary.phases.initial = report.initial_seconds;
        summary.phases.levels = report.chunk_level_seconds;
        summary.phases.sparse = report.sparse_seconds;
        summary.phases.write_back = report.write_back_seconds;
        summary.phases.store = store_seconds;
    }
    if (!stored.ok()) return stored.status();
    summary.stored_bytes = stored->stored_bytes;
    summary.max_dtc = stored->max_dtc;
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

}  // namespace

MemoryPlan plan_memory(std::uint64_t index_size, std::uint64_t subtable_bytes, std::uint64_t memory_bytes,
                       std::uint64_t work_size) {
    MemoryPlan plan;
    plan.subtable_bytes = subtable_bytes;
    plan.in_ram_bytes =
        (work_size != 0 ? 5 * work_size + 4 * index_size : 5 * index_size) + subtable_bytes;
    if (memory_bytes == 0 || plan.in_ram_bytes <= memory_bytes) return plan;
    plan.out_of_core = true;
    plan.resident_subtables = subtable_bytes <= memory_bytes / 2;
    plan.state_bytes = plan.resident_subtables ? memory_bytes - subtable_bytes : memory_bytes;
    return plan;
}

Result<std::vector<TableSummary>> generate(
    probe::Tablebase& tablebase, VariantId variant, const std::vector<index::Material>& tables,
    const GenerateOptions& options, const std::function<void(const TableSummary&)>& on_table) {
    if (options.value_encoding != probe::kValueEncoding && !probe::is_compact_encoding(options.value_encoding)) {
        return invalid_argument("unknown value encoding \"" + options.value_encoding + "\"");
    }
    if (options.threads > 0) omp_set_num_threads(options.threads);
    if (options.memory_bytes == 0) {
        // Refused before any sub-table is built (build_one checks again with
        // the sub-tables' sizes).
        for (const index::Material& material : tables) {
            auto indexer = index::Indexer::create(variant, material);
            if (!indexer.ok()) continue;
            const auto work = work_index_for(*indexer);
            const std::uint64_t need = plan_memory(indexer->size(), 0, 0, work ? work->size() : 0).in_ram_bytes;
            if (auto error = larger_than_machine(probe::table_name(variant, material), need)) return *error;
        }
    }
    std::vector<TableSummary> summaries;
    const TableHolders holders(tablebase, options);
    // A wdl-dtc/2 sub-table values some slots by probing its own sub-tables,
    // which may be in the database being written or in another source.
    struct LookElsewhere {
        const probe::Tablebase& target;
        const GenerateOptions& options;
        ~LookElsewhere() {
            target.look_also_in({});
            for (const auto& source : options.sources) source->look_also_in({});
        }
    } look_elsewhere{tablebase, options};
    if (!options.sources.empty()) {
        std::vector<const probe::Tablebase*> all{&tablebase};
        for (const auto& source : options.sources) all.push_back(source.get());
        for (const probe::Tablebase* holder : all) holder->look_also_in(all);
    }
    std::vector<index::Material> order = index::dependency_order(variant, tables);
    if (!options.sources.empty()) {
        // A table found in a source is not expanded: the tables it converts
        // into are needed only if another table to be built converts into them.
        std::set<index::Material> needed;
        std::vector<index::Material> stack;
        for (const auto& m : tables) stack.push_back(index::canonical(m));
        while (!stack.empty()) {
            const index::Material m = stack.back();
            stack.pop_back();
            if (!needed.insert(m).second) continue;
            auto in_source = holders.find_in_sources(probe::table_name(variant, m));
            if (in_source.ok()) continue;
            if (in_source.status().code() != StatusCode::NotFound) return in_source.status();
            for (const auto& sub : index::sub_tables(m, variant)) stack.push_back(sub);
        }
        std::erase_if(order, [&](const index::Material& m) { return !needed.contains(m); });
    }
    // Offered tables (ResidentTables) take at most an eighth of the memory
    // cap, or a sixteenth of the machine's memory without one.
    ResidentTables resident(variant, order,
                            options.memory_bytes != 0 ? options.memory_bytes / 8 : physical_memory() / 16);
    for (std::size_t k = 0; k < order.size(); resident.done(k), ++k) {
        const index::Material& material = order[k];
        const std::string name = probe::table_name(variant, material);
        auto existing = tablebase.database().table_info(name);
        if (existing.ok()) {
            // A run killed between publishing a table and clearing its work
            // files leaves them behind.
            if (!options.work_dir.empty()) {
                std::error_code ignored;
                std::filesystem::remove_all(work_subdir(options.work_dir, name), ignored);
            }
            TableSummary summary;
            summary.name = name;
            summary.stored_bytes = existing->stored_bytes;
            summaries.push_back(summary);
            if (on_table) on_table(summary);
            continue;
        }
        if (existing.status().code() != StatusCode::NotFound) {
            return database_failure("reading", name, existing.status());
        }
        if (!options.sources.empty()) {
            auto found = holders.find(name);
            if (found.ok()) {
                TableSummary summary;
                summary.name = name;
                summary.source = found->first->database().path();
                summary.stored_bytes = found->second.stored_bytes;
                summaries.push_back(summary);
                if (on_table) on_table(summary);
                continue;
            }
            if (found.status().code() != StatusCode::NotFound) return database_failure("reading", name, found.status());
        }
        auto built = with_variant(variant, [&]<class R>() {
            return build_one<R>(tablebase, material, options, resident, k, holders);
        });
        if (!built.ok()) return built.status();
        summaries.push_back(std::move(*built));
        if (on_table) on_table(summaries.back());
    }
    return summaries;
}

}  // namespace tbf::gen
