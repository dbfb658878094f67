// Stored size and CPU of zstd's advanced parameters on the blocks of existing
// tables (not run in CI; the figures behind the zstd settings of wdl-dtc/2
// tables, docs/storage-format.md section 12). Reads every block of the named
// tables (all tables of the database when none is named) once, keeps them in
// their byte-plane form, then compresses every block with each candidate
// parameter set and decodes it back, on one thread: total payload bytes
// (plus 32 bytes a block of record header and key), the ratio to the first
// set, and the thread CPU seconds of compressing and of decoding.
//
// With --rank, the codes of each 1-byte table are first renumbered by
// frequency in the blocks read (the most frequent 0): the lever of
// frequency-ranked symbols, measured before any format carries it.
//
// With --slots N, each block read is cut into blocks of N slots (a power of
// two below the table's own block size) before anything is compressed: the
// stored size and decoding cost of smaller blocks. A set with dict=BYTES
// trains a dictionary of at most BYTES per table from that table's blocks
// (whole blocks spread evenly, about a hundred times the dictionary, as
// the writer does), compresses that table's blocks with it and the set's
// other parameters, and counts the dictionary in the bytes.
//
// Usage: zstd_study DB [TABLE...] [--sets SPEC;SPEC;...] [--skip N] [--slots N] [--rank]
//   SPEC is "level=7,strategy=7,search=3,target=64,min=6,chain=..,hash=..,window=..,row=..,
//   magicless=..,size=..,lit=..,flush=..,dict=.." (row: zstd's row match finder, 1 on, 2 off;
//   magicless=1: frames without the magic number; size=0: no content size in the frame header;
//   lit: the literals Huffman-coded 1 or stored raw 2; flush=N: a zstd block ends every N bytes
//   of planes inside the frame, still one frame a block)
//   (missing keys keep the level's own); --skip N keeps one block in N.
//   Decoding is timed kRepeats times a block: the whole frame, and one value
//   (at kRepeats places a block, the same for every set) decoded with zstd's
//   block-by-block API up to the zstd block that holds it.

#define ZSTD_STATIC_LINKING_ONLY  // the row match finder and the magicless format
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "study_database.hpp"
#include "tbforge/storage/database.hpp"
#include "records.hpp"  // the writer's dictionary training

namespace {

using namespace tbf::storage;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "zstd_study: %s\n", message.c_str());
    std::exit(3);
}

struct ParameterSet {
    std::string label;
    std::vector<std::pair<ZSTD_cParameter, int>> parameters;
    std::size_t dictionary_bytes = 0;
    // zstd blocks of at most this many bytes of planes inside each frame
    // (0: one, as ZSTD_compress2 writes them): where a reader decoding one
    // value may stop.
    std::size_t flush_bytes = 0;
};

// Whole blocks, about a hundred times the dictionary, spread evenly, given to
// the writer's own training (storage/src/records.cpp).
std::string train(const std::vector<std::string>& blocks, std::size_t first, std::size_t end,
                  std::size_t capacity) {
    if (end - first < 8) return {};
    const std::size_t block_bytes = blocks[first].size();
    const std::size_t wanted = std::max<std::size_t>(8, 100 * capacity / std::max<std::size_t>(block_bytes, 1));
    const std::size_t step = std::max<std::size_t>(1, (end - first) / wanted);
    std::vector<std::string> samples;
    for (std::size_t b = first; b < end; b += step) samples.push_back(blocks[b]);
    return tbf::storage::detail::train_dictionary(samples, capacity);
}

ParameterSet parse_set(const std::string& spec) {
    ParameterSet set{spec, {}};
    std::stringstream in(spec);
    std::string item;
    while (std::getline(in, item, ',')) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) die("bad parameter '" + item + "'");
        const std::string key = item.substr(0, eq);
        const int value = std::atoi(item.c_str() + eq + 1);
        ZSTD_cParameter p{};
        if (key == "level") p = ZSTD_c_compressionLevel;
        else if (key == "strategy") p = ZSTD_c_strategy;
        else if (key == "search") p = ZSTD_c_searchLog;
        else if (key == "target") p = ZSTD_c_targetLength;
        else if (key == "min") p = ZSTD_c_minMatch;
        else if (key == "chain") p = ZSTD_c_chainLog;
        else if (key == "hash") p = ZSTD_c_hashLog;
        else if (key == "window") p = ZSTD_c_windowLog;
        else if (key == "row") p = ZSTD_c_useRowMatchFinder;
        else if (key == "magicless") p = ZSTD_c_format;
        else if (key == "size") p = ZSTD_c_contentSizeFlag;
        else if (key == "lit") p = ZSTD_c_literalCompressionMode;
        else if (key == "dict") {
            set.dictionary_bytes = static_cast<std::size_t>(value);
            continue;
        } else if (key == "flush") {
            set.flush_bytes = static_cast<std::size_t>(value);
            continue;
        } else die("unknown parameter '" + key + "'");
        set.parameters.emplace_back(p, value);
    }
    return set;
}

// The default grid: the generator's setting before this study first.
const char* const kDefaultSets[] = {
    "level=7,min=6",
    "level=7,strategy=6,min=6",
    "level=7,strategy=6,search=4,target=64,min=6",
    "level=7,strategy=7,search=2,target=32,min=6",
    "level=7,strategy=7,search=3,target=64,min=6",
    "level=7,strategy=7,search=3,target=64,min=5",
    "level=7,strategy=7,search=4,target=64,min=6",
    "level=7,strategy=7,search=3,target=256,min=6",
    "level=7,strategy=7,search=2,target=256,min=6",
    "level=7,strategy=7,search=1,target=256,min=6",
    "level=7,strategy=8,search=2,target=64,min=6",
    "level=7,strategy=8,search=3,target=64,min=6",
    "level=7,strategy=8,search=3,target=256,min=6",
    "level=7,strategy=9,search=3,target=64,min=6",
    "level=15",
    "level=19",
};

// Each decoding timed this many times (values at as many places).
constexpr int kRepeats = 64;

double thread_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: zstd_study DB [TABLE...] [--sets SPEC;SPEC] [--skip N] [--slots N] [--rank]\n");
        return 2;
    }
    std::vector<std::string> names;
    std::vector<ParameterSet> sets;
    std::uint64_t skip = 1;
    std::uint64_t cut = 0;
    bool rank = false;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--sets" && i + 1 < argc) {
            std::stringstream in(argv[++i]);
            std::string spec;
            while (std::getline(in, spec, ';')) sets.push_back(parse_set(spec));
        } else if (arg == "--slots" && i + 1 < argc) {
            cut = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--rank") {
            rank = true;
        } else if (arg == "--skip" && i + 1 < argc) {
            skip = std::strtoull(argv[++i], nullptr, 10);
            if (skip == 0) skip = 1;
        } else {
            names.push_back(arg);
        }
    }
    if (sets.empty()) {
        for (const char* spec : kDefaultSets) sets.push_back(parse_set(spec));
    }
    auto db = tbf::study::open_study_database("zstd_study", argv[1], names);

    // Every block in byte-plane form (the form the writer compresses).
    std::vector<std::string> blocks;
    std::vector<std::size_t> table_first;  // index of each table's first block
    std::uint64_t slots = 0;
    std::uint64_t stored = 0;
    for (const std::string& name : names) {
        auto table = db.open_table(name);
        if (!table.ok()) die(table.status().to_string());
        const TableInfo& info = table->info();
        const std::uint32_t width = info.spec.value_width;
        const std::size_t first_block = blocks.size();
        table_first.push_back(first_block);
        for (std::uint64_t b = 0; b < info.block_count; b += skip) {
            auto block = table->read_block(b, CacheUse::Bypass);
            if (!block.ok()) die(block.status().to_string());
            const std::span<const std::uint8_t> all = (*block)->bytes();
            const std::size_t total = all.size() / width;
            const std::size_t piece = cut == 0 ? total : static_cast<std::size_t>(cut);
            for (std::size_t from = 0; from < total; from += piece) {
                const std::size_t n = std::min(piece, total - from);
                const std::uint8_t* bytes = all.data() + from * width;
                std::string planes(n * width, '\0');
                for (std::uint32_t k = 0; k < width; ++k) {
                    for (std::size_t v = 0; v < n; ++v) planes[k * n + v] = static_cast<char>(bytes[v * width + k]);
                }
                blocks.push_back(std::move(planes));
                slots += n;
            }
        }
        stored += info.stored_bytes + 16 * info.block_count;
        if (rank && width == 1) {
            std::array<std::uint64_t, 256> count{};
            for (std::size_t b = first_block; b < blocks.size(); ++b) {
                for (const char c : blocks[b]) ++count[static_cast<std::uint8_t>(c)];
            }
            std::array<int, 256> order{};
            for (int k = 0; k < 256; ++k) order[k] = k;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count[a] > count[b]; });
            std::array<char, 256> to{};
            for (int k = 0; k < 256; ++k) to[order[k]] = static_cast<char>(k);
            for (std::size_t b = first_block; b < blocks.size(); ++b) {
                for (char& c : blocks[b]) c = to[static_cast<std::uint8_t>(c)];
            }
        }
    }
    std::printf("%zu tables, %zu blocks, %llu slots (stored: %llu B for all their blocks)\n", names.size(),
                blocks.size(), static_cast<unsigned long long>(slots),
                static_cast<unsigned long long>(stored));

    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::string out, back;
    double base_bytes = 0;
    table_first.push_back(blocks.size());
    for (const ParameterSet& set : sets) {
        // Frames without the magic number decode only in that format.
        int format = 0;
        for (const auto& [p, v] : set.parameters)
            if (p == ZSTD_c_format) format = v;
        ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, format);
        std::uint64_t bytes = 0;
        std::uint64_t dictionaries = 0;
        double compress_s = 0;
        double decode_s = 0;
        double train_s = 0;
        double one_s = 0;
        std::uint64_t one_count = 0;
        ZSTD_DDict* ddict = nullptr;
        std::size_t table = 0;
        for (std::size_t index = 0; index < blocks.size(); ++index) {
            const std::string& block = blocks[index];
            double t0 = thread_seconds();
            while (table_first[table + 1] <= index) ++table;  // skips tables without blocks
            if (index == table_first[table]) {
                // A table's first block: its parameters and dictionary, kept
                // for the table's blocks (a dictionary loaded into the context
                // keeps the set's parser, which a level-made CDict would not).
                const std::size_t end = table_first[table + 1];
                ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
                ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
                for (const auto& [p, v] : set.parameters) {
                    const std::size_t r = ZSTD_CCtx_setParameter(cctx, p, v);
                    if (ZSTD_isError(r)) die(set.label + ": " + ZSTD_getErrorName(r));
                }
                ZSTD_freeDDict(ddict);
                ddict = nullptr;
                if (set.dictionary_bytes > 0) {
                    const std::string dict = train(blocks, index, end, set.dictionary_bytes);
                    const double t_trained = thread_seconds();
                    train_s += t_trained - t0;
                    t0 = t_trained;
                    if (!dict.empty()) {
                        ZSTD_CCtx_loadDictionary(cctx, dict.data(), dict.size());
                        ddict = ZSTD_createDDict(dict.data(), dict.size());
                        dictionaries += dict.size();
                    }
                }
            } else {
                ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
            }
            // Each zstd block a flush ends adds a 3-byte header at most.
            out.resize(ZSTD_compressBound(block.size()) +
                       3 * (block.size() / std::max<std::size_t>(set.flush_bytes, 1) + 1));
            std::size_t n = 0;
            if (set.flush_bytes == 0) {
                n = ZSTD_compress2(cctx, out.data(), out.size(), block.data(), block.size());
                if (ZSTD_isError(n)) die(ZSTD_getErrorName(n));
            } else {
                // The size pledged keeps the parameters ZSTD_compress2 picks.
                ZSTD_CCtx_setPledgedSrcSize(cctx, block.size());
                ZSTD_outBuffer o{out.data(), out.size(), 0};
                for (std::size_t at = 0; at < block.size(); at += set.flush_bytes) {
                    const std::size_t len = std::min(set.flush_bytes, block.size() - at);
                    const bool last = at + len == block.size();
                    ZSTD_inBuffer in{block.data() + at, len, 0};
                    std::size_t left = 0;
                    do {
                        left = ZSTD_compressStream2(cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_flush);
                        if (ZSTD_isError(left)) die(ZSTD_getErrorName(left));
                    } while (left != 0 || in.pos < in.size);
                }
                n = o.pos;
            }
            double t1 = thread_seconds();
            compress_s += t1 - t0;
            // A block that does not shrink is stored raw.
            bytes += std::min(n, block.size()) + 32;
            back.resize(block.size());
            std::size_t m = 0;
            t0 = thread_seconds();
            for (int r = 0; r < kRepeats; ++r) {
                m = ddict != nullptr
                        ? ZSTD_decompress_usingDDict(dctx, back.data(), back.size(), out.data(), n, ddict)
                        : ZSTD_decompressDCtx(dctx, back.data(), back.size(), out.data(), n);
            }
            t1 = thread_seconds();
            decode_s += (t1 - t0) / kRepeats;
            if (ZSTD_isError(m) || m != block.size() || back != block) die("round trip failed");
            // One value: the zstd blocks up to the one holding it.
            if (ddict == nullptr && n < block.size()) {
                for (int r = 0; r < kRepeats; ++r) {
                    const std::size_t target =
                        static_cast<std::size_t>(((index * kRepeats + r) * 2654435761u) % block.size());
                    back[target] = static_cast<char>(~block[target]);  // what the decoding must undo
                    t0 = thread_seconds();
                    if (ZSTD_isError(ZSTD_decompressBegin(dctx))) die("decompressBegin");
                    std::size_t in = 0, pos = 0;
                    while (pos <= target) {
                        const std::size_t want = ZSTD_nextSrcSizeToDecompress(dctx);
                        if (want == 0 || in + want > n) die("frame ended before the value");
                        const std::size_t made = ZSTD_decompressContinue(dctx, back.data() + pos, back.size() - pos,
                                                                         out.data() + in, want);
                        if (ZSTD_isError(made)) die(std::string("decompressContinue: ") + ZSTD_getErrorName(made));
                        in += want;
                        pos += made;
                    }
                    one_s += thread_seconds() - t0;
                    if (back[target] != block[target]) die("value decoded wrong");
                    ++one_count;
                }
            }
        }
        ZSTD_freeDDict(ddict);
        bytes += dictionaries;
        if (base_bytes == 0) base_bytes = static_cast<double>(bytes);
        std::printf("%-48s %12llu B (dict %llu)  %.4f  compress %7.2f s  train %5.2f s  decode %6.2f s"
                    "  (%.2f us/block, %.2f us/value)\n",
                    set.label.c_str(), static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(dictionaries), static_cast<double>(bytes) / base_bytes,
                    compress_s, train_s, decode_s, 1e6 * decode_s / static_cast<double>(blocks.size()),
                    one_count == 0 ? 0.0 : 1e6 * one_s / static_cast<double>(one_count));
        std::fflush(stdout);
    }
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    return 0;
}
