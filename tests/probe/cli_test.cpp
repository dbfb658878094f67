// The tbprobe executable as scripts see it: output shapes (text, JSON lines),
// batch mode, info, exit codes. Answers are compared with the C++ API on
// the same database.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "json_lite.hpp"
#include "probe_fixture.hpp"
#include "raw_db.hpp"

using namespace tbf;
using namespace tbf::test;

namespace {

struct Run {
    int rc = -1;
    std::string out;
    std::string err;
    std::vector<std::string> lines() const {
        std::vector<std::string> v;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) v.push_back(line);
        return v;
    }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs tbprobe with `args`, `input` on standard input.
Run tbprobe(const std::vector<std::string>& args, const std::string& input = {}) {
    static ScratchDir io;
    {
        std::ofstream in(io.sub("stdin"), std::ios::binary);
        in << input;
    }
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int in = open(io.sub("stdin").c_str(), O_RDONLY);
        const int out = open(io.sub("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(io.sub("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        std::vector<std::string> copy = args;
        std::vector<char*> argv;
        std::string program = TBF_TBPROBE;
        argv.push_back(program.data());
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    Run r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(io.sub("stdout"));
    r.err = slurp(io.sub("stderr"));
    return r;
}

const char* category(Wdl w) { return w == Wdl::Win ? "win" : w == Wdl::Loss ? "loss" : "draw"; }

// One JSON answer checked field by field against the C++ API.
void check_answer(const BuiltDb& db, const std::string& line, const std::string& fen) {
    CAPTURE(line);
    const json::Value v = json::parse(line);
    REQUIRE(v.is_object());
    const Position pos = db.fen(fen);
    CHECK(v["fen"].string() == to_fen(pos));
    const probe::Value value = db.value(pos);
    CHECK(v["category"].string() == category(value.wdl));
    CHECK(v["dtc"].number() == value.dtc);
    const auto moves = db.moves(pos);
    const json::Array& listed = v["moves"].array();
    REQUIRE(listed.size() == moves.size());
    for (std::size_t i = 0; i < moves.size(); ++i) {
        const json::Value& m = listed[i];
        CHECK(m.object().size() == 4);
        CHECK(m["uci"].string() == moves[i].uci);
        // The position after the move, for the side then to move (lichess).
        CHECK(m["category"].string() == category(moves[i].child.wdl));
        CHECK(m["dtc"].number() == moves[i].child.dtc);
        CHECK(m["conversion"].boolean() == moves[i].conversion);
    }
}

const BuiltDb& small_db() { return BuiltDb::antichess(); }

}  // namespace

TEST_CASE("tbprobe: text output") {
    const auto& db = small_db();
    const Run r = tbprobe(
        {"--db", db.path(), "--variant", "antichess", "--fen", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1"});
    CHECK(r.rc == 0);
    CHECK(r.err.empty());
    const auto lines = r.lines();
    REQUIRE(lines.size() == 3 + 5);
    CHECK(lines[0] == "8/8/8/8/8/8/8/KQ3k2 b - - 0 1");
    CHECK(lines[1] == "win in 2");
    CHECK(lines[2] == "best move f1e1");
    CHECK(lines[3] == "  f1e1   win in 2");
    CHECK(lines[4] == "  f1g1   win in 2");
    CHECK(lines[5] == "  f1e2   draw");
    // A capture is marked as a conversion.
    const Run c = tbprobe(
        {"--db", db.path(), "--variant", "antichess", "--fen", "3k4/8/8/8/8/8/8/K2Q4 w - - 0 1"});
    CHECK(c.rc == 0);
    CHECK(c.out ==
          "3k4/8/8/8/8/8/8/K2Q4 w - - 0 1\nloss in 1\nbest move d1d8\n  d1d8   loss in 1     "
          "conversion\n");
}

TEST_CASE("tbprobe --json: one object per position, lichess-style moves") {
    const auto& db = small_db();
    for (const char* fen : {"8/8/8/8/8/8/8/KQ3k2 b - - 0 1", "8/8/8/3pP3/8/8/8/8 w - d6 0 1",
                            "8/8/8/8/8/p7/P7/8 w - - 0 1", "8/4P3/8/8/8/8/8/K6k w - - 0 1",
                            "8/8/8/8/8/8/8/kq3K2 w KQkq - 12 40"}) {
        CAPTURE(fen);
        const Run r =
            tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", fen, "--json"});
        CHECK(r.rc == 0);
        CHECK(r.err.empty());
        const auto lines = r.lines();
        REQUIRE(lines.size() == 1);
        check_answer(db, lines[0], fen);
    }
    // Shape, literally: the ep position has a single capture that leaves
    // Black without units (so Black, to move, has won).
    const Run r = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen",
                           "8/8/8/3pP3/8/8/8/8 w - d6 0 1", "--json"});
    CHECK(r.out ==
          "{\"fen\":\"8/8/8/3pP3/8/8/8/8 w - d6 0 1\",\"category\":\"loss\",\"dtc\":1,\"moves\":"
          "[{\"uci\":\"e5d6\",\"category\":\"win\",\"dtc\":0,\"conversion\":true}]}\n");
}

TEST_CASE("tbprobe --fen -: one line per FEN, a bad line in the middle does not end the run") {
    const auto& db = small_db();
    const std::string input =
        "# comment lines and blank lines are skipped\n"
        "8/8/8/8/8/8/8/KQ3k2 b - - 0 1\r\n"
        "\n"
        "8/8/8/8/8/8/8/KQ3k2 b - - 0 1 extra\n"
        "  3k4/8/8/8/8/8/8/K2Q4 w - - 0 1  \n"
        "8/8/8/8/8/8/8/KQR2k2 b - - 0 1\n"
        "8/8/8/8/8/p7/P7/8 b - - 0 1\n";
    const Run r =
        tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", "-", "--json"}, input);
    CHECK(r.rc == 3);  // the worst line: a missing table
    CHECK(r.err.empty());
    const auto lines = r.lines();
    REQUIRE(lines.size() == 5);
    check_answer(db, lines[0], "8/8/8/8/8/8/8/KQ3k2 b - - 0 1");
    const json::Value bad = json::parse(lines[1]);
    CHECK(bad.object().size() == 2);
    CHECK(bad["fen"].string() == "8/8/8/8/8/8/8/KQ3k2 b - - 0 1 extra");
    CHECK(bad["error"].string().find("bad FEN") != std::string::npos);
    check_answer(db, lines[2], "3k4/8/8/8/8/8/8/K2Q4 w - - 0 1");
    const json::Value missing = json::parse(lines[3]);
    CHECK(missing["error"].string() == "missing table antichess/KQRvK");
    check_answer(db, lines[4], "8/8/8/8/8/p7/P7/8 b - - 0 1");

    // Only bad FENs: exit 2. Text mode: answers on stdout, errors on stderr.
    const Run t =
        tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", "-"},
                "8/8/8/8/8/8/8/KQ3k2 b - - 0 1\nnonsense\n3k4/8/8/8/8/8/8/K2Q4 w - - 0 1\n");
    CHECK(t.rc == 2);
    CHECK(t.lines().size() == 8 + 4);
    CHECK(t.err.find("tbprobe: error: bad FEN") == 0);
    // Non-UTF-8 input is echoed as valid JSON.
    const Run u = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", "-", "--json"},
                          std::string("bad\xff\"line\n"));
    REQUIRE(u.lines().size() == 1);
    CHECK(json::parse(u.lines()[0])["fen"].string() == "bad\xef\xbf\xbd\"line");  // U+FFFD
}

TEST_CASE("tbprobe: exit codes and one-line errors") {
    const auto& db = small_db();
    const std::string kqk = "8/8/8/8/8/8/8/KQ3k2 b - - 0 1";
    Run r = tbprobe(
        {"--db", db.path(), "--variant", "antichess", "--fen", "8/8/8/8/8/8/8/KQR2k2 b - - 0 1"});
    CHECK(r.rc == 3);
    CHECK(r.out.empty());
    CHECK(r.err == "tbprobe: error: missing table antichess/KQRvK\n");
    r = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen",
                 "8/8/8/8/8/8/8/KQR2k2 b - - 0 1", "--json"});
    CHECK(r.rc == 3);
    CHECK(json::parse(r.out)["error"].string() == "missing table antichess/KQRvK");

    r = tbprobe(
        {"--db", db.path(), "--variant", "antichess", "--fen", "8/8/8/8/8/8/8/KQ3k2 b - - 0"});
    CHECK(r.rc == 0);  // counters are optional
    r = tbprobe(
        {"--db", db.path(), "--variant", "antichess", "--fen", "9/8/8/8/8/8/8/KQ3k2 b - - 0 1"});
    CHECK(r.rc == 2);
    CHECK(r.err.rfind("tbprobe: error: bad FEN", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

    r = tbprobe({"--db", db.path(), "--variant", "chess", "--fen", kqk});
    CHECK(r.rc == 2);
    CHECK(r.err.find("unknown variant 'chess'") != std::string::npos);
    r = tbprobe({"--db", db.path(), "--variant", "antichess"});
    CHECK(r.rc == 2);
    CHECK(r.err == "tbprobe: error: missing --fen\n");
    r = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", kqk, "--frobnicate"});
    CHECK(r.rc == 2);
    r = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", kqk, "--cache", "lots"});
    CHECK(r.rc == 2);
    r = tbprobe({"--db", db.path() + "/nowhere", "--variant", "antichess", "--fen", kqk});
    CHECK(r.rc == 3);
    CHECK(r.err.find("cannot open database " + db.path() + "/nowhere") != std::string::npos);
    r = tbprobe({"--db", db.path(), "--variant", "antichess", "--fen", kqk, "--cache", "1M"});
    CHECK(r.rc == 0);
    r = tbprobe({"--help"});
    CHECK(r.rc == 0);
    CHECK(r.out.rfind("usage: tbprobe", 0) == 0);
    r = tbprobe({});
    CHECK(r.rc == 2);
}

TEST_CASE("tbprobe info: every table, with --json one object per line") {
    const auto& db = small_db();
    auto tables = db.tablebase().database().list_tables();
    REQUIRE(tables.ok());
    const Run r = tbprobe({"info", "--db", db.path(), "--json"});
    CHECK(r.rc == 0);
    const auto lines = r.lines();
    REQUIRE(lines.size() == tables->size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto& t = (*tables)[i];
        const json::Value v = json::parse(lines[i]);
        CHECK(v["variant"].string() == "antichess");
        CHECK(v["table"].string() == t.spec.material);
        CHECK(v["slots"].number() == static_cast<double>(t.spec.slot_count));
        CHECK(v["bytes"].number() == static_cast<double>(t.stored_bytes));
        CHECK(std::stoull(v["checksum"].string(), nullptr, 16) == t.values_checksum);
        CHECK(v["checksum"].string().size() == 16);
        CHECK(v["statistics"].is_object());
        CHECK(v["statistics"]["white"]["win"].is_number());
        CHECK(v["encoding"].string() == "wdl-dtc/1");
        CHECK_FALSE(v["dtc_side"].is_string());
        // Where the bytes go: compressed values plus index metadata (block
        // headers, 16-byte keys, dictionary) make bytes_per_position.
        CHECK(v["format"].number() == static_cast<double>(t.format_version));
        const double values = v["split"]["values"].number();
        const double index = v["split"]["index_metadata"].number();
        CHECK(values + index ==
              static_cast<double>(t.stored_bytes + 16 * storage::record_count(t) + t.dictionary.size()));
        CHECK(v["bytes_per_position"].number() ==
              doctest::Approx((values + index) / static_cast<double>(t.spec.slot_count)));
    }
    const Run text = tbprobe({"info", "--db", db.path()});
    CHECK(text.rc == 0);
    REQUIRE(text.lines().size() == tables->size());
    CHECK(text.lines()[0].find((*tables)[0].spec.material) != std::string::npos);
    CHECK(tbprobe({"info", "--db", db.path() + "/nowhere"}).rc == 3);
    CHECK(tbprobe({"info"}).rc == 2);
}

TEST_CASE("tbprobe info --split: the WDL alone in the table's blocks, and what the DTC adds") {
    ScratchDir dir;
    const index::Material kqvk = table_material(VariantId::Antichess, "KQvK");
    build_tables(dir.sub("db"), VariantId::Antichess, {kqvk}, storage::Compression::Zstd, "wdl-dtc/6");
    const Run r = tbprobe({"info", "--db", dir.sub("db"), "--json", "--split"});
    REQUIRE(r.rc == 0);
    json::Value kqvk_line;
    for (const auto& line : r.lines()) {
        const json::Value v = json::parse(line);
        CAPTURE(line);
        REQUIRE(v["split"]["wdl"].is_number());
        CHECK(v["split"]["wdl"].number() + v["split"]["dtc"].number() == v["split"]["values"].number());
        if (v["table"].string() == "KQvK") kqvk_line = v;
    }
    REQUIRE(kqvk_line.is_object());
    // KQvK's DTC reaches 35 plies: its values take more than their WDL.
    CHECK(kqvk_line["split"]["dtc"].number() > 0);
    CHECK(kqvk_line["split"]["wdl"].number() > 0);

    // The WDL figure is what a table of KQvK's WDL alone stores in KQvK's
    // layout, written by the storage library and measured by its payload.
    std::uint64_t storage_id = 0;
    std::vector<std::uint8_t> wdl;
    storage::TableSpec spec;
    {
        auto tb = probe::Tablebase::open(dir.sub("db"));
        REQUIRE(tb.ok());
        auto info = tb->database().table_info("antichess/KQvK");
        REQUIRE(info.ok());
        storage_id = info->storage_id;
        auto reader = tb->database().open_table("antichess/KQvK");
        REQUIRE(reader.ok());
        for (std::uint64_t slot = 0; slot < info->spec.slot_count; ++slot) {
            const std::uint32_t code = *reader->get(slot);
            wdl.push_back(static_cast<std::uint8_t>(code == 0 ? 0 : code % 2 == 1 ? 1 : 2));
        }
        storage::TableWriteOptions options = storage::compact_write_options();
        storage::set_parser(storage::kCompactCodesParser, options);
        options.slots_per_block = info->slots_per_block;
        options.blocks_per_record = info->blocks_per_record;
        storage::Database scratch = test::open_rw(dir.sub("wdl"));
        spec = info->spec;
        spec.value_width = 1;
        auto writer = scratch.create_table(spec, options);
        REQUIRE(writer.ok());
        REQUIRE(writer->append(std::span<const std::uint8_t>(wdl)).ok());
        REQUIRE(writer->commit().ok());
        auto wdl_only = scratch.table_info("antichess/KQvK");
        REQUIRE(wdl_only.ok());
        CHECK(kqvk_line["split"]["wdl"].number() == static_cast<double>(wdl_only->payload_bytes));
        // A table of WDL alone has nothing for a DTC.
        auto split = probe::wdl_dtc_split(scratch, *wdl_only);
        REQUIRE(split.ok());
        CHECK(split->wdl == wdl_only->payload_bytes);
        CHECK(split->dtc == 0);

        // Blocks of their own record (not grouped zstd frames): no split.
        storage::TableWriteOptions lz4;
        lz4.compression = storage::Compression::Lz4;
        spec.name = "antichess/lz4";
        auto lz4_writer = scratch.create_table(spec, lz4);
        REQUIRE(lz4_writer.ok());
        REQUIRE(lz4_writer->append(std::span<const std::uint8_t>(wdl)).ok());
        REQUIRE(lz4_writer->commit().ok());
        auto lz4_split = probe::wdl_dtc_split(scratch, *scratch.table_info("antichess/lz4"));
        REQUIRE_FALSE(lz4_split.ok());
        CHECK(lz4_split.status().code() == StatusCode::InvalidArgument);
    }

    const Run text = tbprobe({"info", "--db", dir.sub("db"), "--split"});
    REQUIRE(text.rc == 0);
    CHECK(text.out.find(" = WDL " + std::to_string(static_cast<std::uint64_t>(kqvk_line["split"]["wdl"].number())) +
                        " + DTC ") != std::string::npos);
    // Without --split, no split of the values (and no block is read: the
    // damaged database below still lists).
    const Run plain = tbprobe({"info", "--db", dir.sub("db"), "--json"});
    REQUIRE(plain.rc == 0);
    CHECK(plain.out.find("\"wdl\"") == std::string::npos);

    // A damaged record: --split stops with an error naming table and block,
    // the listing without it (which reads no block) still works.
    {
        RawDb raw(dir.sub("db"));
        const std::string key = be64(storage_id) + be64(0);
        std::string record = raw.get("blocks", key);
        record[record.size() - 1] = static_cast<char>(record[record.size() - 1] ^ 0x10);
        raw.put("blocks", key, record);
    }
    const Run damaged = tbprobe({"info", "--db", dir.sub("db"), "--split"});
    CHECK(damaged.rc == 3);
    CHECK(damaged.err.find("antichess/KQvK") != std::string::npos);
    CHECK(damaged.err.find("block 0") != std::string::npos);
    CHECK(damaged.err.find('\n') == damaged.err.size() - 1);
    CHECK(tbprobe({"info", "--db", dir.sub("db")}).rc == 0);
}

TEST_CASE("tbprobe info: the value encoding and, for wdl-dtc/2, the DTC side") {
    ScratchDir dir;
    build_tables(dir.sub("db"), VariantId::Antichess, {table_material(VariantId::Antichess, "KQvK")},
                 gen::GenerateOptions{}.compression, std::string(probe::kCompactValueEncoding));
    auto tb = probe::Tablebase::open(dir.sub("db"));
    REQUIRE(tb.ok());
    auto kqvk = tb->table(VariantId::Antichess, table_material(VariantId::Antichess, "KQvK"));
    REQUIRE(kqvk.ok());
    const std::string side = (*kqvk)->dtc_side() == Color::White ? "white" : "black";
    const Run r = tbprobe({"info", "--db", dir.sub("db"), "--json"});
    REQUIRE(r.rc == 0);
    bool seen = false;
    for (const auto& line : r.lines()) {
        const json::Value v = json::parse(line);
        CHECK(v["encoding"].string() == "wdl-dtc/2");
        REQUIRE(v["dtc_side"].is_string());
        CHECK((v["dtc_side"].string() == "white" || v["dtc_side"].string() == "black"));
        if (v["table"].string() == "KQvK") {
            seen = true;
            CHECK(v["dtc_side"].string() == side);
        }
    }
    CHECK(seen);
    const Run text = tbprobe({"info", "--db", dir.sub("db")});
    REQUIRE(text.rc == 0);
    CHECK(text.out.find("wdl-dtc/2 DTC side " + side) != std::string::npos);
}

TEST_CASE("tbprobe info: the knights' colouring of a wdl-dtc/9 table that derives knights' squares") {
    ScratchDir dir;
    build_tables(dir.sub("db"), VariantId::Antichess, {table_material(VariantId::Antichess, "NPvN")},
                 gen::GenerateOptions{}.compression, std::string(probe::kChosenColouringCompactValueEncoding));
    auto tb = probe::Tablebase::open(dir.sub("db"));
    REQUIRE(tb.ok());
    const Run r = tbprobe({"info", "--db", dir.sub("db"), "--json"});
    REQUIRE(r.rc == 0);
    int named = 0;
    for (const auto& line : r.lines()) {
        const json::Value v = json::parse(line);
        CAPTURE(line);
        CHECK(v["encoding"].string() == "wdl-dtc/9");
        auto t = tb->table(VariantId::Antichess, table_material(VariantId::Antichess, v["table"].string()));
        REQUIRE(t.ok());
        const Color off = ~(*t)->dtc_side();
        const bool chooses = (*t)->derives_slots() && !(*t)->same_units() &&
                             (*t)->indexer().material().count(off, UnitType::Knight) > 0;
        if (!chooses) {
            CHECK_FALSE(v["knight_colouring"].is_string());
            continue;
        }
        ++named;
        REQUIRE(v["knight_colouring"].is_string());
        CHECK(v["knight_colouring"].string() ==
              ((*t)->knight_colouring() == probe::KnightColouring::PawnFrame ? "frame" : "mirror-kept"));
        if (v["table"].string() == "NPvN") {
            const Run text = tbprobe({"info", "--db", dir.sub("db")});
            REQUIRE(text.rc == 0);
            CHECK(text.out.find(" knights " + v["knight_colouring"].string()) != std::string::npos);
        }
    }
    // NPvN and NvP derive knights' squares off one side.
    CHECK(named >= 2);
}
