// Move order for X, after the Four File observations of docs/fourfile.md:
// immediate mates and stalemates first (no obligations at all), never a
// move after which the opponent forces mate (by checks within a few moves,
// or by a threat X cannot meet), then material (the
// opponent's rook above all), few opponent replies (each one is an
// obligation), transpositions into positions already in the graph, locked
// pawns, units out of the opponent's reach (squares its pieces can never attack), and
// no opponent pawn running to promotion.

#include "heuristics.hpp"

#include <algorithm>
#include <bit>

namespace tbf::solve::detail {
namespace {

using R = FourFile;

constexpr std::int64_t kMate = 1'000'000'000;
constexpr std::int64_t kStalemate = 900'000'000;
constexpr std::int64_t kMatedSoon = 500'000'000;
constexpr std::int64_t kProvenLost = 400'000'000;

// Squares the opponent's units could ever attack while X's pawns and the
// opponent's blocked pawns stand: each unit's reach is flooded through the
// board with those pawns as walls (pawns only move forward and never
// capture, so they are the only lasting obstacles), and every square
// attacked from that reach counts.
// A unit of X's outside this set cannot be taken until a pawn moves or a
// piece is promoted: the thesis's safe squares and barriers, derived from
// the rules. A knight keeps (file / 2 + rank) mod 2 on the four files and a
// bishop rank mod 2 and (file / 2 + rank / 2) mod 2, which the flood finds
// by itself.
Bitboard reach_attacks(UnitType type, Square from, Bitboard walls) {
    Bitboard reach = bit(from);
    Bitboard attacked = 0;
    Bitboard todo = reach;
    while (todo) {
        const Square s = pop_lsb(todo);
        const Bitboard a = unit_attacks(type, s, walls) & R::kBoard;
        attacked |= a;
        const Bitboard next = a & ~walls & ~reach;
        reach |= next;
        todo |= next;
    }
    return attacked;
}

}  // namespace

std::int64_t material(const Position& pos, Color c) {
    std::int64_t sum = 0;
    for (int t = 1; t < kUnitTypeCount; ++t) {
        const auto type = static_cast<UnitType>(t);
        sum += unit_value(type) * popcount(pos.units(c, type));
    }
    return sum;
}

Bitboard opponent_reach(const Position& pos, Color x) {
    const Color o = ~x;
    // X's pawns stay while X leaves them, and so does a pawn of the
    // opponent's once a pawn blocks it; a free one vacates the squares it
    // passes, which the opponent's pieces may then use.
    const Bitboard pawns = pos.units(UnitType::Pawn);
    const Bitboard their_pawns = pos.units(o, UnitType::Pawn);
    const int forward = o == Color::White ? 8 : -8;
    const Bitboard blocked = o == Color::White ? their_pawns & (pawns >> 8) : their_pawns & (pawns << 8);
    const Bitboard walls = pos.units(x, UnitType::Pawn) | blocked;
    // The king keeps to its file, so it never gets past a pawn of its own
    // there: that pawn ends at the latest on the square before the first
    // pawn ahead of it (a pawn with none ahead may promote, and stops
    // nothing).
    Bitboard king_walls = walls;
    for (Bitboard b = their_pawns; b;) {
        const Square s = pop_lsb(b);
        for (int t = s + forward; t >= 0 && t < 64; t += forward) {
            if (pawns & bit(static_cast<Square>(t))) {
                king_walls |= bit(static_cast<Square>(t - forward));
                break;
            }
        }
    }
    Bitboard attacked = 0;
    for (Bitboard b = pos.units(o) & ~pos.units(UnitType::Pawn); b;) {
        const Square s = pop_lsb(b);
        const UnitType type = unit_type(pos.unit_on(s));
        attacked |= reach_attacks(type, s, type == UnitType::King ? king_walls : walls);
    }
    return attacked;
}

namespace {

constexpr std::int64_t safety_weight(UnitType t) {
    switch (t) {
        case UnitType::King: return 80;
        case UnitType::Queen: return 60;
        case UnitType::Rook: return 50;
        case UnitType::Bishop: return 40;
        case UnitType::Knight: return 40;
        case UnitType::Pawn: return 25;
    }
    return 0;
}

// X's units out of the opponent's reach, weighted by what they are.
std::int64_t safety(const Position& pos, Color x) {
    const Bitboard exposed = opponent_reach(pos, x);
    std::int64_t score = 0;
    for (Bitboard b = pos.units(x) & ~exposed; b;) {
        score += safety_weight(unit_type(pos.unit_on(pop_lsb(b))));
    }
    return score;
}

// Pawns never capture here, so a pawn with an enemy pawn straight ahead is
// stuck for good unless a piece takes one of them.
int locked_pairs(const Position& pos) {
    const Bitboard white = pos.units(Color::White, UnitType::Pawn);
    const Bitboard black = pos.units(Color::Black, UnitType::Pawn);
    return popcount((white << 8) & black);
}

// Pushes X's free pawns still need to meet the opponent's pawn on their
// file head-on (a file without one counts nothing): a locked pawn structure
// is what the region and quiet games can solve, and the opponent can keep
// its own pawns at home for ever, so X has to walk into the lock itself.
int pushes_to_lock(const Position& pos, Color x) {
    const Bitboard theirs = pos.units(~x, UnitType::Pawn);
    const int step = x == Color::White ? 1 : -1;
    int pushes = 0;
    for (Bitboard b = pos.units(x, UnitType::Pawn); b;) {
        const Square s = pop_lsb(b);
        const int file = file_of(s);
        for (int r = rank_of(s) + step; r >= 0 && r < 8; r += step) {
            if (theirs & bit(make_square(file, r))) {
                pushes += (r - rank_of(s)) * step - 1;
                break;
            }
        }
    }
    return pushes;
}

// Danger from the opponent's pawns with no unit of X's in front: the square
// of how far each has come.
std::int64_t runner_danger(const Position& pos, Color x) {
    const Color o = ~x;
    std::int64_t danger = 0;
    for (Bitboard b = pos.units(o, UnitType::Pawn); b;) {
        const Square s = pop_lsb(b);
        const int rank = rank_of(s);
        if (squares_ahead(o, s) & pos.units(x)) continue;
        const int advanced = o == Color::White ? rank - 1 : 6 - rank;
        danger += static_cast<std::int64_t>(advanced) * advanced;
    }
    return danger;
}

// The side to move at `pos` mates within `moves` of its moves, each of
// them before the last a check. Checks keep the tree narrow: few moves give
// check, and the replies to a check are few.
bool mates_by_checks(const Position& pos, int moves);

// Every reply of X's at `pos` (X to move) lets the opponent mate within
// `moves` of its moves by checks. No reply at all is checkmate or stalemate:
// the caller tells them apart.
bool every_reply_mated(const Position& pos, int moves) {
    MoveList replies;
    generate_legal<R>(pos, replies);
    for (Move y : replies) {
        if (!mates_by_checks(pos.after(y), moves)) return false;
    }
    return true;
}

bool mates_by_checks(const Position& pos, int moves) {
    if (moves <= 1) return mates_in_one(pos);
    MoveList list;
    generate_legal<R>(pos, list);
    for (Move m : list) {
        const Position next = pos.after(m);
        if (!in_check<R>(next)) continue;
        if (every_reply_mated(next, moves - 1)) return true;  // no reply at all: mate now
    }
    return false;
}

// After the opponent's move `r` (leading to `next`, X to move), can the
// opponent force mate within the reach of `search`?
bool reply_forces_mate(const Position& next, const MateSearch& search) {
    if (in_check<R>(next)) {
        if (search.check_moves <= 1) return !has_legal_move<R>(next);
        return every_reply_mated(next, search.check_moves - 1);
    }
    if (!search.threats) return false;
    // A quiet move: a mate in two only if X has a move (not stalemate) and
    // every one of them allows a mate in one.
    MoveList replies;
    generate_legal<R>(next, replies);
    if (replies.empty()) return false;
    for (Move y : replies) {
        if (!mates_in_one(next.after(y))) return false;
    }
    return true;
}

}  // namespace

bool mates_in_one(const Position& pos) {
    MoveList moves;
    generate_legal<R>(pos, moves);
    for (Move m : moves) {
        const Position next = pos.after(m);
        if (in_check<R>(next) && !has_legal_move<R>(next)) return true;
    }
    return false;
}

bool forces_mate(const Position& pos, const MateSearch& search) {
    MoveList list;
    generate_legal<R>(pos, list);
    for (Move r : list) {
        if (reply_forces_mate(pos.after(r), search)) return true;
    }
    return false;
}

std::vector<ScoredMove> order_moves(const Position& pos, const MoveList& moves,
                                    const std::function<Known(const Position&)>& known,
                                    const PlacementCount& placements, const MateSearch& mates) {
    const Color x = pos.side_to_move();
    const Color o = ~x;
    std::vector<ScoredMove> out;
    out.reserve(moves.size());
    MoveList replies;
    for (Move m : moves) {
        const Position child = pos.after(m);
        generate_legal<R>(child, replies);
        ScoredMove scored{m, 0};
        if (replies.empty()) {
            scored.score = in_check<R>(child) ? kMate : kStalemate;
            out.push_back(scored);
            continue;
        }
        std::int64_t score = material(child, x) - material(child, o);
        bool mated = false;
        std::int64_t best_gain = 0;
        for (Move r : replies) {
            const Position next = child.after(r);
            if (reply_forces_mate(next, mates)) {
                mated = true;
                break;
            }
            std::int64_t gain = 0;
            if (child.is_capture(r)) gain += unit_value(unit_type(child.unit_on(r.to())));
            if (r.is_promotion()) gain += unit_value(r.promotion()) - unit_value(UnitType::Pawn);
            if (gain > 0 && is_attacked<R>(next, r.to(), x)) {
                gain -= unit_value(unit_type(next.unit_on(r.to())));
            }
            best_gain = std::max(best_gain, gain);
        }
        if (mated) score -= kMatedSoon;
        score -= best_gain;
        score -= 4 * static_cast<std::int64_t>(replies.size());
        switch (known(child)) {
            case Known::Safe: score += 400; break;
            case Known::Expanded: score += 250; break;
            case Known::Open: score += 60; break;
            case Known::Lost: score -= kProvenLost; break;
            case Known::Unknown: break;
        }
        if (const std::uint32_t same = placements(child); same > 0) {
            score += 120 + 20 * std::min(static_cast<int>(std::bit_width(same)), 12);
        }
        score += 15 * locked_pairs(child);
        score -= 20 * pushes_to_lock(child, x);
        score += safety(child, x);
        score -= 6 * runner_danger(child, x);
        scored.score = score;
        out.push_back(scored);
    }
    std::stable_sort(out.begin(), out.end(), [](const ScoredMove& a, const ScoredMove& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.move.raw() < b.move.raw();
    });
    return out;
}

}  // namespace tbf::solve::detail
