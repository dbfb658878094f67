// `tbverify tables` against databases built by the real generator (the tbgen
// executable): clean tables verify, and every kind of planted damage — a
// changed value, two swapped values, a wrong checksum or statistic, a
// missing sub-table, a corrupt block — is caught with the right exit code
// and names the position or table.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "tbforge/probe/tbforge.h"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"
#include "tbforge/verify/board.hpp"
#include "tbforge/verify/cli.hpp"
#include "tbforge/verify/tables.hpp"
#include "raw_db.hpp"
#include "test_support.hpp"

namespace {

namespace storage = tbf::storage;
using tbf::test::ScratchDir;

struct Run {
    int code;
    std::string out;
    std::string err;
};

Run tbverify(const std::vector<std::string>& args) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = tbf::verify::run_cli(args, out, err);
    return {code, out.str(), err.str()};
}

// `s` quoted for the shell.
std::string quoted(const std::string& s) {
    std::string out(1, '\'');
    for (char c : s) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    out += '\'';
    return out;
}

// Builds tables with the generator's own executable. Small tables: one
// thread wastes least on a busy machine.
void tbgen(const std::string& db, const std::string& variant,
           const std::vector<std::string>& tables, int threads = 1) {
    std::string command = quoted(TBF_TBGEN);
    for (const std::string& arg :
         {std::string("gen"), std::string("--quiet"), std::string("--threads"),
          std::to_string(threads), std::string("--variant"), variant, std::string("--db"), db}) {
        command += ' ';
        command += quoted(arg);
    }
    for (const std::string& t : tables) {
        command += ' ';
        command += quoted(t);
    }
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
}

// The --json line of one table.
std::string table_line(const std::string& out, const std::string& table) {
    const std::string start = "{\"table\":\"" + table + "\"";
    const std::size_t at = out.find(start);
    REQUIRE_MESSAGE(at != std::string::npos, "no line for ", table, " in\n", out);
    return out.substr(at, out.find('\n', at) - at);
}

// A number field of a JSON object line.
std::uint64_t number(const std::string& line, const std::string& key) {
    const std::string field = "\"" + key + "\":";
    const std::size_t at = line.find(field);
    REQUIRE_MESSAGE(at != std::string::npos, "no ", key, " in ", line);
    return std::stoull(line.substr(at + field.size()));
}

using tbf::test::contains;

std::string json_value(const char* category, unsigned dtc) {
    return std::string("{\"category\":\"") + category + "\",\"dtc\":" + std::to_string(dtc) + "}";
}

// The FEN the verifier prints for a neutral position (its own board's FEN).
std::string fen_of(const tbf_position& pos, tbf::verify::Variant variant) {
    using tbf::verify::Piece;
    constexpr Piece kPieces[] = {Piece::King,   Piece::Queen,  Piece::Rook,
                                 Piece::Bishop, Piece::Knight, Piece::Pawn};
    std::array<tbf::verify::Unit, 64> cells{};
    for (int i = 0; i < pos.unit_count; ++i) {
        cells[pos.units[i].square] = {kPieces[pos.units[i].type], pos.units[i].color == TBF_WHITE
                                                                      ? tbf::verify::Color::White
                                                                      : tbf::verify::Color::Black};
    }
    const auto made = tbf::verify::make_board(
        variant, cells,
        pos.side_to_move == TBF_WHITE ? tbf::verify::Color::White : tbf::verify::Color::Black,
        tbf::verify::kNoSquare);
    REQUIRE_MESSAGE(made, made.status().message());
    return made->fen();
}

// Read access through the public C API, as a user of the tables has it.
class CApi {
public:
    explicit CApi(const std::string& path) { REQUIRE(tbf_open(path.c_str(), 0, &db_) == TBF_OK); }
    ~CApi() { tbf_close(db_); }
    CApi(const CApi&) = delete;
    CApi& operator=(const CApi&) = delete;

    tbf_table_info info(const std::string& name) {
        std::size_t count = 0;
        REQUIRE(tbf_table_count(db_, &count) == TBF_OK);
        for (std::size_t i = 0; i < count; ++i) {
            tbf_table_info info{};
            REQUIRE(tbf_table_info_at(db_, i, &info) == TBF_OK);
            if (name == info.name) return info;
        }
        FAIL("no table ", name);
        return {};
    }
    // The position of a storage slot, or nothing for a hole.
    std::optional<tbf_position> position(const std::string& table, std::uint64_t slot) {
        return position(info(table), slot);
    }
    std::optional<tbf_position> position(const tbf_table_info& t, std::uint64_t slot) {
        const int side = slot >= t.index_size ? 1 : 0;
        tbf_position pos{};
        const tbf_status s = tbf_table_position(
            db_, t.name, slot - static_cast<std::uint64_t>(side) * t.index_size, side, &pos);
        if (s == TBF_ERR_NOT_A_POSITION) return std::nullopt;
        if (s != TBF_OK) FAIL("tbf_table_position: ", tbf_last_error());
        return pos;
    }

private:
    tbf_db* db_ = nullptr;
};

struct TableCopy {
    storage::TableInfo info;
    std::vector<std::uint32_t> values;  // stored codes: 0 draw, 1 + 2d win, 2 + 2d loss
};

TableCopy read_table(const std::string& path, const std::string& name) {
    auto db = storage::Database::open(path);
    REQUIRE(db.ok());
    auto reader = db->open_table(name);
    REQUIRE(reader.ok());
    TableCopy copy{reader->info(), {}};
    for (std::uint64_t b = 0; b < copy.info.block_count; ++b) {
        auto block = reader->read_block(b, storage::CacheUse::Bypass);
        REQUIRE(block.ok());
        for (std::uint32_t i = 0; i < (*block)->size(); ++i) {
            copy.values.push_back((*block)->value(i));
        }
    }
    REQUIRE(copy.values.size() == copy.info.spec.slot_count);
    return copy;
}

// Writes a table again in place with the storage API: same spec, the given
// values and statistics, and a fresh (valid) checksum, as a buggy generator
// would have written it.
void write_table(const std::string& path, const TableCopy& copy) {
    storage::DatabaseOptions options;
    options.mode = storage::OpenMode::ReadWrite;
    auto db = storage::Database::open(path, options);
    REQUIRE(db.ok());
    storage::TableWriteOptions write;
    write.replace = true;
    write.slots_per_block = copy.info.slots_per_block;
    auto writer = db->create_table(copy.info.spec, write);
    REQUIRE(writer.ok());
    const auto width = copy.info.spec.value_width;
    REQUIRE((width == 1 || width == 2));
    if (width == 1) {
        std::vector<std::uint8_t> bytes(copy.values.begin(), copy.values.end());
        REQUIRE(writer->append(std::span<const std::uint8_t>(bytes)).ok());
    } else {
        std::vector<std::uint16_t> words(copy.values.begin(), copy.values.end());
        REQUIRE(writer->append(std::span<const std::uint16_t>(words)).ok());
    }
    REQUIRE(writer->commit(copy.info.statistics).ok());
}

// The lowest valid slot whose stored code satisfies `wanted`.
std::uint64_t find_slot(CApi& api, const std::string& table, const TableCopy& copy,
                        const std::function<bool(std::uint32_t)>& wanted) {
    for (std::uint64_t slot = 0; slot < copy.values.size(); ++slot) {
        if (wanted(copy.values[slot]) && api.position(table, slot)) return slot;
    }
    FAIL("no such slot in ", table);
    return 0;
}

using tbf::test::be64;
using tbf::test::RawDb;

std::uint32_t le32_at(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

// Offset of the values checksum in a table metadata record
// (docs/storage-format.md section 6): magic, version, three strings, slot
// count, width, two strings, format version, slots per block, block count,
// stored bytes.
std::size_t values_checksum_offset(const std::string& record) {
    std::size_t at = 8;
    const auto skip_string = [&] { at += 4 + le32_at(record, at); };
    for (int i = 0; i < 3; ++i) skip_string();
    at += 8 + 4;
    skip_string();
    skip_string();
    return at + 4 + 4 + 8 + 8;
}

// The record with its trailing record checksum recomputed.
std::string reseal(std::string record) {
    record.resize(record.size() - 8);
    const std::uint64_t h = tbf::xxh64(record);
    for (int i = 0; i < 8; ++i) record.push_back(static_cast<char>(h >> (8 * i)));
    return record;
}

// Every table of the database written again with blocks of `slots` slots
// (same values), so that a small --memory holds only a few of them.
void rewrite_with_blocks(const std::string& path, std::uint32_t slots) {
    std::vector<std::string> names;
    {
        auto db = storage::Database::open(path);
        REQUIRE(db.ok());
        auto tables = db->list_tables();
        REQUIRE(tables.ok());
        for (const storage::TableInfo& t : *tables) names.push_back(t.spec.name);
    }
    for (const std::string& name : names) {
        TableCopy copy = read_table(path, name);
        copy.info.slots_per_block = slots;
        write_table(path, copy);
    }
}

// The kinds of position a planted error must be found in.
enum class Kind { Quiet, Capture, Promotion, EnPassantChild, Terminal, Count };

constexpr const char* kKindNames[] = {"quiet", "capture", "promotion", "en passant child",
                                      "stalemate or mate"};

// The kind of a position by the verifier's own moves: terminal, a move that
// gives the opponent an en-passant right, a promotion, only captures, or
// only quiet moves.
std::optional<Kind> kind_of(const tbf::verify::Board& board) {
    const std::vector<tbf::verify::Move> moves = board.legal_moves();
    if (moves.empty()) return Kind::Terminal;
    bool capture = false;
    bool quiet = false;
    for (const tbf::verify::Move& m : moves) {
        if (board.after(m).ep_square() != tbf::verify::kNoSquare) return Kind::EnPassantChild;
    }
    for (const tbf::verify::Move& m : moves) {
        if (m.promotion != tbf::verify::Piece::None) return Kind::Promotion;
        (board.is_capture(m) ? capture : quiet) = true;
    }
    if (capture && !quiet) return Kind::Capture;
    if (quiet && !capture) return Kind::Quiet;
    return std::nullopt;
}

// A value that differs from the stored code: draws become wins in 0, the
// others one ply longer.
std::uint32_t wrong_code(std::uint32_t code) { return code == 0 ? 1 : code + 2; }

// The slots listed in a --json table line's first_errors.
std::vector<std::uint64_t> listed_slots(const std::string& line) {
    std::vector<std::uint64_t> slots;
    for (std::size_t at = line.find("{\"slot\":"); at != std::string::npos;
         at = line.find("{\"slot\":", at + 1)) {
        slots.push_back(std::stoull(line.substr(at + 8)));
    }
    return slots;
}

// A small antichess database: KRvK and the sub-tables it needs.
struct SmallDb {
    ScratchDir dir;
    std::string path = dir.sub("db");

    SmallDb() { tbgen(path, "antichess", {"KRvK"}); }
};

constexpr const char* kKRvK = "antichess/KRvK";

}  // namespace

// The whole-set checks are in the doctest suite "clean"; CMakeLists.txt runs
// each as its own ctest test so that they can run side by side.
TEST_CASE("antichess tables in the compact encoding wdl-dtc/2 verify clean" * doctest::test_suite("clean")) {
    // wdl-dtc/2 stores one side's DTC and leaves positions valued by one ply
    // out (docs/values.md); the verifier reads every value resolved through
    // the C API, so it checks the prober's resolution as well as the table.
    ScratchDir dir;
    const std::string path = dir.sub("db");
    tbgen(path, "antichess", {"--encoding", "wdl-dtc/2", "KRvK", "NPvK", "PvP", "BvN"});
    const Run r = tbverify({"tables", "--db", path, "--threads", "2", "--json"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    CHECK(r.err.empty());
    storage::Database db = std::move(storage::Database::open(path).value());
    const auto tables = db.list_tables();
    REQUIRE(tables.ok());
    int compact = 0;
    for (const storage::TableInfo& t : *tables) {
        CAPTURE(t.spec.name);
        compact += t.spec.value_encoding == "wdl-dtc/2";
        const std::string line = table_line(r.out, t.spec.name);
        CHECK(number(line, "errors") == 0);
        CHECK(contains(line, "\"checksum_ok\":true"));
    }
    // The four requested tables and every sub-table they need, all compact.
    CHECK(compact == static_cast<int>(tables->size()));
    CHECK(tables->size() > 4);
}

TEST_CASE("every antichess table up to 3 units verifies clean" * doctest::test_suite("clean")) {
    ScratchDir dir;
    const std::string path = dir.sub("db");
    // Sanitizer builds run ~20x slower: a few tables covering pieces, pawns
    // with promotion and pawns with en passant, and their sub-tables.
    if (tbf::test::kSanitized) {
        tbgen(path, "antichess", {"KRvK", "NPvK", "PvP"});
    } else {
        tbgen(path, "antichess", {"--upto", "3"});
    }
    const Run r = tbverify({"tables", "--db", path, "--threads", "2", "--json"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    CHECK(r.err.empty());

    storage::Database db = std::move(storage::Database::open(path).value());
    const auto tables = db.list_tables();
    REQUIRE(tables.ok());
    std::uint64_t positions = 0;
    for (const storage::TableInfo& t : *tables) {
        CAPTURE(t.spec.name);
        const std::string line = table_line(r.out, t.spec.name);
        CHECK(number(line, "errors") == 0);
        CHECK(contains(line, "\"checksum_ok\":true"));
        CHECK(contains(line, "\"metadata_errors\":[]"));
        std::uint64_t valid = 0;
        for (const storage::Counter& c : t.statistics.counters) {
            if (c.name.ends_with(".valid")) valid += c.value;
        }
        CHECK(number(line, "positions") == valid);
        positions += valid;
    }
    if (!tbf::test::kSanitized) {
        // One colour orientation per material: 21 pairs of the 6 unit types
        // for 2 units; for 3 units, 6 x 21 ways to split them 2 against 1.
        CHECK(tables->size() == 21 + 6 * 21);
    }
    // Two kings on an empty board, up to the 8 symmetries: (64 x 63 + 2 x 8 x 7) / 8
    // = 518 placements (Burnside: only the two diagonal reflections fix any
    // placement), with each side to move.
    CHECK(number(table_line(r.out, "antichess/KvK"), "positions") == 2 * 518);
    CHECK(number(r.out.substr(r.out.find("{\"summary\"")), "positions") == positions);
    CHECK(contains(r.out, "\"ok\":true}}"));
}

TEST_CASE("every Four File table up to 4 units verifies clean" * doctest::test_suite("clean")) {
    ScratchDir dir;
    const std::string path = dir.sub("db");
    if (tbf::test::kSanitized) {
        tbgen(path, "fourfile", {"KRvK", "KPvK"});
    } else {
        tbgen(path, "fourfile", {"--upto", "4"});
    }
    const Run r = tbverify({"tables", "--db", path, "--threads", "2"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    CHECK(r.err.empty());
    CHECK(contains(r.out, " 0 errors ("));
    CHECK(contains(r.out, "all verified\n"));
    CHECK_FALSE(contains(r.out, "error:"));
    if (!tbf::test::kSanitized) {
        // Both kings plus up to two of Q, R, B, N, P per side: 1 + 5 + (15 + 15).
        CHECK(contains(r.out, "\n36 tables, "));
    }
}

TEST_CASE("FICS and joint stalemate rules: clean tables verify, swapped rules are caught") {
    ScratchDir dir;
    const std::string path = dir.sub("db");
    for (const char* variant : {"antichess", "antichess-fics", "antichess-joint"}) {
        tbgen(path, variant, {"PvP"});
    }
    const Run r = tbverify({"tables", "--db", path, "--json"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    CHECK(contains(table_line(r.out, "antichess-fics/PvP"), "\"ok\":true"));
    CHECK(contains(table_line(r.out, "antichess-joint/PvP"), "\"ok\":true"));

    // The FICS values stored as the international table: blocked pawns are a
    // draw under FICS (equal counts) but a win for the side to move here.
    TableCopy fics = read_table(path, "antichess-fics/PvP");
    TableCopy international = read_table(path, "antichess/PvP");
    REQUIRE(fics.values.size() == international.values.size());
    REQUIRE(fics.values != international.values);
    international.values = fics.values;
    write_table(path, international);
    const Run swapped =
        tbverify({"tables", "--db", path, "antichess/PvP", "--json", "--max-errors", "100000"});
    CHECK(swapped.code == tbf::verify::kExitVerificationFailed);
    CHECK(contains(table_line(swapped.out, "antichess/PvP"),
                   "\"stored\":" + json_value("draw", 0) + ",\"derived\":" + json_value("win", 0)));
}

TEST_CASE("antichess tables up to 4 units verify clean" * doctest::test_suite("slow")) {
    ScratchDir dir;
    const std::string path = dir.sub("db");
    tbgen(path, "antichess", {"--upto", "4"}, 2);
    const Run r = tbverify({"tables", "--db", path, "--json"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    CHECK(contains(r.out, "\"failed_tables\":0,\"database_errors\":0"));
}

TEST_CASE("a changed value is named by its FEN, with the stored and derived values") {
    SmallDb db;
    TableCopy copy = read_table(db.path, kKRvK);
    std::uint64_t slot = 0;
    std::string fen;
    {
        CApi api(db.path);
        // A win in 3 or more plies, made one ply longer.
        slot =
            find_slot(api, kKRvK, copy, [](std::uint32_t code) { return code >= 7 && code % 2; });
        fen = fen_of(*api.position(kKRvK, slot), tbf::verify::Variant::Antichess);
    }
    const unsigned dtc = (copy.values[slot] - 1) / 2;
    copy.values[slot] += 2;
    write_table(db.path, copy);

    const Run r = tbverify({"tables", "--db", db.path, kKRvK, "--json", "--max-errors", "1000"});
    CHECK(r.code == tbf::verify::kExitVerificationFailed);
    const std::string line = table_line(r.out, kKRvK);
    CHECK(number(line, "errors") >= 1);
    // The checksum of the rewritten table is valid: only the re-derivation
    // can find the change.
    CHECK(contains(line, "\"checksum_ok\":true"));
    CHECK(contains(line, "\"fen\":\"" + fen + "\",\"stored\":" + json_value("win", dtc + 1) +
                             ",\"derived\":" + json_value("win", dtc)));
    CHECK(contains(r.out, "\"ok\":false}}"));

    // The text report names it too.
    const Run text = tbverify(
        {"tables", "--db", db.path, "--variant", "antichess", "KRvK", "--max-errors", "1000"});
    CHECK(text.code == tbf::verify::kExitVerificationFailed);
    CHECK(contains(text.out, "  error: " + fen + ": stored win " + std::to_string(dtc + 1) +
                                 ", its moves give win " + std::to_string(dtc) + "\n"));
    CHECK(contains(text.out, "FAILED"));

    // The other tables of the database are still fine.
    const Run others = tbverify({"tables", "--db", db.path, "antichess/KvK", "antichess/KvR"});
    CHECK(others.code == tbf::verify::kExitOk);
}

TEST_CASE("two swapped values are both caught") {
    SmallDb db;
    TableCopy copy = read_table(db.path, kKRvK);
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::string fen_a;
    std::string fen_b;
    {
        CApi api(db.path);
        a = find_slot(api, kKRvK, copy, [](std::uint32_t code) { return code % 2 == 1; });
        b = find_slot(api, kKRvK, copy,
                      [](std::uint32_t code) { return code != 0 && code % 2 == 0; });
        fen_a = fen_of(*api.position(kKRvK, a), tbf::verify::Variant::Antichess);
        fen_b = fen_of(*api.position(kKRvK, b), tbf::verify::Variant::Antichess);
    }
    std::swap(copy.values[a], copy.values[b]);
    write_table(db.path, copy);

    const Run r = tbverify({"tables", "--db", db.path, kKRvK, "--json", "--max-errors", "1000"});
    CHECK(r.code == tbf::verify::kExitVerificationFailed);
    const std::string line = table_line(r.out, kKRvK);
    CHECK(number(line, "errors") >= 2);
    CHECK(contains(line, "\"fen\":\"" + fen_a + "\""));
    CHECK(contains(line, "\"fen\":\"" + fen_b + "\""));
    // Swapping keeps the win and loss counts: the statistics still agree.
    CHECK(contains(line, "\"metadata_errors\":[]"));
}

TEST_CASE("a slot that holds no position must store a draw") {
    // Antichess indexes of up to 3 units have no holes; Four File's have
    // (positions whose side not to move is in check).
    ScratchDir dir;
    const std::string path = dir.sub("db");
    const std::string table = "fourfile/KQvK";
    tbgen(path, "fourfile", {"KQvK"});
    TableCopy copy = read_table(path, table);
    std::uint64_t hole = copy.values.size();
    {
        CApi api(path);
        for (std::uint64_t slot = 0; slot < copy.values.size() && hole == copy.values.size();
             ++slot) {
            if (!api.position(table, slot)) hole = slot;
        }
    }
    REQUIRE(hole < copy.values.size());
    CHECK(copy.values[hole] == 0);
    copy.values[hole] = 1;  // win in 0
    write_table(path, copy);

    const Run r = tbverify({"tables", "--db", path, table, "--json"});
    CHECK(r.code == tbf::verify::kExitVerificationFailed);
    const std::string line = table_line(r.out, table);
    CHECK(number(line, "errors") == 1);
    CHECK(contains(line, "{\"slot\":" + std::to_string(hole) +
                             ",\"fen\":null,\"stored\":" + json_value("win", 0)));
    CHECK(contains(line, "holds no position"));
}

TEST_CASE("statistics that disagree with the values are a metadata error") {
    SmallDb db;
    TableCopy copy = read_table(db.path, kKRvK);
    bool changed = false;
    for (storage::Counter& c : copy.info.statistics.counters) {
        if (c.name == "black.valid") {
            ++c.value;
            changed = true;
        }
    }
    REQUIRE(changed);
    write_table(db.path, copy);

    const Run r = tbverify({"tables", "--db", db.path, kKRvK});
    CHECK(r.code == tbf::verify::kExitVerificationFailed);
    CHECK(contains(r.out, ": 62664 positions, 0 errors, checksum ok"));
    CHECK(contains(r.out, "  metadata error: statistics counter black.valid is "));
}

TEST_CASE("a wrong values checksum in the metadata is caught") {
    SmallDb db;
    const std::string key = std::string("T") + kKRvK;
    {
        RawDb raw(db.path);
        std::string record = raw.get("catalog", key);
        const std::size_t at = values_checksum_offset(record);
        REQUIRE(at + 8 < record.size());
        record[at] = static_cast<char>(record[at] ^ 1);
        raw.put("catalog", key, reseal(record));
    }
    const Run r = tbverify({"tables", "--db", db.path, "--json"});
    CHECK(r.code == tbf::verify::kExitVerificationFailed);
    const std::string line = table_line(r.out, kKRvK);
    CHECK(number(line, "errors") == 0);
    CHECK(contains(line, "\"checksum_ok\":false"));
    CHECK(contains(line, "stored checksum "));
    // Only that table fails.
    CHECK(contains(table_line(r.out, "antichess/KvK"), "\"checksum_ok\":true"));
    CHECK(contains(r.out, "\"failed_tables\":1,\"database_errors\":0"));
}

TEST_CASE("a missing sub-table is a clear error naming it, exit 3") {
    SmallDb db;
    {
        storage::DatabaseOptions options;
        options.mode = storage::OpenMode::ReadWrite;
        auto rw = storage::Database::open(db.path, options);
        REQUIRE(rw.ok());
        REQUIRE(rw->delete_table("antichess/KvK").ok());
    }
    const Run r = tbverify({"tables", "--db", db.path, kKRvK});
    CHECK(r.code == tbf::verify::kExitIo);
    CHECK(r.err.starts_with("tbverify: error: antichess/KRvK: missing table antichess/KvK"));
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(contains(r.out, "antichess/KRvK: not verified (database error)"));

    // Every table: the others still verify, the exit code stays 3.
    const Run all = tbverify({"tables", "--db", db.path, "--json"});
    CHECK(all.code == tbf::verify::kExitIo);
    CHECK(contains(table_line(all.out, "antichess/KvR"), "\"ok\":true"));
    CHECK(contains(table_line(all.out, kKRvK), "\"database_error\":\"missing table antichess/KvK"));

    // Asking for the deleted table itself.
    const Run asked = tbverify({"tables", "--db", db.path, "antichess/KvK"});
    CHECK(asked.code == tbf::verify::kExitIo);
    CHECK(asked.err == "tbverify: error: table antichess/KvK is not in database " + db.path + "\n");
}

TEST_CASE("a corrupt block is a clean database error naming the table") {
    SmallDb db;
    std::uint64_t kvk_id = 0;
    std::uint64_t krvk_id = 0;
    {
        auto meta = storage::Database::open(db.path);
        REQUIRE(meta.ok());
        kvk_id = meta->table_info("antichess/KvK")->storage_id;
        krvk_id = meta->table_info(kKRvK)->storage_id;
    }
    const auto flip = [&](std::uint64_t id) {
        RawDb raw(db.path);
        const std::string key = be64(id) + be64(0);
        std::string block = raw.get("blocks", key);
        block[block.size() / 2] = static_cast<char>(block[block.size() / 2] ^ 0x10);
        raw.put("blocks", key, block);
    };

    SUBCASE("in the table being checked") {
        flip(krvk_id);
        const Run r = tbverify({"tables", "--db", db.path, kKRvK});
        CHECK(r.code == tbf::verify::kExitIo);
        CHECK(r.err.starts_with("tbverify: error: antichess/KRvK: "));
        CHECK(contains(r.err, "block 0"));
        CHECK(r.err.find('\n') == r.err.size() - 1);
    }
    SUBCASE("in a sub-table its children are probed in") {
        flip(kvk_id);
        const Run r = tbverify({"tables", "--db", db.path, kKRvK});
        CHECK(r.code == tbf::verify::kExitIo);
        CHECK(r.err.starts_with("tbverify: error: antichess/KRvK: "));
        CHECK(contains(r.err, "antichess/KvK"));
    }
}

TEST_CASE("--sample checks the requested number of positions, drawn uniformly") {
    SmallDb db;
    const Run r = tbverify({"tables", "--db", db.path, kKRvK, "--sample", "500", "--json"});
    CHECK(r.code == tbf::verify::kExitOk);
    std::string line = table_line(r.out, kKRvK);
    CHECK(number(line, "positions") == 500);
    CHECK(contains(line, "\"sampled\":true"));
    CHECK(contains(line, "\"checksum_ok\":null"));
    // More than the table holds: every position once.
    line = table_line(
        tbverify({"tables", "--db", db.path, kKRvK, "--sample", "1000000", "--json"}).out, kKRvK);
    CHECK(number(line, "positions") == 62664);

    // Damage every position whose stored value is a loss with Black to move:
    // the share of wrong positions a full check finds must be matched, within
    // a few standard deviations, by the share in a sample.
    TableCopy copy = read_table(db.path, kKRvK);
    const std::uint64_t half = copy.values.size() / 2;
    for (std::uint64_t slot = half; slot < copy.values.size(); ++slot) {
        if (copy.values[slot] != 0 && copy.values[slot] % 2 == 0) copy.values[slot] += 2;
    }
    write_table(db.path, copy);
    const Run full = tbverify({"tables", "--db", db.path, kKRvK, "--json"});
    CHECK(full.code == tbf::verify::kExitVerificationFailed);
    const double share = static_cast<double>(number(table_line(full.out, kKRvK), "errors")) /
                         static_cast<double>(number(table_line(full.out, kKRvK), "positions"));
    REQUIRE(share > 0.05);
    REQUIRE(share < 0.95);
    const std::uint64_t n = 2000;
    for (const char* seed : {"1", "2"}) {
        CAPTURE(seed);
        const Run s = tbverify({"tables", "--db", db.path, kKRvK, "--sample", std::to_string(n),
                                "--seed", seed, "--json"});
        CHECK(s.code == tbf::verify::kExitVerificationFailed);
        const std::string sampled = table_line(s.out, kKRvK);
        CHECK(number(sampled, "positions") == n);
        const double expected = share * static_cast<double>(n);
        const double sd = std::sqrt(expected * (1 - share));
        const auto errors = static_cast<double>(number(sampled, "errors"));
        CHECK(errors > expected - 5 * sd);
        CHECK(errors < expected + 5 * sd);
    }
    // A fixed seed draws the same sample.
    const auto first_errors = [&](const char* seed) {
        const std::string l = table_line(tbverify({"tables", "--db", db.path, kKRvK, "--sample",
                                                   "300", "--seed", seed, "--json"})
                                             .out,
                                         kKRvK);
        return l.substr(l.find("\"first_errors\""),
                        l.find("\"checksum_ok\"") - l.find("\"first_errors\""));
    };
    CHECK(first_errors("7") == first_errors("7"));
    CHECK(first_errors("7") != first_errors("8"));
}

TEST_CASE("tbverify tables: usage and database errors") {
    const auto usage = [](const std::vector<std::string>& args, const std::string& part) {
        const Run r = tbverify(args);
        INFO(r.err);
        CHECK(r.code == tbf::verify::kExitUsage);
        CHECK(r.out.empty());
        CHECK(r.err.starts_with("tbverify: error: "));
        CHECK(r.err.find('\n') == r.err.size() - 1);
        CHECK(contains(r.err, part));
    };
    usage({"tables"}, "missing --db");
    usage({"tables", "--db", "/x", "KQvK"}, "needs a variant");
    usage({"tables", "--db", "/x", "--variant", "chess"}, "unknown variant \"chess\"");
    usage({"tables", "--db", "/x", "--variant", "fourfile", "antichess/KQvK"}, "is not of variant");
    usage({"tables", "--db", "/x", "antichess/KXvK"}, "bad table name");
    usage({"tables", "--db", "/x", "--threads", "0"}, "bad --threads");
    usage({"tables", "--db", "/x", "--sample", "-3"}, "bad --sample");
    usage({"tables", "--db", "/x", "--seed", "3"}, "--seed needs --sample");
    usage({"tables", "--db", "/x", "--frobnicate"}, "unknown option \"--frobnicate\"");

    const Run help = tbverify({"tables", "--help"});
    CHECK(help.code == tbf::verify::kExitOk);
    CHECK(help.out.starts_with("Usage: tbverify tables --db DIR"));

    ScratchDir dir;
    const Run missing = tbverify({"tables", "--db", dir.sub("nothing")});
    CHECK(missing.code == tbf::verify::kExitIo);
    CHECK(missing.err.starts_with("tbverify: error: cannot open database "));
    CHECK(missing.err.find('\n') == missing.err.size() - 1);

    SmallDb db;
    const Run none = tbverify({"tables", "--db", db.path, "--variant", "fourfile"});
    CHECK(none.code == tbf::verify::kExitIo);
    CHECK(contains(none.err, "no fourfile tables in database"));
    // Either colour orientation names the table; named twice, it is checked once.
    const Run flipped =
        tbverify({"tables", "--db", db.path, "--variant", "antichess", "KvKR", "antichess/KRvK"});
    CHECK(flipped.code == tbf::verify::kExitOk);
    CHECK(flipped.out.starts_with("antichess/KRvK: 62664 positions, 0 errors, checksum ok"));
    CHECK(contains(flipped.out, "\n1 table, 62664 positions, 0 errors ("));
}

// Wrong values planted in every kind of position, and next to the edges of
// the batches, windows and blocks the check walks in, are all found: with
// everything in memory, and under a --memory that holds only a few blocks
// (windows of 512 slots, children waiting for their blocks).
TEST_CASE("planted errors in every kind of position are found, in memory and a window at a time") {
    struct Case {
        const char* variant;
        const char* table;
        std::vector<Kind> kinds;
    };
    const std::vector<Case> cases = {
        {"antichess", "KPvP",
         {Kind::Quiet, Kind::Capture, Kind::Promotion, Kind::EnPassantChild, Kind::Terminal}},
        {"antichess-fics", "KPvP",
         {Kind::Quiet, Kind::Capture, Kind::Promotion, Kind::EnPassantChild, Kind::Terminal}},
        {"antichess-joint", "KPvP",
         {Kind::Quiet, Kind::Capture, Kind::Promotion, Kind::EnPassantChild, Kind::Terminal}},
        {"fourfile", "KPvKP", {Kind::Quiet, Kind::Capture, Kind::Promotion, Kind::Terminal}},
    };
    for (const Case& c : cases) {
        // The other stalemate rules walk the same code: sanitized builds
        // check them in "FICS and joint stalemate rules" only.
        if (tbf::test::kSanitized && std::string(c.variant).find('-') != std::string::npos) continue;
        CAPTURE(c.variant);
        ScratchDir dir;
        const std::string path = dir.sub("db");
        tbgen(path, c.variant, {c.table});
        const std::string name = std::string(c.variant) + "/" + c.table;
        const auto variant = tbf::verify::variant_from_name(c.variant);
        REQUIRE(variant);
        TableCopy copy = read_table(path, name);
        const std::uint64_t slots = copy.values.size();
        const std::uint64_t half = slots / 2;

        std::vector<std::uint64_t> planted;
        {
            CApi api(path);
            const tbf_table_info info = api.info(name);
            const auto board_at = [&](std::uint64_t slot) -> std::optional<tbf::verify::Board> {
                const auto pos = api.position(info, slot);
                if (!pos) return std::nullopt;
                auto b = tbf::verify::parse_fen(*variant, fen_of(*pos, *variant));
                if (!b) FAIL("slot ", slot, ": ", b.status().message());
                return *b;
            };
            // The lowest slot of each kind, the scan stopping once every
            // kind wanted has one.
            std::array<std::optional<std::uint64_t>, static_cast<std::size_t>(Kind::Count)> first;
            const auto all_found = [&] {
                return std::all_of(c.kinds.begin(), c.kinds.end(),
                                   [&](Kind k) { return first[static_cast<std::size_t>(k)].has_value(); });
            };
            for (std::uint64_t slot = 0; slot < slots && !all_found(); ++slot) {
                const auto board = board_at(slot);
                if (!board) continue;
                const auto kind = kind_of(*board);
                if (kind && !first[static_cast<std::size_t>(*kind)]) {
                    first[static_cast<std::size_t>(*kind)] = slot;
                }
            }
            for (Kind k : c.kinds) {
                INFO("no ", kKindNames[static_cast<int>(k)], " position in ", name);
                REQUIRE(first[static_cast<std::size_t>(k)]);
                planted.push_back(*first[static_cast<std::size_t>(k)]);
            }
            // The valid slots nearest to the edges of batches and windows
            // (multiples of 512), blocks (1024) and the two sides.
            std::vector<std::uint64_t> edges = {half - 1, half, slots - 1};
            for (std::uint64_t e = 512; e < slots; e += 512 * 37) {
                edges.push_back(e - 1);
                edges.push_back(e);
            }
            for (std::uint64_t e = half + 1024; e < slots; e += 1024 * 29) {
                edges.push_back(e - 1);
                edges.push_back(e);
            }
            for (std::uint64_t e : edges) {
                std::uint64_t slot = e;
                while (slot < slots && !board_at(slot)) ++slot;
                if (slot < slots) planted.push_back(slot);
            }
        }
        std::sort(planted.begin(), planted.end());
        planted.erase(std::unique(planted.begin(), planted.end()), planted.end());
        for (std::uint64_t slot : planted) copy.values[slot] = wrong_code(copy.values[slot]);
        write_table(path, copy);

        const auto check = [&](const std::vector<std::string>& extra) {
            std::vector<std::string> args = {"tables", "--db", path, name, "--json",
                                             "--max-errors", "1000000"};
            args.insert(args.end(), extra.begin(), extra.end());
            const Run r = tbverify(args);
            INFO(r.err);
            CHECK(r.code == tbf::verify::kExitVerificationFailed);
            const std::string line = table_line(r.out, name);
            const std::vector<std::uint64_t> found = listed_slots(line);
            for (std::uint64_t slot : planted) {
                if (std::find(found.begin(), found.end(), slot) == found.end()) {
                    FAIL_CHECK("the wrong value planted in slot ", slot, " was not found");
                }
            }
            CHECK(number(line, "errors") >= planted.size());
            CHECK(number(line, "errors") == found.size());
            // The planted values still carry a valid checksum.
            CHECK(contains(line, "\"checksum_ok\":true"));
            return found;
        };
        const std::vector<std::uint64_t> in_memory = check({});
        rewrite_with_blocks(path, storage::kMinSlotsPerBlock);
        const std::vector<std::uint64_t> windowed = check({"--memory", "64K", "--threads", "2"});
        // The same positions are wrong whichever way the table is walked.
        CHECK(windowed == in_memory);
    }
}

TEST_CASE("--memory: a table far larger than the bound is checked a window at a time") {
    SmallDb db;
    rewrite_with_blocks(db.path, storage::kMinSlotsPerBlock);
    const Run r = tbverify({"tables", "--db", db.path, kKRvK, "--memory", "64K", "--json"});
    INFO(r.err);
    CHECK(r.code == tbf::verify::kExitOk);
    const std::string line = table_line(r.out, kKRvK);
    CHECK(number(line, "positions") == 62664);
    CHECK(contains(line, "\"checksum_ok\":true"));
    CHECK(contains(line, "\"positions_per_second\":"));
    CHECK(contains(r.out, "\"summary\":{\"tables\":1,\"positions\":62664,"));

    // It did run a window at a time, children waiting for their blocks.
    auto opened = tbf::verify::TableDatabase::open(db.path);
    REQUIRE(opened.ok());
    tbf::verify::TableCheckOptions options;
    options.memory_bytes = 64 << 10;
    const tbf::verify::TableReport windowed = opened->check(kKRvK, options);
    CHECK(windowed.ok());
    CHECK(windowed.positions == 62664);
    CHECK(windowed.windows > 10);
    CHECK(windowed.waited > 0);
    CHECK(windowed.blocks_read > windowed.slots / storage::kMinSlotsPerBlock);
    // Without a bound the table and its sub-tables are held whole.
    const tbf::verify::TableReport whole = opened->check(kKRvK, {});
    CHECK(whole.ok());
    CHECK(whole.waited == 0);
    CHECK(whole.windows == 2);  // one per side to move

    const Run bad = tbverify({"tables", "--db", db.path, "--memory", "12Q"});
    CHECK(bad.code == tbf::verify::kExitUsage);
    CHECK(contains(bad.err, "bad --memory \"12Q\""));
    const Run tiny = tbverify({"tables", "--db", db.path, "--memory", "1K"});
    CHECK(tiny.code == tbf::verify::kExitUsage);
    CHECK(contains(tiny.err, "at least 64K"));
}
