// Writes the seed corpora of the fuzz targets (docs/fuzzing.md), one
// directory per target under the given directory, one input per file:
//   make_seeds OUT_DIR
// The text seeds come from the FENs of tests/reference and
// tests/fuzz/seeds/fen_extra.txt; the binary ones (probe structs, records,
// blocks, manifests, update frames) are made here by the project's own
// encoders, so that no opaque binary file is checked in.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "records.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/storage/database.hpp"
#include "tbforge/storage/position_key.hpp"
#include "work_files.hpp"

namespace {

namespace fs = std::filesystem;
namespace detail = tbf::storage::detail;
namespace ooc = tbf::gen::ooc;

class Corpus {
public:
    Corpus(const fs::path& root, const std::string& target) : dir_(root / target) {
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void add(std::string_view bytes) {
        if (!seen_.insert(std::string(bytes)).second) return;
        char name[32];
        std::snprintf(name, sizeof name, "seed-%04zu", seen_.size());
        std::ofstream(dir_ / name, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    void add(std::uint8_t prefix, std::string_view bytes) {
        add(std::string(1, static_cast<char>(prefix)) + std::string(bytes));
    }
    std::size_t size() const { return seen_.size(); }

private:
    fs::path dir_;
    std::set<std::string> seen_;
};

// Column `column` of a TSV file's rows (the header skipped): at most
// `per_key` rows for each value of column 0, at most `limit` in all.
std::vector<std::string> tsv_column(const fs::path& file, std::size_t column, std::size_t per_key,
                                    std::size_t limit) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::vector<std::string> out;
    std::map<std::string, std::size_t> taken;
    std::string line;
    std::getline(in, line);
    while (out.size() < limit && std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream row(line);
        for (std::string cell; std::getline(row, cell, '\t');) cells.push_back(cell);
        if (cells.size() <= column || taken[cells[0]]++ >= per_key) continue;
        out.push_back(cells[column]);
    }
    return out;
}

std::vector<std::string> extra_fens(const fs::path& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != '#') out.push_back(line);
    }
    return out;
}

std::string bytes_of(const void* p, std::size_t n) { return {static_cast<const char*>(p), n}; }

void chess_seeds(const fs::path& out, const std::vector<std::string>& fens) {
    Corpus fen(out, "fen"), uci(out, "uci_move"), line(out, "strategy_line"), probe(out, "probe");
    for (const std::string& f : fens) fen.add(f);
    line.add("# strategy antichess/KQvK, white");
    line.add("");
    line.add("   \t\r");
    for (const std::string& f : fens) {
        for (std::size_t v = 0; v < std::size(tbf::kVariantTraits); ++v) {
            const auto variant = static_cast<tbf::VariantId>(v);
            auto pos = tbf::parse_fen(f, variant);
            if (!pos.ok()) continue;
            tbf::MoveList moves;
            tbf::with_variant(variant, [&]<class R>() { tbf::generate_legal<R>(*pos, moves); });
            if (!moves.empty()) {
                const std::string first = tbf::to_uci(moves[0]);
                const std::string last = tbf::to_uci(moves[moves.size() - 1]);
                uci.add(f + "\t" + first);
                uci.add(f + "\t" + last);
                line.add(f + "\t" + first);
                line.add(" " + tbf::to_fen(*pos) + " \t " + last + "\r");
            }
            uci.add(f + "\ta1a1");
            if (pos->occupied() != 0 && std::popcount(pos->occupied()) <= 4) {
                const std::string name(tbf::variant_name(variant));
                probe.add(static_cast<std::uint8_t>(v | 4), f);
                tbf_position plain;
                if (tbf_parse_fen(name.c_str(), f.c_str(), &plain) == TBF_OK) {
                    probe.add(static_cast<std::uint8_t>(v), bytes_of(&plain, sizeof plain));
                }
            }
        }
    }
    std::cout << "fen " << fen.size() << ", uci_move " << uci.size() << ", strategy_line "
              << line.size() << ", probe " << probe.size() << " seeds\n";
}

void storage_seeds(const fs::path& out) {
    Corpus records(out, "storage_record"), blocks(out, "storage_block"), groups(out, "storage_group");
    constexpr std::uint8_t kReseal = 8, kOwnName = 16;

    tbf::storage::TableInfo table;
    table.spec = {"antichess/KQvK", "antichess", "KQvK", 3000, 1, "wdl-dtc/1", "tbforge 0.1.0"};
    table.statistics.counters = {{"white.valid", 1410}, {"black.win", 3}};
    table.statistics.json = R"({"white":{"win":1}})";
    table.values_checksum = 0x0123456789abcdefULL;
    table.format_version = tbf::storage::kFormatVersion;
    table.slots_per_block = 1024;
    table.block_count = 3;
    table.stored_bytes = 777;
    table.blocks_per_record = 2;
    table.payload_bytes = 700;
    table.storage_id = 5;
    records.add(0 | kReseal | kOwnName, detail::encode_table_info(table));
    table.statistics = {};
    records.add(0, detail::encode_table_info(table));

    tbf::storage::StrategyInfo strategy;
    strategy.spec = {"krkb-draw",
                     "fourfile",
                     tbf::storage::Side::White,
                     tbf::storage::StrategyKind::NonLoss,
                     {"8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1"},
                     std::string(tbf::storage::kPositionMoveEncoding),
                     R"({"source":"tables"})"};
    strategy.entry_count = 12;
    strategy.entry_bytes = 200;
    strategy.format_version = tbf::storage::kFormatVersion;
    strategy.storage_id = 9;
    records.add(1 | kReseal | kOwnName, detail::encode_strategy_info(strategy));
    records.add(1, detail::encode_strategy_info(strategy));
    records.add(2, detail::encode_marker(tbf::storage::kFormatVersion));
    records.add(3, detail::encode_next_id(42));

    tbf::storage::PlainPosition position;
    position.units[4] = tbf::storage::unit_code(0, 0);
    position.units[60] = tbf::storage::unit_code(1, 0);
    records.add(4, *tbf::storage::encode_position_key(position));
    position.units[35] = tbf::storage::unit_code(1, 5);
    position.units[36] = tbf::storage::unit_code(0, 5);
    position.ep_square = 43;
    records.add(4, *tbf::storage::encode_position_key(position));
    records.add(5, *tbf::storage::encode_move_value({12, 28, 0}));
    records.add(5, *tbf::storage::encode_move_value({52, 60, 2}));

    // Blocks: byte 0 width code | reseal, bytes 1-2 the slot count - 1.
    const std::string key = detail::block_key(7, 3);
    for (const std::uint32_t width_code : {0u, 1u, 2u}) {
        const std::uint32_t width = 1u << width_code;
        for (const std::uint32_t slots : {1u, 40u, 1000u}) {
            std::vector<std::uint8_t> raw(std::size_t{slots} * width);
            for (std::size_t i = 0; i < raw.size(); ++i) {
                raw[i] = static_cast<std::uint8_t>(i % 7 == 0 ? i : 0);
            }
            const detail::ZstdCCtx cctx(ZSTD_createCCtx());
            for (const auto compression :
                 {tbf::storage::Compression::None, tbf::storage::Compression::Lz4,
                  tbf::storage::Compression::Zstd}) {
                std::string scratch, record;
                detail::BlockEncoding encoding;
                encoding.compression = compression;
                detail::encode_block(key, raw, width, encoding, cctx.get(), scratch, record);
                const std::string prefix{static_cast<char>(width_code),
                                         static_cast<char>((slots - 1) & 0xFF),
                                         static_cast<char>((slots - 1) >> 8)};
                blocks.add(prefix + record);
            }
        }
    }
    // Groups: byte 0 width code | reseal | format 4 (8) | format 5 (8 + 16),
    // byte 1 the blocks - 1, byte 2 the slots of each - 1; the members raw,
    // LZ4, zstd and fill.
    const std::string group_key = detail::block_key(7, 2);
    for (const int format : {3, 4, 5}) {
        const bool bare = format >= 4;
        const bool fills_in_directory = format == 5;
        for (const std::uint32_t width_code : {0u, 1u, 2u}) {
            const std::uint32_t width = 1u << width_code;
            for (const std::uint32_t members : {1u, 3u, 8u}) {
                const std::uint32_t slots = 200;
                const detail::ZstdCCtx cctx(ZSTD_createCCtx());
                std::vector<std::string> singles(members);
                for (std::uint32_t m = 0; m < members; ++m) {
                    std::vector<std::uint8_t> raw(std::size_t{slots} * width);
                    for (std::size_t i = 0; i < raw.size(); ++i) {
                        // The second block of three or more holds one value: a fill member.
                        raw[i] = static_cast<std::uint8_t>(m == 1 ? 9 : i % (5 + m) == 0 ? i : m);
                    }
                    if (m == 1 && detail::fill_member(raw, width, singles[m])) continue;
                    std::string scratch;
                    detail::BlockEncoding encoding;
                    encoding.compression = m % 3 == 0   ? tbf::storage::Compression::Zstd
                                           : m % 3 == 1 ? tbf::storage::Compression::Lz4
                                                        : tbf::storage::Compression::None;
                    encoding.bare_frames = bare;
                    detail::encode_block("", raw, width, encoding, cctx.get(), scratch, singles[m]);
                }
                std::string record;
                detail::encode_group(group_key, singles, width, record, fills_in_directory);
                groups.add(std::string{static_cast<char>(width_code | (bare ? 8 : 0) | (fills_in_directory ? 16 : 0)),
                                       static_cast<char>(members - 1),
                                       static_cast<char>(slots - 1)} +
                           record);
            }
        }
    }
    // Pair-coded members (format 6): byte 0 width code, bytes 1-2 the slots
    // - 1, bytes 3-4 the model's length, the model, the payload; from runs,
    // a period and a single value coded by the writer's encoder. The table
    // record of such a table carries its model.
    Corpus pairs(out, "storage_pairs");
    for (const std::uint32_t width_code : {0u, 1u, 2u}) {
        const std::uint32_t width = 1u << width_code;
        for (const std::uint32_t slots : {1u, 300u, 3000u}) {
            for (const int shape : {0, 1, 2}) {
                std::vector<std::uint8_t> raw(std::size_t{slots} * width, 0);
                for (std::uint32_t i = 0; i < slots; ++i) {
                    const std::uint32_t v = shape == 0 ? i / 37 % 5 : shape == 1 ? i % 11 * 3 : 7;
                    for (std::uint32_t b = 0; b < width; ++b) raw[std::size_t{i} * width + b] = static_cast<std::uint8_t>(v >> (8 * b));
                }
                auto coded = detail::pair_encode(raw, width, 1024);
                if (!coded.ok()) continue;
                const std::string& model = coded->model.serialized();
                for (std::size_t m = 0; m < coded->members.size(); ++m) {
                    const std::uint32_t member_slots = std::min<std::uint32_t>(1024, slots - static_cast<std::uint32_t>(m) * 1024);
                    pairs.add(std::string{static_cast<char>(width_code), static_cast<char>((member_slots - 1) & 0xFF),
                                          static_cast<char>((member_slots - 1) >> 8), static_cast<char>(model.size() & 0xFF),
                                          static_cast<char>(model.size() >> 8)} +
                              model + coded->members[m]);
                }
                if (width == 1 && slots == 3000 && shape == 0) {
                    table.pair_model = model;
                    records.add(0 | kReseal | kOwnName, detail::encode_table_info(table));
                    table.pair_model.clear();
                }
            }
        }
    }
    std::cout << "storage_record " << records.size() << ", storage_block " << blocks.size()
              << ", storage_group " << groups.size() << ", storage_pairs " << pairs.size() << " seeds\n";
}

void ooc_seeds(const fs::path& out) {
    Corpus manifests(out, "ooc_manifest"), frames(out, "ooc_frames");
    ooc::Manifest m;
    m.generator_version = "tbforge 0.1.0";
    m.table = "antichess/KQvK";
    m.index_size = 1000;
    m.chunk_slots = 400;
    manifests.add(0, ooc::encode_manifest(m));
    m.phase = ooc::Phase::Levels;
    m.level = 3;
    m.next_chunk = 1;
    m.chunks.resize(3);
    m.chunks[0].generation = 2;
    m.chunks[0].bucket_bytes = 48;
    m.chunks[0].max_code = 9;
    m.chunks[0].pending = {{3, 10}, {4, 1}};
    m.chunks[1].late_wins = 5;
    m.chunks[2].tracked = {7, 8};
    m.undecided = 100;
    m.sparse_level = 4;
    m.sparse_words = 20;
    m.sparse_checksum = 0xfeedULL;
    manifests.add(0, ooc::encode_manifest(m));
    m.phase = ooc::Phase::Sparse;
    manifests.add(1, ooc::encode_manifest(m));

    std::vector<ooc::Update> updates = {
        {5, 1, 1, 1}, {9, 1, 1, ooc::kLossChild | 1}, {9, 1, 2, 4}, {70000, 2, 1, 1}};
    const auto two_levels = ooc::encode_update_frames(updates);
    frames.add(0, bytes_of(two_levels.data(), two_levels.size()));
    frames.add(1, bytes_of(two_levels.data(), two_levels.size()));
    std::vector<ooc::Update> one = {{0, 0, 3, 2}};
    const auto one_level = ooc::encode_update_frames(one);
    frames.add(1, bytes_of(one_level.data(), one_level.size()));
    std::cout << "ooc_manifest " << manifests.size() << ", ooc_frames " << frames.size()
              << " seeds\n";
}

// Request targets as the web explorer and lichess-style clients send them.
void http_seeds(const fs::path& out, const std::vector<std::string>& fens) {
    Corpus targets(out, "http_query");
    for (const std::string& path : {"/", "/health", "/index.html", "/app.js", "/a/b.css", "/../x",
                                    "/antichess", "/nosuch/mainline", "/%2e%2e/x"}) {
        targets.add(path);
    }
    std::size_t n = 0;
    for (std::string f : fens) {
        if (n++ % 25 != 0) continue;  // a few dozen are enough: the grammar is the path and query
        std::replace(f.begin(), f.end(), ' ', '_');
        targets.add("/antichess?fen=" + f);
        targets.add("/fourfile/mainline?fen=" + f + "&x=1");
        targets.add("/antichess-fics?a=%20&fen=" + f);
    }
    std::cout << "http_query " << targets.size() << " seeds\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_seeds OUT_DIR\n";
        return 2;
    }
    try {
        const fs::path out = argv[1];
        const fs::path reference = TBF_REFERENCE_DIR;
        std::vector<std::string> fens =
            extra_fens(fs::path(TBF_FUZZ_DIR) / "seeds" / "fen_extra.txt");
        // The FEN column of each file: one or two rows per id or table.
        const struct {
            const char* file;
            std::size_t per_key;
            std::size_t limit;
        } sources[] = {{"perft/antichess.tsv", 1, 1000},
                       {"perft/fourfile.tsv", 1, 1000},
                       {"syzygy/giveaway_samples_2.tsv", 2, 1000},
                       {"syzygy/giveaway_samples_34.tsv", 1, 150},
                       {"syzygy/giveaway_samples_5.tsv", 2, 1000}};
        for (const auto& source : sources) {
            for (auto& f : tsv_column(reference / source.file, 1, source.per_key, source.limit)) {
                fens.push_back(std::move(f));
            }
        }
        chess_seeds(out, fens);
        http_seeds(out, fens);
        storage_seeds(out);
        ooc_seeds(out);
    } catch (const std::exception& e) {
        std::cerr << "make_seeds: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
