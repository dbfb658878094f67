// Strategy extraction from tables and import from text (docs/strategy.md).

#include "tbforge/gen/strategy.hpp"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <istream>
#include <unordered_map>
#include <unordered_set>

#include "tbforge/base/json.hpp"
#include "tbforge/probe/strategy.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "strategy_line.hpp"

namespace tbf::gen {
namespace {

// Positions expanded per parallel batch: large enough to keep the threads
// busy, small enough that a batch's successor keys stay a few megabytes.
constexpr std::size_t kBatch = 4096;

Status from_probe(const Status& s, const Position& pos) {
    return {s.code(), to_fen(pos) + ": " + s.message()};
}

Status from_storage(const Status& s) {
    std::string message = s.to_string();
    if (s.code() == StatusCode::AlreadyExists) message += " (use --replace)";
    return {s.code(), std::move(message)};
}

storage::Side to_side(Color c) {
    return c == Color::White ? storage::Side::White : storage::Side::Black;
}

// What expanding one position where the strategy side moves produced.
struct Expansion {
    std::string value;              // the chosen move, encoded
    std::vector<std::string> next;  // keys of the positions where the side moves next
    std::uint64_t replies = 0;
    std::optional<Status> error;
};

// A terminal position reached by the strategy must not be a loss for the side
// (a win, for a winning strategy); the tables promise it, this checks it.
template <Ruleset R>
std::optional<Status> check_terminal(const Position& pos, Color side,
                                            storage::StrategyKind kind) {
    const auto value = terminal_value<R>(pos, false);
    if (!value) return std::nullopt;
    const Wdl for_side = pos.side_to_move() == side ? *value : -*value;
    if (for_side == Wdl::Loss || (kind == storage::StrategyKind::Winning && for_side != Wdl::Win)) {
        return corruption("tables inconsistent: the strategy reaches " + to_fen(pos) +
                          ", which its side does not win");
    }
    return std::nullopt;
}

template <Ruleset R>
Expansion expand(const probe::Tablebase& tb, VariantId variant, const std::string& key, Color side,
                 storage::StrategyKind kind) {
    Expansion out;
    auto plain = storage::decode_position_key(key);
    if (!plain.ok()) {  // keys come from position_key(); this would be a bug
        out.error = Status(StatusCode::Internal, "internal error: " + plain.status().to_string());
        return out;
    }
    const Position pos = probe::position_from_plain(*plain);
    auto moves = tb.probe_moves(variant, pos);
    if (!moves.ok()) {
        out.error = from_probe(moves.status(), pos);
        return out;
    }
    const Wdl needed = kind == storage::StrategyKind::Winning ? Wdl::Win : Wdl::Draw;
    if (moves->empty() ||
        static_cast<int>(moves->front().for_mover.wdl) < static_cast<int>(needed)) {
        out.error =
            corruption("tables inconsistent: no move keeps the " +
                       std::string(needed == Wdl::Win ? "win" : "draw") + " in " + to_fen(pos));
        return out;
    }
    // Best first: for a win the smallest DTC (a quiet move lowers it, a
    // conversion leaves the table), so play can never cycle.
    const Move chosen = moves->front().move;
    out.value = probe::move_value_bytes(chosen);
    const Position child = pos.after(chosen);
    MoveList replies;
    generate_legal<R>(child, replies);
    if (replies.empty()) {
        if (auto e = check_terminal<R>(child, side, kind)) out.error = std::move(e);
        return out;
    }
    MoveList next_moves;
    for (Move reply : replies) {
        ++out.replies;
        const Position next = child.after(reply);
        generate_legal<R>(next, next_moves);
        if (next_moves.empty()) {
            if (auto e = check_terminal<R>(next, side, kind)) {
                out.error = std::move(e);
                return out;
            }
            continue;
        }
        out.next.push_back(probe::position_key(next));
    }
    return out;
}

template <Ruleset R>
Result<ExtractSummary> extract(probe::Tablebase& tb, VariantId variant, const Position& root,
                               const ExtractOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const Color side = options.side.value_or(root.side_to_move());
    if (!has_legal_move<R>(root)) {
        return invalid_argument("the root " + to_fen(root) + " is terminal");
    }
    auto root_value = tb.probe(variant, root);
    if (!root_value.ok()) return from_probe(root_value.status(), root);
    ExtractSummary summary;
    summary.side = side;
    summary.root_value = *root_value;
    if (root.side_to_move() != side) summary.root_value.wdl = -summary.root_value.wdl;
    const std::string side_text = side == Color::White ? "white" : "black";
    if (summary.root_value.wdl == Wdl::Loss) {
        return check_failed(side_text + " loses at " + to_fen(root) + ": no strategy keeps a draw");
    }
    summary.kind = summary.root_value.wdl == Wdl::Win ? storage::StrategyKind::Winning
                                                      : storage::StrategyKind::NonLoss;

    storage::StrategySpec spec;
    spec.name = options.name;
    spec.variant = std::string(variant_name(variant));
    spec.side = to_side(side);
    spec.kind = summary.kind;
    spec.roots = {to_fen(root)};
    spec.entry_encoding = std::string(storage::kPositionMoveEncoding);
    spec.json = to_json_line(Json{{"source", "tables"},
                                  {"root_value", summary.kind == storage::StrategyKind::Winning ? "win" : "draw"},
                                  {"root_dtc", summary.root_value.dtc}});
    storage::StrategyWriteOptions write_options;
    write_options.replace = options.replace;
    write_options.sorted_input = false;  // discovery order; the writer sorts in bounded memory
    auto writer = tb.database().create_strategy(spec, write_options);
    if (!writer.ok()) return from_storage(writer.status());

    std::unordered_set<std::string> seen;
    std::deque<std::string> pending;
    const auto discover = [&](std::string key) {
        if (seen.insert(key).second) pending.push_back(std::move(key));
    };
    if (root.side_to_move() == side) {
        discover(probe::position_key(root));
    } else {
        MoveList replies, next_moves;
        generate_legal<R>(root, replies);
        for (Move reply : replies) {
            ++summary.replies;
            const Position next = root.after(reply);
            generate_legal<R>(next, next_moves);
            if (next_moves.empty()) {
                if (auto e = check_terminal<R>(next, side, summary.kind)) return *e;
                continue;
            }
            discover(probe::position_key(next));
        }
    }

    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    std::vector<std::string> batch;
    std::vector<Expansion> expanded;
    while (!pending.empty()) {
        batch.clear();
        while (!pending.empty() && batch.size() < kBatch) {
            batch.push_back(std::move(pending.front()));
            pending.pop_front();
        }
        expanded.assign(batch.size(), Expansion{});
        const auto n = static_cast<std::int64_t>(batch.size());
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
        for (std::int64_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            expanded[k] = expand<R>(tb, variant, batch[k], side, summary.kind);
        }
        // Merged in batch order, so the result does not depend on the threads.
        for (std::size_t k = 0; k < batch.size(); ++k) {
            Expansion& e = expanded[k];
            if (e.error) return *e.error;
            if (auto s = writer->add(batch[k], e.value); !s.ok()) return from_storage(s);
            ++summary.entries;
            summary.entry_bytes += batch[k].size() + e.value.size();
            summary.replies += e.replies;
            for (std::string& key : e.next) discover(std::move(key));
        }
        if (options.progress) options.progress({summary.entries, pending.size()});
    }
    if (auto s = writer->commit(); !s.ok()) return from_storage(s);
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

}  // namespace

Result<ExtractSummary> extract_strategy(probe::Tablebase& tablebase, VariantId variant,
                                        const std::string& root_fen, const ExtractOptions& options) {
    auto root = parse_fen(root_fen, variant);
    if (!root.ok()) return invalid_argument(root.status().message());
    return with_variant(variant,
                        [&]<class R>() { return extract<R>(tablebase, variant, *root, options); });
}

Result<ImportSummary> import_strategy(storage::Database& db, VariantId variant, std::istream& in,
                                      const ImportOptions& options) {
    storage::StrategySpec spec;
    spec.name = options.name;
    spec.variant = std::string(variant_name(variant));
    spec.side = to_side(options.side);
    spec.kind = options.kind;
    spec.entry_encoding = std::string(storage::kPositionMoveEncoding);
    spec.json = to_json_line(Json{{"source", "import"}, {"file", options.source}});
    if (options.roots.empty()) return invalid_argument("no root given (--root FEN)");
    for (const std::string& fen : options.roots) {
        auto root = parse_fen(fen, variant);
        if (!root.ok()) return invalid_argument("root: " + root.status().message());
        spec.roots.push_back(to_fen(*root));
    }
    storage::StrategyWriteOptions write_options;
    write_options.replace = options.replace;
    write_options.sorted_input = false;
    auto writer = db.create_strategy(spec, write_options);
    if (!writer.ok()) return from_storage(writer.status());

    struct Seen {
        Move move;
        std::uint64_t line;
    };
    std::unordered_map<std::string, Seen> seen;
    ImportSummary summary;
    std::string line;
    std::uint64_t number = 0;
    const auto bad = [&](const std::string& message) {
        // The writer is dropped uncommitted: nothing of this import is stored.
        return invalid_argument("line " + std::to_string(number) + ": " + message);
    };
    return with_variant(variant, [&]<class R>() -> Result<ImportSummary> {
        while (std::getline(in, line)) {
            ++number;
            auto parsed = parse_strategy_line(line, variant, options.side);
            if (!parsed.ok()) return bad(parsed.status().message());
            if (!*parsed) continue;
            ++summary.lines;
            const Position& pos = (*parsed)->position;
            const Move move = (*parsed)->move;
            std::string key = probe::position_key(pos);
            auto [at, inserted] = seen.try_emplace(key, Seen{move, number});
            if (!inserted) {
                if (at->second.move != move) {
                    return bad("position " + to_fen(pos) + " was given move " +
                               to_uci(at->second.move) + " on line " +
                               std::to_string(at->second.line) + ", here " + to_uci(move));
                }
                ++summary.duplicates;
                continue;
            }
            if (auto s = writer->add(key, probe::move_value_bytes(move)); !s.ok()) {
                return from_storage(s);
            }
            ++summary.entries;
        }
        if (in.bad()) return io_error("cannot read the input");
        if (auto s = writer->commit(); !s.ok()) return from_storage(s);
        return summary;
    });
}

}  // namespace tbf::gen
