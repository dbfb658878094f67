// Region leaves: the safety game on a locked pawn structure, explored
// forward from a node and solved retrogradely (region.hpp).

#include "region.hpp"

#include "grow_array.hpp"
#include "heuristics.hpp"

#include <limits>
#include <vector>

namespace tbf::solve::detail {
namespace {

using R = FourFile;

// values_: an X-to-move position proven safe holds X's move (never 0: a
// move from a square to itself does not exist; never above 0xFFF: region
// moves are not promotions); the rest is marked by these.
constexpr std::uint16_t kSafe = 0;  // opponent to move, or X stalemated: nothing to play
// Unsafe when X may take at most d captures deep: kUnsafeAtDepth + d.
constexpr std::uint16_t kUnsafeAtDepth = 0xFF00;
static_assert(kUnsafeAtDepth == RegionSolver::kUnsafeMark);

bool is_unsafe(std::uint16_t value) { return value >= kUnsafeAtDepth; }
int unsafe_depth(std::uint16_t value) { return value - kUnsafeAtDepth; }

enum class Kind : std::uint8_t {
    Inner,  // explored: its moves inside the region are edges
    Loss,   // X checkmated, X without a move inside, or the opponent can leave the region
    Safe,   // the game ends without a loss for X, or known safe from an earlier exploration
};

// In the locked game X keeps its pawns (its walls): pieces only; in the
// quiet game its pawns may step too. Never a promotion of X's: the game is
// pessimistic, so a move X does not make costs nothing but proofs. A
// capture (X's or the opponent's) leaves the region for one with less
// material, whose value is that region's own.
bool allowed_for_x(const Position& pos, Move m, RegionGame game) {
    if (m.is_promotion()) return false;
    return game == RegionGame::Quiet || unit_type(pos.unit_on(m.from())) != UnitType::Pawn;
}

// X's lead in material (centipawns).
std::int64_t lead(const Position& pos, Color x) { return material(pos, x) - material(pos, ~x); }

// In the game with exchanges X's lead after its own move must be at least
// the start's (`floor`): a capture of the opponent's is followed, and X has
// to win the material back at once. X takes a pawn only to do that, since
// every capture opens a game with less material.
// `lead_now` is X's lead at `pos`; a capture adds its victim's value.
bool allowed_in_exchanges(const Position& pos, Move m, std::int64_t lead_now, std::int64_t floor) {
    if (m.is_promotion()) return false;
    if (!pos.is_capture(m)) return lead_now >= floor;
    const UnitType victim = unit_type(pos.unit_on(m.to()));
    if (victim == UnitType::Pawn && lead_now >= floor) return false;
    return lead_now + unit_value(victim) >= floor;
}

// Where a quiet game is tried: each piece of the opponent's multiplies the
// squares, so that only games against at most one piece fit a budget. The
// pawn structures do not need a bound: pawns only advance and stop head-on,
// so even eight free pawns leave few structures (docs/fourfile.md, "Quiet
// games").
constexpr int kQuietMaxOpponentPieces = 1;

}  // namespace

RegionSolver::RegionSolver(Color x, std::size_t budget, std::size_t cache_cap, int max_capture_depth,
                           RegionGame game)
    : x_(x), budget_(budget), cache_cap_(cache_cap), max_capture_depth_(max_capture_depth), game_(game) {}

RegionSolver::~RegionSolver() = default;

void RegionSolver::enable_dense(std::uint64_t memory_cap, int threads, DenseRules rules) {
    if (game_ != RegionGame::Quiet) return;
    dense_ = std::make_unique<DenseGame>(x_, memory_cap, threads, rules);
    dense_->set_interrupt(interrupt_);
}

bool RegionSolver::applies(const Position& pos) const {
    // A pieces game is the locked game without the lock: it may start anywhere.
    if (game_ == RegionGame::Pieces) return overflows_ < kMaxOverflows && values_.size() < cache_cap_;
    if (game_ == RegionGame::Quiet) {
        if (dense_ && dense_->fits(pos)) return true;
        if (overflows_ >= kMaxOverflows || values_.size() >= cache_cap_) return false;
        const Color o = ~x_;
        const Bitboard their_pieces = pos.units(o) & ~pos.units(o, UnitType::Pawn) & ~pos.units(o, UnitType::King);
        return popcount(their_pieces) <= kQuietMaxOpponentPieces;
    }
    const Bitboard mine = pos.units(x_, UnitType::Pawn);
    if (!mine) return false;
    const Bitboard theirs = pos.units(~x_, UnitType::Pawn);
    const Bitboard ahead = x_ == Color::White ? mine << 8 : mine >> 8;
    return (ahead & theirs) == ahead;
}

std::string RegionSolver::region_key(const Position& pos) const {
    Position pawns;
    for (Bitboard b = pos.units(UnitType::Pawn); b;) {
        const Square s = pop_lsb(b);
        pawns.put(s, pos.unit_on(s));
    }
    const PackedPosition packed = pack(pawns);
    std::string key(reinterpret_cast<const char*>(&packed), sizeof packed);
    for (const Color c : {Color::White, Color::Black}) {
        for (const UnitType t : {UnitType::Knight, UnitType::Bishop, UnitType::Rook, UnitType::Queen}) {
            key += static_cast<char>(popcount(pos.units(c, t)));
        }
    }
    return key;
}

std::optional<bool> RegionSolver::known(const Position& pos) const {
    const std::uint16_t* value = values_.find(pack(pos));
    if (value && !is_unsafe(*value)) return true;
    // The dense game's values are exact in its own game (the plain quiet
    // game, or the whole game with --dense-conversions): a safe one is safe
    // in the real game whatever the hash table holds.
    if (dense_) {
        if (const auto dense_value = dense_->known(pos)) {
            if (*dense_value || !value) return dense_value;
        }
    }
    if (!value) return std::nullopt;
    return false;
}

std::optional<Move> RegionSolver::move_at(const Position& pos) const {
    const std::uint16_t* value = values_.find(pack(pos));
    if ((!value || is_unsafe(*value)) && dense_) return dense_->move_at(pos);
    if (!value || is_unsafe(*value) || *value == kSafe) return std::nullopt;
    const std::uint16_t raw = *value;
    const auto from = static_cast<Square>(raw & 63);
    const auto to = static_cast<Square>((raw >> 6) & 63);
    // Region moves are never promotions.
    return Move(from, to);
}

std::optional<Move> RegionSolver::solve(const Position& pos) {
    if (interrupted_) return std::nullopt;
    const bool fresh = !values_.contains(pack(pos));
    if (!explore_region(pos, max_capture_depth_)) return std::nullopt;
    const auto move = move_at(pos);
    if (move) ++safe_starts_;
    // A region that keeps failing from new starts is given up: exploring
    // it again costs more than the search it might save.
    if (!move && fresh && known(pos) == false) {
        const std::string key = region_key(pos);
        if (++failures_[key] >= kMaxFailures) too_large_.insert(key);
    }
    return move;
}

// Iterative deepening over the captures: the region without them first
// (cheap, and usually decisive), then with one capture more at a time.
bool RegionSolver::explore_region(const Position& pos, int depth) {
    const PackedPosition packed = pack(pos);
    // The quiet game with exchanges is larger than the plain one: once it
    // has overflowed often, only the plain game is tried.
    if (game_ == RegionGame::Quiet && exchange_overflows_ >= kMaxOverflows) depth = 0;
    // The dense game answers its game exactly where the material fits it:
    // a value it has already is taken at once. It solves
    // a new start only when the hash-table game overflows its budget, since
    // it enumerates every position of every structure reachable, far more
    // than a game that fits the budget visits.
    const bool dense_fits = dense_ && dense_->fits(pos);
    int first_depth = 0;
    if (dense_fits) {
        if (const auto value = dense_->known(pos)) {
            if (*value || depth == 0) return true;
            first_depth = 1;  // unsafe without exchanges: try them
        }
    }
    enum class Dense : std::uint8_t { Answered, TryExchanges, Failed };
    const auto solve_dense = [&]() {
        if (!dense_fits) return Dense::Failed;
        const auto value = dense_->solve(pos);
        if (dense_->interrupted()) interrupted_ = true;
        if (!value) return Dense::Failed;
        return *value || depth == 0 ? Dense::Answered : Dense::TryExchanges;
    };
    for (int d = first_depth; d <= depth; ++d) {
        if (const std::uint16_t* value = values_.find(packed)) {
            if (!is_unsafe(*value) || unsafe_depth(*value) >= depth) return true;
            if (unsafe_depth(*value) >= d) continue;
        }
        if (values_.size() >= cache_cap_) {
            if (d > 0) return false;
            const Dense dense = solve_dense();
            if (dense == Dense::TryExchanges) continue;
            return dense == Dense::Answered;
        }
        // After kMaxOverflows hash-table games overflowed, a start the dense
        // game takes goes to it directly: each overflow cost a budget.
        if (d == 0 && dense_fits && overflows_ >= kMaxOverflows) {
            const Dense dense = solve_dense();
            if (dense == Dense::TryExchanges) continue;
            return dense == Dense::Answered;
        }
        const std::string key = region_key(pos);
        if (too_large_.count(key)) return false;
        if (!explore(pos, d)) {
            if (interrupted_) return false;  // stopped: not too large
            // The plain quiet game fitted: only the exchanges overflowed.
            if (game_ == RegionGame::Quiet && d > 0) {
                ++exchange_overflows_;
                return false;
            }
            if (const Dense dense = solve_dense(); dense != Dense::Failed) {
                // An overflow the dense game did not turn into a safe start
                // still counts (the budget was spent for nothing).
                if (known(pos) != true) ++overflows_;
                if (dense == Dense::TryExchanges) continue;
                return true;
            }
            if (interrupted_) return false;
            too_large_.insert(key);
            if (game_ != RegionGame::LockedPawns) ++overflows_;
            return false;
        }
        // The whole game over the dense index gives X more than the quiet
        // game: a start the quiet game calls unsafe is tried there too.
        if (d == 0 && dense_fits && dense_->rules() == DenseRules::Conversions && known(pos) == false) {
            const Dense dense = solve_dense();
            if (interrupted_) return false;
            if (dense == Dense::Answered) return true;
        }
    }
    return true;
}

// The value of a position reached by a capture: its own region's (explored
// now if need be: captures only lower the material, so this recursion
// ends), or a loss if that region is given up or X's pawns are not locked
// there.
RegionSolver::Exit RegionSolver::exit_value(const Position& pos, int depth) {
    if (depth < 0) return Exit::Loss;
    if (game_ == RegionGame::LockedPawns) {
        const Bitboard mine = pos.units(x_, UnitType::Pawn);
        const Bitboard ahead = x_ == Color::White ? mine << 8 : mine >> 8;
        if ((ahead & pos.units(~x_, UnitType::Pawn)) != ahead) return Exit::Loss;
    }
    if (!explore_region(pos, depth)) return Exit::Loss;
    return known(pos) == true ? Exit::Safe : Exit::Loss;
}

bool RegionSolver::explore(const Position& start, int depth) {
    if (interrupted_) return false;
    ++explorations_;
    GrowArray<PackedPosition> keys;
    PackedMap<std::uint32_t> index;
    GrowArray<Kind> kind;
    GrowArray<std::uint8_t> cached;  // an end because an earlier exploration decided it
    GrowArray<std::uint32_t> first, count, child;
    GrowArray<std::uint16_t> move;
    const auto add = [&](const PackedPosition& key) -> std::uint32_t {
        const auto [id, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
        if (!inserted) return *id;
        keys.push_back(key);
        Kind k = Kind::Inner;
        // Earlier explorations' values are exact in their games: a safe
        // one is safe here too, an unsafe one if X had as many captures.
        if (const std::uint16_t* value = values_.find(key)) {
            if (!is_unsafe(*value)) k = Kind::Safe;
            else if (unsafe_depth(*value) >= depth) k = Kind::Loss;
        } else if (dense_ && dense_->structures_solved() != 0 &&
                   packed_piece_count(key) <= dense_->limits().max_pieces && dense_->known(unpack(key)) == true) {
            k = Kind::Safe;
        }
        kind.push_back(k);
        cached.push_back(k != Kind::Inner);
        first.push_back(0);
        count.push_back(0);
        return *id;
    };
    add(pack(start));
    // A quiet game one capture deep is the game with exchanges: a capture
    // is a move inside the game like any other, held to the start's lead in
    // material (allowed_in_exchanges).
    const bool exchanges = game_ == RegionGame::Quiet && depth >= 1;
    const std::int64_t floor = exchanges ? lead(start, x_) : 0;
    MoveList legal;
    std::vector<PackedPosition> child_keys;
    std::vector<std::uint16_t> child_moves;
    // Which of X's legal moves the game allows, decided once per position.
    std::vector<std::uint8_t> allowed(MoveList::kCapacity);
    const auto decide_allowed = [&](const Position& pos) {
        const std::int64_t lead_now = exchanges ? lead(pos, x_) : 0;
        bool any = false;
        for (std::size_t i = 0; i < legal.size(); ++i) {
            const Move m = legal[i];
            allowed[i] = exchanges ? allowed_in_exchanges(pos, m, lead_now, floor) : allowed_for_x(pos, m, game_);
            any = any || allowed[i];
        }
        return any;
    };
    // A quiet or pieces game larger than the budget is cut there: the positions not
    // expanded yet count as losses for X, so whatever the attractor still
    // calls safe is safe in the whole game (X can keep play inside the
    // explored part for ever), while an unsafe value means nothing.
    std::uint32_t cut = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t v = 0; v < keys.size(); ++v) {
        if (interrupt_ && interrupt_->load(std::memory_order_relaxed)) interrupted_ = true;
        if (interrupted_) {
            --explorations_;  // nothing kept, nothing counted
            return false;
        }
        if (kind[v] != Kind::Inner) continue;
        if (keys.size() > budget_) {
            if (game_ == RegionGame::LockedPawns) return false;
            cut = v;
            break;
        }
        const Position pos = unpack(keys[v]);
        generate_legal<R>(pos, legal);
        const bool x_moves = pos.side_to_move() == x_;
        if (legal.empty()) {
            kind[v] = x_moves && in_check<R>(pos) ? Kind::Loss : Kind::Safe;
            continue;
        }
        if (x_moves) {
            if (!decide_allowed(pos)) {
                kind[v] = Kind::Loss;
                continue;
            }
        } else {
            // A promotion of the opponent's is pessimistically a loss for X.
            bool promotes = false;
            for (Move m : legal) promotes = promotes || m.is_promotion();
            if (promotes) {
                kind[v] = Kind::Loss;
                continue;
            }
        }
        // Quiet moves first, so that X's move at a safe node is a quiet one
        // when it can be, then the captures with the values of their regions.
        const std::size_t edges_before = child.size();
        first[v] = static_cast<std::uint32_t>(edges_before);
        // The children's keys first, their slots in the index and the cache
        // requested together, then the lookups: these are the exploration's
        // cache misses.
        child_keys.clear();
        child_moves.clear();
        for (std::size_t i = 0; i < legal.size(); ++i) {
            const Move m = legal[i];
            if ((pos.is_capture(m) && !exchanges) || (x_moves && !allowed[i])) continue;
            child_keys.push_back(pack(pos.after(m)));
            child_moves.push_back(m.raw());
            index.prefetch(child_keys.back());
            values_.prefetch(child_keys.back());
        }
        for (std::size_t i = 0; i < child_keys.size(); ++i) {
            child.push_back(add(child_keys[i]));
            move.push_back(child_moves[i]);
            ++count[v];
        }
        bool opponent_wins_exit = false;
        for (std::size_t i = 0; i < legal.size(); ++i) {
            const Move m = legal[i];
            if (exchanges || !pos.is_capture(m) || (x_moves && !allowed[i])) continue;
            const Position after = pos.after(m);
            const Exit value = exit_value(after, depth - 1);
            if (value == Exit::Loss && !x_moves) {
                opponent_wins_exit = true;  // the opponent takes this way out
                break;
            }
            if (value == Exit::Loss) continue;  // X does not take this way out
            child.push_back(add(pack(after)));
            move.push_back(m.raw());
            ++count[v];
        }
        if (opponent_wins_exit || count[v] == 0) {
            child.resize(edges_before);
            move.resize(edges_before);
            count[v] = 0;
            kind[v] = Kind::Loss;
        }
    }
    const std::size_t n = keys.size();
    for (std::uint32_t v = cut; v < n; ++v) {
        if (kind[v] == Kind::Inner) kind[v] = Kind::Loss;
    }
    // The opponent's attractor to the losses: an opponent node with a child
    // in it, an X node with all its children in it.
    std::vector<std::uint32_t> pred_first(n + 1, 0), preds(child.size());
    for (std::uint32_t c : child) ++pred_first[c + 1];
    for (std::size_t i = 0; i < n; ++i) pred_first[i + 1] += pred_first[i];
    {
        std::vector<std::uint32_t> fill(pred_first.begin(), pred_first.end() - 1);
        for (std::uint32_t v = 0; v < n; ++v) {
            if (kind[v] != Kind::Inner) continue;
            for (std::uint32_t i = 0; i < count[v]; ++i) preds[fill[child[first[v] + i]]++] = v;
        }
    }
    std::vector<std::uint8_t> in(n, 0);
    std::vector<std::uint32_t> remaining(count.begin(), count.end()), queue;
    for (std::uint32_t v = 0; v < n; ++v) {
        if (kind[v] == Kind::Loss) {
            in[v] = 1;
            queue.push_back(v);
        }
    }
    const auto x_node = [&](std::uint32_t v) { return packed_side(keys[v]) == x_; };
    while (!queue.empty()) {
        const std::uint32_t v = queue.back();
        queue.pop_back();
        for (std::uint32_t i = pred_first[v]; i < pred_first[v + 1]; ++i) {
            const std::uint32_t p = preds[i];
            if (in[p]) continue;
            if (x_node(p) && --remaining[p] != 0) continue;
            in[p] = 1;
            queue.push_back(p);
        }
    }
    // Every explored position's value is exact now (its region is closed
    // under the moves above): keep them all. Of a cut game only the safe
    // ones: outside the attractor X keeps play inside the explored part for
    // ever, whether or not the start is among them (a safe position deep
    // in a game whose start is lost still closes a search that reaches it).
    const bool was_cut = cut != std::numeric_limits<std::uint32_t>::max();
    std::uint64_t kept = 0;
    for (std::uint32_t v = 0; v < n; ++v) {
        if (cached[v] || (was_cut && in[v])) continue;
        // A pieces game holds many unsafe positions, and an unsafe one
        // after X's move is found again from its X-to-move children at
        // little cost: only the start of those is kept, halving the cache.
        if (game_ == RegionGame::Pieces && in[v] && v != 0 && !x_node(v)) continue;
        std::uint16_t value = in[v] ? static_cast<std::uint16_t>(kUnsafeAtDepth + depth) : kSafe;
        if (!in[v] && kind[v] == Kind::Inner && x_node(v)) {
            for (std::uint32_t i = 0; i < count[v]; ++i) {
                if (!in[child[first[v] + i]]) {
                    value = move[first[v] + i];
                    break;
                }
            }
        }
        values_.insert_or_assign(keys[v], value);
        ++kept;
    }
    if (was_cut) {
        ++cut_explorations_;
        // A start inside the attractor: the game counts as too large.
        if (in[0]) {
            kept_beside_lost_starts_ += kept;
            return false;
        }
        ++cut_successes_;
    }
    return true;
}

std::uint64_t RegionSolver::memory_bytes() const {
    return values_.memory_bytes() + (too_large_.size() + failures_.size()) * 64 + (dense_ ? dense_->memory_bytes() : 0);
}

}  // namespace tbf::solve::detail
