// Fortress leaves: a bounded closure under one waiting policy of X's
// (fortress.hpp).

#include "fortress.hpp"

#include <vector>

#include "heuristics.hpp"
#include "packed_map.hpp"
#include "packed_position.hpp"

namespace tbf::solve::detail {
namespace {

using R = FourFile;

constexpr UnitType kKinds[] = {UnitType::Knight, UnitType::Bishop, UnitType::King, UnitType::Rook,
                               UnitType::Queen};
constexpr std::size_t kKindCount = std::size(kKinds);

bool all_out_of_reach(const Position& pos, Color x) { return !(pos.units(x) & opponent_reach(pos, x)); }

// No unit of X's is attacked by the opponent right now.
bool none_attacked(const Position& pos, Color x) {
    for (Bitboard b = pos.units(x); b;) {
        if (is_attacked<R>(pos, pop_lsb(b), ~x)) return false;
    }
    return true;
}

// After X's move (opponent to move): every capture the opponent has takes a
// unit worth no more than its taker (so it loses material or trades even),
// lands where X takes back, and no promotion is possible.
bool exchanges_only(const Position& after, Color x, MoveList& replies) {
    generate_legal<R>(after, replies);
    for (Move r : replies) {
        if (r.is_promotion()) return false;
        if (!(after.occupied() & bit(r.to()))) continue;
        const UnitType taker = unit_type(after.unit_on(r.from()));
        if (taker == UnitType::King) return false;  // a king takes only what is not guarded
        if (unit_value(unit_type(after.unit_on(r.to()))) > unit_value(taker)) return false;
        if (!is_attacked<R>(after.after(r), r.to(), x)) return false;
    }
    return true;
}

// The opponent's pawns with no unit of X's anywhere ahead on their file,
// and the squares ahead of them. Pawns never capture, so a pawn with a unit
// of X's in front is stopped for good; one without runs to promotion, which
// no waiting closure survives.
struct Runners {
    Bitboard pawns = 0;
    Bitboard paths = 0;
};

Runners runners(const Position& pos, Color x) {
    const Color o = ~x;
    Runners out;
    for (Bitboard b = pos.units(o, UnitType::Pawn); b;) {
        const Square s = pop_lsb(b);
        const Bitboard ahead = squares_ahead(o, s);
        if (ahead & pos.units(x)) continue;
        out.pawns |= bit(s);
        out.paths |= ahead;
    }
    return out;
}

// X's move under a guarded policy: the capture of the most valuable piece
// (or running pawn) after which only exchanges remain (the recapture after
// an exchange among them), else a quiet piece move in front of a running
// pawn after which they do, else a quiet move after which they do and no
// pawn of the opponent's runs that did not before, unit kinds in the
// policy's order, pawn steps last.
std::optional<Move> guarded_move(const Position& pos, WaitingPolicy policy, const MoveList& legal) {
    const Color x = pos.side_to_move();
    const Runners running = runners(pos, x);
    MoveList replies;
    std::optional<Move> best_capture;
    std::int64_t best_victim = -1;
    for (Move m : legal) {
        if (m.is_promotion() || !(pos.units(~x) & bit(m.to()))) continue;
        // A pawn still stopped is left alone: taking it opens its file to
        // the opponent's pieces.
        if (unit_type(pos.unit_on(m.to())) == UnitType::Pawn && !(running.pawns & bit(m.to()))) continue;
        const std::int64_t victim = unit_value(unit_type(pos.unit_on(m.to())));
        if (victim <= best_victim) continue;
        if (!exchanges_only(pos.after(m), x, replies)) continue;
        best_capture = m;
        best_victim = victim;
    }
    if (best_capture) return best_capture;
    const auto quiet = [&](Move m) { return !m.is_promotion() && !(pos.occupied() & bit(m.to())); };
    if (running.paths) {
        for (Move m : legal) {
            if (quiet(m) && (running.paths & bit(m.to())) && exchanges_only(pos.after(m), x, replies)) return m;
        }
    }
    const auto keeps_stopped = [&](const Position& after) { return (runners(after, x).pawns & ~running.pawns) == 0; };
    for (std::size_t k = 0; k <= kKindCount; ++k) {
        // The pawns last: their steps run out, so they cannot wait for ever.
        const UnitType kind = k < kKindCount ? kKinds[(policy.first + k) % kKindCount] : UnitType::Pawn;
        for (Move m : legal) {
            if (!quiet(m) || unit_type(pos.unit_on(m.from())) != kind) continue;
            const Position after = pos.after(m);
            if (keeps_stopped(after) && exchanges_only(after, x, replies)) return m;
        }
    }
    return std::nullopt;
}

// X's move under the policy: a capture that keeps every unit of X's out of
// reach (the opponent's most valuable unit first), else a quiet piece move
// that does, unit kinds in the policy's order, else a quiet piece move after
// which at least nothing of X's is attacked (X regroups towards the
// fortress). Pawns wait (they are X's walls) unless nothing else can.
std::optional<Move> waiting_move(const Position& pos, WaitingPolicy policy, const MoveList& legal) {
    const Color x = pos.side_to_move();
    std::optional<Move> best_capture;
    int best_victim = -1;
    for (Move m : legal) {
        if (m.is_promotion() || !(pos.occupied() & bit(m.to()))) continue;
        const int victim = static_cast<int>(unit_type(pos.unit_on(m.to())));
        if (victim <= best_victim) continue;
        if (!all_out_of_reach(pos.after(m), x)) continue;
        best_capture = m;
        best_victim = victim;
    }
    if (best_capture) return best_capture;
    const auto quiet_piece_move = [&](Move m, UnitType kind) {
        return !m.is_promotion() && !(pos.occupied() & bit(m.to())) && unit_type(pos.unit_on(m.from())) == kind;
    };
    for (std::size_t k = 0; k < kKindCount; ++k) {
        const UnitType kind = kKinds[(policy.first + k) % kKindCount];
        for (Move m : legal) {
            if (quiet_piece_move(m, kind) && all_out_of_reach(pos.after(m), x)) return m;
        }
    }
    for (std::size_t k = 0; k < kKindCount; ++k) {
        const UnitType kind = kKinds[(policy.first + k) % kKindCount];
        for (Move m : legal) {
            if (quiet_piece_move(m, kind) && none_attacked(pos.after(m), x)) return m;
        }
    }
    // Out of piece moves (a zugzwang): a pawn step that keeps everything out
    // of reach; pawn steps run out, so this cannot wait for ever.
    for (Move m : legal) {
        if (quiet_piece_move(m, UnitType::Pawn) && all_out_of_reach(pos.after(m), x)) return m;
    }
    return std::nullopt;
}

// Positions from which the closure under a policy is known to fail: the
// opponent can force a position where X is checkmated or has no move under
// the policy. X's move is a function of the position, so that is a fact of
// the position and the policy, and a later closure that reaches such a
// position fails too, however it got there. The search tries closures at
// many neighbouring positions that share most of their lines, so this saves
// re-following them; it never changes an answer. Per thread (closures run
// in the solver's workers), cleared when full.
class FailureMemo {
public:
    bool contains(const PackedPosition& key, WaitingPolicy policy) {
        const std::uint16_t* failed = failed_.find(key);
        if (failed == nullptr || !(*failed & policy_bit(policy))) return false;
        ++hits_;
        return true;
    }
    void insert(const PackedPosition& key, WaitingPolicy policy) {
        if (failed_.size() >= kCapacity) clear();
        *failed_.try_emplace(key, 0).first |= policy_bit(policy);
    }
    void clear() { failed_ = PackedMap<std::uint16_t>(); }
    std::uint64_t hits() const { return hits_; }

private:
    // At most about 13 MB a thread (PackedMap::kBytesPerPosition).
    static constexpr std::size_t kCapacity = std::size_t{1} << 18;
    static std::uint16_t policy_bit(WaitingPolicy policy) {
        return static_cast<std::uint16_t>(1u << (policy.first * 2 + (policy.guarded ? 1 : 0)));
    }
    static_assert(kKindCount * 2 <= 16, "a policy's bit must fit the value");
    // Each position's failed policies, one bit each: a position is looked
    // up once whatever the policy.
    PackedMap<std::uint16_t> failed_;
    std::uint64_t hits_ = 0;
};

thread_local FailureMemo failure_memo;

bool close(const Position& start, WaitingPolicy policy, std::size_t budget,
           const std::function<bool(const Position&)>* skip,
           const std::function<void(const Position&, Move)>* visit) {
    // Only a closure that decides alone (no positions answered elsewhere)
    // reads or writes the memo.
    const bool use_memo = skip == nullptr;
    const PackedPosition start_key = pack(start);
    if (use_memo && failure_memo.contains(start_key, policy)) return false;
    PackedMap<std::uint8_t> seen;
    // Breadth first; each position's parent is the one whose reply reached
    // it, so a failure can be traced back to every position that leads to it.
    std::vector<Position> found{start};
    std::vector<std::uint32_t> parent{0};
    seen.try_emplace(start_key, 1);
    const auto fail_from = [&](std::size_t i) {
        if (!use_memo) return false;
        for (;;) {
            failure_memo.insert(pack(found[i]), policy);
            if (i == 0) return false;
            i = parent[i];
        }
    };
    MoveList legal, replies;
    for (std::size_t head = 0; head < found.size(); ++head) {
        const Position p = found[head];
        generate_legal<R>(p, legal);
        const auto m = policy.guarded ? guarded_move(p, policy, legal) : waiting_move(p, policy, legal);
        if (!m) return fail_from(head);
        if (visit) (*visit)(p, *m);
        const Position after = p.after(*m);
        generate_legal<R>(after, replies);
        for (Move r : replies) {
            const Position next = after.after(r);
            generate_legal<R>(next, legal);
            if (legal.empty()) {
                if (in_check<R>(next)) return fail_from(head);  // X checkmated
                continue;                                        // stalemate: a draw
            }
            if (skip && (*skip)(next)) continue;
            const PackedPosition key = pack(next);
            if (use_memo && failure_memo.contains(key, policy)) return fail_from(head);
            if (!seen.try_emplace(key, 1).second) continue;
            if (seen.size() > budget) return false;  // too large: not a fact of the position
            found.push_back(next);
            parent.push_back(static_cast<std::uint32_t>(head));
        }
    }
    return true;
}

}  // namespace

std::optional<WaitingPolicy> find_fortress(const Position& pos, std::size_t budget) {
    // Closures are tried only where X is nearly set up: at most one unit
    // within the opponent's reach, and none attacked now.
    const Color x = pos.side_to_move();
    if (popcount(pos.units(x) & opponent_reach(pos, x)) > 1 || !none_attacked(pos, x)) return std::nullopt;
    for (std::uint8_t first = 0; first < kKindCount; ++first) {
        const UnitType kind = kKinds[first];
        if (!pos.units(pos.side_to_move(), kind)) continue;  // the same order as an earlier kind's
        const WaitingPolicy policy{first};
        if (close(pos, policy, budget, nullptr, nullptr)) return policy;
    }
    return std::nullopt;
}

std::optional<WaitingPolicy> find_guarded_fortress(const Position& pos, std::size_t budget) {
    // Against two pieces or more the closures hardly ever hold (measured:
    // docs/fourfile.md), and each attempt costs up to a budget.
    const Color o = ~pos.side_to_move();
    const Bitboard pieces = pos.units(o) & ~pos.units(o, UnitType::Pawn) & ~pos.units(o, UnitType::King);
    if (popcount(pieces) > 1) return std::nullopt;
    for (std::uint8_t first = 0; first < kKindCount; ++first) {
        if (!pos.units(pos.side_to_move(), kKinds[first])) continue;  // the same order as an earlier kind's
        const WaitingPolicy policy{first, true};
        if (close(pos, policy, budget, nullptr, nullptr)) return policy;
    }
    return std::nullopt;
}

void clear_fortress_memo() { failure_memo.clear(); }

std::uint64_t fortress_memo_hits() { return failure_memo.hits(); }

bool follow_fortress(const Position& pos, WaitingPolicy policy, std::size_t budget,
                     const std::function<bool(const Position&)>& skip,
                     const std::function<void(const Position&, Move)>& visit) {
    return close(pos, policy, budget, &skip, &visit);
}

}  // namespace tbf::solve::detail
