#include "tbforge/serve/lichess.hpp"

#include <algorithm>
#include <tuple>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/san.hpp"

namespace tbf::serve {

namespace {

constexpr Bitboard kLightSquares = 0x55AA55AA55AA55AAULL;

// Losing chess with bishops only: can `side` never lose all its units?
// True when one of its bishops stands on a square colour the other side has
// no bishop on: bishops keep their square colour and nothing else moves.
bool cannot_lose_all(const Position& pos, Color side) {
    const Bitboard ours = pos.units(side);
    const Bitboard theirs = pos.units(~side);
    const bool ours_light = (ours & kLightSquares) != 0;
    const bool ours_dark = (ours & ~kLightSquares) != 0;
    const bool theirs_light = (theirs & kLightSquares) != 0;
    const bool theirs_dark = (theirs & ~kLightSquares) != 0;
    return (ours_light && !theirs_light) || (ours_dark && !theirs_dark);
}

template <Ruleset R>
GameEnd game_end_of(const Position& pos) {
    GameEnd end;
    MoveList legal;
    generate_legal<R>(pos, legal);
    const bool has_move = !legal.empty();
    const bool checked = in_check<R>(pos);
    const bool side_empty =
        pos.units(Color::White) == 0 || pos.units(Color::Black) == 0;
    const bool out_of_units = R::kCapturesCompulsory && side_empty;
    end.checkmate = R::kRoyalKing && !has_move && checked;
    end.stalemate = !has_move && !checked && !out_of_units;
    if constexpr (!R::kRoyalKing) {
        if (const auto value = terminal_value<R>(pos, has_move)) {
            end.variant_win = *value == Wdl::Win;
            end.variant_loss = *value == Wdl::Loss;
        }
        const Bitboard occupied = pos.occupied();
        end.insufficient_material = !side_empty && occupied == pos.units(UnitType::Bishop) &&
                                    cannot_lose_all(pos, Color::White) &&
                                    cannot_lose_all(pos, Color::Black);
    } else {
        end.insufficient_material = pos.occupied() == pos.units(UnitType::King);
    }
    return end;
}

// Unit value order for the last sort key: none < pawn < knight < bishop <
// rook < queen < king.
int unit_rank(std::optional<UnitType> type) {
    return type ? kUnitTypeCount - to_index(*type) : 0;
}

int category_rank(Wdl wdl) { return static_cast<int>(wdl) + 1; }  // loss 0, draw 1, win 2

// The lichess order of a DTC after the move: the opponent's quickest loss
// first, then draws, then its slowest win.
std::tuple<int, int> dtc_key(int dtc) { return {dtc < 0 ? 0 : dtc == 0 ? 1 : 2, -dtc}; }

auto sort_key(const MoveAnswer& m) {
    const bool opponent_wins = m.probe.child.wdl == Wdl::Win;
    const GameEnd& e = m.after_end;
    return std::make_tuple(category_rank(m.probe.child.wdl), !e.checkmate, !e.variant_loss,
                           e.variant_win, !e.stalemate, !e.insufficient_material,
                           m.probe.conversion == opponent_wins, dtc_key(signed_dtc(m.probe.child)),
                           m.zeroing == opponent_wins, -unit_rank(m.captured),
                           -unit_rank(m.probe.move.is_promotion()
                                          ? std::optional<UnitType>(m.probe.move.promotion())
                                          : std::nullopt));
}

Json position_fields(const GameEnd& end, probe::Value value) {
    Json j;
    j["dtz"] = nullptr;
    j["precise_dtz"] = nullptr;
    j["dtc"] = signed_dtc(value);
    j["dtm"] = nullptr;
    j["dtw"] = nullptr;
    j["checkmate"] = end.checkmate;
    j["stalemate"] = end.stalemate;
    j["variant_win"] = end.variant_win;
    j["variant_loss"] = end.variant_loss;
    j["insufficient_material"] = end.insufficient_material;
    j["category"] = category_name(value.wdl);
    return j;
}

Result<std::vector<MoveAnswer>> answered_moves(const probe::Tablebase& tb, VariantId variant,
                                               const Position& pos) {
    auto probed = tb.probe_moves(variant, pos);
    if (!probed.ok()) return probed.status();
    std::vector<MoveAnswer> moves;
    moves.reserve(probed->size());
    for (probe::MoveValue& mv : *probed) {
        MoveAnswer m;
        m.san = to_san(pos, variant, mv.move);
        m.zeroing = pos.is_capture(mv.move) ||
                    unit_type(pos.unit_on(mv.move.from())) == UnitType::Pawn;
        if (pos.is_en_passant(mv.move)) {
            m.captured = UnitType::Pawn;
        } else if (pos.unit_on(mv.move.to()) != Unit::None) {
            m.captured = unit_type(pos.unit_on(mv.move.to()));
        }
        m.after = pos.after(mv.move);
        m.after_end = game_end(variant, m.after);
        m.probe = std::move(mv);
        moves.push_back(std::move(m));
    }
    sort_moves(moves);
    return moves;
}

}  // namespace

GameEnd game_end(VariantId variant, const Position& pos) {
    return with_variant(variant, [&]<class R>() { return game_end_of<R>(pos); });
}

std::string_view category_name(Wdl wdl) {
    switch (wdl) {
        case Wdl::Win: return "win";
        case Wdl::Loss: return "loss";
        case Wdl::Draw: break;
    }
    return "draw";
}

int signed_dtc(probe::Value value) {
    switch (value.wdl) {
        case Wdl::Win: return value.dtc;
        case Wdl::Loss: return -static_cast<int>(value.dtc);
        case Wdl::Draw: break;
    }
    return 0;
}

void sort_moves(std::vector<MoveAnswer>& moves) {
    std::sort(moves.begin(), moves.end(), [](const MoveAnswer& a, const MoveAnswer& b) {
        const auto ka = sort_key(a);
        const auto kb = sort_key(b);
        if (ka != kb) return ka < kb;
        return a.probe.uci < b.probe.uci;
    });
}

Result<Json> probe_answer(const probe::Tablebase& tb, VariantId variant, const Position& pos) {
    auto value = tb.probe(variant, pos);
    if (!value.ok()) return value.status();
    auto moves = answered_moves(tb, variant, pos);
    if (!moves.ok()) return moves.status();
    Json answer = position_fields(game_end(variant, pos), *value);
    answer["fen"] = to_fen(pos);
    Json list = Json::array();
    for (const MoveAnswer& m : *moves) {
        Json j;
        j["uci"] = m.probe.uci;
        j["san"] = m.san;
        j["fen"] = to_fen(m.after);
        j["zeroing"] = m.zeroing;
        j["conversion"] = m.probe.conversion;
        j.update(position_fields(m.after_end, m.probe.child));
        list.push_back(std::move(j));
    }
    answer["moves"] = std::move(list);
    return answer;
}

Result<Json> mainline_answer(const probe::Tablebase& tb, VariantId variant, const Position& pos) {
    auto value = tb.probe(variant, pos);
    if (!value.ok()) return value.status();
    Json steps = Json::array();
    Position at = pos;
    // Along best play the DTC drops by one each ply until the conversion; the
    // bound only guards against a damaged table.
    const int bound = value->dtc + 2;
    if (value->wdl != Wdl::Draw) {
        for (int ply = 0; ply < bound; ++ply) {
            auto moves = answered_moves(tb, variant, at);
            if (!moves.ok()) return moves.status();
            if (moves->empty()) break;
            const MoveAnswer& best = moves->front();
            steps.push_back(Json{{"uci", best.probe.uci},
                                 {"san", best.san},
                                 {"dtz", nullptr},
                                 {"precise_dtz", nullptr},
                                 {"dtc", signed_dtc(best.probe.child)}});
            at = best.after;
            if (best.probe.conversion) break;
        }
    }
    Json answer;
    answer["dtz"] = nullptr;
    answer["precise_dtz"] = nullptr;
    answer["dtc"] = signed_dtc(*value);
    answer["fen"] = to_fen(pos);
    answer["mainline"] = std::move(steps);
    const Color side = pos.side_to_move();
    if (value->wdl == Wdl::Draw) {
        answer["winner"] = nullptr;
    } else {
        const Color winner = value->wdl == Wdl::Win ? side : ~side;
        answer["winner"] = winner == Color::White ? "w" : "b";
    }
    return answer;
}

}  // namespace tbf::serve
