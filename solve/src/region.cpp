// Region leaves: the safety game on a locked pawn structure, explored
// forward from a node and solved retrogradely (region.hpp).

#include "region.hpp"

#include <vector>

namespace tbf::solve::detail {
namespace {

using R = FourFile;

// values_: an X-to-move position proven safe holds X's move (never 0: a
// move from a square to itself does not exist); these two mark the rest.
constexpr std::uint16_t kSafe = 0;  // opponent to move, or X stalemated: nothing to play
constexpr std::uint16_t kUnsafe = 0xFFFF;

enum class Kind : std::uint8_t {
    Inner,  // explored: its moves inside the region are edges
    Loss,   // X checkmated, X without a move inside, or the opponent can leave the region
    Safe,   // the game ends without a loss for X, or known safe from an earlier exploration
};

// X keeps its pawns (its walls) and captures nothing: pieces only, quietly.
bool inside_for_x(const Position& pos, Move m) {
    return !m.is_promotion() && !pos.is_capture(m) && unit_type(pos.unit_on(m.from())) != UnitType::Pawn;
}

}  // namespace

RegionSolver::RegionSolver(Color x, std::size_t budget, std::size_t cache_cap)
    : x_(x), budget_(budget), cache_cap_(cache_cap) {}

bool RegionSolver::applies(const Position& pos) const {
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
    const auto it = values_.find(pack(pos));
    if (it == values_.end()) return std::nullopt;
    return it->second != kUnsafe;
}

std::optional<Move> RegionSolver::move_at(const Position& pos) const {
    const auto it = values_.find(pack(pos));
    if (it == values_.end() || it->second == kUnsafe || it->second == kSafe) return std::nullopt;
    const std::uint16_t raw = it->second;
    const auto from = static_cast<Square>(raw & 63);
    const auto to = static_cast<Square>((raw >> 6) & 63);
    // Region moves are never promotions.
    return Move(from, to);
}

std::optional<Move> RegionSolver::solve(const Position& pos) {
    if (const auto it = values_.find(pack(pos)); it != values_.end()) return move_at(pos);
    if (values_.size() >= cache_cap_) return std::nullopt;
    const std::string key = region_key(pos);
    if (too_large_.count(key)) return std::nullopt;
    if (!explore(pos)) {
        too_large_.insert(key);
        return std::nullopt;
    }
    return move_at(pos);
}

bool RegionSolver::explore(const Position& start) {
    ++explorations_;
    std::vector<PackedPosition> keys;
    std::unordered_map<PackedPosition, std::uint32_t, KeyHash> index;
    std::vector<Kind> kind;
    std::vector<std::uint32_t> first, count, child;
    std::vector<std::uint16_t> move;
    const auto add = [&](const PackedPosition& key) -> std::uint32_t {
        const auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
        if (!inserted) return it->second;
        keys.push_back(key);
        Kind k = Kind::Inner;
        // Earlier explorations' values are exact in the region game: use
        // them as ends.
        if (const auto v = values_.find(key); v != values_.end()) k = v->second == kUnsafe ? Kind::Loss : Kind::Safe;
        kind.push_back(k);
        first.push_back(0);
        count.push_back(0);
        return it->second;
    };
    add(pack(start));
    MoveList legal;
    for (std::uint32_t v = 0; v < keys.size(); ++v) {
        if (kind[v] != Kind::Inner) continue;
        if (keys.size() > budget_) return false;
        const Position pos = unpack(keys[v]);
        generate_legal<R>(pos, legal);
        const bool x_moves = pos.side_to_move() == x_;
        if (legal.empty()) {
            kind[v] = x_moves && in_check<R>(pos) ? Kind::Loss : Kind::Safe;
            continue;
        }
        if (x_moves) {
            bool any = false;
            for (Move m : legal) any = any || inside_for_x(pos, m);
            if (!any) {
                kind[v] = Kind::Loss;
                continue;
            }
        } else {
            // The opponent may leave the region (take a unit of X's or
            // promote): pessimistically a loss for X.
            bool leaves = false;
            for (Move m : legal) leaves = leaves || m.is_promotion() || pos.is_capture(m);
            if (leaves) {
                kind[v] = Kind::Loss;
                continue;
            }
        }
        first[v] = static_cast<std::uint32_t>(child.size());
        for (Move m : legal) {
            if (x_moves && !inside_for_x(pos, m)) continue;
            const std::uint32_t c = add(pack(pos.after(m)));
            child.push_back(c);
            move.push_back(m.raw());
            ++count[v];
        }
    }
    // The opponent's attractor to the losses: an opponent node with a child
    // in it, an X node with all its children in it.
    const std::size_t n = keys.size();
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
    std::vector<std::uint32_t> remaining(count), queue;
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
    // under the moves above): keep them all.
    for (std::uint32_t v = 0; v < n; ++v) {
        if (values_.count(keys[v])) continue;
        std::uint16_t value = in[v] ? kUnsafe : kSafe;
        if (!in[v] && kind[v] == Kind::Inner && x_node(v)) {
            for (std::uint32_t i = 0; i < count[v]; ++i) {
                if (!in[child[first[v] + i]]) {
                    value = move[first[v] + i];
                    break;
                }
            }
        }
        values_.emplace(keys[v], value);
    }
    return true;
}

std::uint64_t RegionSolver::memory_bytes() const {
    // Node-based hash map: key, value, next pointer and cached hash, plus a
    // bucket pointer.
    return values_.size() * 48 + values_.bucket_count() * 8 + too_large_.size() * 64;
}

}  // namespace tbf::solve::detail
