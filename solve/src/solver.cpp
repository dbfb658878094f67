// The solver: an explored AND/OR graph of Four File positions, two
// attractors over it, and a strategy-directed choice of what to expand next
// (docs/fourfile.md).

#include "tbforge/solve/solver.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "fortress.hpp"
#include "heuristics.hpp"
#include "packed_map.hpp"
#include "packed_position.hpp"
#include "region.hpp"
#include "tbforge/probe/strategy.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

namespace tbf::solve {

std::string_view verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::Proven: return "proven";
        case Verdict::Lost: return "lost";
        case Verdict::NotProven: break;
    }
    return "not-proven";
}

namespace {

using namespace detail;
using R = FourFile;

constexpr std::uint32_t kNone = ~std::uint32_t{0};
constexpr std::uint64_t kMaxEdges = std::uint64_t{0xFFFFFFF0};
// Tables hold at most this many units (tbgen gen --variant fourfile).
constexpr int kMaxTableUnits = 5;
constexpr std::uint64_t kInfiniteProof = 0x7FFFFFFF;
constexpr std::uint64_t kUntriedProof = 32;
constexpr std::uint64_t kSwitchMargin = 64;
// X-to-move positions a fortress closure may hold before it is given up.
constexpr std::size_t kFortressBudget = 20000;
// The same for guarded waiting: tried at nearly every X node, and a closure
// that the opponent's pieces keep open runs to its budget; most closures
// that hold are small (measured: docs/fourfile.md).
constexpr std::size_t kGuardedFortressBudget = 2000;
// Without a memory cap, the region cache holds at most 8 million positions
// and the quiet games' (larger games) 32 million; with one, each cache takes
// a quarter of it.
constexpr std::size_t kRegionCacheCap = 8000000;
constexpr std::size_t kQuietCacheCap = 32000000;
std::size_t cache_cap(std::uint64_t memory_bytes, std::size_t uncapped) {
    if (memory_bytes == 0) return uncapped;
    return static_cast<std::size_t>(memory_bytes / 4 / PackedMap<std::uint16_t>::kBytesPerPosition);
}
// The dense quiet game's bits take a quarter of the memory cap too, 2 GiB
// without one (the rooks' start with all eight pawns needs about 0.8 GiB).
std::uint64_t dense_cap(std::uint64_t memory_bytes) {
    return memory_bytes == 0 ? std::uint64_t{2} << 30 : memory_bytes / 4;
}
constexpr char kCheckpointMagic[8] = {'T', 'B', 'F', 'S', 'O', 'L', 'V', '2'};

enum class NodeStatus : std::uint8_t {
    Frontier,   // replies not generated yet: lost for X until expanded
    Expanded,   // children known
    LossX,      // X is checkmated, or a table says X loses
    Safe,       // stalemate, the opponent checkmated: the game ends, X does not lose
    TableSafe,  // a table says X does not lose; the strategy below it comes from the table
    FortressSafe,  // X waits safely and the closure holds (fortress.hpp); the strategy below it is that closure
    RegionSafe,    // safe in a region, quiet or pieces game (region.hpp); the strategy below it is that game's
};

struct Expansion {
    std::uint32_t node = kNone;
    NodeStatus status = NodeStatus::Frontier;
    std::vector<PackedPosition> children;
    std::vector<std::uint16_t> moves;
    Status error;  // ok unless the expansion failed
    // An X node searched afresh whose pawns are locked: tried as a region
    // leaf when the batch is merged (serially, so runs do not depend on the
    // thread count).
    bool region_candidate = false;
    // Likewise for a quiet game (region.hpp, RegionGame::Quiet).
    bool quiet_candidate = false;
    // Likewise for a pieces game (region.hpp, RegionGame::Pieces).
    bool pieces_candidate = false;
};

// A table that cannot answer for a position the search reached is a fault of
// the table database (exit 3), even where the prober calls the position bad.
Status table_failure(const Status& status, const Position& pos) {
    const StatusCode code = status.code() == StatusCode::InvalidArgument ? StatusCode::Corruption : status.code();
    return Status(code, to_fen(pos) + ": " + status.message());
}

Move move_from_raw(std::uint16_t raw) {
    const auto from = static_cast<Square>(raw & 63);
    const auto to = static_cast<Square>((raw >> 6) & 63);
    const int promotion = raw >> 12;
    if (promotion == 0) return Move(from, to);
    return Move(from, to, static_cast<UnitType>(promotion - 1));
}

template <class T>
std::uint64_t bytes_of(const std::vector<T>& v) {
    return v.capacity() * sizeof(T);
}

}  // namespace

struct Solver::Impl {
    Position root;
    SolveOptions options;
    Color x;

    // One entry per node.
    std::vector<PackedPosition> keys;
    std::vector<NodeStatus> status;
    std::vector<std::uint8_t> x_to_move;
    std::vector<std::uint8_t> lost;  // in the opponent's attractor to real losses
    std::vector<std::uint8_t> safe;  // outside the pessimistic attractor (once out, out for good)
    std::vector<std::uint32_t> first_edge;
    std::vector<std::uint16_t> edge_count;
    std::vector<std::uint16_t> choice;  // X nodes: index of the child X plays
    std::vector<std::uint16_t> live;    // X nodes: children not lost
    std::vector<std::uint32_t> pred_head;  // first predecessor record + 1; 0 none
    // Proof-number estimate: how many frontier positions stand between the
    // node and a closed strategy below it (sums at opponent nodes, X's
    // choice at X nodes; shared and cyclic parts approximated).
    std::vector<std::uint32_t> proof;
    // One entry per edge (CSR: a node's children are consecutive).
    std::vector<std::uint32_t> edge_child;  // kNone: X's move not tried yet
    std::vector<std::uint16_t> edge_move;
    // Predecessor records, one per edge whose child is in the graph (X's
    // untried moves cost only their 6 bytes of edge).
    std::vector<std::uint32_t> pred_parent;
    std::vector<std::uint32_t> pred_next;  // next record of the same child, + 1
    std::vector<std::uint32_t> expansion_order;
    // Open addressing: node id + 1, 0 empty.
    std::vector<std::uint32_t> slots;
    // Positions after X's move per placement of X's units (move order).
    struct PlacementHash {
        std::size_t operator()(const PackedPosition& p) const { return packed_hash(p); }
    };
    std::unordered_map<PackedPosition, std::uint32_t, PlacementHash> placements;
    RegionSolver region;
    bool use_regions = true;
    // Quiet games: a second cache, since its values are exact for another
    // game (a position safe in either game is safe in the real one).
    RegionSolver quiet;
    bool use_quiet = true;
    // Pieces games: a third cache, for the same reason.
    RegionSolver pieces;
    bool use_pieces = false;

    std::uint64_t lost_count = 0;
    std::uint64_t fortress_leaf_count = 0;
    std::uint64_t nodes_at_attractor = 0;
    std::uint64_t resumed = 0;
    std::chrono::steady_clock::time_point start;
    bool solved = false;
    bool interrupted_while_resuming = false;

    Impl(const Position& r, SolveOptions o)
        : root(r),
          options(std::move(o)),
          x(options.side),
          region(options.side, static_cast<std::size_t>(options.region_budget),
                 cache_cap(options.memory_bytes, kRegionCacheCap), options.region_capture_depth),
          use_regions(options.region_leaves),
          // Depth 0: a capture ends a quiet game (a loss for X if the
          // opponent's); following captures into games of their own would
          // multiply whole games. Depth 1: a start that game calls unsafe is
          // tried again with exchanges, which stay in the one game.
          quiet(options.side, static_cast<std::size_t>(options.quiet_budget),
                cache_cap(options.memory_bytes, kQuietCacheCap), options.quiet_exchanges ? 1 : 0,
                RegionGame::Quiet),
          use_quiet(options.quiet_budget > 0),
          pieces(options.side, static_cast<std::size_t>(options.pieces_budget),
                 cache_cap(options.memory_bytes, kQuietCacheCap), options.pieces_capture_depth, RegionGame::Pieces),
          use_pieces(options.pieces_budget > 0) {
        if (options.dense_quiet) {
            quiet.enable_dense(dense_cap(options.memory_bytes), options.threads,
                               options.dense_conversions ? DenseRules::Conversions : DenseRules::Quiet);
        }
        region.set_interrupt(options.interrupt);
        quiet.set_interrupt(options.interrupt);
        pieces.set_interrupt(options.interrupt);
    }

    std::uint64_t memory_bytes() const {
        return bytes_of(keys) + bytes_of(status) + bytes_of(x_to_move) + bytes_of(lost) +
               bytes_of(safe) + bytes_of(first_edge) + bytes_of(edge_count) + bytes_of(choice) +
               bytes_of(live) + bytes_of(pred_head) + bytes_of(proof) + bytes_of(edge_child) +
               bytes_of(pred_parent) + bytes_of(pred_next) + bytes_of(edge_move) +
               bytes_of(expansion_order) + bytes_of(slots) + placements.size() * 48 + region.memory_bytes() +
               quiet.memory_bytes() + pieces.memory_bytes();
    }

    // The waiting policy that closes `pos` (X to move) as a fortress leaf:
    // out of reach first, then (if enabled) guarded.
    std::optional<WaitingPolicy> fortress_policy(const Position& pos) const {
        if (auto policy = find_fortress(pos, kFortressBudget)) return policy;
        if (options.guarded_fortresses) return find_guarded_fortress(pos, kGuardedFortressBudget);
        return std::nullopt;
    }

    // ---- The position index ----

    std::uint32_t find(const PackedPosition& key) const {
        if (slots.empty()) return kNone;
        const std::uint64_t mask = slots.size() - 1;
        for (std::uint64_t i = packed_hash(key) & mask;; i = (i + 1) & mask) {
            const std::uint32_t s = slots[i];
            if (s == 0) return kNone;
            if (keys[s - 1] == key) return s - 1;
        }
    }

    void place(std::uint32_t id) {
        const std::uint64_t mask = slots.size() - 1;
        std::uint64_t i = packed_hash(keys[id]) & mask;
        while (slots[i] != 0) i = (i + 1) & mask;
        slots[i] = id + 1;
    }

    std::uint32_t find_or_add(const PackedPosition& key) {
        if (const std::uint32_t id = find(key); id != kNone) return id;
        if ((keys.size() + 1) * 2 > slots.size()) {
            slots.assign(std::max<std::size_t>(1024, slots.size() * 2), 0);
            for (std::uint32_t id = 0; id < keys.size(); ++id) place(id);
        }
        const auto id = static_cast<std::uint32_t>(keys.size());
        keys.push_back(key);
        status.push_back(NodeStatus::Frontier);
        x_to_move.push_back(packed_side(key) == x ? 1 : 0);
        lost.push_back(0);
        safe.push_back(0);
        first_edge.push_back(0);
        edge_count.push_back(0);
        choice.push_back(0);
        live.push_back(0);
        pred_head.push_back(0);
        proof.push_back(1);
        place(id);
        if (!x_to_move.back()) ++placements[placement_of(key, x)];
        return id;
    }

    Known known(const Position& pos) const {
        const std::uint32_t id = find(pack(pos));
        // A position a region exploration proved safe is as good as one
        // outside the attractor (its region strategy is stored with it).
        if (use_regions && (id == kNone || !lost[id]) && region.known(pos) == true) return Known::Safe;
        if (use_quiet && (id == kNone || !lost[id]) && quiet.known(pos) == true) return Known::Safe;
        if (use_pieces && (id == kNone || !lost[id]) && pieces.known(pos) == true) return Known::Safe;
        if (id == kNone) return Known::Unknown;
        if (lost[id]) return Known::Lost;
        if (safe[id]) return Known::Safe;
        if (status[id] == NodeStatus::Expanded) return Known::Expanded;
        return Known::Open;
    }

    // ---- Expansion ----

    // Reads the graph only; safe to run on many nodes at once.
    Expansion expand(std::uint32_t node, const std::vector<std::uint16_t>* given) const {
        Expansion out;
        out.node = node;
        const Position pos = unpack(keys[node]);
        const bool x_moves = pos.side_to_move() == x;
        if (options.tables != nullptr && popcount(pos.occupied()) <= kMaxTableUnits) {
            auto value = options.tables->probe(VariantId::FourFile, pos);
            if (value.ok()) {
                const Wdl for_x = x_moves ? value->wdl : -value->wdl;
                out.status = for_x == Wdl::Loss ? NodeStatus::LossX : NodeStatus::TableSafe;
                return out;
            }
            if (value.status().code() != StatusCode::NotFound) {
                out.error = table_failure(value.status(), pos);
                return out;
            }
        }
        MoveList moves;
        generate_legal<R>(pos, moves);
        if (moves.empty()) {
            out.status = in_check<R>(pos) && x_moves ? NodeStatus::LossX : NodeStatus::Safe;
            return out;
        }
        // A checkpoint lists the moves of the X nodes it expanded, so a
        // replay never turns one of them into a fortress leaf.
        if (x_moves && given == nullptr && fortress_policy(pos)) {
            out.status = NodeStatus::FortressSafe;
            return out;
        }
        out.status = NodeStatus::Expanded;
        out.region_candidate = x_moves && given == nullptr && use_regions && region.applies(pos);
        out.quiet_candidate = x_moves && given == nullptr && use_quiet && quiet.applies(pos);
        out.pieces_candidate = x_moves && given == nullptr && use_pieces && !out.region_candidate && pieces.applies(pos);
        if (x_moves && given != nullptr) {
            for (std::uint16_t raw : *given) {
                const Move m = move_from_raw(raw);
                if (std::find(moves.begin(), moves.end(), m) == moves.end()) {
                    out.error = corruption("checkpoint: move " + to_uci(m) + " is not legal in " + to_fen(pos));
                    return out;
                }
                out.moves.push_back(raw);
            }
            if (out.moves.size() != moves.size()) {
                out.error = corruption("checkpoint: wrong move count for " + to_fen(pos));
                return out;
            }
        } else if (x_moves) {
            const auto ordered = order_moves(
                pos, moves, [this](const Position& p) { return known(p); },
                [this](const Position& p) -> std::uint32_t {
                    const auto it = placements.find(placement_of(pack(p), x));
                    return it == placements.end() ? 0 : it->second;
                },
                MateSearch{options.mate_check_moves, options.mate_threats});
            for (const ScoredMove& s : ordered) out.moves.push_back(s.move.raw());
        } else {
            for (Move m : moves) out.moves.push_back(m.raw());
        }
        out.children.reserve(out.moves.size());
        for (std::uint16_t raw : out.moves) out.children.push_back(pack(pos.after(move_from_raw(raw))));
        return out;
    }

    void mark_lost(std::uint32_t first) {
        std::vector<std::uint32_t> queue{first};
        lost[first] = 1;
        ++lost_count;
        while (!queue.empty()) {
            const std::uint32_t v = queue.back();
            queue.pop_back();
            for (std::uint32_t e = pred_head[v]; e != 0; e = pred_next[e - 1]) {
                const std::uint32_t p = pred_parent[e - 1];
                if (lost[p]) continue;
                if (x_to_move[p] && --live[p] != 0) continue;
                lost[p] = 1;
                ++lost_count;
                queue.push_back(p);
            }
        }
    }

    bool leaf_games_interrupted() const {
        return region.interrupted() || quiet.interrupted() || pieces.interrupted();
    }

    // Merges one expansion into the graph. False if a leaf game was stopped
    // by the interrupt flag: the node then stays on the frontier, untouched,
    // so that the checkpoint resumes it as if it had never been expanded.
    bool apply(const Expansion& e) {
        const std::uint32_t n = e.node;
        bool region_safe = false;
        if (e.region_candidate || e.quiet_candidate || e.pieces_candidate) {
            const Position pos = unpack(keys[n]);
            region_safe = (e.region_candidate && region.solve(pos)) ||
                          (e.quiet_candidate && quiet.applies(pos) && quiet.solve(pos)) ||
                          (e.pieces_candidate && pieces.applies(pos) && pieces.solve(pos));
            if (leaf_games_interrupted()) return false;
        }
        status[n] = e.status;
        if (e.status == NodeStatus::FortressSafe) ++fortress_leaf_count;
        if (region_safe) {
            status[n] = NodeStatus::RegionSafe;
            expansion_order.push_back(n);
            return true;
        }
        expansion_order.push_back(n);
        if (e.status == NodeStatus::LossX) {
            mark_lost(n);
            return true;
        }
        if (e.status != NodeStatus::Expanded) return true;
        first_edge[n] = static_cast<std::uint32_t>(edge_child.size());
        edge_count[n] = static_cast<std::uint16_t>(e.children.size());
        std::uint16_t live_children = 0;
        bool any_lost = false;
        int first_live = -1;
        const bool lazy = x_to_move[n] != 0;
        for (std::size_t i = 0; i < e.children.size(); ++i) {
            // X's children enter the graph only when X tries them (or when
            // they are there already): most of X's moves are never needed.
            const std::uint32_t c = lazy ? find(e.children[i]) : find_or_add(e.children[i]);
            const auto edge = static_cast<std::uint32_t>(edge_child.size());
            edge_child.push_back(c);
            edge_move.push_back(e.moves[i]);
            if (c != kNone) link(n, edge);
            if (c != kNone && lost[c]) {
                any_lost = true;
            } else {
                ++live_children;
                if (first_live < 0) first_live = static_cast<int>(i);
            }
        }
        if (x_to_move[n]) {
            live[n] = live_children;
            choice[n] = static_cast<std::uint16_t>(std::max(first_live, 0));
            if (live_children == 0) {
                mark_lost(n);
            } else {
                materialize(n, choice[n]);
            }
        } else if (any_lost) {
            mark_lost(n);
        }
        return true;
    }

    void link(std::uint32_t parent, std::uint32_t edge) {
        const std::uint32_t c = edge_child[edge];
        pred_parent.push_back(parent);
        pred_next.push_back(pred_head[c]);
        pred_head[c] = static_cast<std::uint32_t>(pred_parent.size());
    }

    // Brings the child of X's move `index` at `parent` into the graph.
    std::uint32_t materialize(std::uint32_t parent, std::uint32_t index) {
        const std::uint32_t edge = first_edge[parent] + index;
        if (edge_child[edge] != kNone) return edge_child[edge];
        const Position pos = unpack(keys[parent]);
        const std::uint32_t c = find_or_add(pack(pos.after(move_from_raw(edge_move[edge]))));
        edge_child[edge] = c;
        link(parent, edge);
        if (lost[c] && !lost[parent] && --live[parent] == 0) mark_lost(parent);
        return c;
    }

    // ---- The pessimistic attractor ----

    // Nodes from which the opponent forces play into a loss for X or into
    // the frontier. Everything else is a trap for the opponent: X has a
    // move staying outside, the opponent has none leaving it.
    void compute_attractor() {
        const std::size_t n = keys.size();
        std::vector<std::uint8_t> in(n, 0);
        std::vector<std::uint16_t> remaining(n, 0);
        std::vector<std::uint32_t> queue;
        for (std::uint32_t v = 0; v < n; ++v) {
            if (status[v] == NodeStatus::Frontier || status[v] == NodeStatus::LossX) {
                in[v] = 1;
                queue.push_back(v);
            } else if (status[v] == NodeStatus::Expanded && x_to_move[v]) {
                // Children not in the graph count as frontier: inside.
                for (std::uint32_t i = 0; i < edge_count[v]; ++i) {
                    remaining[v] += edge_child[first_edge[v] + i] != kNone ? 1 : 0;
                }
                if (remaining[v] == 0) {
                    in[v] = 1;
                    queue.push_back(v);
                }
            }
        }
        while (!queue.empty()) {
            const std::uint32_t v = queue.back();
            queue.pop_back();
            for (std::uint32_t e = pred_head[v]; e != 0; e = pred_next[e - 1]) {
                const std::uint32_t p = pred_parent[e - 1];
                if (in[p]) continue;
                if (x_to_move[p] && --remaining[p] != 0) continue;
                in[p] = 1;
                queue.push_back(p);
            }
        }
        for (std::uint32_t v = 0; v < n; ++v) safe[v] = in[v] ? 0 : 1;
        nodes_at_attractor = n;
    }

    // ---- The candidate strategy ----

    // X's child at an expanded X node: a child known safe if there is one,
    // else the current choice unless proven lost, else the next one in
    // move order that is not.
    std::uint32_t pick(std::uint32_t v) {
        const std::uint32_t first = first_edge[v];
        const std::uint32_t count = edge_count[v];
        std::uint32_t c = materialize(v, choice[v]);
        if (safe[c]) return c;
        for (std::uint32_t i = 0; i < count; ++i) {
            const std::uint32_t other = edge_child[first + i];
            if (other != kNone && safe[other]) {
                choice[v] = static_cast<std::uint16_t>(i);
                return other;
            }
        }
        if (!lost[c]) {
            if (!options.proof_number_switching) return c;
            // Leave a move whose subtree has grown much larger than the
            // cheapest alternative's (an untried move is estimated at
            // kUntriedProof): effort goes where a proof looks nearest.
            // Each move already tried here makes the next untried one look
            // four times dearer: X tries a few plans, not all of them.
            std::uint32_t tried = 0;
            for (std::uint32_t i = 0; i < count; ++i) tried += edge_child[first + i] != kNone ? 1 : 0;
            const std::uint64_t untried = kUntriedProof << (2 * std::min<std::uint32_t>(tried - 1, 12));
            std::uint32_t best = kNone;
            std::uint64_t best_proof = ~std::uint64_t{0};
            for (std::uint32_t i = 0; i < count; ++i) {
                if (i == choice[v]) continue;
                const std::uint32_t other = edge_child[first + i];
                if (other != kNone && lost[other]) continue;
                const std::uint64_t estimate = other == kNone ? untried : proof[other];
                if (estimate < best_proof) {
                    best_proof = estimate;
                    best = i;
                }
            }
            if (best == kNone || proof[c] <= 2 * best_proof + kSwitchMargin) return c;
            choice[v] = static_cast<std::uint16_t>(best);
            return materialize(v, best);
        }
        for (std::uint32_t i = 0; i < count; ++i) {
            const std::uint32_t other = edge_child[first + i];
            if (other == kNone || !lost[other]) {
                choice[v] = static_cast<std::uint16_t>(i);
                return materialize(v, i);
            }
        }
        return c;
    }

    // Breadth first from the root under the candidate strategy: the open
    // nodes it reaches, shallowest first. `parents` (optional) records how
    // each node was first reached.
    std::vector<std::uint32_t> open_nodes(std::uint64_t& reached,
                                          std::vector<std::uint32_t>* parents) {
        std::vector<std::uint8_t> seen(keys.size(), 0);
        if (parents) parents->assign(keys.size(), kNone);
        std::vector<std::uint32_t> queue{0}, open;
        seen[0] = 1;
        for (std::size_t head = 0; head < queue.size(); ++head) {
            const std::uint32_t v = queue[head];
            if (safe[v]) continue;
            if (status[v] == NodeStatus::Frontier) {
                open.push_back(v);
                continue;
            }
            if (status[v] != NodeStatus::Expanded) continue;
            const auto visit = [&](std::uint32_t c) {
                if (c >= seen.size()) {
                    seen.resize(keys.size(), 0);
                    if (parents) parents->resize(keys.size(), kNone);
                }
                if (seen[c]) return;
                seen[c] = 1;
                if (parents) (*parents)[c] = v;
                queue.push_back(c);
            };
            if (x_to_move[v]) {
                visit(pick(v));
            } else {
                for (std::uint32_t i = 0; i < edge_count[v]; ++i) visit(edge_child[first_edge[v] + i]);
            }
        }
        reached = queue.size();
        // Proof numbers, deepest first.
        for (std::size_t k = queue.size(); k-- > 0;) {
            const std::uint32_t v = queue[k];
            std::uint64_t value = 1;
            if (safe[v]) {
                value = 0;
            } else if (lost[v]) {
                value = kInfiniteProof;
            } else if (status[v] == NodeStatus::Expanded) {
                const std::uint32_t first = first_edge[v];
                if (x_to_move[v]) {
                    value = proof[edge_child[first + choice[v]]];
                } else {
                    value = 0;
                    for (std::uint32_t i = 0; i < edge_count[v]; ++i) value += proof[edge_child[first + i]];
                }
            } else if (status[v] != NodeStatus::Frontier) {
                value = 0;  // a game end or table leaf that is not a loss
            }
            proof[v] = static_cast<std::uint32_t>(std::min<std::uint64_t>(value, kInfiniteProof));
        }
        return open;
    }

    std::string line_to(std::uint32_t open, const std::vector<std::uint32_t>& parents) const {
        std::vector<std::string> moves;
        std::uint32_t v = open;
        while (v != 0 && parents[v] != kNone) {
            const std::uint32_t p = parents[v];
            for (std::uint32_t i = 0; i < edge_count[p]; ++i) {
                if (edge_child[first_edge[p] + i] == v) {
                    moves.push_back(to_uci(move_from_raw(edge_move[first_edge[p] + i])));
                    break;
                }
            }
            v = p;
        }
        std::string text;
        for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
            if (!text.empty()) text += ' ';
            text += *it;
        }
        return text + " -> " + to_fen(unpack(keys[open]));
    }

    // ---- Checkpoints ----

    Status write_checkpoint() const {
        if (options.checkpoint_path.empty()) return {};
        const std::string tmp = options.checkpoint_path + ".tmp";
        std::FILE* f = std::fopen(tmp.c_str(), "wb");
        if (!f) return io_error("cannot write checkpoint " + tmp + ": " + std::strerror(errno));
        bool ok = true;
        const auto put = [&](const void* p, std::size_t n) { ok = ok && std::fwrite(p, 1, n, f) == n; };
        const std::uint8_t side = x == Color::White ? 0 : 1;
        const std::uint8_t tables = options.tables != nullptr ? 1 : 0;
        const std::uint64_t count = expansion_order.size();
        put(kCheckpointMagic, 8);
        put(&side, 1);
        put(&tables, 1);
        put(&keys[0], sizeof(PackedPosition));
        put(&count, 8);
        for (std::uint32_t v : expansion_order) {
            put(&keys[v], sizeof(PackedPosition));
            const bool listed = x_to_move[v] && status[v] == NodeStatus::Expanded;
            const std::uint16_t chosen = listed ? choice[v] : 0;
            const std::uint16_t n = listed ? edge_count[v] : 0;
            put(&chosen, 2);
            put(&n, 2);
            if (n) put(&edge_move[first_edge[v]], 2 * std::size_t{n});
            // Which of X's children are in the graph (bit i: move i).
            std::vector<std::uint8_t> present((n + 7) / 8, 0);
            for (std::uint16_t i = 0; i < n; ++i) {
                if (edge_child[first_edge[v] + i] != kNone) present[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
            }
            if (n) put(present.data(), present.size());
        }
        put(&count, 8);
        ok = ok && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
        ok = (std::fclose(f) == 0) && ok;
        if (!ok || std::rename(tmp.c_str(), options.checkpoint_path.c_str()) != 0) {
            return io_error("cannot write checkpoint " + options.checkpoint_path + ": " + std::strerror(errno));
        }
        return {};
    }

    Status load_checkpoint() {
        const std::string& path = options.checkpoint_path;
        if (path.empty() || !std::filesystem::exists(path)) return {};
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return io_error("cannot read checkpoint " + path + ": " + std::strerror(errno));
        bool ok = true;
        const auto get = [&](void* p, std::size_t n) { ok = ok && std::fread(p, 1, n, f) == n; };
        char magic[8];
        std::uint8_t side = 0, tables = 0;
        PackedPosition root_key;
        std::uint64_t count = 0;
        get(magic, 8);
        get(&side, 1);
        get(&tables, 1);
        get(&root_key, sizeof root_key);
        get(&count, 8);
        const auto fail = [&](StatusCode code, const std::string& why) {
            std::fclose(f);
            return Status(code, "checkpoint " + path + ": " + why);
        };
        if (!ok || std::memcmp(magic, kCheckpointMagic, 7) != 0) {
            return fail(StatusCode::Corruption, "not a solver checkpoint");
        }
        if (magic[7] != kCheckpointMagic[7]) {
            return fail(StatusCode::UnsupportedVersion,
                        "written by another version of tbgen solve; remove it to start over");
        }
        // A checkpoint of another search is a mistake in the command, not damage.
        if (!(root_key == keys[0]) || side != (x == Color::White ? 0 : 1)) {
            return fail(StatusCode::InvalidArgument,
                        "it belongs to another root or side (remove it or use another --work)");
        }
        if (tables != (options.tables != nullptr ? 1 : 0)) {
            return fail(StatusCode::InvalidArgument, "it was written with" + std::string(tables ? "" : "out") +
                                                         " --tables; run with the same options");
        }
        std::vector<std::pair<std::uint32_t, std::uint16_t>> choices;
        std::vector<std::uint16_t> moves;
        for (std::uint64_t i = 0; i < count; ++i) {
            PackedPosition key;
            std::uint16_t chosen = 0, n = 0;
            get(&key, sizeof key);
            get(&chosen, 2);
            get(&n, 2);
            moves.resize(n);
            std::vector<std::uint8_t> present((n + 7) / 8, 0);
            if (n) get(moves.data(), 2 * std::size_t{n});
            if (n) get(present.data(), present.size());
            if (!ok) return fail(StatusCode::Corruption, "truncated");
            const std::uint32_t id = find(key);
            if (id == kNone || status[id] != NodeStatus::Frontier) {
                return fail(StatusCode::Corruption, "damaged (record " + std::to_string(i) + ")");
            }
            Expansion e = expand(id, n ? &moves : nullptr);
            if (!e.error.ok()) return fail(e.error.code(), e.error.message());
            if (!apply(e)) {
                // Stopped while resuming: the checkpoint on disk stays as it
                // is (run() writes none from this partial graph).
                interrupted_while_resuming = true;
                std::fclose(f);
                return {};
            }
            if (n && status[id] == NodeStatus::Expanded) {
                for (std::uint16_t j = 0; j < n; ++j) {
                    if (present[j / 8] >> (j % 8) & 1) materialize(id, j);
                }
                choices.emplace_back(id, chosen);
            }
        }
        std::uint64_t trailer = 0;
        get(&trailer, 8);
        if (!ok || trailer != count) return fail(StatusCode::Corruption, "truncated");
        std::fclose(f);
        for (auto [id, chosen] : choices) {
            if (chosen < edge_count[id]) choice[id] = chosen;
        }
        resumed = count;
        return {};
    }

    SolveProgress progress_now(std::uint64_t open, std::uint64_t reached) const {
        SolveProgress p;
        p.nodes = keys.size();
        p.expanded = expansion_order.size();
        p.open = open;
        p.reachable = reached;
        p.lost = lost_count;
        p.region_explorations = region.explorations();
        p.region_positions = region.cached();
        p.fortress_leaves = fortress_leaf_count;
        p.region_safe = region.safe_starts();
        p.region_given_up = region.given_up();
        p.quiet_explorations = quiet.explorations();
        p.quiet_positions = quiet.cached();
        p.quiet_cut = quiet.cut_explorations();
        p.quiet_cut_safe = quiet.cut_successes();
        p.quiet_cut_kept = quiet.kept_beside_lost_starts();
        if (const auto* dense = quiet.dense()) {
            p.quiet_dense_structures = dense->structures_solved();
            p.quiet_dense_positions = dense->positions_solved();
        }
        p.pieces_explorations = pieces.explorations();
        p.pieces_positions = pieces.cached();
        p.pieces_cut = pieces.cut_explorations();
        p.pieces_safe = pieces.safe_starts();
        p.memory_bytes = memory_bytes();
        p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return p;
    }

    Result<SolveSummary> run() {
        start = std::chrono::steady_clock::now();
        if (!keys.empty()) return invalid_argument("a solver runs once");
        find_or_add(pack(root));
        if (Status loaded = load_checkpoint(); !loaded.ok()) return loaded;
        if (interrupted_while_resuming) {
            SolveSummary stopped;
            stopped.verdict = Verdict::NotProven;
            stopped.reason = "interrupted while resuming (the checkpoint is unchanged)";
            stopped.final = progress_now(0, 0);
            return stopped;
        }
        const int threads = std::max(1, options.threads);
        auto last_progress = start;
        auto last_checkpoint = start;
        SolveSummary summary;
        summary.resumed_nodes = resumed;
        std::uint64_t reached = 0;
        const auto stop = [&](Verdict verdict, std::string reason, std::uint64_t open)
            -> Result<SolveSummary> {
            summary.verdict = verdict;
            summary.reason = std::move(reason);
            summary.final = progress_now(open, reached);
            if (verdict == Verdict::NotProven) {
                std::vector<std::uint32_t> parents;
                std::uint64_t r = 0;
                const auto nodes = open_nodes(r, &parents);
                summary.final.open = nodes.size();
                summary.final.reachable = r;
                for (std::size_t i = 0; i < nodes.size() && i < 5; ++i) {
                    summary.open_lines.push_back(line_to(nodes[i], parents));
                }
                if (Status written = write_checkpoint(); !written.ok()) return written;
            } else if (!options.checkpoint_path.empty()) {
                std::error_code ignored;
                std::filesystem::remove(options.checkpoint_path, ignored);
            }
            return summary;
        };
        while (true) {
            if (lost[0]) return stop(Verdict::Lost, "the opponent forces checkmate", 0);
            if (options.interrupt && options.interrupt->load()) {
                return stop(Verdict::NotProven, "interrupted", 0);
            }
            if (keys.size() >= 2 * nodes_at_attractor + 4096) compute_attractor();
            std::vector<std::uint32_t> open = open_nodes(reached, nullptr);
            if (open.empty()) {
                compute_attractor();
                if (safe[0]) {
                    solved = true;
                    return stop(Verdict::Proven, "closed strategy", 0);
                }
                return Status(StatusCode::Internal, "internal error: no open position but the root is not safe");
            }
            if (options.max_nodes && keys.size() >= options.max_nodes) {
                return stop(Verdict::NotProven, "node budget reached", open.size());
            }
            if (options.memory_bytes && memory_bytes() >= options.memory_bytes) {
                return stop(Verdict::NotProven, "memory cap reached", open.size());
            }
            if (edge_child.size() >= kMaxEdges - 1024 * 1024) {
                return stop(Verdict::NotProven, "edge index full", open.size());
            }
            // A tenth of the graph per round, and never so many that the
            // new edges (at most a few hundred per position) could overflow
            // the 32-bit edge index.
            const std::size_t limit = std::min<std::size_t>(
                std::max<std::size_t>(256, static_cast<std::size_t>(keys.size() / 10)),
                static_cast<std::size_t>((kMaxEdges - edge_child.size()) / 512));
            const std::uint64_t open_total = open.size();
            if (open.size() > limit) open.resize(limit);
            std::vector<Expansion> batch(open.size());
            const auto n = static_cast<std::int64_t>(open.size());
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
            for (std::int64_t i = 0; i < n; ++i) {
                batch[static_cast<std::size_t>(i)] = expand(open[static_cast<std::size_t>(i)], nullptr);
            }
            for (const Expansion& e : batch) {
                if (!e.error.ok()) return e.error;
                // Stopped: the rest of the batch stays on the frontier.
                if (options.interrupt && options.interrupt->load()) break;
                if (!apply(e)) break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (options.progress &&
                std::chrono::duration<double>(now - last_progress).count() >= options.progress_seconds) {
                options.progress(progress_now(open_total, reached));
                last_progress = now;
            }
            if (!options.checkpoint_path.empty() &&
                std::chrono::duration<double>(now - last_checkpoint).count() >= options.checkpoint_seconds) {
                if (Status written = write_checkpoint(); !written.ok()) return written;
                last_checkpoint = std::chrono::steady_clock::now();
            }
        }
    }

    // ---- The strategy ----

    Result<std::uint64_t> entries(
        const std::function<void(const Position&, Move)>& visit) const {
        std::uint64_t count = 0;
        std::vector<std::uint8_t> seen(keys.size(), 0);
        std::vector<std::uint32_t> queue{0};
        std::vector<Position> table_leaves, fortress_leaves, region_leaves;
        seen[0] = 1;
        for (std::size_t head = 0; head < queue.size(); ++head) {
            const std::uint32_t v = queue[head];
            if (status[v] == NodeStatus::TableSafe) {
                table_leaves.push_back(unpack(keys[v]));
                continue;
            }
            if (status[v] == NodeStatus::FortressSafe) {
                fortress_leaves.push_back(unpack(keys[v]));
                continue;
            }
            if (status[v] == NodeStatus::RegionSafe) {
                region_leaves.push_back(unpack(keys[v]));
                continue;
            }
            if (status[v] != NodeStatus::Expanded) continue;
            const auto enqueue = [&](std::uint32_t c) {
                if (!seen[c]) {
                    seen[c] = 1;
                    queue.push_back(c);
                }
            };
            const std::uint32_t first = first_edge[v];
            if (x_to_move[v]) {
                std::uint32_t at = choice[v];
                const auto safe_edge = [&](std::uint32_t i) {
                    return edge_child[first + i] != kNone && safe[edge_child[first + i]];
                };
                if (!safe_edge(at)) {
                    for (at = 0; at < edge_count[v] && !safe_edge(at); ++at) {
                    }
                }
                visit(unpack(keys[v]), move_from_raw(edge_move[first + at]));
                ++count;
                enqueue(edge_child[first + at]);
            } else {
                for (std::uint32_t i = 0; i < edge_count[v]; ++i) enqueue(edge_child[first + i]);
            }
        }
        // Below the fortress leaves: the shuffle's closure, each position
        // once (a position another leaf's closure or the graph already
        // answers is not followed again: its own answer is closed too).
        struct KeyHash {
            std::size_t operator()(const PackedPosition& p) const { return packed_hash(p); }
        };
        std::unordered_set<PackedPosition, KeyHash> fortress_seen;
        const auto graph_entry = [&](const Position& p) {
            const std::uint32_t id = find(pack(p));
            return id != kNone && seen[id] && status[id] == NodeStatus::Expanded;
        };
        for (const Position& leaf : fortress_leaves) {
            const auto policy = fortress_policy(leaf);
            if (!policy) return Status(StatusCode::Internal, "fortress leaf no longer closes: " + to_fen(leaf));
            if (!fortress_seen.insert(pack(leaf)).second) continue;
            const bool closed = follow_fortress(
                leaf, *policy, kFortressBudget,
                [&](const Position& p) { return graph_entry(p) || !fortress_seen.insert(pack(p)).second; },
                [&](const Position& p, Move m) {
                    visit(p, m);
                    ++count;
                });
            if (!closed) return Status(StatusCode::Internal, "fortress closure failed at " + to_fen(leaf));
        }
        // Below the region leaves: the region's own moves, every reply
        // followed (a reply the region game allows never leaves it).
        std::unordered_set<PackedPosition, KeyHash> region_seen;
        {
            std::deque<Position> pending;
            MoveList replies;
            const auto discover = [&](const Position& p) {
                const PackedPosition key = pack(p);
                if (graph_entry(p) || fortress_seen.count(key)) return;
                if (region_seen.insert(key).second) pending.push_back(p);
            };
            for (const Position& leaf : region_leaves) discover(leaf);
            while (!pending.empty()) {
                const Position p = pending.front();
                pending.pop_front();
                // A position safe in the locked game stays with it (its
                // replies are safe there too); the others are the quiet
                // game's.
                auto m = region.move_at(p);
                if (!m) m = quiet.move_at(p);
                if (!m) m = pieces.move_at(p);
                if (!m) return Status(StatusCode::Internal, "region strategy has no move at " + to_fen(p));
                visit(p, *m);
                ++count;
                const Position after = p.after(*m);
                generate_legal<R>(after, replies);
                for (Move r : replies) {
                    const Position next = after.after(r);
                    if (!has_legal_move<R>(next)) continue;
                    discover(next);
                }
            }
        }
        if (table_leaves.empty()) return count;
        // Below the table leaves: the tables' own non-losing moves, every
        // reply followed, so the stored strategy needs no tables.
        struct Hash {
            std::size_t operator()(const PackedPosition& p) const { return packed_hash(p); }
        };
        std::unordered_set<PackedPosition, Hash> table_seen;
        std::deque<Position> pending;
        MoveList replies, next_moves;
        const auto discover_x = [&](const Position& p) {
            const PackedPosition key = pack(p);
            const std::uint32_t id = find(key);
            if (id != kNone && seen[id] && status[id] == NodeStatus::Expanded) return;  // a graph entry
            if (fortress_seen.count(key)) return;  // answered by a fortress closure
            if (region_seen.count(key)) return;    // answered by a region
            if (table_seen.insert(key).second) pending.push_back(p);
        };
        const auto follow = [&](const Position& after_x) {
            generate_legal<R>(after_x, replies);
            for (Move r : replies) {
                const Position next = after_x.after(r);
                if (!has_legal_move<R>(next)) continue;
                discover_x(next);
            }
        };
        for (const Position& leaf : table_leaves) {
            if (leaf.side_to_move() == x) {
                discover_x(leaf);
            } else {
                follow(leaf);
            }
        }
        while (!pending.empty()) {
            const Position p = pending.front();
            pending.pop_front();
            auto moves = options.tables->probe_moves(VariantId::FourFile, p);
            if (!moves.ok()) return table_failure(moves.status(), p);
            if (moves->empty() || moves->front().for_mover.wdl == Wdl::Loss) {
                return corruption("tables inconsistent: no move keeps " + to_fen(p));
            }
            const Move m = moves->front().move;
            visit(p, m);
            ++count;
            follow(p.after(m));
        }
        return count;
    }
};

Solver::Solver(const Position& root, SolveOptions options)
    : impl_(std::make_unique<Impl>(root, std::move(options))) {}
Solver::~Solver() = default;

Result<SolveSummary> Solver::run() { return impl_->run(); }

Result<std::uint64_t> Solver::for_each_entry(const std::function<void(const Position&, Move)>& visit) const {
    if (!impl_->solved) return not_found("no proven strategy to read");
    return impl_->entries(visit);
}

void Solver::for_each_expanded_x_position(const std::function<void(const Position&)>& visit) const {
    for (std::uint32_t v : impl_->expansion_order) {
        if (impl_->x_to_move[v] && impl_->status[v] == NodeStatus::Expanded) visit(unpack(impl_->keys[v]));
    }
}

std::string Solver::checkpoint_file(const std::string& work_dir, const std::string& name) {
    std::string safe_name;
    for (char c : name) {
        const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        safe_name += plain ? c : '_';
    }
    return (std::filesystem::path(work_dir) / (safe_name + ".solve")).string();
}

Result<StoreSummary> store_strategy(storage::Database& db, const Solver& solver, const Position& root,
                                    Color side, const std::string& name, bool replace,
                                    const std::string& json) {
    storage::StrategySpec spec;
    spec.name = name;
    spec.variant = std::string(variant_name(VariantId::FourFile));
    spec.side = side == Color::White ? storage::Side::White : storage::Side::Black;
    spec.kind = storage::StrategyKind::NonLoss;
    spec.roots = {to_fen(root)};
    spec.entry_encoding = std::string(storage::kPositionMoveEncoding);
    spec.json = json;
    storage::StrategyWriteOptions write_options;
    write_options.replace = replace;
    write_options.sorted_input = false;
    auto writer = db.create_strategy(spec, write_options);
    const auto storage_error = [](const Status& s) {
        return Status(s.code(), s.to_string() + (s.code() == StatusCode::AlreadyExists ? " (use --replace)" : ""));
    };
    if (!writer.ok()) return storage_error(writer.status());
    StoreSummary summary;
    Status failed;
    auto visited = solver.for_each_entry([&](const Position& pos, Move move) {
        if (!failed.ok()) return;
        const std::string key = probe::position_key(pos);
        const std::string value = probe::move_value_bytes(move);
        failed = writer->add(key, value);
        ++summary.entries;
        summary.entry_bytes += key.size() + value.size();
    });
    if (!visited.ok()) return visited.status();
    if (!failed.ok()) return storage_error(failed);
    if (auto s = writer->commit(); !s.ok()) return storage_error(s);
    return summary;
}

}  // namespace tbf::solve
