// The strategy check: stream the entries in key order, replay each stored
// move and every opponent reply with the verifier's own move generator, look
// the positions reached up by key; for a winning strategy also build the
// entry graph (by key hash) and look for a cycle.

#include "tbforge/verify/strategy.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_set>

#include "movegen.hpp"
#include "tbforge/base/release.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"
#include "tbforge/storage/position_key.hpp"

namespace tbf::verify {
namespace {

constexpr std::size_t kCycleShown = 16;  // positions of a cycle listed in a report

std::string_view color_text(Color c) { return c == Color::White ? "white" : "black"; }

std::uint8_t code_of(const Unit& u) {
    if (u.empty()) return storage::kEmptySquare;
    // Piece::King .. Piece::Pawn are 1..6; the codec's types are 0..5.
    return storage::unit_code(u.color == Color::White ? 0 : 1, static_cast<int>(u.piece) - 1);
}

// Keeps the en-passant square only where a legal move uses it, the form in
// which the generator and Board::after record positions (a FEN may name any
// possible square).
Board canonical(const Board& board) {
    if (board.ep_square() == kNoSquare) return board;
    for (const Move& m : board.legal_moves()) {
        if (m.to == board.ep_square() && board.unit_on(m.from).piece == Piece::Pawn &&
            file_of(m.from) != file_of(m.to)) {
            return board;
        }
    }
    std::array<Unit, 64> units{};
    for (int sq = 0; sq < 64; ++sq) units[static_cast<std::size_t>(sq)] = board.unit_on(sq);
    return *make_board(board.variant(), units, board.side_to_move(), kNoSquare);
}

// What a game end means for the strategy side, or "" when it is acceptable.
std::string bad_end(Outcome for_side, bool winning) {
    if (for_side == Outcome::Loss) return "loss";
    if (winning && for_side == Outcome::Draw) return "draw";
    return "";
}

Outcome flipped(Outcome o) {
    if (o == Outcome::Win) return Outcome::Loss;
    if (o == Outcome::Loss) return Outcome::Win;
    return o;
}

StrategyProblem make_problem(ProblemKind kind, std::string fen, std::string message,
                             std::string move = {}, std::string reply = {},
                             std::string reached = {}) {
    StrategyProblem p;
    p.kind = kind;
    p.fen = std::move(fen);
    p.move = std::move(move);
    p.reply = std::move(reply);
    p.reached = std::move(reached);
    p.message = std::move(message);
    return p;
}

// The result of checking one entry (or a root whose opponent moves).
struct EntryResult {
    std::uint64_t replies = 0;
    std::uint64_t problems = 0;
    std::vector<StrategyProblem> listed;
    std::vector<std::uint64_t> successors;  // key hashes of the entries reached (winning only)
    std::string database_error;
};

class Checker {
public:
    Checker(const storage::StrategyReader& reader, Variant variant, Color side, bool winning,
            std::size_t max_listed)
        : reader_(reader),
          variant_(variant),
          side_(side),
          winning_(winning),
          max_listed_(max_listed) {}

    void problem(EntryResult& r, StrategyProblem p) const {
        ++r.problems;
        if (r.listed.size() < max_listed_) r.listed.push_back(std::move(p));
    }

    // Follows every opponent reply in `child` (the opponent to move, not
    // terminal). `from` and `move` name where it came from in reports; FENs
    // are written only for problems.
    void follow_replies(const Board& child, const Board& from, const std::string& move,
                        EntryResult& r) const {
        detail::MoveList replies;
        detail::generate_legal(child, replies);
        for (const Move& reply : replies) {
            ++r.replies;
            const Board next = child.after(reply);
            const Outcome o = next.outcome();
            if (o != Outcome::NotTerminal) {
                if (const std::string end = bad_end(o, winning_); !end.empty()) {
                    problem(r, make_problem(ProblemKind::BadEnd, from.fen(),
                                            "reply " + to_uci(reply) + " ends the game in a " +
                                                end + " for " + std::string(color_text(side_)),
                                            move, to_uci(reply), next.fen()));
                }
                continue;
            }
            const std::string key = board_key(next);
            auto found = reader_.get(key);
            if (!found.ok()) {
                r.database_error = found.status().to_string();
                return;
            }
            if (!found->has_value()) {
                problem(r, make_problem(ProblemKind::Hole, from.fen(),
                                        "reply " + to_uci(reply) + " reaches " + next.fen() +
                                            ", which has no entry",
                                        move, to_uci(reply), next.fen()));
            } else if (winning_) {
                r.successors.push_back(tbf::xxh64(key));
            }
        }
    }

    EntryResult check_entry(std::string_view key, std::string_view value) const {
        EntryResult r;
        Result<Board> made = board_from_key(variant_, key);
        if (!made) {
            problem(r,
                    make_problem(ProblemKind::BadEntry, "", "bad key: " + made.status().message()));
            return r;
        }
        const Board& board = *made;
        if (board.side_to_move() != side_) {
            problem(r, make_problem(ProblemKind::BadEntry, board.fen(),
                                    std::string(color_text(board.side_to_move())) +
                                        " to move, but the strategy plays " +
                                        std::string(color_text(side_))));
            return r;
        }
        if (board_key(canonical(board)) != key) {
            problem(r, make_problem(
                           ProblemKind::BadEntry, board.fen(),
                           "the key is not in canonical form (en-passant square no capture uses)"));
            return r;
        }
        auto plain = storage::decode_move_value(value);
        if (!plain.ok()) {
            problem(r, make_problem(ProblemKind::BadEntry, board.fen(), plain.status().message()));
            return r;
        }
        Move move;
        move.from = static_cast<std::int8_t>(plain->from);
        move.to = static_cast<std::int8_t>(plain->to);
        move.promotion = plain->promotion == 0 ? Piece::None : static_cast<Piece>(plain->promotion);
        const std::string uci = to_uci(move);
        detail::MoveList legal;
        detail::generate_legal(board, legal);
        if (std::find(legal.begin(), legal.end(), move) == legal.end()) {
            problem(r, make_problem(ProblemKind::IllegalMove, board.fen(),
                                    "the stored move " + uci + " is not legal here", uci));
            return r;
        }
        const Board child = board.after(move);
        const Outcome o = child.outcome();
        if (o != Outcome::NotTerminal) {
            if (const std::string end = bad_end(flipped(o), winning_); !end.empty()) {
                problem(r, make_problem(ProblemKind::BadEnd, board.fen(),
                                        "the move " + uci + " ends the game in a " + end + " for " +
                                            std::string(color_text(side_)),
                                        uci, {}, child.fen()));
            }
            return r;
        }
        follow_replies(child, board, uci, r);
        return r;
    }

    // A root: covered by an entry, or (the opponent to move) every reply is.
    EntryResult check_root(const std::string& text) const {
        EntryResult r;
        Result<Board> made = parse_fen(variant_, text);
        if (!made) {
            problem(r, make_problem(ProblemKind::BadRoot, text,
                                    "bad root: " + made.status().message()));
            return r;
        }
        const Board root = canonical(*made);
        const std::string fen = root.fen();
        const Outcome o = root.outcome();
        if (o != Outcome::NotTerminal) {
            const Outcome for_side = root.side_to_move() == side_ ? o : flipped(o);
            if (const std::string end = bad_end(for_side, winning_); !end.empty()) {
                problem(r, make_problem(ProblemKind::BadRoot, fen,
                                        "the root is over: a " + end + " for " +
                                            std::string(color_text(side_))));
            }
            return r;
        }
        if (root.side_to_move() != side_) {
            follow_replies(root, root, "", r);
            r.successors.clear();  // roots are not entries: no edges for the cycle check
            return r;
        }
        auto found = reader_.get(board_key(root));
        if (!found.ok()) {
            r.database_error = found.status().to_string();
        } else if (!found->has_value()) {
            problem(r, make_problem(ProblemKind::BadRoot, fen, "the root has no entry"));
        }
        return r;
    }

private:
    const storage::StrategyReader& reader_;
    Variant variant_;
    Color side_;
    bool winning_;
    std::size_t max_listed_;
};

// The entry graph of a winning strategy, by rank (position in key order).
class EntryGraph {
public:
    void add_entry(std::uint64_t key_hash, std::vector<std::uint64_t> successors) {
        const auto rank = static_cast<std::uint32_t>(hashes_.size());
        hashes_.push_back({key_hash, rank});
        for (std::uint64_t s : successors) edge_hashes_.push_back(s);
        offsets_.push_back(edge_hashes_.size());
    }

    // Ranks on one cycle in order (empty if none), or an error message.
    std::vector<std::uint32_t> find_cycle(std::string& error) {
        const std::size_t n = hashes_.size();
        if (n >= UINT32_MAX) {
            error = "too many entries for the cycle check";
            return {};
        }
        std::sort(hashes_.begin(), hashes_.end());
        for (std::size_t i = 1; i < n; ++i) {
            if (hashes_[i].hash == hashes_[i - 1].hash) {
                // Two stored keys share a 64-bit hash: ranks would be ambiguous.
                error = "two entries share a key hash; the cycle check cannot run";
                return {};
            }
        }
        std::vector<std::uint32_t> targets(edge_hashes_.size());
        for (std::size_t e = 0; e < edge_hashes_.size(); ++e) {
            const auto it =
                std::lower_bound(hashes_.begin(), hashes_.end(), Node{edge_hashes_[e], 0});
            if (it == hashes_.end() || it->hash != edge_hashes_[e]) {
                error = "an entry found by key is missing from the stream";
                return {};
            }
            targets[e] = it->rank;
        }
        release_memory(edge_hashes_);
        release_memory(hashes_);

        // Kahn: strip entries no remaining entry leads to; what is left lies on
        // or behind a cycle.
        std::vector<std::uint32_t> indegree(n, 0);
        for (std::uint32_t t : targets) ++indegree[t];
        std::vector<std::uint32_t> ready;
        for (std::uint32_t v = 0; v < n; ++v) {
            if (indegree[v] == 0) ready.push_back(v);
        }
        std::size_t removed = 0;
        while (!ready.empty()) {
            const std::uint32_t v = ready.back();
            ready.pop_back();
            ++removed;
            for (std::uint64_t e = begin(v); e < offsets_[v]; ++e) {
                if (--indegree[targets[e]] == 0) ready.push_back(targets[e]);
            }
        }
        if (removed == n) return {};

        // Every remaining entry has a remaining predecessor, but walking forward
        // may reach a dead end, so search with colours (iterative DFS).
        std::vector<std::uint8_t> colour(n, 0);  // 0 new, 1 on the path, 2 done
        for (std::uint32_t start = 0; start < n; ++start) {
            if (indegree[start] == 0 || colour[start] != 0) continue;
            std::vector<std::pair<std::uint32_t, std::uint64_t>> path{{start, begin(start)}};
            colour[start] = 1;
            while (!path.empty()) {
                auto& [v, next] = path.back();
                if (next == offsets_[v]) {
                    colour[v] = 2;
                    path.pop_back();
                    continue;
                }
                const std::uint32_t w = targets[next++];
                if (colour[w] == 1) {
                    std::vector<std::uint32_t> cycle;
                    std::size_t i = path.size();
                    while (path[i - 1].first != w) --i;
                    for (; i <= path.size(); ++i) cycle.push_back(path[i - 1].first);
                    return cycle;
                }
                if (colour[w] == 0) {
                    colour[w] = 1;
                    path.emplace_back(w, begin(w));
                }
            }
        }
        error = "the cycle check found a cycle it could not trace";
        return {};
    }

private:
    struct Node {
        std::uint64_t hash;
        std::uint32_t rank;
        bool operator<(const Node& o) const { return hash < o.hash; }
    };
    [[nodiscard]] std::uint64_t begin(std::uint32_t v) const {
        return v == 0 ? 0 : offsets_[v - 1];
    }

    std::vector<Node> hashes_;
    std::vector<std::uint64_t> edge_hashes_;
    std::vector<std::uint64_t> offsets_;  // end of entry v's edges
};

}  // namespace

std::string_view problem_kind_name(ProblemKind kind) {
    switch (kind) {
        case ProblemKind::BadEntry: return "bad-entry";
        case ProblemKind::IllegalMove: return "illegal-move";
        case ProblemKind::Hole: return "hole";
        case ProblemKind::BadEnd: return "bad-end";
        case ProblemKind::BadRoot: return "bad-root";
        case ProblemKind::Cycle: return "cycle";
    }
    return "?";
}

std::string board_key(const Board& board) {
    storage::PlainPosition plain;
    for (int sq = 0; sq < 64; ++sq)
        plain.units[static_cast<std::size_t>(sq)] = code_of(board.unit_on(sq));
    plain.side_to_move = board.side_to_move() == Color::White ? 0 : 1;
    plain.ep_square = board.ep_square() == kNoSquare ? storage::kNoEpSquare
                                                     : static_cast<std::uint8_t>(board.ep_square());
    auto key = storage::encode_position_key(plain);
    // A Board holds valid units and squares by construction.
    return key.ok() ? std::move(key).value() : std::string();
}

Result<Board> board_from_key(Variant variant, std::string_view key) {
    auto plain = storage::decode_position_key(key);
    if (!plain.ok()) return plain.status();
    std::array<Unit, 64> units{};
    for (int sq = 0; sq < 64; ++sq) {
        const std::uint8_t code = plain->units[static_cast<std::size_t>(sq)];
        if (code == storage::kEmptySquare) continue;
        units[static_cast<std::size_t>(sq)] = Unit{static_cast<Piece>(((code - 1) & 7) + 1),
                                                   (code - 1) >> 3 ? Color::Black : Color::White};
    }
    const int ep = plain->ep_square == storage::kNoEpSquare ? kNoSquare : plain->ep_square;
    Result<Board> made =
        make_board(variant, units, plain->side_to_move == 0 ? Color::White : Color::Black, ep);
    if (!made) return made.status().with_context("illegal position");
    return made;
}

StrategyReport check_strategy(const std::string& db_path, std::string_view name,
                              const StrategyCheckOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    StrategyReport report;
    report.name = std::string(name);
    const auto finish = [&]() -> StrategyReport {
        report.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return report;
    };
    auto db = storage::Database::open(db_path);
    if (!db.ok()) {
        report.database_error = "cannot open database " + db_path + ": " + db.status().to_string();
        return finish();
    }
    auto reader = db->open_strategy(name);
    if (!reader.ok()) {
        report.database_error =
            reader.status().code() == StatusCode::NotFound
                ? "no strategy '" + std::string(name) + "' in database " + db_path
                : reader.status().to_string();
        return finish();
    }
    const storage::StrategySpec& spec = reader->info().spec;
    report.variant = spec.variant;
    report.side = std::string(storage::side_name(spec.side));
    report.kind = std::string(storage::strategy_kind_name(spec.kind));
    report.roots = spec.roots;
    const std::optional<Variant> variant = variant_from_name(spec.variant);
    if (!variant) {
        report.database_error =
            "strategy '" + spec.name + "' has unknown variant '" + spec.variant + "'";
        return finish();
    }
    if (spec.entry_encoding != storage::kPositionMoveEncoding) {
        report.database_error = "strategy '" + spec.name + "' has entry encoding '" +
                                spec.entry_encoding + "', expected '" +
                                std::string(storage::kPositionMoveEncoding) + "'";
        return finish();
    }
    const Color side = spec.side == storage::Side::White ? Color::White : Color::Black;
    const bool winning = spec.kind == storage::StrategyKind::Winning;
    report.cycles_checked = winning;
    const Checker checker(*reader, *variant, side, winning, options.max_listed);

    const auto merge = [&](EntryResult& r) {
        report.replies += r.replies;
        report.problems += r.problems;
        for (StrategyProblem& p : r.listed) {
            if (report.listed.size() < options.max_listed) report.listed.push_back(std::move(p));
        }
        if (report.database_error.empty() && !r.database_error.empty()) {
            report.database_error = r.database_error;
        }
    };
    for (const std::string& root : spec.roots) {
        EntryResult r = checker.check_root(root);
        merge(r);
    }

    auto iterator = reader->iterator();
    if (!iterator.ok()) {
        report.database_error = iterator.status().to_string();
        return finish();
    }
    storage::StrategyIterator& it = *iterator;
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    const std::size_t batch_size = std::max<std::size_t>(options.batch, 1);
    std::vector<std::pair<std::string, std::string>> batch;
    std::vector<EntryResult> results;
    EntryGraph graph;
    it.seek_to_first();
    while (report.database_error.empty()) {
        batch.clear();
        for (; it.valid() && batch.size() < batch_size; it.next()) {
            batch.emplace_back(std::string(it.key()), std::string(it.value()));
        }
        if (batch.empty()) break;
        results.assign(batch.size(), EntryResult{});
        const auto n = static_cast<std::int64_t>(batch.size());
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
        for (std::int64_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            results[k] = checker.check_entry(batch[k].first, batch[k].second);
        }
        // In key order, so the report does not depend on the threads.
        for (std::size_t k = 0; k < batch.size(); ++k) {
            merge(results[k]);
            if (winning)
                graph.add_entry(tbf::xxh64(batch[k].first), std::move(results[k].successors));
        }
        report.entries += batch.size();
        if (options.progress) options.progress(report.entries);
    }
    if (report.database_error.empty() && !it.status().ok()) {
        report.database_error = it.status().to_string();
    }
    if (!report.database_error.empty() || !winning) return finish();

    std::string error;
    const std::vector<std::uint32_t> cycle = graph.find_cycle(error);
    if (!error.empty()) {
        report.database_error = error;
        return finish();
    }
    if (cycle.empty()) return finish();
    // The cycle's positions by a second pass over the entries (only on failure).
    std::vector<std::uint32_t> wanted(
        cycle.begin(),
        cycle.begin() + static_cast<std::ptrdiff_t>(std::min(cycle.size(), kCycleShown)));
    std::vector<std::string> fens(wanted.size());
    std::uint32_t rank = 0;
    for (it.seek_to_first(); it.valid(); it.next(), ++rank) {
        for (std::size_t i = 0; i < wanted.size(); ++i) {
            if (wanted[i] == rank) fens[i] = board_from_key(*variant, it.key())->fen();
        }
    }
    StrategyProblem p;
    p.kind = ProblemKind::Cycle;
    p.fen = fens.front();
    p.cycle = fens;
    p.message = "a cycle of " + std::to_string(cycle.size()) +
                " entries: the winning strategy can be played forever";
    ++report.problems;
    if (report.listed.size() < options.max_listed) {
        report.listed.push_back(std::move(p));
    } else if (options.max_listed > 0) {
        report.listed.back() = std::move(p);  // a cycle is always shown
    }
    return finish();
}

}  // namespace tbf::verify
