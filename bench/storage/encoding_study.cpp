// Sizes of candidate value encodings for existing antichess tables (not run
// in CI; the figures behind docs/storage-format.md's choice of encoding).
// For every slot it rebuilds the position, generates its legal moves and
// classifies it:
//   terminal     no legal move: value fixed by the rules;
//   converting   every legal move converts: DTC is 1 for a win or loss;
//   free         anything else.
// Then it compresses, in blocks of 16384 slots with zstd at level 7 (the
// format-2 settings), these streams:
//   codes        the stored wdl-dtc/1 codes, both sides (what format 2 holds);
//   codes-dc     the same with converting/terminal slots "don't care": given
//                the code before them when it has the same WDL;
//   wdl          the WDL of every slot, 2 bits packed 4 to a byte;
//   dtc-dc[s]    the DTC of side s to move, draws, converting and terminal
//                slots given the DTC before them (runs grow);
//   wdl-dc       the WDL with converting and terminal slots "don't care",
//                2 bits packed and (the last line) one byte a slot.
// wdl + the smaller dtc-dc[s] is the size of a split encoding with DTC for
// one side only.
//
// Usage: encoding_study DB TABLE...   (antichess tables, any format)

#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compact_study.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/movegen.hpp"

namespace {

constexpr std::size_t kBlockSlots = 16384;
constexpr int kLevel = 7;

std::size_t zstd_size(const std::vector<std::uint8_t>& bytes, ZSTD_CCtx* cctx) {
    std::vector<std::uint8_t> out(ZSTD_compressBound(bytes.size()));
    const std::size_t n = ZSTD_compressCCtx(cctx, out.data(), out.size(), bytes.data(), bytes.size(), kLevel);
    if (ZSTD_isError(n)) {
        std::fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(n));
        std::exit(3);
    }
    return std::min(n, bytes.size());  // a block that does not shrink is stored raw
}

// Byte planes of 16-bit values (or the low bytes alone when they all fit).
std::size_t planes_size(const std::vector<std::uint16_t>& values, ZSTD_CCtx* cctx) {
    std::size_t total = 0;
    for (std::size_t first = 0; first < values.size(); first += kBlockSlots) {
        const std::size_t n = std::min(kBlockSlots, values.size() - first);
        bool wide = false;
        std::vector<std::uint8_t> bytes;
        for (std::size_t i = 0; i < n; ++i) wide |= values[first + i] > 0xff;
        for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<std::uint8_t>(values[first + i]));
        if (wide)
            for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<std::uint8_t>(values[first + i] >> 8));
        total += zstd_size(bytes, cctx) + 16 + 16;  // + record header and key
    }
    return total;
}

std::size_t packed_wdl_size(const std::vector<std::uint8_t>& wdl, ZSTD_CCtx* cctx) {
    std::size_t total = 0;
    for (std::size_t first = 0; first < wdl.size(); first += kBlockSlots) {
        const std::size_t n = std::min(kBlockSlots, wdl.size() - first);
        std::vector<std::uint8_t> bytes((n + 3) / 4, 0);
        for (std::size_t i = 0; i < n; ++i) bytes[i / 4] |= static_cast<std::uint8_t>(wdl[first + i] << (2 * (i % 4)));
        total += zstd_size(bytes, cctx) + 16 + 16;
    }
    return total;
}

enum class Kind : std::uint8_t { Free, Converting, Terminal };

}  // namespace

int main(int argc, char** argv) {
    using namespace tbf;
    if (argc < 3) {
        std::fprintf(stderr, "usage: encoding_study DB TABLE...\n");
        return 2;
    }
    probe::TablebaseOptions options;
    options.cache_bytes = 0;
    const probe::Tablebase tb = study::open_study_tablebase("encoding_study", argv[1], options);
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    std::size_t sum_wdc_bytes = 0;
    std::size_t sum_codes = 0, sum_dc = 0, sum_wdl = 0, sum_one = 0, sum_both = 0, sum_wdc = 0, sum_wdc_one = 0, sum_single = 0, sum_single_proxy = 0;
    std::printf("%-10s %11s %6s %6s %6s | %11s %11s %10s %11s %11s %11s\n", "table", "slots", "conv%",
                "term%", "draw%", "codes", "codes-dc", "wdl", "dtc-dc[w]", "dtc-dc[b]", "wdl+min");
    for (int t = 2; t < argc; ++t) {
        const study::StudyTable opened = study::open_study_codes("encoding_study", tb, argv[t]);
        const std::vector<std::uint16_t>& codes = opened.codes;
        const index::Indexer& indexer = opened.table->indexer();
        const std::uint64_t n = indexer.size();
        std::vector<Kind> kind(2 * n, Kind::Free);
        std::uint64_t converting = 0, terminal = 0, draws = 0;
        MoveList moves;
        for (int side = 0; side < 2; ++side) {
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint64_t slot = side * n + i;
                if (codes[slot] == 0) ++draws;
                auto pos = indexer.position(i, side == 0 ? Color::White : Color::Black);
                if (!pos) {
                    kind[slot] = Kind::Terminal;
                    ++terminal;
                    continue;
                }
                generate_legal<Antichess>(*pos, moves);
                if (moves.empty()) {
                    kind[slot] = Kind::Terminal;
                    ++terminal;
                    continue;
                }
                bool all = true;
                for (std::size_t m = 0; m < moves.size() && all; ++m) all = pos->is_conversion(moves[m]);
                if (all) {
                    kind[slot] = Kind::Converting;
                    ++converting;
                }
            }
        }
        std::vector<std::uint16_t> dc(codes);
        std::vector<std::uint8_t> wdl(2 * n);
        for (std::uint64_t s = 0; s < 2 * n; ++s) {
            wdl[s] = codes[s] == 0 ? 0 : (codes[s] & 1) ? 1 : 2;
            if (kind[s] != Kind::Free && s % n != 0) {
                const std::uint16_t prev = dc[s - 1];
                const bool same = prev != 0 && codes[s] != 0 && (prev & 1) == (codes[s] & 1);
                if (same || (codes[s] == 0 && prev == 0)) dc[s] = prev;
            }
        }
        std::size_t dtc[2];
        for (int side = 0; side < 2; ++side) {
            std::vector<std::uint16_t> d(n);
            std::uint16_t prev = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint64_t s = side * n + i;
                if (kind[s] == Kind::Free && codes[s] != 0) prev = static_cast<std::uint16_t>((codes[s] - 1) / 2);
                d[i] = prev;
            }
            dtc[side] = planes_size(d, cctx);
        }
        const std::size_t c = planes_size(codes, cctx), cdc = planes_size(dc, cctx);
        const std::size_t w = packed_wdl_size(wdl, cctx);
        // WDL with converting and terminal slots "don't care" too (resolved by
        // a one-ply probe of the sub-tables on reading, as Syzygy's WDL files).
        std::vector<std::uint8_t> wdl_dc(wdl);
        for (std::uint64_t s = 1; s < 2 * n; ++s)
            if (kind[s] != Kind::Free && s != n) wdl_dc[s] = wdl_dc[s - 1];
        const std::size_t wdc = packed_wdl_size(wdl_dc, cctx);
        // The same one byte a slot: runs stay byte-aligned for the matches.
        const std::size_t wdc_bytes = planes_size(std::vector<std::uint16_t>(wdl_dc.begin(), wdl_dc.end()), cctx);
        sum_wdc_bytes += wdc_bytes;
        // One code stream, storage unchanged: side s keeps its codes (converting
        // and terminal slots given the code before them), the other side only
        // its WDL (0 draw, 1 win, 2 loss; converting slots the one before).
        std::size_t single[2];
        std::uint64_t free_decisive[2] = {0, 0};
        for (int stored = 0; stored < 2; ++stored) {
            std::vector<std::uint16_t> v(2 * n);
            for (std::uint64_t s = 0; s < 2 * n; ++s) {
                const bool mine = static_cast<int>(s / n) == stored;
                const bool first = s % n == 0;
                if (kind[s] != Kind::Free && !first) {
                    v[s] = v[s - 1];
                } else if (mine) {
                    v[s] = codes[s];
                    if (codes[s] != 0) ++free_decisive[stored];
                } else {
                    v[s] = wdl[s];
                }
            }
            single[stored] = planes_size(v, cctx);
        }
        const std::size_t one = w + std::min(dtc[0], dtc[1]);
        sum_codes += c;
        sum_dc += cdc;
        sum_wdl += w;
        sum_one += one;
        sum_both += w + dtc[0] + dtc[1];
        const double all = static_cast<double>(2 * n);
        std::printf("%-10s %11llu %6.1f %6.1f %6.1f | %11zu %11zu %10zu %11zu %11zu %11zu\n", argv[t],
                    static_cast<unsigned long long>(2 * n), 100.0 * converting / all, 100.0 * terminal / all,
                    100.0 * draws / all, c, cdc, w, dtc[0], dtc[1], one);
        std::printf("%-10s wdl-dc %zu, wdl-dc + min dtc-dc %zu; single[w] %zu single[b] %zu (decisive free w %llu b %llu)\n",
                    "", wdc, wdc + std::min(dtc[0], dtc[1]), single[0], single[1],
                    static_cast<unsigned long long>(free_decisive[0]), static_cast<unsigned long long>(free_decisive[1]));
        sum_single += std::min(single[0], single[1]);
        sum_single_proxy += free_decisive[0] <= free_decisive[1] ? single[0] : single[1];
        sum_wdc += wdc;
        sum_wdc_one += wdc + std::min(dtc[0], dtc[1]);
        std::fflush(stdout);
    }
    std::printf("all: codes %zu, codes-dc %zu, wdl %zu, wdl+dtc both %zu, wdl+dtc one side %zu\n", sum_codes,
                sum_dc, sum_wdl, sum_both, sum_one);
    std::printf("all: wdl-dc %zu, wdl-dc + dtc one side %zu, single best side %zu, single by fewer decisive %zu\n",
                sum_wdc, sum_wdc_one, sum_single, sum_single_proxy);
    std::printf("all: wdl-dc one byte a slot %zu\n", sum_wdc_bytes);
    ZSTD_freeCCtx(cctx);
    return 0;
}
