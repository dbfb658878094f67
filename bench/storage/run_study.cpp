// Run-length blocks against plain ones: for each table of a database, its
// codes are cut into the table's own blocks and each block is compressed
// with zstd at the compact tables' settings twice: as the codes themselves
// and as runs (a plane of run values, then a plane of run lengths in
// LEB128). Prints the bytes of both and what reading one slot costs: the
// bytes zstd writes out and the time of a decode plus, for runs, the scan
// to the slot's run. A cold probe decodes a block per slot it reads, so
// its cost follows the decoded bytes.
//
// usage: run_study DB [TABLE...] [--level N] [--lookups N]
#define ZSTD_STATIC_LINKING_ONLY  // magicless frames, as the tables store them
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compact_study.hpp"
#include "study_database.hpp"
#include "tbforge/storage/table.hpp"

namespace {

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "run_study: %s\n", message.c_str());
    std::exit(2);
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Compressor {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    tbf::storage::TableWriteOptions options;  // level and parser
    ~Compressor() {
        ZSTD_freeCCtx(cctx);
        ZSTD_freeDCtx(dctx);
    }
    // A fresh session with the compact tables' parameters, bare frames.
    void reset() {
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, options.zstd_level);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, options.zstd_min_match);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy, options.zstd_strategy);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_searchLog, options.zstd_search_log);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, options.zstd_target_length);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
    }
    std::string compress(const std::vector<std::uint8_t>& src) {
        reset();
        std::string out(ZSTD_compressBound(src.size()), '\0');
        const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), src.data(), src.size());
        if (ZSTD_isError(n)) die(ZSTD_getErrorName(n));
        out.resize(n);
        return out;
    }
    // One frame whose zstd blocks each hold `chunk` bytes (flushed one by
    // one), so a reader may stop after the block it needs.
    std::string compress_chunked(const std::vector<std::uint8_t>& src, std::size_t chunk) {
        reset();
        std::string out(ZSTD_compressBound(src.size()) + 64 * (src.size() / chunk + 1), '\0');
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        for (std::size_t at = 0; at < src.size(); at += chunk) {
            const std::size_t n = std::min(chunk, src.size() - at);
            ZSTD_inBuffer in{src.data() + at, n, 0};
            const bool last = at + n == src.size();
            std::size_t left;
            do {
                left = ZSTD_compressStream2(cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_flush);
                if (ZSTD_isError(left)) die(ZSTD_getErrorName(left));
            } while (left != 0);
        }
        out.resize(o.pos);
        return out;
    }
    // Decodes blocks of the frame until byte `need` of the output is there.
    std::size_t decompress_until(const std::string& src, std::uint8_t* dst, std::size_t capacity, std::size_t need) {
        ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
        if (ZSTD_isError(ZSTD_decompressBegin(dctx))) die("begin");
        std::size_t in = 0, out = 0;
        while (out <= need) {
            const std::size_t n = ZSTD_nextSrcSizeToDecompress(dctx);
            if (n == 0 || in + n > src.size()) die("frame ends early");
            const std::size_t r = ZSTD_decompressContinue(dctx, dst + out, capacity - out, src.data() + in, n);
            if (ZSTD_isError(r)) die(ZSTD_getErrorName(r));
            in += n;
            out += r;
        }
        return out;
    }
    void decompress(const std::string& src, std::uint8_t* dst, std::size_t size) {
        ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
        const std::size_t n = ZSTD_decompressDCtx(dctx, dst, size, src.data(), src.size());
        if (ZSTD_isError(n) || n != size) die("decode failed");
    }
};

// A block as runs: the run values first, then each run's length in LEB128.
std::vector<std::uint8_t> to_runs(const std::uint32_t* codes, std::size_t n, std::size_t& runs) {
    std::vector<std::uint8_t> values, lengths;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && codes[j] == codes[i]) ++j;
        values.push_back(static_cast<std::uint8_t>(codes[i]));
        for (std::size_t len = j - i;; len >>= 7) {
            if (len < 0x80) {
                lengths.push_back(static_cast<std::uint8_t>(len));
                break;
            }
            lengths.push_back(static_cast<std::uint8_t>(0x80 | (len & 0x7f)));
        }
        i = j;
    }
    runs = values.size();
    values.insert(values.end(), lengths.begin(), lengths.end());
    return values;
}

// The value of slot `slot` of a decoded run block of `runs` runs.
std::uint8_t run_value(const std::uint8_t* block, std::size_t runs, std::size_t slot) {
    const std::uint8_t* length = block + runs;
    std::size_t end = 0;
    for (std::size_t r = 0; r < runs; ++r) {
        std::size_t len = 0;
        for (int shift = 0;; shift += 7) {
            const std::uint8_t b = *length++;
            len |= std::size_t{b & 0x7fu} << shift;
            if (b < 0x80) break;
        }
        end += len;
        if (slot < end) return block[r];
    }
    die("slot beyond the block");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) die("usage: run_study DB [TABLE...] [--level N] [--lookups N]");
    std::vector<std::string> names;
    int level = 0;
    std::uint64_t lookups = 2000;
    std::size_t chunk = 2048;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--level" && i + 1 < argc) {
            level = std::atoi(argv[++i]);
        } else if (arg == "--chunk" && i + 1 < argc) {
            chunk = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--lookups" && i + 1 < argc) {
            lookups = std::strtoull(argv[++i], nullptr, 10);
        } else {
            names.push_back(arg);
        }
    }
    auto db = tbf::study::open_study_database("run_study", argv[1], names);
    Compressor z;
    z.options = tbf::storage::compact_write_options();
    tbf::study::use_stored_compact_parser(z.options);
    if (level != 0) z.options.zstd_level = level;
    std::uint64_t total_stored = 0, total_plain = 0, total_runs = 0, total_slots = 0, total_chunked = 0;
    double chunked_ns_sum = 0;
    double plain_ns_sum = 0, runs_ns_sum = 0, plain_out_sum = 0, runs_out_sum = 0;
    std::printf("%-8s %10s %9s %9s %9s %7s %10s %10s %9s %9s\n", "table", "slots", "stored", "plain", "runs",
                "ratio", "plain out", "runs out", "plain ns", "runs ns");
    std::mt19937_64 rng(1);
    for (const std::string& name : names) {
        tbf::study::TableSize size;
        auto table = tbf::study::open_study_table("run_study", db, name, size);
        const std::vector<std::uint32_t> codes = tbf::study::read_all_codes("run_study", table);
        if (table.info().spec.value_width != 1) continue;
        const std::size_t block = table.info().slots_per_block;
        struct Block {
            std::string plain, runs, chunked;
            std::size_t slots = 0, run_count = 0, run_bytes = 0;
        };
        std::vector<Block> blocks;
        std::uint64_t plain = 0, runs = 0, chunked = 0;
        for (std::size_t at = 0; at < codes.size(); at += block) {
            Block b;
            b.slots = std::min(block, codes.size() - at);
            std::vector<std::uint8_t> raw(b.slots);
            for (std::size_t k = 0; k < b.slots; ++k) raw[k] = static_cast<std::uint8_t>(codes[at + k]);
            const std::vector<std::uint8_t> r = to_runs(&codes[at], b.slots, b.run_count);
            b.run_bytes = r.size();
            b.plain = z.compress(raw);
            b.runs = z.compress(r);
            b.chunked = z.compress_chunked(raw, chunk);
            chunked += b.chunked.size();
            plain += b.plain.size();
            runs += b.runs.size();
            blocks.push_back(std::move(b));
        }
        // One slot read as a cold probe reads it: its block decoded, then
        // (runs) the scan to its run.
        std::vector<std::uint8_t> out(block * 4 + 16);
        std::uint64_t plain_out = 0, runs_out = 0, sink = 0;
        std::vector<std::uint64_t> slots(lookups);
        for (auto& s : slots) s = rng() % codes.size();
        double start = now();
        for (const std::uint64_t s : slots) {
            const Block& b = blocks[s / block];
            z.decompress(b.plain, out.data(), b.slots);
            sink += out[s % block];
            plain_out += b.slots;
        }
        const double plain_ns = (now() - start) * 1e9 / static_cast<double>(lookups);
        start = now();
        for (const std::uint64_t s : slots) {
            const Block& b = blocks[s / block];
            z.decompress(b.runs, out.data(), b.run_bytes);
            const std::uint8_t v = run_value(out.data(), b.run_count, s % block);
            if (v != codes[s]) die(name + ": run decode mismatch");
            sink += v;
            runs_out += b.run_bytes;
        }
        const double runs_ns = (now() - start) * 1e9 / static_cast<double>(lookups);
        start = now();
        std::uint64_t chunked_out = 0;
        for (const std::uint64_t s : slots) {
            const Block& b = blocks[s / block];
            chunked_out += z.decompress_until(b.chunked, out.data(), b.slots, s % block);
            if (out[s % block] != codes[s]) die(name + ": chunked decode mismatch");
        }
        const double chunked_ns = (now() - start) * 1e9 / static_cast<double>(lookups);
        std::printf("%-8s chunks of %zu: %9llu B (%.3f of plain), out %.0f, %.0f ns\n", "", chunk,
                    static_cast<unsigned long long>(chunked), static_cast<double>(chunked) / static_cast<double>(plain),
                    static_cast<double>(chunked_out) / static_cast<double>(lookups), chunked_ns);
        total_chunked += chunked;
        chunked_ns_sum += chunked_ns;
        if (sink == 42) std::printf(" ");
        std::printf("%-8s %10llu %9llu %9llu %9llu %7.3f %10.0f %10.0f %9.0f %9.0f\n", name.c_str(),
                    static_cast<unsigned long long>(codes.size()), static_cast<unsigned long long>(size.stored),
                    static_cast<unsigned long long>(plain), static_cast<unsigned long long>(runs),
                    static_cast<double>(runs) / static_cast<double>(plain),
                    static_cast<double>(plain_out) / static_cast<double>(lookups),
                    static_cast<double>(runs_out) / static_cast<double>(lookups), plain_ns, runs_ns);
        total_stored += size.stored;
        total_plain += plain;
        total_runs += runs;
        total_slots += codes.size();
        plain_ns_sum += plain_ns;
        runs_ns_sum += runs_ns;
        plain_out_sum += static_cast<double>(plain_out) / static_cast<double>(lookups);
        runs_out_sum += static_cast<double>(runs_out) / static_cast<double>(lookups);
    }
    const double n = static_cast<double>(names.size());
    std::printf("\n%zu tables, %llu slots: stored %llu B, plain %llu B, runs %llu B (%.3f of plain)\n", names.size(),
                static_cast<unsigned long long>(total_slots), static_cast<unsigned long long>(total_stored),
                static_cast<unsigned long long>(total_plain), static_cast<unsigned long long>(total_runs),
                static_cast<double>(total_runs) / static_cast<double>(total_plain));
    std::printf("chunks of %zu: %llu B (%.3f of plain), ns a lookup %.0f\n", chunk,
                static_cast<unsigned long long>(total_chunked),
                static_cast<double>(total_chunked) / static_cast<double>(total_plain), chunked_ns_sum / n);
    std::printf("mean a table: decoded bytes a lookup plain %.0f, runs %.0f; ns a lookup plain %.0f, runs %.0f\n",
                plain_out_sum / n, runs_out_sum / n, plain_ns_sum / n, runs_ns_sum / n);
    return 0;
}
