// Stored size of wdl-dtc/2 tables under other fills of their "don't care"
// slots (not run in CI; the figures behind docs/values.md's choice of fill).
// Readers never read those slots, so their content is the writer's choice.
// For each antichess table named it reads the values (any encoding),
// classifies every slot as the generator does (probe::slot_kind), builds the
// codes wdl-dtc/2 would store with each fill and each DTC side, and
// compresses them as the generator does (storage::block_record_bytes with
// compact_write_options): the smaller side counts. Fills:
//   previous  the code of the last free slot before (what tbgen stored first)
//   next      the code of the next free slot
//   row       the slot one period P back, P the radix of the index's lowest
//             digit (the units after the first moves one square), else previous
//   best2     per block, the smaller of previous and row
//   ctxK      the code that followed the last occurrence, in the same
//             storage block, of the K codes stored before the slot (an LZP
//             prediction: it extends the match the compressor is in);
//             without one, the code stored before
//
// Usage: fill_study DB TABLE...   (e.g. /work/refdb/anti antichess/KRvKN)

#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "compact_study.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/storage/table.hpp"

namespace {

using namespace tbf;

constexpr int kFills = 7;
const char* const kFillNames[kFills] = {"previous", "next", "row", "best2", "ctx4", "ctx8", "ctx16"};
constexpr int kContextLengths[] = {4, 8, 16};

// The ctxK fill of `value` (free slots kept, the others predicted), blocks
// of `block` slots compressed apart, so predictions do not cross them.
std::vector<std::uint16_t> context_fill(const std::vector<std::uint16_t>& value,
                                        const std::vector<std::uint8_t>& is_free, std::uint64_t block,
                                        int k, const std::vector<std::uint16_t>& fallback) {
    constexpr unsigned kBits = 18;
    std::vector<std::uint32_t> last(std::size_t{1} << kBits);
    std::vector<std::uint32_t> stamp(std::size_t{1} << kBits, 0);
    std::uint32_t generation = 0;
    std::vector<std::uint16_t> out(value.size());
    for (std::uint64_t s = 0; s < value.size(); ++s) {
        const std::uint64_t offset = s % block;
        if (offset == 0) ++generation;
        std::size_t key = 0;
        bool have = offset >= static_cast<std::uint64_t>(k);
        if (have) {
            std::uint64_t h = 0x9E3779B97F4A7C15ull;
            for (int j = 1; j <= k; ++j) h = (h ^ out[s - j]) * 0x100000001B3ull;
            key = static_cast<std::size_t>(h >> (64 - kBits));
        }
        if (is_free[s]) {
            out[s] = value[s];
        } else if (have && stamp[key] == generation) {
            out[s] = out[last[key]];
        } else {
            out[s] = offset == 0 ? fallback[s] : out[s - 1];
        }
        if (have) {
            stamp[key] = generation;
            last[key] = static_cast<std::uint32_t>(s);
        }
    }
    return out;
}

std::uint16_t wdl_code(std::uint16_t code) { return code == 0 ? 0 : static_cast<std::uint16_t>(2 - (code & 1)); }

// The index period: how far apart two slots are whose placements differ only
// by the last unit moving to the next free square (the lowest digit's radix).
std::uint64_t row_period(const index::Indexer& ix) {
    Square a[index::kMaxUnits], b[index::kMaxUnits];
    const std::uint64_t start = ix.size() / 3;
    if (!ix.decode(start, a)) return 1;
    for (std::uint64_t d = 1; d < 4096 && start + d < ix.size(); ++d) {
        if (!ix.decode(start + d, b)) continue;
        const int n = ix.unit_count();
        bool only_last_same = true;
        for (int u = 0; u + 1 < n; ++u) only_last_same &= a[u] == b[u];
        if (!only_last_same) return d;
    }
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: fill_study DB TABLE...\n");
        return 2;
    }
    const probe::Tablebase tb = study::open_study_tablebase("fill_study", argv[1]);
    const storage::TableWriteOptions options = study::compact_table_options();
    std::vector<std::uint64_t> total(kFills, 0);
    for (int a = 2; a < argc; ++a) {
        const study::StudyTable opened = study::open_study_codes("fill_study", tb, argv[a]);
        const std::vector<std::uint16_t>& codes = opened.codes;
        const index::Indexer& ix = opened.table->indexer();
        const std::uint64_t n = ix.size();
        const std::vector<std::uint8_t> is_free = study::free_slots(ix);
        const std::uint64_t period = row_period(ix);
        std::vector<std::uint64_t> best(kFills, ~std::uint64_t{0});
        for (int d = 0; d < 2; ++d) {
            // The code each slot would hold if free (the WDL alone off side d).
            std::vector<std::uint16_t> value(2 * n);
            for (std::uint64_t s = 0; s < 2 * n; ++s) {
                value[s] = static_cast<int>(s / n) == d ? codes[s] : wdl_code(codes[s]);
            }
            std::vector<std::vector<std::uint16_t>> stored(3 + std::size(kContextLengths),
                                                           std::vector<std::uint16_t>(2 * n));
            for (int c = 0; c < 2; ++c) {
                const std::uint64_t base = c * n;
                std::uint16_t previous = 0;
                for (std::uint64_t i = 0; i < n; ++i) {
                    if (is_free[base + i]) previous = value[base + i];
                    stored[0][base + i] = previous;
                    if (is_free[base + i]) {
                        stored[2][base + i] = value[base + i];
                    } else {
                        stored[2][base + i] = i >= period ? stored[2][base + i - period] : previous;
                    }
                }
                std::uint16_t next = 0;
                for (std::uint64_t i = n; i-- > 0;) {
                    if (is_free[base + i]) next = value[base + i];
                    stored[1][base + i] = next;
                }
            }
            for (std::size_t c = 0; c < std::size(kContextLengths); ++c) {
                stored[3 + c] = context_fill(value, is_free, options.slots_per_block, kContextLengths[c],
                                             stored[0]);
            }
            std::uint16_t max_code = 0;
            for (std::uint64_t s = 0; s < 2 * n; ++s) max_code = std::max(max_code, stored[0][s]);
            const unsigned width = max_code <= 0xFF ? 1 : 2;
            std::vector<std::uint64_t> bytes(kFills, 0);
            std::vector<std::uint8_t> raw;
            for (std::uint64_t at = 0; at < 2 * n; at += options.slots_per_block) {
                const std::uint64_t count = std::min<std::uint64_t>(options.slots_per_block, 2 * n - at);
                std::uint64_t block[kFills];
                for (int f = 0; f < kFills; ++f) {
                    if (f == 3) continue;
                    raw.resize(count * width);
                    for (std::uint64_t k = 0; k < count; ++k) {
                        const std::uint16_t code = stored[f < 3 ? f : f - 1][at + k];
                        raw[k * width] = static_cast<std::uint8_t>(code);
                        if (width == 2) raw[k * 2 + 1] = static_cast<std::uint8_t>(code >> 8);
                    }
                    block[f] = storage::block_record_bytes(raw, width, options);
                    if (f != 3) bytes[f] += block[f];
                }
                bytes[3] += std::min(block[0], block[2]);
            }
            for (int f = 0; f < kFills; ++f) best[f] = std::min(best[f], bytes[f]);
        }
        std::printf("%-20s period %4llu", argv[a], static_cast<unsigned long long>(period));
        for (int f = 0; f < kFills; ++f) {
            std::printf("  %s %9llu", kFillNames[f], static_cast<unsigned long long>(best[f]));
            total[f] += best[f];
        }
        std::printf("\n");
    }
    std::printf("all");
    for (int f = 0; f < kFills; ++f) {
        std::printf("  %s %llu (%.3fx)", kFillNames[f], static_cast<unsigned long long>(total[f]),
                    static_cast<double>(total[f]) / static_cast<double>(total[0]));
    }
    std::printf("\n");
    return 0;
}
