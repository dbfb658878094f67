// Stored size of existing tables in another encoding (not run in CI): reads
// each named table of a database (read-only) block by block, writes its values
// into a scratch database with the format-2 settings the generator uses
// (storage::compact_write_options) or the ones given, and prints the bytes
// before and after, the CPU seconds spent writing, and whether the values
// checksum (over the values in slot order) is unchanged. A table's values do
// not depend on its encoding, so this measures the new format on tables built
// by an older tbgen without building them again.
//
// With --compact, the zstd settings the generator stores compact tables
// with (minimum match 6, the optimal parser, search log 6, target length
// 4095) on top of the level, whatever the tables' encoding; --group N
// stores N blocks a record; --table-layout keeps each table's own slots a
// block and blocks a record; --dtc-side-alone writes every slot off a
// compact table's DTC side as 0 (what wdl-dtc/5 stores of it; the values
// checksum then differs by design); --all repacks
// every table of SOURCE_DB and keeps them in SCRATCH_DB (a database a prober
// can open as a whole; without it each table is deleted once measured);
// --pairs auto|always codes the blocks by a grammar of value pairs (storage
// format 6; TableWriteOptions::pair_coding).
//
// Usage: repack_tables SOURCE_DB SCRATCH_DB TABLE... [--level N] [--slots N] [--dict N]
//                      [--group N] [--compact] [--table-layout] [--dtc-side-alone] [--all]
//                      [--pairs auto|always]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "compact_study.hpp"
#include "tbforge/storage/database.hpp"

namespace {

using namespace tbf::storage;
using tbf::Status;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "repack_tables: %s\n", message.c_str());
    std::exit(3);
}

std::uint64_t total_bytes(const TableInfo& info) {
    // Records, their 16-byte keys and the dictionary.
    return info.stored_bytes + 16 * record_count(info) + info.dictionary.size();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: repack_tables SOURCE_DB SCRATCH_DB TABLE... [--level N] [--slots N] "
                     "[--dict N] [--group N] [--compact] [--table-layout] [--dtc-side-alone] [--all] [--pairs auto|always]\n");
        return 2;
    }
    TableWriteOptions options = compact_write_options();
    std::vector<std::string> names;
    bool all = false;
    bool dtc_side_alone = false;
    bool table_layout = false;
    for (int i = 3; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--compact") {
            tbf::study::use_stored_compact_parser(options);
        } else if (arg == "--all") {
            all = true;
        } else if (arg == "--dtc-side-alone") {
            dtc_side_alone = true;
        } else if (arg == "--table-layout") {
            table_layout = true;
        } else if (arg == "--pairs" && i + 1 < argc) {
            const std::string coding = argv[++i];
            if (coding != "auto" && coding != "always") die("--pairs: auto or always");
            options.pair_coding = coding == "auto" ? PairCoding::Auto : PairCoding::Always;
        } else if ((arg == "--level" || arg == "--slots" || arg == "--dict" || arg == "--group") &&
                   i + 1 < argc) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (arg == "--level") options.zstd_level = static_cast<int>(v);
            if (arg == "--slots") options.slots_per_block = static_cast<std::uint32_t>(v);
            if (arg == "--dict") options.dictionary_bytes = static_cast<std::uint32_t>(v);
            if (arg == "--group") options.blocks_per_record = static_cast<std::uint32_t>(v);
        } else {
            names.push_back(arg);
        }
    }
    DatabaseOptions read;
    read.block_cache_bytes = 0;
    auto source = Database::open(argv[1], read);
    if (!source.ok()) die(source.status().to_string());
    std::filesystem::remove_all(argv[2]);
    DatabaseOptions write;
    write.mode = OpenMode::ReadWrite;
    write.create_if_missing = true;
    write.block_cache_bytes = 0;
    auto target = Database::open(argv[2], write);
    if (!target.ok()) die(target.status().to_string());
    if (all) {
        auto tables = source->list_tables();
        if (!tables.ok()) die(tables.status().to_string());
        for (const TableInfo& info : *tables) names.push_back(info.spec.name);
    }

    std::uint64_t before_sum = 0;
    std::uint64_t after_sum = 0;
    for (const std::string& name : names) {
        auto table = source->open_table(name);
        if (!table.ok()) die(table.status().to_string());
        const TableInfo& info = table->info();
        TableWriteOptions table_options = options;
        if (table_layout) {
            table_options.slots_per_block = info.slots_per_block;
            table_options.blocks_per_record = info.blocks_per_record;
        }
        // The slots of the side to move that a compact table does not
        // answer directly (its dtc_side counter names the other) as the
        // empty side of a wdl-dtc/4 table of the same units: all 0.
        std::uint64_t zero_from = info.spec.slot_count;
        std::uint64_t zero_to = info.spec.slot_count;
        if (dtc_side_alone) {
            for (const Counter& c : info.statistics.counters) {
                if (c.name != "dtc_side") continue;
                const std::uint64_t half = info.spec.slot_count / 2;
                zero_from = c.value == 0 ? half : 0;
                zero_to = zero_from + half;
            }
        }
        auto writer = target->create_table(info.spec, table_options);
        if (!writer.ok()) die(writer.status().to_string());
        double seconds = 0;
        for (std::uint64_t b = 0; b < info.block_count; ++b) {
            auto block = table->read_block(b, CacheUse::Bypass);
            if (!block.ok()) die(block.status().to_string());
            std::span<const std::uint8_t> bytes = (*block)->bytes();
            std::vector<std::uint8_t> zeroed;
            const std::uint64_t first = (*block)->first_slot();
            const std::uint64_t from = std::max(first, zero_from);
            const std::uint64_t to = std::min(first + (*block)->size(), zero_to);
            if (from < to) {
                const std::uint32_t width = info.spec.value_width;
                zeroed.assign(bytes.begin(), bytes.end());
                std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>((from - first) * width),
                          zeroed.begin() + static_cast<std::ptrdiff_t>((to - first) * width), 0);
                bytes = zeroed;
            }
            const std::clock_t start = std::clock();
            Status s = info.spec.value_width == 1
                           ? writer->append(bytes)
                           : writer->append(std::span<const std::uint16_t>(
                                 reinterpret_cast<const std::uint16_t*>(bytes.data()),
                                 bytes.size() / 2));
            seconds += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
            if (!s.ok()) die(s.to_string());
        }
        const std::clock_t start = std::clock();
        if (Status s = writer->commit(info.statistics); !s.ok()) die(s.to_string());
        seconds += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
        auto after = target->table_info(name);
        if (!after.ok()) die(after.status().to_string());
        before_sum += total_bytes(info);
        after_sum += total_bytes(*after);
        std::printf("%-24s %12llu slots  before %11llu B (%.4f B/pos)  after %11llu B (%.4f B/pos)  "
                    "%.2fx smaller  write %.2f s CPU  values checksum %s\n",
                    name.c_str(), static_cast<unsigned long long>(info.spec.slot_count),
                    static_cast<unsigned long long>(total_bytes(info)),
                    static_cast<double>(total_bytes(info)) / static_cast<double>(info.spec.slot_count),
                    static_cast<unsigned long long>(total_bytes(*after)),
                    static_cast<double>(total_bytes(*after)) / static_cast<double>(info.spec.slot_count),
                    static_cast<double>(total_bytes(info)) / static_cast<double>(total_bytes(*after)),
                    seconds, after->values_checksum == info.values_checksum ? "equal" : "DIFFERS");
        if (after->values_checksum != info.values_checksum && !dtc_side_alone) return 1;
        // With --all the scratch database is kept whole, for a prober to open.
        if (!all) {
            if (Status s = target->delete_table(name); !s.ok()) die(s.to_string());
        }
    }
    if (names.size() > 1) {
        std::printf("all %zu tables: before %llu B, after %llu B, %.2fx smaller\n", names.size(),
                    static_cast<unsigned long long>(before_sum),
                    static_cast<unsigned long long>(after_sum),
                    static_cast<double>(before_sum) / static_cast<double>(after_sum));
    }
    return 0;
}
