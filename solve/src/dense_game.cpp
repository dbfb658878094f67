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
// Units besides the kings up to which a conversions solve first solves
// every material one capture below its start.
constexpr int kMaxPresolvedUnits = 8;

// Where one position sits in its table: the structure's key (a rank per
// pawn, 3 bits each, in the table's pawn order) and the slot inside the
// structure: side to move, the kings' ranks, then each piece's place among
// the squares it may stand on (a mixed-radix number).
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

// Material in pawns: pawn 1, knight and bishop 3, rook 5, queen 9.
int material_value(const Position& pos, Color c) {
    return popcount(pos.units(c, UnitType::Pawn)) +
           3 * popcount(pos.units(c, UnitType::Knight) | pos.units(c, UnitType::Bishop)) +
           5 * popcount(pos.units(c, UnitType::Rook)) + 9 * popcount(pos.units(c, UnitType::Queen));
}

// A knight's step changes the file (of the four) and the rank by one each,
// a bishop's the file by one and the rank by two, so each keeps to a class
// of squares: two for knights, four for bishops. 0 for the other kinds.
int square_class(UnitType t, Square s) {
    const int f = file_of(s) / 2;
    const int r = rank_of(s);
    if (t == UnitType::Knight) return 1 + ((f + r) & 1);
    if (t == UnitType::Bishop) return 1 + (r & 1) * 2 + ((f + (r >> 1)) & 1);
    return 0;
}

Bitboard class_squares(UnitType t, int square_class_id) {
    Bitboard out = 0;
    for (int i = 0; i < 32; ++i) {
        const Square s = packed_square(i);
        if (square_class_id == 0 || square_class(t, s) == square_class_id) out |= bit(s);
    }
    return out;
}

// The class all units of colour c and kind t share, 0 if none or mixed.
int common_class(const Position& pos, Color c, UnitType t) {
    if (t != UnitType::Knight && t != UnitType::Bishop) return 0;
    Bitboard units = pos.units(c, t);
    if (!units) return 0;
    const int first = square_class(t, lsb(units));
    while (units) {
        if (square_class(t, pop_lsb(units)) != first) return 0;
    }
    return first;
}

}  // namespace

// A material: the files of the kings, the pawns per colour and file, the
// pieces per colour and kind with the class of squares their knights and
// bishops keep to. Solved structures of a material are kept as one bit per
// slot (safe or not).
struct DenseGame::Table {
    int king_file = 0;
    std::uint32_t king_file_order = 0;
    // Pieces in ascending unit code; identical ones take ascending places,
    // so that a position has exactly one slot.
    std::vector<Unit> pieces;
    // Per piece: the squares it may stand on, in ascending order, its place
    // among them for each square (-1: not one of them), and the weight of
    // that place in the slot.
    std::vector<std::vector<Square>> squares;
    std::vector<std::array<std::int8_t, 64>> place;
    std::vector<std::uint32_t> weight;
    std::uint32_t piece_slots = 1;  // product of the pieces' square counts
    std::uint32_t slots = 0;        // side to move x kings' ranks x piece_slots
    // Pawns ordered by colour (white first), file, then rank.
    std::vector<Color> pawn_color;
    std::vector<int> pawn_file;
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

    std::uint32_t place_of(std::uint32_t slot, std::size_t i) const {
        return (slot % piece_slots) / weight[i] % static_cast<std::uint32_t>(squares[i].size());
    }
    std::uint32_t kings_of(std::uint32_t slot) const { return (slot / piece_slots) & 63; }
    std::uint32_t side_bit(std::uint32_t slot) const { return slot / (64 * piece_slots); }

    // Keeps identical pieces in ascending places after one of them moved.
    std::uint32_t canonical(std::uint32_t slot) const {
        const std::size_t k = pieces.size();
        if (k < 2) return slot;
        bool identical = false;
        for (std::size_t i = 1; i < k; ++i) identical |= pieces[i] == pieces[i - 1];
        if (!identical) return slot;
        std::uint32_t at[kMaxPieces];
        for (std::size_t i = 0; i < k; ++i) at[i] = place_of(slot, i);
        for (std::size_t i = 1; i < k; ++i) {
            for (std::size_t j = i; j > 0 && pieces[j] == pieces[j - 1] && at[j] < at[j - 1]; --j) std::swap(at[j], at[j - 1]);
        }
        std::uint32_t out = slot - slot % piece_slots;
        for (std::size_t i = 0; i < k; ++i) out += at[i] * weight[i];
        return out;
    }

    // nullopt if a piece stands outside its squares (a place of X's the
    // limits exclude).
    std::optional<Coordinates> coordinates(const Position& pos) const {
        Coordinates c;
        c.structure = structure_key(pos);
        std::uint32_t slot = pos.side_to_move() == Color::White ? 0 : 1;
        slot = slot * 8 + static_cast<std::uint32_t>(rank_of(lsb(pos.units(Color::White, UnitType::King))));
        slot = slot * 8 + static_cast<std::uint32_t>(rank_of(lsb(pos.units(Color::Black, UnitType::King))));
        slot *= piece_slots;
        std::size_t i = 0;
        while (i < pieces.size()) {
            Bitboard same = pos.units(unit_color(pieces[i]), unit_type(pieces[i]));
            while (same) {
                const int at = place[i][pop_lsb(same)];
                if (at < 0) return std::nullopt;
                slot += static_cast<std::uint32_t>(at) * weight[i++];
            }
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

// The key of a material: king files (2 bits each), then per colour a
// 2-bit count per file of pawns and per kind of pieces, and the classes of
// squares its knights (2 bits) and bishops (3 bits) keep to, then the order
// on the kings' file (at most 8 units: 16 bits).
struct DenseGame::Material {
    static std::optional<std::uint64_t> key(const Position& pos, int max_pieces) {
        const Bitboard pieces_bb = pos.occupied() & ~pos.units(UnitType::Pawn) & ~pos.units(UnitType::King);
        if (popcount(pieces_bb) > max_pieces) return std::nullopt;
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
                put(n, 2);
            }
            put(common_class(pos, c, UnitType::Knight), 2);
            put(common_class(pos, c, UnitType::Bishop), 3);
        }
        const int file = file_of(lsb(pos.units(Color::White, UnitType::King)));
        if (file != file_of(lsb(pos.units(Color::Black, UnitType::King)))) return std::nullopt;
        put(static_cast<int>(king_file_order(pos, file)), 16);
        return key;
    }
};

DenseGame::DenseGame(Color x, std::uint64_t memory_cap, int threads, DenseRules rules, const DenseLimits& limits)
    : x_(x), rules_(rules), limits_(limits), memory_cap_(memory_cap), threads_(std::max(1, threads)) {
    limits_.max_pieces = std::clamp(limits_.max_pieces, 0, kMaxPieces);
}

DenseGame::~DenseGame() = default;

std::optional<std::uint64_t> DenseGame::material_key(const Position& pos) const {
    return Material::key(pos, limits_.max_pieces);
}

Bitboard DenseGame::squares_of(Color c, UnitType t, int square_class_id) const {
    Bitboard squares = class_squares(t, square_class_id);
    if (c == x_) squares &= limits_.x_squares[to_index(t)];
    return squares;
}

bool DenseGame::fits(const Position& pos) const {
    if (!material_key(pos)) return false;
    // Every piece within its squares, and the slots of a structure within
    // 32 bits.
    std::uint64_t slots = 128;
    for (const Color c : {Color::White, Color::Black}) {
        for (const UnitType t : kPieceTypes) {
            const Bitboard units = pos.units(c, t);
            if (!units) continue;
            const Bitboard squares = squares_of(c, t, common_class(pos, c, t));
            if (units & ~squares) return false;
            for (int n = popcount(units); n > 0; --n) slots *= static_cast<std::uint64_t>(popcount(squares));
        }
    }
    return slots < (std::uint64_t{1} << 32);
}

const DenseGame::Table* DenseGame::table_of(const Position& pos) const {
    const auto key = material_key(pos);
    if (!key) return nullptr;
    const auto it = tables_.find(*key);
    return it == tables_.end() ? nullptr : it->second.get();
}

DenseGame::Table* DenseGame::table_of(const Position& pos, bool create) {
    if (create && !fits(pos)) return nullptr;
    const auto key = material_key(pos);
    if (!key) return nullptr;
    auto& table = tables_[*key];
    if (!table && create) {
        table = std::make_unique<Table>();
        table->king_file = file_of(lsb(pos.units(Color::White, UnitType::King)));
        table->king_file_order = king_file_order(pos, table->king_file);
        for (const Color c : {Color::White, Color::Black}) {
            for (const UnitType t : kPieceTypes) {
                for (int n = popcount(pos.units(c, t)); n > 0; --n) table->pieces.push_back(make_unit(c, t));
            }
        }
        std::sort(table->pieces.begin(), table->pieces.end());
        for (const Unit u : table->pieces) {
            const Color c = unit_color(u);
            const UnitType t = unit_type(u);
            std::vector<Square> squares;
            std::array<std::int8_t, 64> place;
            place.fill(-1);
            for (Bitboard b = squares_of(c, t, common_class(pos, c, t)); b;) {
                const Square s = pop_lsb(b);
                place[s] = static_cast<std::int8_t>(squares.size());
                squares.push_back(s);
            }
            table->weight.push_back(table->piece_slots);
            table->piece_slots *= static_cast<std::uint32_t>(squares.size());
            table->squares.push_back(std::move(squares));
            table->place.push_back(place);
        }
        table->slots = 128 * table->piece_slots;
        for (const Color c : {Color::White, Color::Black}) {
            const Bitboard pawns = pos.units(c, UnitType::Pawn);
            for (int f = 0; f < 8; f += 2) {
                for (int n = popcount(pawns & file_bb(f)); n > 0; --n) {
                    table->pawn_color.push_back(c);
                    table->pawn_file.push_back(f);
                }
            }
        }
    }
    return table.get();
}

std::optional<bool> DenseGame::known(const Position& pos) const {
    const Table* table = table_of(pos);
    if (!table) return std::nullopt;
    const auto c = table->coordinates(pos);
    if (!c) return std::nullopt;
    const auto it = table->ids.find(c->structure);
    if (it == table->ids.end() || table->bits[it->second].empty()) return std::nullopt;
    return table->safe(it->second, c->slot);
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
    const std::uint64_t start_key = structure_key(pos);
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
            if (!limits_.x_pawns_move && table->pawn_color[j] == x_) continue;
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
    const Bitboard non_king_units = pos.occupied() & ~pos.units(UnitType::King);
    if (rules_ == DenseRules::Conversions && popcount(non_king_units) <= kMaxPresolvedUnits) {
        // The materials one capture below, from this start's structure
        // without the captured unit: every structure a capture reaches from
        // this batch is reachable from there, so the passes below find them
        // solved instead of putting their structures back level by level.
        // Done recursively this solves every material below, reached or
        // not: 2^units of them, so only for few units.
        for (Bitboard units = non_king_units; units;) {
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
            // Fewer structures than threads (small materials): the threads
            // share each structure's slots instead.
            const int outer = n < threads_ ? 1 : threads_;
            const int inner = n < threads_ ? threads_ : 1;
#pragma omp parallel num_threads(outer) reduction(+ : positions)
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
                    complete[index] =
                        solve_structure(*table, pending[index], scratch_of_thread, positions, missing_here, inner);
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
                    beyond_.insert({*material_key(child), structure_key(child)});
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

bool DenseGame::within_limits(const Position& pos, Move m) const {
    const UnitType t = unit_type(pos.unit_on(m.from()));
    if (t == UnitType::King) return true;
    if (t == UnitType::Pawn) {
        if (!limits_.x_pawns_move) return false;
        return !m.is_promotion() || (limits_.x_squares[to_index(m.promotion())] & bit(m.to()));
    }
    return (limits_.x_squares[to_index(t)] & bit(m.to())) != 0;
}

bool DenseGame::solve_structure(Table& table, std::uint32_t id, Scratch& s, std::uint64_t& positions,
                                std::vector<Position>& missing, int inner_threads) const {
    const std::uint64_t key = table.keys[id];
    const int pawns = static_cast<int>(table.pawn_color.size());
    const int k = static_cast<int>(table.pieces.size());
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
            const Square wk = make_square(table.king_file, w);
            const Square bk = make_square(table.king_file, b);
            bool ok = wk != bk && !(pawn_squares & (bit(wk) | bit(bk)));
            if (ok) {
                Position kings = base;
                kings.put(wk, make_unit(Color::White, UnitType::King));
                kings.put(bk, make_unit(Color::Black, UnitType::King));
                ok = king_file_order(kings, table.king_file) == table.king_file_order;
            }
            kings_in_order[w * 8 + b] = ok;
        }
    }
    s.state.assign(n, kInvalid);
    s.remaining.assign(n, 0);
    s.first.assign(n + 1, 0);
    s.edges.clear();
    const std::uint32_t side_weight = 64 * table.piece_slots;
    const std::uint32_t white_king_weight = 8 * table.piece_slots;
    const std::uint32_t black_king_weight = table.piece_slots;
    const auto x_node = [&](std::uint32_t slot) {
        return static_cast<Color>(table.side_bit(slot)) == x_;
    };
    std::uint64_t counted = 0;
    // The slots are generated in chunks, by `inner_threads` threads when a
    // level has fewer structures than threads (small materials): each chunk
    // keeps its own edges (offsets local to it until they are joined), and
    // the smaller materials its captures need that are not solved yet, one
    // child position for each (material, structure).
    const int chunk_count = inner_threads > 1 ? 8 * inner_threads : 1;
    std::vector<std::vector<std::uint32_t>> chunk_edges(static_cast<std::size_t>(chunk_count));
    chunk_edges[0] = std::move(s.edges);
    chunk_edges[0].clear();
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> chunk_missing_keys(
        static_cast<std::size_t>(chunk_count));
    std::vector<std::vector<Position>> chunk_missing(static_cast<std::size_t>(chunk_count));
#pragma omp parallel for num_threads(inner_threads) schedule(dynamic, 1) reduction(+ : counted) if (inner_threads > 1)
    for (int chunk = 0; chunk < chunk_count; ++chunk) {
        const auto c = static_cast<std::size_t>(chunk);
        auto& edges = chunk_edges[c];
        auto& missing_keys = chunk_missing_keys[c];
        auto& missing_here = chunk_missing[c];
        MoveList legal;
        const auto begin = static_cast<std::uint32_t>(std::uint64_t{n} * c / static_cast<std::uint64_t>(chunk_count));
        const auto end = static_cast<std::uint32_t>(std::uint64_t{n} * (c + 1) / static_cast<std::uint64_t>(chunk_count));
        for (std::uint32_t v = begin; v < end; ++v) {
            s.first[v] = static_cast<std::uint32_t>(edges.size());
            const std::uint32_t kings = table.kings_of(v);
            if (!kings_in_order[kings]) continue;
            const Color side = static_cast<Color>(table.side_bit(v));
            const Square wk = make_square(table.king_file, static_cast<int>(kings >> 3));
            const Square bk = make_square(table.king_file, static_cast<int>(kings & 7));
            Bitboard occupied = pawn_squares | bit(wk) | bit(bk);
            Square piece_at[kMaxPieces];
            std::uint32_t place_at[kMaxPieces];
            bool valid = true;
            for (int i = 0; i < k && valid; ++i) {
                const auto ui = static_cast<std::size_t>(i);
                place_at[i] = table.place_of(v, ui);
                piece_at[i] = table.squares[ui][place_at[i]];
                if (occupied & bit(piece_at[i])) valid = false;
                if (i > 0 && table.pieces[ui] == table.pieces[ui - 1] && place_at[i] < place_at[i - 1]) valid = false;
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
            generate_legal<R>(pos, legal);
            const bool x_moves = side == x_;
            if (legal.empty()) {
                s.state[v] = x_moves && in_check<R>(pos) ? kLoss : kSafe;
                continue;
            }
            s.state[v] = kInner;
            bool decided = false;
            for (const Move m : legal) {
                if (x_moves && !within_limits(pos, m)) continue;  // X does not make it
                const bool capture = pos.is_capture(m);
                bool followed = capture || m.is_promotion();
                std::optional<Position> converted;
                if (followed && rules_ == DenseRules::Conversions) {
                    converted = pos.after(m);
                    // A promotion into a material beyond the index is not followed.
                    followed = capture || fits(*converted);
                    if (m.is_promotion() && !x_moves && limits_.opponent_promotion_loses) followed = false;
                    if (capture && !x_moves &&
                        material_value(*converted, ~x_) - material_value(*converted, x_) > limits_.max_deficit) {
                        followed = false;
                    }
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
                        const std::pair<std::uint64_t, std::uint64_t> keys{*material_key(child), structure_key(child)};
                        if (beyond_.count(keys)) {  // too large to solve: not followed
                            if (x_moves) continue;
                            s.state[v] = kLoss;
                            decided = true;
                            break;
                        }
                        if (std::find(missing_keys.begin(), missing_keys.end(), keys) == missing_keys.end()) {
                            missing_keys.push_back(keys);
                            missing_here.push_back(child);
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
                const std::uint32_t flipped = side == Color::White ? v + side_weight : v - side_weight;
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
                    child = flipped - static_cast<std::uint32_t>(rank_of(wk)) * white_king_weight +
                            static_cast<std::uint32_t>(rank_of(to)) * white_king_weight;
                } else if (from == bk) {
                    child = flipped - static_cast<std::uint32_t>(rank_of(bk)) * black_king_weight +
                            static_cast<std::uint32_t>(rank_of(to)) * black_king_weight;
                } else {
                    int i = 0;
                    while (piece_at[i] != from) ++i;
                    const auto ui = static_cast<std::size_t>(i);
                    // Within the piece's squares: X's moves were held to them
                    // above, the opponent's never leave their class.
                    const int at = table.place[ui][to];
                    child = flipped - place_at[i] * table.weight[ui] + static_cast<std::uint32_t>(at) * table.weight[ui];
                    child = table.canonical(child);
                }
                edges.push_back(child);
            }
            if (decided) {
                edges.resize(s.first[v]);
                continue;
            }
            const auto count = static_cast<std::uint32_t>(edges.size() - s.first[v]);
            // X without a quiet move loses; an opponent node with every move
            // inside waits for the attractor.
            if (count == 0) {
                s.state[v] = x_moves ? kLoss : kSafe;
                continue;
            }
            s.remaining[v] = static_cast<std::uint16_t>(count);
        }
    }
    // Join the chunks' edges, offsets made global.
    s.edges = std::move(chunk_edges[0]);
    for (std::size_t c = 1; c < chunk_edges.size(); ++c) {
        const auto offset = static_cast<std::uint32_t>(s.edges.size());
        const auto begin = static_cast<std::uint32_t>(std::uint64_t{n} * c / chunk_edges.size());
        const auto end = static_cast<std::uint32_t>(std::uint64_t{n} * (c + 1) / chunk_edges.size());
        for (std::uint32_t v = begin; v < end; ++v) s.first[v] += offset;
        s.edges.insert(s.edges.end(), chunk_edges[c].begin(), chunk_edges[c].end());
        std::vector<std::uint32_t>().swap(chunk_edges[c]);
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> missing_keys;
    for (std::size_t c = 0; c < chunk_missing_keys.size(); ++c) {
        for (std::size_t i = 0; i < chunk_missing_keys[c].size(); ++i) {
            const auto& keys = chunk_missing_keys[c][i];
            if (std::find(missing_keys.begin(), missing_keys.end(), keys) != missing_keys.end()) continue;
            missing_keys.push_back(keys);
            missing.push_back(chunk_missing[c][i]);
        }
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
