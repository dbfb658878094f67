// The quiet game over a dense index, structure by structure
// (dense_game.hpp).

#include "dense_game.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <unordered_set>

#include "packed_position.hpp"

namespace tbf::solve::detail {
namespace {

using R = FourFile;

constexpr UnitType kPieceTypes[] = {UnitType::Knight, UnitType::Bishop, UnitType::Rook, UnitType::Queen};
constexpr int kMaxPawns = 16;

// Where one position sits in its table: the structure's key (a rank per
// pawn, 3 bits each, in the table's pawn order) and the slot inside the
// structure: side to move, the kings' ranks, then a packed square (5 bits)
// per piece.
struct Coordinates {
    std::uint64_t structure = 0;
    std::uint32_t slot = 0;
};

enum State : std::uint8_t { kInvalid, kInner, kLoss, kSafe };

// The ranks of the pawns, 3 bits each, ordered by colour (white first),
// file, then rank: every table orders its pawns so.
std::uint64_t structure_key(const Position& pos) {
    std::uint64_t key = 0;
    int j = 0;
    for (const Color color : {Color::White, Color::Black}) {
        const Bitboard pawns = pos.units(color, UnitType::Pawn);
        for (int f = 0; f < 8; f += 2) {
            for (int r = 0; r < 8; ++r) {
                if (pawns & bit(make_square(f, r))) key |= static_cast<std::uint64_t>(r) << (3 * j++);
            }
        }
    }
    return key;
}

}  // namespace

// A material: the files of the kings, the pawns per colour and file, the
// pieces per colour and kind. Solved structures of a material are kept as
// one bit per slot (safe or not).
struct DenseGame::Table {
    int king_file[2] = {0, 0};
    std::uint32_t king_file_order = 0;
    // Pieces in ascending unit code; identical ones take ascending squares
    // (packed index), so that a position has exactly one slot.
    std::vector<Unit> pieces;
    // Pawns ordered by colour (white first), file, then rank.
    std::vector<Color> pawn_color;
    std::vector<int> pawn_file;
    int piece_bits = 0;  // 5 per piece
    std::uint32_t slots = 0;
    std::unordered_map<std::uint64_t, std::uint32_t> ids;
    std::vector<std::uint64_t> keys;
    std::vector<std::vector<std::uint64_t>> bits;  // empty: not solved
    // Starts whose unsolved structures did not fit the memory cap.
    std::unordered_set<std::uint64_t> too_large;

    int pawn_rank(std::uint64_t key, int j) const { return static_cast<int>((key >> (3 * j)) & 7); }
    Square pawn_square(std::uint64_t key, int j) const { return make_square(pawn_file[j], pawn_rank(key, j)); }
    int advance(std::uint64_t key) const {
        int a = 0;
        for (std::size_t j = 0; j < pawn_color.size(); ++j) {
            const int r = pawn_rank(key, static_cast<int>(j));
            a += pawn_color[j] == Color::White ? r : -r;
        }
        return a;
    }
    bool safe(std::uint32_t id, std::uint32_t slot) const { return (bits[id][slot >> 6] >> (slot & 63)) & 1; }
    std::uint64_t bytes_per_structure() const { return std::max<std::uint64_t>(8, slots / 8); }

    // Keeps identical pieces in ascending squares after one of them moved.
    std::uint32_t canonical(std::uint32_t slot) const {
        const std::size_t k = pieces.size();
        if (k < 2) return slot;
        std::uint32_t sq[kMaxPieces];
        for (std::size_t i = 0; i < k; ++i) sq[i] = (slot >> (5 * i)) & 31;
        for (std::size_t i = 1; i < k; ++i) {
            for (std::size_t j = i; j > 0 && pieces[j] == pieces[j - 1] && sq[j] < sq[j - 1]; --j) std::swap(sq[j], sq[j - 1]);
        }
        std::uint32_t out = slot & ~((1u << piece_bits) - 1);
        for (std::size_t i = 0; i < k; ++i) out |= sq[i] << (5 * i);
        return out;
    }

    Coordinates coordinates(const Position& pos) const {
        Coordinates c;
        c.structure = structure_key(pos);
        std::uint32_t slot = pos.side_to_move() == Color::White ? 0 : 1;
        slot = slot * 8 + static_cast<std::uint32_t>(rank_of(lsb(pos.units(Color::White, UnitType::King))));
        slot = slot * 8 + static_cast<std::uint32_t>(rank_of(lsb(pos.units(Color::Black, UnitType::King))));
        slot <<= piece_bits;
        std::size_t i = 0;
        while (i < pieces.size()) {
            Bitboard same = pos.units(unit_color(pieces[i]), unit_type(pieces[i]));
            while (same) slot |= static_cast<std::uint32_t>(packed_index(pop_lsb(same))) << (5 * i++);
        }
        c.slot = slot;
        return c;
    }
};

struct DenseGame::Scratch {
    std::vector<std::uint8_t> state;
    std::vector<std::uint16_t> remaining;
    std::vector<std::uint32_t> first;
    std::vector<std::uint32_t> edges;
    std::vector<std::uint32_t> pred_first;
    std::vector<std::uint32_t> preds;
    std::vector<std::uint32_t> queue;
    MoveList legal;
};

// The kings and pawns on the kings' file from the first rank up, 2 bits
// each (white king, black king, white pawn, black pawn). In the quiet game
// none of them ever passes another (a king steps along its file, a pawn
// straight ahead, and neither captures), so this order never changes: the
// positions of another order are never reached and need not be solved.
std::uint32_t king_file_order(const Position& pos, int file) {
    std::uint32_t order = 0;
    for (int r = 7; r >= 0; --r) {
        const Unit u = pos.unit_on(make_square(file, r));
        if (u == Unit::None) continue;
        const UnitType t = unit_type(u);
        if (t != UnitType::King && t != UnitType::Pawn) continue;
        order = order << 2 | (t == UnitType::King ? 0u : 2u) | (unit_color(u) == Color::Black ? 1u : 0u);
    }
    return order;
}

// The key of a material: king files (2 bits each), then a 2-bit count per
// colour and file of pawns and per colour and kind of pieces, then the
// order on the kings' file (at most 8 units: 16 bits).
struct DenseGame::Material {
    static std::optional<std::uint64_t> key(const Position& pos) {
        const Bitboard pieces_bb = pos.occupied() & ~pos.units(UnitType::Pawn) & ~pos.units(UnitType::King);
        if (popcount(pieces_bb) > kMaxPieces) return std::nullopt;
        // A structure's key holds 3 bits a pawn in 64.
        if (popcount(pos.units(UnitType::Pawn)) > kMaxPawns) return std::nullopt;
        std::uint64_t key = 0;
        int shift = 0;
        const auto put = [&](int value, int bits) {
            key |= static_cast<std::uint64_t>(value) << shift;
            shift += bits;
        };
        for (const Color c : {Color::White, Color::Black}) {
            const Bitboard king = pos.units(c, UnitType::King);
            if (popcount(king) != 1) return std::nullopt;
            put(file_of(lsb(king)) / 2, 2);
        }
        int pieces = 0;
        for (const Color c : {Color::White, Color::Black}) {
            const Bitboard pawns = pos.units(c, UnitType::Pawn);
            // A pawn on its last rank or behind its first cannot be indexed
            // (it never stands there in a game).
            if (pawns & (rank_bb(0) | rank_bb(7))) return std::nullopt;
            for (int f = 0; f < 8; f += 2) {
                const int n = popcount(pawns & file_bb(f));
                if (n > 3) return std::nullopt;
                put(n, 2);
            }
            for (const UnitType t : kPieceTypes) {
                const int n = popcount(pos.units(c, t));
                if (n > 3) return std::nullopt;
                pieces += n;
                put(n, 2);
            }
        }
        if (pieces > kMaxPieces) return std::nullopt;
        const int file = file_of(lsb(pos.units(Color::White, UnitType::King)));
        if (file != file_of(lsb(pos.units(Color::Black, UnitType::King)))) return std::nullopt;
        put(static_cast<int>(king_file_order(pos, file)), 16);
        return key;
    }
};

DenseGame::DenseGame(Color x, std::uint64_t memory_cap, int threads, DenseRules rules)
    : x_(x), rules_(rules), memory_cap_(memory_cap), threads_(std::max(1, threads)) {}

DenseGame::~DenseGame() = default;

bool DenseGame::fits(const Position& pos) const { return Material::key(pos).has_value(); }

const DenseGame::Table* DenseGame::table_of(const Position& pos) const {
    const auto key = Material::key(pos);
    if (!key) return nullptr;
    const auto it = tables_.find(*key);
    return it == tables_.end() ? nullptr : it->second.get();
}

DenseGame::Table* DenseGame::table_of(const Position& pos, bool create) {
    const auto key = Material::key(pos);
    if (!key) return nullptr;
    auto& table = tables_[*key];
    if (!table && create) {
        table = std::make_unique<Table>();
        for (const Color c : {Color::White, Color::Black}) {
            table->king_file[static_cast<int>(c)] = file_of(lsb(pos.units(c, UnitType::King)));
        }
        table->king_file_order = king_file_order(pos, table->king_file[0]);
        for (const Color c : {Color::White, Color::Black}) {
            for (const UnitType t : kPieceTypes) {
                for (int n = popcount(pos.units(c, t)); n > 0; --n) table->pieces.push_back(make_unit(c, t));
            }
        }
        std::sort(table->pieces.begin(), table->pieces.end());
        for (const Color c : {Color::White, Color::Black}) {
            const Bitboard pawns = pos.units(c, UnitType::Pawn);
            for (int f = 0; f < 8; f += 2) {
                for (int n = popcount(pawns & file_bb(f)); n > 0; --n) {
                    table->pawn_color.push_back(c);
                    table->pawn_file.push_back(f);
                }
            }
        }
        table->piece_bits = 5 * static_cast<int>(table->pieces.size());
        table->slots = 2u * 64u << table->piece_bits;
    }
    return table.get();
}

std::optional<bool> DenseGame::known(const Position& pos) const {
    const Table* table = table_of(pos);
    if (!table) return std::nullopt;
    const Coordinates c = table->coordinates(pos);
    const auto it = table->ids.find(c.structure);
    if (it == table->ids.end() || table->bits[it->second].empty()) return std::nullopt;
    return table->safe(it->second, c.slot);
}

std::optional<Move> DenseGame::move_at(const Position& pos) const {
    if (pos.side_to_move() != x_ || known(pos) != true) return std::nullopt;
    MoveList legal;
    generate_legal<R>(pos, legal);
    for (const Move m : legal) {
        if (rules_ == DenseRules::Quiet && (m.is_promotion() || pos.is_capture(m))) continue;
        if (known(pos.after(m)) == true) return m;  // nullopt where a promotion leaves the index
    }
    return std::nullopt;
}

std::optional<bool> DenseGame::solve(const Position& pos) {
    if (interrupted_) return std::nullopt;
    if (const auto value = known(pos)) return value;
    Table* table = table_of(pos, true);
    if (!table) return std::nullopt;
    const std::uint64_t start_key = table->coordinates(pos).structure;
    if (table->too_large.count(start_key)) return std::nullopt;
    // Every structure reachable by pawn steps that is not solved yet; the
    // ones solved already have all their successors solved too.
    std::vector<std::uint32_t> batch;
    const auto reach = [&](std::uint64_t key) {
        auto [it, inserted] = table->ids.try_emplace(key, static_cast<std::uint32_t>(table->keys.size()));
        if (inserted) {
            table->keys.push_back(key);
            table->bits.emplace_back();
        }
        return it->second;
    };
    std::vector<std::uint8_t> queued(table->keys.size(), 0);
    const auto visit = [&](std::uint64_t key) {
        const std::uint32_t id = reach(key);
        if (queued.size() <= id) queued.resize(id + 1, 0);
        if (queued[id] || !table->bits[id].empty()) return;
        queued[id] = 1;
        batch.push_back(id);
    };
    visit(start_key);
    const int pawns = static_cast<int>(table->pawn_color.size());
    for (std::size_t next = 0; next < batch.size(); ++next) {
        const std::uint64_t key = table->keys[batch[next]];
        Bitboard occupied = 0;
        for (int j = 0; j < pawns; ++j) occupied |= bit(table->pawn_square(key, j));
        for (int j = 0; j < pawns; ++j) {
            const bool white = table->pawn_color[j] == Color::White;
            const int r = table->pawn_rank(key, j);
            const int step = white ? 1 : -1;
            const auto moved = [&](int rank) {
                return (key & ~(std::uint64_t{7} << (3 * j))) | static_cast<std::uint64_t>(rank) << (3 * j);
            };
            // A step onto the last rank is a promotion: X makes none, and
            // the opponent's ends the game.
            const int one = r + step;
            if (one < 1 || one > 6 || (occupied & bit(make_square(table->pawn_file[j], one)))) continue;
            visit(moved(one));
            const int two = one + step;
            if (r == (white ? 1 : 6) && !(occupied & bit(make_square(table->pawn_file[j], two)))) visit(moved(two));
        }
    }
    // The bits kept, and each thread's scratch while it works (about 48
    // bytes a slot with the edges), must fit the cap.
    const std::uint64_t batch_bytes = batch.size() * table->bytes_per_structure();
    const std::uint64_t scratch = static_cast<std::uint64_t>(threads_) * table->slots * 48;
    if (bytes_ + reserved_ + batch_bytes + scratch > memory_cap_) {
        table->too_large.insert(start_key);
        return std::nullopt;
    }
    reserved_ += batch_bytes;
    const auto give_up = [&] {
        // Nothing of a stopped or failed call is kept: its structures are
        // solved again by the next call (smaller materials it solved on
        // the way are complete, and stay).
        for (const std::uint32_t id : batch) std::vector<std::uint64_t>().swap(table->bits[id]);
        reserved_ -= batch_bytes;
        return std::nullopt;
    };
    if (rules_ == DenseRules::Conversions) {
        // The materials one capture below, from this start's structure
        // without the captured unit: every structure a capture reaches from
        // this batch is reachable from there, so the passes below find them
        // solved instead of putting their structures back level by level.
        for (Bitboard units = pos.occupied() & ~pos.units(UnitType::King); units;) {
            Position lower = pos;
            lower.remove(pop_lsb(units));
            if (!fits(lower) || known(lower)) continue;
            if (solve(lower)) continue;
            if (interrupted_) return give_up();
            // Too large: the captures into it are found and not followed below.
        }
    }
    // Most advanced first: a pawn step only ever leads to a structure of
    // greater advance, solved by then.
    std::map<int, std::vector<std::uint32_t>, std::greater<>> levels;
    for (const std::uint32_t id : batch) levels[table->advance(table->keys[id])].push_back(id);
    std::atomic<bool> stopped{false};
    std::uint64_t positions = 0;
    for (auto& [advance, ids] : levels) {
        // With captures, a structure whose captures lead into smaller
        // materials not solved yet is put back: those are solved (by this
        // same function, between the parallel passes), then it is solved
        // again. Its captures always lead to the same few structures, so
        // one round finds them all.
        std::vector<std::uint32_t> pending = ids;
        while (!pending.empty()) {
            const std::int64_t n = static_cast<std::int64_t>(pending.size());
            std::vector<std::uint8_t> complete(pending.size(), 0);
            std::vector<std::vector<Position>> missing(static_cast<std::size_t>(threads_));
#pragma omp parallel num_threads(threads_) reduction(+ : positions)
            {
                Scratch scratch_of_thread;
                auto& missing_here = missing[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
                for (std::int64_t i = 0; i < n; ++i) {
                    if (stopped.load(std::memory_order_relaxed)) continue;
                    if (interrupt_ && interrupt_->load(std::memory_order_relaxed)) {
                        stopped = true;
                        continue;
                    }
                    const auto index = static_cast<std::size_t>(i);
                    complete[index] = solve_structure(*table, pending[index], scratch_of_thread, positions, missing_here);
                }
            }
            if (stopped) {
                interrupted_ = true;
                return give_up();
            }
            std::vector<std::uint32_t> again;
            for (std::size_t i = 0; i < pending.size(); ++i) {
                if (!complete[i]) again.push_back(pending[i]);
            }
            for (const auto& list : missing) {
                for (const Position& child : list) {
                    if (known(child)) continue;
                    if (solve(child)) continue;
                    if (interrupted_) return give_up();
                    // Too large for the cap: this conversion is treated like
                    // a promotion beyond the index (pessimistically).
                    beyond_.insert({*Material::key(child), structure_key(child)});
                }
            }
            pending = std::move(again);
        }
    }
    reserved_ -= batch_bytes;
    bytes_ += batch_bytes;
    structures_solved_ += batch.size();
    positions_solved_ += positions;
    return known(pos);
}

bool DenseGame::solve_structure(Table& table, std::uint32_t id, Scratch& s, std::uint64_t& positions,
                                std::vector<Position>& missing) const {
    const std::uint64_t key = table.keys[id];
    const int pawns = static_cast<int>(table.pawn_color.size());
    const int k = static_cast<int>(table.pieces.size());
    const int piece_bits = table.piece_bits;
    const std::uint32_t n = table.slots;
    Position base;
    Bitboard pawn_squares = 0;
    Square pawn_at[kMaxPawns];
    for (int j = 0; j < pawns; ++j) {
        pawn_at[j] = table.pawn_square(key, j);
        pawn_squares |= bit(pawn_at[j]);
        base.put(pawn_at[j], make_unit(table.pawn_color[j], UnitType::Pawn));
    }
    // The kings' places whose order on their file is the table's.
    bool kings_in_order[64];
    for (int w = 0; w < 8; ++w) {
        for (int b = 0; b < 8; ++b) {
            const Square wk = make_square(table.king_file[0], w);
            const Square bk = make_square(table.king_file[1], b);
            bool ok = wk != bk && !(pawn_squares & (bit(wk) | bit(bk)));
            if (ok) {
                Position kings = base;
                kings.put(wk, make_unit(Color::White, UnitType::King));
                kings.put(bk, make_unit(Color::Black, UnitType::King));
                ok = king_file_order(kings, table.king_file[0]) == table.king_file_order;
            }
            kings_in_order[w * 8 + b] = ok;
        }
    }
    s.state.assign(n, kInvalid);
    s.remaining.assign(n, 0);
    s.first.assign(n + 1, 0);
    s.edges.clear();
    const std::uint32_t stm_shift = static_cast<std::uint32_t>(piece_bits + 6);
    const auto x_node = [&](std::uint32_t slot) {
        return static_cast<Color>(slot >> stm_shift) == x_;
    };
    std::uint64_t counted = 0;
    // Smaller materials a capture leads into that are not solved yet, one
    // child position for each (material, structure).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> missing_keys;
    for (std::uint32_t v = 0; v < n; ++v) {
        s.first[v] = static_cast<std::uint32_t>(s.edges.size());
        const Color side = static_cast<Color>(v >> stm_shift);
        const Square wk = make_square(table.king_file[0], static_cast<int>((v >> (piece_bits + 3)) & 7));
        const Square bk = make_square(table.king_file[1], static_cast<int>((v >> piece_bits) & 7));
        if (!kings_in_order[(v >> piece_bits) & 63]) continue;
        Bitboard occupied = pawn_squares | bit(wk) | bit(bk);
        Square piece_at[kMaxPieces];
        bool valid = true;
        for (int i = 0; i < k && valid; ++i) {
            const auto index = static_cast<int>((v >> (5 * i)) & 31);
            piece_at[i] = packed_square(index);
            if (occupied & bit(piece_at[i])) valid = false;
            if (i > 0 && table.pieces[i] == table.pieces[i - 1] && piece_at[i] < piece_at[i - 1]) valid = false;
            occupied |= bit(piece_at[i]);
        }
        if (!valid) continue;
        Position pos = base;
        pos.put(wk, make_unit(Color::White, UnitType::King));
        pos.put(bk, make_unit(Color::Black, UnitType::King));
        for (int i = 0; i < k; ++i) pos.put(piece_at[i], table.pieces[i]);
        pos.set_side_to_move(side);
        if (king_attacked<R>(pos, ~side)) continue;  // not a position
        ++counted;
        generate_legal<R>(pos, s.legal);
        const bool x_moves = side == x_;
        if (s.legal.empty()) {
            s.state[v] = x_moves && in_check<R>(pos) ? kLoss : kSafe;
            continue;
        }
        s.state[v] = kInner;
        bool decided = false;
        for (const Move m : s.legal) {
            const bool capture = pos.is_capture(m);
            bool followed = capture || m.is_promotion();
            std::optional<Position> converted;
            if (followed && rules_ == DenseRules::Conversions) {
                converted = pos.after(m);
                // A promotion into a material beyond the index is not followed.
                followed = capture || fits(*converted);
            }
            if ((capture || m.is_promotion()) && (rules_ == DenseRules::Quiet || !followed)) {
                if (x_moves) continue;  // X does not make it
                s.state[v] = kLoss;     // the opponent's: a loss for X
                decided = true;
                break;
            }
            if (converted) {
                // Into the table of the material it leaves, solved before
                // this structure is, or asked for.
                const Position& child = *converted;
                const auto value = known(child);
                if (!value) {
                    const std::pair<std::uint64_t, std::uint64_t> keys{*Material::key(child), structure_key(child)};
                    if (beyond_.count(keys)) {  // too large to solve: not followed
                        if (x_moves) continue;
                        s.state[v] = kLoss;
                        decided = true;
                        break;
                    }
                    if (std::find(missing_keys.begin(), missing_keys.end(), keys) == missing_keys.end()) {
                        missing_keys.push_back(keys);
                        missing.push_back(child);
                    }
                    continue;
                }
                if (x_moves == *value) {  // X takes a safe way out, or the opponent an unsafe one
                    s.state[v] = x_moves ? kSafe : kLoss;
                    decided = true;
                    break;
                }
                continue;
            }
            const Square from = m.from();
            const Square to = m.to();
            const std::uint32_t flipped = v ^ (1u << stm_shift);
            if (unit_type(pos.unit_on(from)) == UnitType::Pawn) {
                // A pawn step: the child is in a structure solved already.
                int j = 0;
                while (pawn_at[j] != from) ++j;
                const std::uint64_t child_key =
                    (key & ~(std::uint64_t{7} << (3 * j))) | static_cast<std::uint64_t>(rank_of(to)) << (3 * j);
                const auto it = table.ids.find(child_key);
                const bool child_safe = it != table.ids.end() && !table.bits[it->second].empty() &&
                                        table.safe(it->second, flipped);
                if (x_moves && child_safe) {
                    s.state[v] = kSafe;
                    decided = true;
                    break;
                }
                if (!x_moves && !child_safe) {
                    s.state[v] = kLoss;
                    decided = true;
                    break;
                }
                continue;
            }
            std::uint32_t child;
            if (from == wk) {
                child = (flipped & ~(7u << (piece_bits + 3))) | static_cast<std::uint32_t>(rank_of(to)) << (piece_bits + 3);
            } else if (from == bk) {
                child = (flipped & ~(7u << piece_bits)) | static_cast<std::uint32_t>(rank_of(to)) << piece_bits;
            } else {
                int i = 0;
                while (piece_at[i] != from) ++i;
                child = (flipped & ~(31u << (5 * i))) | static_cast<std::uint32_t>(packed_index(to)) << (5 * i);
                child = table.canonical(child);
            }
            s.edges.push_back(child);
        }
        if (decided) {
            s.edges.resize(s.first[v]);
            continue;
        }
        const auto count = static_cast<std::uint32_t>(s.edges.size() - s.first[v]);
        // X without a quiet move loses; an opponent node with every move
        // inside waits for the attractor.
        if (count == 0) {
            s.state[v] = x_moves ? kLoss : kSafe;
            continue;
        }
        s.remaining[v] = static_cast<std::uint16_t>(count);
    }
    s.first[n] = static_cast<std::uint32_t>(s.edges.size());
    if (!missing_keys.empty()) return false;
    // Predecessors of each slot, then the opponent's attractor to the
    // losses: an opponent node with a child in it, an X node with all its
    // children in it.
    s.pred_first.assign(n + 1, 0);
    for (const std::uint32_t c : s.edges) ++s.pred_first[c + 1];
    for (std::uint32_t v = 0; v < n; ++v) s.pred_first[v + 1] += s.pred_first[v];
    s.preds.resize(s.edges.size());
    s.queue.clear();
    {
        std::vector<std::uint32_t>& fill = s.queue;  // reused as the fill cursor
        fill.assign(s.pred_first.begin(), s.pred_first.end() - 1);
        for (std::uint32_t v = 0; v < n; ++v) {
            for (std::uint32_t e = s.first[v]; e < s.first[v + 1]; ++e) s.preds[fill[s.edges[e]]++] = v;
        }
        fill.clear();
    }
    for (std::uint32_t v = 0; v < n; ++v) {
        if (s.state[v] == kLoss) s.queue.push_back(v);
    }
    while (!s.queue.empty()) {
        const std::uint32_t c = s.queue.back();
        s.queue.pop_back();
        for (std::uint32_t e = s.pred_first[c]; e < s.pred_first[c + 1]; ++e) {
            const std::uint32_t p = s.preds[e];
            if (s.state[p] != kInner) continue;
            if (x_node(p) && --s.remaining[p] != 0) continue;
            s.state[p] = kLoss;
            s.queue.push_back(p);
        }
    }
    std::vector<std::uint64_t> bits(std::max<std::uint32_t>(1, n / 64), 0);
    for (std::uint32_t v = 0; v < n; ++v) {
        if (s.state[v] == kInner || s.state[v] == kSafe) bits[v >> 6] |= std::uint64_t{1} << (v & 63);
    }
    table.bits[id] = std::move(bits);
    positions += counted;
    return true;
}

}  // namespace tbf::solve::detail
