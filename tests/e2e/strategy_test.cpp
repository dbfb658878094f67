// Strategy databases end to end: extracted from tables built by the
// generator (gen/), checked by the independent verifier (verify/), exported
// and imported as text, then damaged on purpose. Also the key codec through
// both position types: rules/ and the verifier's Board must encode every
// position to the same bytes.
#include "tbforge/gen/strategy.hpp"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "tbforge/base/exit_code.hpp"
#include "tbforge/gen/generate.hpp"
#include "tbforge/probe/strategy.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/verify/strategy.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

// One database per variant for the whole run, tables added on demand.
class Db {
public:
    static Db& get(VariantId variant) {
        auto& db = all()[variant];
        if (!db) db.reset(new Db(variant));
        return *db;
    }
    static void close_all() { all().clear(); }

    const std::string& path() const { return path_; }
    probe::Tablebase& tablebase() { return *tablebase_; }
    storage::Database& database() { return tablebase_->database(); }

    void build(const std::vector<std::string>& names) {
        std::vector<index::Material> tables;
        for (const auto& n : names)
            tables.push_back(index::canonical(*index::parse_table(n, variant_)));
        gen::GenerateOptions options;
        options.threads = 2;
        auto result = gen::generate(*tablebase_, variant_, tables, options);
        if (!result.ok()) FAIL(result.status().message());
    }

    gen::ExtractSummary extract(const std::string& fen, const std::string& name,
                                std::optional<Color> side = std::nullopt) {
        gen::ExtractOptions options;
        options.name = name;
        options.side = side;
        options.threads = 2;
        auto result = gen::extract_strategy(*tablebase_, variant_, fen, options);
        if (!result.ok()) FAIL(result.status().message());
        return *result;
    }

    Result<gen::ImportSummary> import(const std::string& text, const gen::ImportOptions& options) {
        std::istringstream in(text);
        return gen::import_strategy(database(), variant_, in, options);
    }

    std::string export_text(const std::string& name) {
        std::ostringstream out;
        auto written = probe::export_strategy(database(), name, out);
        REQUIRE_MESSAGE(written.ok(), written.status().message());
        return out.str();
    }

    verify::StrategyReport check(const std::string& name, std::size_t max_listed = 10000) {
        verify::StrategyCheckOptions options;
        options.threads = 2;
        options.max_listed = max_listed;
        options.batch = 256;  // several batches even for small strategies
        return verify::check_strategy(path_, name, options);
    }

private:
    static std::map<VariantId, std::unique_ptr<Db>>& all() {
        static std::map<VariantId, std::unique_ptr<Db>> databases;
        return databases;
    }

    explicit Db(VariantId variant) : variant_(variant), path_(dir_.sub("db")) {
        tablebase_ = std::make_unique<probe::Tablebase>(test::open_rw(path_));
    }

    VariantId variant_;
    test::ScratchDir dir_;
    std::string path_;
    std::unique_ptr<probe::Tablebase> tablebase_;
};

// Closes the shared databases at the end of the run, before static destruction.
using CloseDatabases = test::RunEndListener<&Db::close_all>;
REGISTER_LISTENER("close-strategy-databases", 1, CloseDatabases);

Db& fourfile() {
    static bool built = false;
    Db& db = Db::get(VariantId::FourFile);
    if (!built) {
        db.build({"KRvKB", "KPvK"});
        built = true;
    }
    return db;
}

// Tables and root of the antichess case: NNvNN (4 units) in Release, NNvN
// (3 units) under the sanitizers, which run about 20 times slower.
struct AntichessCase {
    const char* table;
    const char* root;
    Color side;
};
constexpr AntichessCase kAntichess =
    test::kSanitized ? AntichessCase{"NNvN", "1n6/8/8/8/8/N7/8/7N b - - 0 1", Color::Black}
                     : AntichessCase{"NNvNN", "2N5/8/7N/8/8/8/5n1n/8 w - - 0 1", Color::White};

Db& antichess() {
    static bool built = false;
    Db& db = Db::get(VariantId::Antichess);
    if (!built) {
        db.build({kAntichess.table});
        built = true;
    }
    return db;
}

std::string describe(const verify::StrategyReport& r) {
    std::string text = r.name + ": " + std::to_string(r.problems) + " problems";
    if (!r.database_error.empty()) text += ", database error: " + r.database_error;
    for (std::size_t i = 0; i < r.listed.size() && i < 5; ++i) {
        text += "\n  " + std::string(verify::problem_kind_name(r.listed[i].kind)) + ": " +
                r.listed[i].fen + " " + r.listed[i].move + ": " + r.listed[i].message;
    }
    return text;
}

void require_closed(Db& db, const std::string& name, std::uint64_t entries) {
    const verify::StrategyReport r = db.check(name);
    INFO(describe(r));
    REQUIRE(r.closed());
    CHECK(r.entries == entries);
    CHECK(r.replies > 0);
}

// The lines of an export without the '#' header.
std::vector<std::string> body(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != '#') lines.push_back(line);
    }
    return lines;
}

std::string without_name(const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("# name: ")) out += line + '\n';
    }
    return out;
}

// Copies strategy `from` to `to` through the storage API, letting `edit`
// drop an entry (return nullopt) or replace its value.
void copy_strategy(
    storage::Database& db, const std::string& from, const std::string& to,
    const std::function<std::optional<std::string>(std::string_view, std::string_view)>& edit,
    std::optional<storage::StrategyKind> kind = std::nullopt) {
    auto reader = db.open_strategy(from);
    REQUIRE(reader.ok());
    storage::StrategySpec spec = reader->info().spec;
    spec.name = to;
    if (kind) spec.kind = *kind;
    auto writer = db.create_strategy(spec);
    REQUIRE(writer.ok());
    auto it = reader->iterator();
    REQUIRE(it.ok());
    for (it->seek_to_first(); it->valid(); it->next()) {
        if (auto value = edit(it->key(), it->value())) REQUIRE(writer->add(it->key(), *value).ok());
    }
    REQUIRE(it->status().ok());
    REQUIRE(writer->commit().ok());
}

Position entry_position(std::string_view key) {
    auto plain = storage::decode_position_key(key);
    REQUIRE(plain.ok());
    return probe::position_from_plain(*plain);
}

// Extract, verify, export, import under a new name, verify, export again.
gen::ExtractSummary round_trip(Db& db, VariantId variant, const std::string& root,
                               const std::string& name, storage::StrategyKind kind,
                               std::optional<Color> side = std::nullopt) {
    const gen::ExtractSummary s = db.extract(root, name, side);
    CHECK(s.kind == kind);
    REQUIRE(s.entries > 0);
    require_closed(db, name, s.entries);

    const std::string text = db.export_text(name);
    const auto lines = body(text);
    CHECK(lines.size() == s.entries);
    // Lines come in key order.
    std::string previous;
    for (const auto& line : lines) {
        const std::string key =
            probe::position_key(*parse_fen(line.substr(0, line.find('\t')), variant));
        CHECK(key > previous);
        previous = key;
    }
    gen::ImportOptions options;
    options.name = name + "-imported";
    options.side = s.side;
    options.kind = kind;
    options.roots = {root};
    auto imported = db.import(text, options);
    if (!imported.ok()) FAIL(imported.status().message());
    CHECK(imported->entries == s.entries);
    require_closed(db, options.name, s.entries);
    CHECK(without_name(db.export_text(options.name)) == without_name(text));
    return s;
}

}  // namespace

TEST_CASE("strategy key: rules/ and the verifier's Board encode the same bytes") {
    std::mt19937_64 rng(99);
    const std::pair<VariantId, const char*> starts[] = {
        {VariantId::Antichess, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"},
        {VariantId::FourFile, "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"},
    };
    int positions = 0, with_ep = 0;
    for (const auto& [variant, fen] : starts) {
        const auto verify_variant = *verify::variant_from_name(variant_name(variant));
        for (int game = 0; game < (test::kSanitized ? 20 : 150); ++game) {
            Position pos = *parse_fen(fen, variant);
            for (int ply = 0; ply < 80; ++ply) {
                const std::string key = probe::position_key(pos);
                const Result<verify::Board> board = verify::parse_fen(verify_variant, to_fen(pos));
                REQUIRE_MESSAGE(board, to_fen(pos) << ": " << board.status().message());
                REQUIRE_MESSAGE(verify::board_key(*board) == key, to_fen(pos));
                const Result<verify::Board> back = verify::board_from_key(verify_variant, key);
                REQUIRE(back);
                REQUIRE(back->fen() == to_fen(pos));
                REQUIRE(probe::position_from_plain(*storage::decode_position_key(key)) == pos);
                ++positions;
                with_ep += pos.ep_square() != kNoSquare;
                MoveList moves;
                with_variant(variant, [&]<class R>() { generate_legal<R>(pos, moves); });
                if (moves.empty()) break;
                const Move m = moves[rng() % moves.size()];
                REQUIRE(probe::move_from_plain(probe::plain_move(m)) == m);
                pos = pos.after(m);
            }
        }
    }
    MESSAGE(positions << " positions, " << with_ep << " with an en-passant square");
    CHECK(with_ep > 0);
}

TEST_CASE("strategy: Four File KRvK won, extracted, verified, exported and imported") {
    Db& db = fourfile();
    const auto s = round_trip(db, VariantId::FourFile, "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1", "krk",
                              storage::StrategyKind::Winning);
    CHECK(s.root_value == probe::Value{Wdl::Win, 7});
    CHECK(db.check("krk").cycles_checked);
}

TEST_CASE("strategy: Four File KRvKB drawn, for either side") {
    Db& db = fourfile();
    const auto s = round_trip(db, VariantId::FourFile, "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1", "krkb",
                              storage::StrategyKind::NonLoss);
    CHECK(s.root_value.wdl == Wdl::Draw);
    CHECK(s.side == Color::White);
    CHECK_FALSE(db.check("krkb").cycles_checked);
    // The same root for the side not to move: every reply at the root is followed.
    const auto b = round_trip(db, VariantId::FourFile, "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1",
                              "krkb-black", storage::StrategyKind::NonLoss, Color::Black);
    CHECK(b.side == Color::Black);
    auto info = db.database().strategy_info("krkb-black");
    REQUIRE(info.ok());
    CHECK(info->spec.side == storage::Side::Black);
}

TEST_CASE("strategy: Four File pawn ending KPvK, through the promotions") {
    Db& db = fourfile();
    const auto s = round_trip(db, VariantId::FourFile, "4k3/8/4K3/8/8/8/P7/8 w - - 0 1", "kpk",
                              storage::StrategyKind::Winning);
    CHECK(s.root_value == probe::Value{Wdl::Win, 13});
    // Promoted positions (KQvK and the like) are entries too.
    bool promoted = false;
    for (const auto& line : body(db.export_text("kpk"))) {
        promoted |= line.find_first_of("QRBN") < line.find(' ');
    }
    CHECK(promoted);
}

TEST_CASE("strategy: antichess winning strategy from a multi-unit table") {
    Db& db = antichess();
    const auto s = round_trip(db, VariantId::Antichess, kAntichess.root, "antichess-win",
                              storage::StrategyKind::Winning);
    CHECK(s.side == kAntichess.side);
    CHECK(s.root_value.wdl == Wdl::Win);
    MESSAGE(std::string(kAntichess.table) << ": " << s.entries << " entries");
}

TEST_CASE("strategy: extraction errors") {
    Db& db = fourfile();
    gen::ExtractOptions options;
    options.name = "never";
    const auto error = [&](const std::string& fen) {
        auto r = gen::extract_strategy(db.tablebase(), VariantId::FourFile, fen, options);
        REQUIRE_FALSE(r.ok());
        return r.status();
    };
    // Black to move and lost: no strategy keeps a draw.
    auto e = error("4k3/8/8/8/8/8/8/R3K3 b - - 0 1");
    CHECK(exit_code(e) == 1);
    CHECK(e.message().find("black loses") != std::string::npos);
    // A table the database does not hold is named.
    e = error("4k3/8/2b5/8/8/8/8/Q3K3 w - - 0 1");
    CHECK(exit_code(e) == 3);
    CHECK(e.message().find("fourfile/KQvKB") != std::string::npos);
    e = error("4k3/8/8/8/8/8/8/R3K4 w - - 0 1");
    CHECK(exit_code(e) == 2);
    CHECK(!db.database().strategy_info("never").ok());
    // An existing name needs `replace`.
    db.extract("8/8/8/4R3/8/4K3/8/4k3 w - - 0 1", "taken");
    options.name = "taken";
    e = error("8/8/8/4R3/8/4K3/8/4k3 w - - 0 1");
    CHECK(exit_code(e) == 2);
    options.replace = true;
    CHECK(gen::extract_strategy(db.tablebase(), VariantId::FourFile, "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1",
                                options)
              .ok());
}

TEST_CASE("strategy: a removed entry is a hole naming the position") {
    Db& db = fourfile();
    const auto s = db.extract("8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1", "krkb-full");
    const std::string root_key =
        probe::position_key(*parse_fen("8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1", VariantId::FourFile));
    // Drop the middle entry in key order (not the root).
    std::uint64_t index = 0;
    std::string removed_fen;
    copy_strategy(db.database(), "krkb-full", "krkb-holed",
                  [&](std::string_view key, std::string_view value) -> std::optional<std::string> {
                      if (index++ == s.entries / 2 && key != root_key) {
                          removed_fen = to_fen(entry_position(key));
                          return std::nullopt;
                      }
                      return std::string(value);
                  });
    REQUIRE(!removed_fen.empty());
    const verify::StrategyReport r = db.check("krkb-holed");
    INFO(describe(r));
    CHECK(!r.closed());
    CHECK(r.entries == s.entries - 1);
    bool named = false;
    for (const auto& p : r.listed) {
        CHECK(p.kind == verify::ProblemKind::Hole);
        CHECK(p.reached == removed_fen);
        CHECK(!p.fen.empty());
        CHECK(!p.move.empty());
        CHECK(!p.reply.empty());
        named |= p.reached == removed_fen;
    }
    CHECK(named);

    // Dropping the root: the root is not covered.
    copy_strategy(db.database(), "krkb-full", "krkb-rootless",
                  [&](std::string_view key, std::string_view value) -> std::optional<std::string> {
                      if (key == root_key) return std::nullopt;
                      return std::string(value);
                  });
    const verify::StrategyReport rootless = db.check("krkb-rootless");
    INFO(describe(rootless));
    REQUIRE(rootless.problems >= 1);
    CHECK(rootless.listed.front().kind == verify::ProblemKind::BadRoot);
    CHECK(rootless.listed.front().fen == "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1");
}

TEST_CASE("strategy: a legal but losing move is found at its entry") {
    for (const bool winning : {false, true}) {
        CAPTURE(winning);
        Db& db = fourfile();
        // White cannot lose KRvKB in Four File, so the drawing side tried is Black.
        const std::string name = winning ? "kpk-good" : "krkb-good";
        db.extract(winning ? "4k3/8/4K3/8/8/8/P7/8 w - - 0 1" : "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1",
                   name, winning ? Color::White : Color::Black);
        // The first entry (key order) with a move that gives the value away.
        std::string changed_fen, changed_move;
        copy_strategy(
            db.database(), name, name + "-spoilt",
            [&](std::string_view key, std::string_view value) -> std::optional<std::string> {
                if (!changed_fen.empty()) return std::string(value);
                const Position pos = entry_position(key);
                auto moves = db.tablebase().probe_moves(VariantId::FourFile, pos);
                REQUIRE(moves.ok());
                for (const auto& mv : *moves) {
                    const bool spoils =
                        winning ? mv.for_mover.wdl != Wdl::Win : mv.for_mover.wdl == Wdl::Loss;
                    if (!spoils) continue;
                    changed_fen = to_fen(pos);
                    changed_move = mv.uci;
                    return probe::move_value_bytes(mv.move);
                }
                return std::string(value);
            });
        REQUIRE(!changed_fen.empty());
        const verify::StrategyReport r = db.check(name + "-spoilt");
        INFO(describe(r));
        CHECK(!r.closed());
        bool found = false;
        for (const auto& p : r.listed) found |= p.fen == changed_fen && p.move == changed_move;
        CHECK(found);
    }
}

TEST_CASE("strategy: bad entries and illegal moves") {
    Db& db = fourfile();
    db.extract("8/8/8/4R3/8/4K3/8/4k3 w - - 0 1", "krk-base");
    std::uint64_t index = 0;
    // Entry 0 gets a move that is not legal there (a1a1), entry 1 a value of 3 bytes.
    copy_strategy(db.database(), "krk-base", "krk-broken",
                  [&](std::string_view, std::string_view value) -> std::optional<std::string> {
                      const std::uint64_t i = index++;
                      if (i == 0) return std::string(2, '\0');
                      if (i == 1) return std::string(value) + 'x';
                      return std::string(value);
                  });
    const verify::StrategyReport r = db.check("krk-broken");
    INFO(describe(r));
    REQUIRE(r.listed.size() >= 2);
    CHECK(r.listed[0].kind == verify::ProblemKind::IllegalMove);
    CHECK(r.listed[0].move == "a1a1");
    CHECK(r.listed[1].kind == verify::ProblemKind::BadEntry);

    // An entry with the wrong side to move.
    auto reader = db.database().open_strategy("krk-base");
    REQUIRE(reader.ok());
    storage::StrategySpec spec = reader->info().spec;
    spec.name = "krk-wrong-side";
    auto writer = db.database().create_strategy(spec);
    REQUIRE(writer.ok());
    const Position black = *parse_fen("8/8/8/4R3/8/4K3/8/4k3 b - - 0 1", VariantId::FourFile);
    REQUIRE(writer->add(probe::position_key(black), probe::move_value_bytes(Move(4, 12))).ok());
    REQUIRE(writer->commit().ok());
    const verify::StrategyReport w = db.check("krk-wrong-side");
    INFO(describe(w));
    bool wrong_side = false;
    for (const auto& p : w.listed) {
        wrong_side |= p.kind == verify::ProblemKind::BadEntry &&
                      p.message.find("black to move") != std::string::npos;
    }
    CHECK(wrong_side);
}

TEST_CASE("strategy: a drawing strategy marked winning is rejected with its cycle") {
    Db& db = fourfile();
    const std::string root = "8/8/4k3/8/8/2b5/8/R3K3 w - - 0 1";
    db.extract(root, "krkb-draw");
    gen::ImportOptions options;
    options.name = "krkb-claimed-win";
    options.side = Color::White;
    options.kind = storage::StrategyKind::Winning;
    options.roots = {root};
    auto imported = db.import(db.export_text("krkb-draw"), options);
    REQUIRE(imported.ok());
    const verify::StrategyReport r = db.check(options.name);
    INFO(describe(r));
    CHECK(!r.closed());
    CHECK(r.cycles_checked);
    const verify::StrategyProblem* cycle = nullptr;
    for (const auto& p : r.listed) {
        if (p.kind == verify::ProblemKind::Cycle) cycle = &p;
    }
    REQUIRE(cycle != nullptr);
    REQUIRE(cycle->cycle.size() >= 2);
    // Each position of the cycle is an entry whose move and some reply lead to the next.
    const auto text = db.export_text("krkb-draw");
    std::map<std::string, std::string> moves;
    for (const auto& line : body(text))
        moves[line.substr(0, line.find('\t'))] = line.substr(line.find('\t') + 1);
    for (std::size_t i = 0; i < cycle->cycle.size(); ++i) {
        const std::string& from = cycle->cycle[i];
        const std::string& to = cycle->cycle[(i + 1) % cycle->cycle.size()];
        REQUIRE(moves.contains(from));
        const Position pos = *parse_fen(from, VariantId::FourFile);
        const Position child = pos.after(*parse_uci(pos, VariantId::FourFile, moves[from]));
        MoveList replies;
        generate_legal<FourFile>(child, replies);
        bool leads = false;
        for (Move reply : replies) leads |= to_fen(child.after(reply)) == to;
        CHECK_MESSAGE(leads, from << " -> " << to);
    }
    // The same strategy is closed as a non-loss strategy.
    require_closed(db, "krkb-draw", r.entries);
}

TEST_CASE("strategy import: malformed lines are named and nothing is stored") {
    Db& db = fourfile();
    gen::ImportOptions options;
    options.name = "bad-import";
    options.side = Color::White;
    options.roots = {"8/8/8/4R3/8/4K3/8/4k3 w - - 0 1"};
    const std::string good = "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\te5e4\n";
    const std::pair<std::string, std::string> cases[] = {
        {good + "garbage\n", "line 2: expected 'FEN<TAB>uci-move'"},
        {"# comment\n\n" + good + "8/8/8/4R3/8/4K3/8/4k9 w - - 0 1\te5e4\n", "line 4: bad FEN"},
        {"8/8/8/4R3/8/4K3/8/4k3 b - - 0 1\te1e2\n", "line 1: black to move"},
        {good + "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\te5e2\n", "line 2: move 'e5e2' is not legal"},
        {good + "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\ta1a2\n", "line 2: move 'a1a2' is not legal"},
        {good + "\n8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\te5e6\n", "on line 1, here e5e6"},
        {good + "8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\te5e4\textra\n", "line 2: expected"},
        {"8/8/8/4R3/8/4K3/8/4k3 w - - 0 1\t\n", "line 1: expected"},
        {"8/8/8/4R3/8/4K3/8/4k3 w - - 0 1 e5e4\n", "line 1: expected"},
    };
    for (const auto& entry : cases) {
        const auto& text = entry.first;
        const auto& message = entry.second;
        CAPTURE(text);
        auto r = db.import(text, options);
        REQUIRE_FALSE(r.ok());
        const Status& e = r.status();
        CHECK(exit_code(e) == 2);
        CHECK_MESSAGE(e.message().find(message) != std::string::npos, e.message());
        CHECK(db.database().strategy_info("bad-import").status().code() ==
              StatusCode::NotFound);
    }
    // A repeated line with the same move is stored once; CRLF and blanks are fine.
    auto r = db.import(
        good + good + "  # indented comment\r\n" + "8/8/8/4R3/4K3/8/8/4k3 w - - 0 1 \t e5e6\r\n",
        options);
    REQUIRE(r.ok());
    const auto& s = *r;
    CHECK(s.entries == 2);
    CHECK(s.duplicates == 1);
    CHECK(s.lines == 3);
    // A bad root is refused before any line is read.
    options.name = "bad-root";
    options.roots = {"8/8/8/8/8/8/8/8 w - - 0 1"};
    auto bad_root = db.import(good, options);
    REQUIRE_FALSE(bad_root.ok());
    CHECK(bad_root.status().message().starts_with("root: "));
}

TEST_CASE("strategy verify: database errors") {
    Db& db = fourfile();
    CHECK(db.check("no-such-strategy").database_error.find("no strategy 'no-such-strategy'") !=
          std::string::npos);
    CHECK(!verify::check_strategy("/nonexistent/db", "x").database_error.empty());
    storage::StrategySpec spec;
    spec.name = "other-encoding";
    spec.variant = "fourfile";
    spec.entry_encoding = "something/9";
    auto writer = db.database().create_strategy(spec);
    REQUIRE(writer.ok());
    REQUIRE(writer->commit().ok());
    CHECK(db.check("other-encoding").database_error.find("entry encoding") != std::string::npos);
}

// The longest win of a table, from the statistics the generator stores.
std::string longest_win(Db& db, const std::string& table) {
    auto info = db.database().table_info(table);
    REQUIRE(info.ok());
    const std::string& json = info->statistics.json;
    const std::size_t at = json.find("\"fen\":\"", json.find("\"longest_win\""));
    REQUIRE(at != std::string::npos);
    const std::size_t start = at + 7;
    return json.substr(start, json.find('"', start) - start);
}

TEST_CASE("strategy: the longest wins of 5-unit Four File and 4-unit antichess tables" *
          doctest::test_suite("slow")) {
    Db& ff = Db::get(VariantId::FourFile);
    ff.build({"KNPvKN", "KQNvKR"});
    for (const char* table : {"fourfile/KNPvKN", "fourfile/KQNvKR"}) {
        const std::string fen = longest_win(ff, table);
        const auto s = ff.extract(fen, table);
        MESSAGE(std::string(table)
                << " " << fen << ": " << s.entries << " entries in " << s.seconds << " s");
        CHECK(s.kind == storage::StrategyKind::Winning);
        require_closed(ff, table, s.entries);
    }
    Db& ac = antichess();
    ac.build({"NNvNN"});
    const auto s = ac.extract(longest_win(ac, "antichess/NNvNN"), "nnvnn-longest");
    CHECK(s.root_value == probe::Value{Wdl::Win, 78});
    MESSAGE("antichess/NNvNN: " << s.entries << " entries in " << s.seconds << " s");
    require_closed(ac, "nnvnn-longest", s.entries);
}
