// The answers of tbserve's Service, in-process: values equal the probe API's,
// the shape is the lichess API's (lichess_api.json), moves come best first
// in lichess's order, game-end flags agree with the values, mainlines follow
// best play to the conversion, and bad requests get 4xx.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "serve_fixture.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/san.hpp"
#include "tbforge/serve/lichess.hpp"

using namespace tbf;
using namespace tbf::test;

namespace {

using CloseServeDb = RunEndListener<&ServeDb::close>;
REGISTER_LISTENER("close-serve-db", 1, CloseServeDb);

Json get_ok(const std::string& target) {
    const serve::HttpAnswer a = ServeDb::get().service().answer("GET", target);
    INFO(target << " -> " << a.status << " " << a.body);
    REQUIRE(a.status == 200);
    CHECK(a.content_type == "application/json");
    CHECK(a.header("Cache-Control") == "public, max-age=86400");
    return parse_json(a.body);
}

bool has_type(const Json& value, const std::string& types) {
    auto allowed = [&](const char* t) { return types.find(t) != std::string::npos; };
    if (value.is_null()) return allowed("null");
    if (value.is_boolean()) return allowed("boolean");
    if (value.is_number()) return allowed("number");
    if (value.is_string()) return allowed("string");
    if (value.is_array()) return allowed("array");
    return false;
}

// The keys of `object` are exactly the lichess fields of `kind` and the
// documented extensions, each of its type.
void check_shape(const Json& object, const std::string& kind) {
    const Json& api = lichess_api();
    std::set<std::string> expected;
    for (const auto& item : api[kind].items()) {
        const std::string& key = item.key();
        const Json& types = item.value();
        expected.insert(key);
        REQUIRE_MESSAGE(object.contains(key), kind << " lacks " << key << ": " << object.dump());
        CHECK_MESSAGE(has_type(object[key], types.get<std::string>()), kind << "." << key);
    }
    if (api["tbforge_extensions"].contains(kind)) {
        for (const auto& item : api["tbforge_extensions"][kind].items()) {
            const std::string& key = item.key();
            const Json& types = item.value();
            expected.insert(key);
            REQUIRE(object.contains(key));
            CHECK(has_type(object[key], types.get<std::string>()));
        }
    }
    for (const auto& item : object.items()) {
        const std::string& key = item.key();
        CHECK_MESSAGE(expected.count(key) == 1, kind << " has an undocumented field " << key);
    }
}

int move_category_rank(const std::string& category) {
    const Json& order = lichess_api()["move_categories_best_first"];
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (order[i] == category) return static_cast<int>(i);
    }
    FAIL("category " << category << " is not a lichess category");
    return -1;
}

Wdl wdl_of(const Json& category) {
    return category == "win" ? Wdl::Win : category == "loss" ? Wdl::Loss : Wdl::Draw;
}

probe::Value value_of(const Json& j) {
    return {wdl_of(j["category"]), static_cast<std::uint16_t>(std::abs(j["dtc"].get<int>()))};
}

// Everything one answer must say about `pos`.
void check_answer(VariantId variant, const Position& pos) {
    const auto& tb = ServeDb::get().tablebase();
    const std::string fen = to_fen(pos);
    CAPTURE(fen);
    std::string target = "/";
    target += variant_name(variant);
    const Json answer = get_ok(target + "?fen=" + fen_param(fen));
    check_shape(answer, "position");
    CHECK(answer["fen"] == fen);

    const auto value = tb.probe(variant, pos);
    REQUIRE(value.ok());
    CHECK(value_of(answer) == *value);
    CHECK(answer["dtc"].get<int>() == serve::signed_dtc(*value));

    auto moves = tb.probe_moves(variant, pos);
    REQUIRE(moves.ok());
    REQUIRE(answer["moves"].size() == moves->size());
    std::map<std::string, const probe::MoveValue*> by_uci;
    for (const auto& mv : *moves) by_uci[mv.uci] = &mv;

    int previous_rank = -1;
    for (const Json& m : answer["moves"]) {
        check_shape(m, "move");
        const auto it = by_uci.find(m["uci"].get<std::string>());
        REQUIRE_MESSAGE(it != by_uci.end(), m.dump());
        const probe::MoveValue& mv = *it->second;
        CHECK(value_of(m) == mv.child);
        CHECK(m["conversion"] == mv.conversion);
        CHECK(m["san"] == to_san(pos, variant, mv.move));
        const Position after = pos.after(mv.move);
        CHECK(m["fen"] == to_fen(after));
        CHECK(m["zeroing"] ==
              (pos.is_capture(mv.move) || unit_type(pos.unit_on(mv.move.from())) == UnitType::Pawn));
        // Best first: lichess's category order...
        const int rank = move_category_rank(m["category"].get<std::string>());
        CHECK(rank >= previous_rank);
        previous_rank = rank;
        by_uci.erase(it);
    }
    // ... and the first move keeps the position's value.
    if (!moves->empty()) {
        const Json& best = answer["moves"][0];
        CHECK(probe::move_value(value_of(best), best["conversion"].get<bool>()) == *value);
    }
    // Within a category: winning moves convert first, then the quickest;
    // losing moves delay: quiet moves first, the slowest, conversions last.
    const Json& list = answer["moves"];
    for (std::size_t i = 1; i < list.size(); ++i) {
        const Json& a = list[i - 1];
        const Json& b = list[i];
        if (a["category"] != b["category"] || a["checkmate"] || b["checkmate"] ||
            a["variant_win"] != b["variant_win"] || a["stalemate"] != b["stalemate"]) {
            continue;
        }
        if (a["category"] == "loss") {
            CHECK((a["conversion"] >= b["conversion"]));
            if (a["conversion"] == b["conversion"]) CHECK(a["dtc"] >= b["dtc"]);
        } else if (a["category"] == "win") {
            CHECK((a["conversion"] <= b["conversion"]));
            if (a["conversion"] == b["conversion"]) CHECK(a["dtc"] >= b["dtc"]);
        }
    }
    // Game-end flags agree with the values.
    for (const Json* j : {&answer}) {
        if ((*j)["insufficient_material"]) CHECK((*j)["category"] == "draw");
        if ((*j)["variant_win"]) CHECK(((*j)["category"] == "win" && (*j)["dtc"] == 0));
        if ((*j)["variant_loss"] || (*j)["checkmate"]) CHECK((*j)["category"] == "loss");
        if ((*j)["checkmate"] || (*j)["stalemate"]) CHECK((*j)["moves"].empty());
    }
    for (const Json& m : list) {
        if (m["insufficient_material"]) CHECK(m["category"] == "draw");
        if (m["variant_win"]) CHECK(m["category"] == "win");
        if (m["variant_loss"] || m["checkmate"]) CHECK(m["category"] == "loss");
    }
}

void check_mainline(VariantId variant, const Position& pos) {
    const auto& tb = ServeDb::get().tablebase();
    const std::string fen = to_fen(pos);
    CAPTURE(fen);
    const std::string name(variant_name(variant));
    const Json line = get_ok("/" + name + "/mainline?fen=" + fen_param(fen));
    check_shape(line, "mainline");
    const auto value = tb.probe(variant, pos);
    REQUIRE(value.ok());
    CHECK(line["dtc"] == serve::signed_dtc(*value));
    if (value->wdl == Wdl::Draw) {
        CHECK(line["mainline"].empty());
        CHECK(line["winner"].is_null());
        return;
    }
    const Color winner = value->wdl == Wdl::Win ? pos.side_to_move() : ~pos.side_to_move();
    CHECK(line["winner"] == (winner == Color::White ? "w" : "b"));
    // One ply per unit of DTC, each the first move of the position's answer,
    // the last one converting.
    CHECK(line["mainline"].size() == value->dtc);
    Position at = pos;
    int expected = serve::signed_dtc(*value);
    for (std::size_t i = 0; i < line["mainline"].size(); ++i) {
        const Json& step = line["mainline"][i];
        check_shape(step, "mainline_step");
        const Json answer = get_ok("/" + name + "?fen=" + fen_param(to_fen(at)));
        REQUIRE_FALSE(answer["moves"].empty());
        CHECK(step["uci"] == answer["moves"][0]["uci"]);
        CHECK(step["san"] == answer["moves"][0]["san"]);
        CHECK(step["dtc"] == answer["moves"][0]["dtc"]);
        // The line ends with a conversion or with the end of the game
        // (checkmate, stalemate, a side without units).
        const Json& move = answer["moves"][0];
        const bool last = i + 1 == line["mainline"].size();
        const bool game_over =
            move["checkmate"] || move["stalemate"] || move["variant_win"] || move["variant_loss"];
        CHECK(last == (move["conversion"] || game_over));
        if (!last) CHECK(step["dtc"].get<int>() == (expected > 0 ? -(expected - 1) : -expected - 1));
        expected = step["dtc"].get<int>();
        at = *parse_fen(answer["moves"][0]["fen"].get<std::string>(), variant);
    }
}

}  // namespace

TEST_CASE("answers agree with the probe API and keep lichess's shape and order") {
    std::size_t checked = 0;
    for (const auto& [variant, tables] : ServeDb::sampled_tables()) {
        for (const auto& table : tables) {
            for (const Position& pos : sample_positions(variant, table, kSanitized ? 8 : 40, 3)) {
                check_answer(variant, pos);
                ++checked;
            }
        }
    }
    CHECK(checked >= (kSanitized ? 100u : 400u));
}

TEST_CASE("mainlines follow best play to the next conversion") {
    for (const auto& [variant, tables] : ServeDb::sampled_tables()) {
        for (const auto& table : tables) {
            for (const Position& pos : sample_positions(variant, table, kSanitized ? 3 : 10, 4)) {
                check_mainline(variant, pos);
            }
        }
    }
}

TEST_CASE("game ends and insufficient material") {
    auto answer = [](const char* variant, const char* fen) {
        return get_ok(std::string("/") + variant + "?fen=" + fen_param(fen));
    };
    // Losing chess: a side without units has won.
    Json a = answer("antichess", "8/8/8/8/8/8/8/K7 b - - 0 1");
    CHECK(a["variant_win"] == true);
    CHECK(a["stalemate"] == false);
    CHECK(a["category"] == "win");
    CHECK(a["moves"].empty());
    // Taking the last unit: the move hands the opponent the win.
    a = answer("antichess", "8/8/8/8/8/8/8/Kq6 w - - 0 1");
    REQUIRE(a["moves"].size() == 1);
    CHECK(a["moves"][0]["san"] == "Kxb1#");
    CHECK(a["moves"][0]["variant_win"] == true);
    CHECK(a["category"] == "loss");
    // Stalemate: antichess gives the stalemated side the win, FICS the side
    // with fewer units, equal counts draw.
    a = answer("antichess", "8/8/8/8/8/p7/P7/8 b - - 0 1");
    CHECK(a["stalemate"] == true);
    CHECK(a["variant_win"] == true);
    CHECK(a["category"] == "win");
    a = answer("antichess-fics", "8/8/8/8/8/p7/P7/8 b - - 0 1");
    CHECK(a["stalemate"] == true);
    CHECK(a["variant_win"] == false);
    CHECK(a["category"] == "draw");
    // Bishops on squares of different colours never meet.
    a = answer("antichess", "8/8/8/8/8/8/8/Bb6 w - - 0 1");
    CHECK(a["insufficient_material"] == true);
    CHECK(a["category"] == "draw");
    a = answer("antichess", "8/8/8/8/8/8/1b6/B7 w - - 0 1");
    CHECK(a["insufficient_material"] == false);
    // Four File: checkmate, stalemate, bare kings.
    a = answer("fourfile", "2R1k3/8/4K3/8/8/8/8/8 b - - 0 1");
    CHECK(a["checkmate"] == true);
    CHECK(a["category"] == "loss");
    a = answer("fourfile", "4k3/8/4K3/8/8/8/8/8 b - - 0 1");
    CHECK(a["stalemate"] == true);
    CHECK(a["category"] == "draw");
    a = answer("fourfile", "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
    CHECK(a["insufficient_material"] == true);
    CHECK(a["category"] == "draw");
    a = answer("fourfile", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    CHECK(a["insufficient_material"] == false);
    CHECK(a["category"] == "win");
    CHECK(a["moves"][0]["category"] == "loss");
}

TEST_CASE("errors are 4xx with a JSON message") {
    const auto& service = ServeDb::get().service();
    auto check_error = [&](const std::string& method, const std::string& target, int status,
                           const std::string& message) {
        CAPTURE(target);
        const serve::HttpAnswer a = service.answer(method, target);
        CHECK(a.status == status);
        CHECK(a.content_type == "application/json");
        CHECK(a.header("Cache-Control") == "no-store");
        const Json body = parse_json(a.body);
        CHECK(body["error"] == message);
    };
    check_error("GET", "/antichess?fen=8/8/8/8/8/8/8/X7_w", 400,
                "bad FEN: bad piece letter 'X' in rank 1");
    check_error("GET", "/antichess?fen=8/8/8/8/8/8/8/8", 400, "bad FEN: expected 2 to 6 fields, got 1");
    check_error("GET", "/fourfile?fen=4k3/8/8/8/8/8/8/4R1K1_w", 400,
                "bad FEN: White king on g1: fourfile kings stay on the e-file");
    check_error("GET", "/antichess?fen=8/8/8/8/8/8/8/KQR2k2_b", 404, "missing table antichess/KQRvK");
    check_error("GET", "/antichess/mainline?fen=8/8/8/8/8/8/8/KQR2k2_b", 404,
                "missing table antichess/KQRvK");
    check_error("GET", "/chess/mainline?fen=x", 404,
                "unknown variant 'chess' (known: antichess, antichess-fics, antichess-joint, "
                "fourfile)");
    check_error("GET", "/antichess?fen=8%zz", 400, "bad percent-encoding in the query");
    check_error("GET", "/", 404, "no web explorer: build it (web/) or pass --web DIR");
    check_error("POST", "/antichess?fen=8/8/8/8/8/8/8/KQ3k2_b", 405, "method POST not allowed");
    CHECK(service.answer("DELETE", "/health").header("Allow") == "GET, HEAD");
    const Json health = parse_json(service.answer("GET", "/health").body);
    CHECK(health["status"] == "ok");
    CHECK(health["tables"].get<int>() > 30);
}

TEST_CASE("sort_moves applies lichess's keys in their order") {
    // Synthetic moves: each differs from its successor in exactly the key
    // that must put it first, so any key applied out of order shows.
    auto make = [](const char* uci, probe::Value child, bool conversion, bool zeroing,
                   std::optional<UnitType> captured = std::nullopt,
                   std::optional<UnitType> promotion = std::nullopt) {
        serve::MoveAnswer m;
        m.probe.uci = uci;
        m.probe.child = child;
        m.probe.conversion = conversion;
        const auto from = static_cast<Square>(uci[0] - 'a' + 8 * (uci[1] - '1'));
        const auto to = static_cast<Square>(uci[2] - 'a' + 8 * (uci[3] - '1'));
        m.probe.move = promotion ? Move(from, to, *promotion) : Move(from, to);
        m.zeroing = zeroing;
        m.captured = captured;
        return m;
    };
    auto order = [](std::vector<serve::MoveAnswer> moves) {
        std::reverse(moves.begin(), moves.end());
        serve::sort_moves(moves);
        std::string out;
        for (const auto& m : moves) out += (out.empty() ? "" : " ") + m.probe.uci;
        return out;
    };
    // Winning moves (the opponent loses): checkmate first, then conversions
    // by the opponent's quickest loss, then quiet moves likewise; zeroing
    // before not; the larger capture, then the larger promotion; then UCI.
    std::vector<serve::MoveAnswer> winning = {
        make("a1a2", loss(0), false, false),
        make("a1a3", loss(1), true, true, UnitType::Queen),
        make("a1a4", loss(1), true, true, UnitType::Rook),
        make("a7a8", loss(1), true, true, std::nullopt, UnitType::Queen),
        make("b7b8", loss(1), true, true, std::nullopt, UnitType::Knight),
        make("c1c2", loss(2), true, true),
        make("d1d2", loss(1), false, true),
        make("d1d3", loss(1), false, false),
        make("e1e2", loss(3), false, false),
        make("f1f2", loss(3), false, false),
    };
    winning[0].after_end.checkmate = true;
    CHECK(order(winning) == "a1a2 a1a3 a1a4 a7a8 b7b8 c1c2 d1d2 d1d3 e1e2 f1f2");
    // Drawing moves: stalemate, insufficient material, conversions, zeroing.
    std::vector<serve::MoveAnswer> drawing = {
        make("a1a2", draw(), false, false), make("b1b2", draw(), false, false),
        make("c1c2", draw(), true, true),   make("d1d2", draw(), false, true),
        make("e1e2", draw(), false, false),
    };
    drawing[0].after_end.stalemate = true;
    drawing[1].after_end.insufficient_material = true;
    CHECK(order(drawing) == "a1a2 b1b2 c1c2 d1d2 e1e2");
    // Losing moves (the opponent wins): quiet before converting, the
    // opponent's slowest win first, non-zeroing before zeroing, and moves
    // handing the opponent a variant win last.
    std::vector<serve::MoveAnswer> losing = {
        make("a1a2", win(5), false, false), make("b1b2", win(3), false, false),
        make("b1b3", win(3), false, true),  make("c1c2", win(7), true, true),
        make("d1d2", win(1), true, true),   make("e1e2", win(0), true, true),
    };
    losing[5].after_end.variant_win = true;
    CHECK(order(losing) == "a1a2 b1b2 b1b3 c1c2 d1d2 e1e2");
    // Categories first: the opponent's loss, draw, win.
    std::vector<serve::MoveAnswer> mixed = {make("a1a2", loss(9), false, false),
                                            make("b1b2", draw(), true, true),
                                            make("c1c2", win(9), false, false)};
    CHECK(order(mixed) == "a1a2 b1b2 c1c2");
}
