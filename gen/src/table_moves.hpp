#pragma once
// What one table's positions look like to the retrograde engines, whatever
// they keep in memory or on disk: slot decoding, the classification of a slot
// by the initial pass, the quiet un-moves that lead to it, and stabilisers.
// Used by the in-RAM builder (retrograde.hpp) and the out-of-core builder.

#include <algorithm>
#include <cassert>
#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "state_word.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/index/work_index.hpp"
#include "tbforge/probe/value.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/symmetry.hpp"
#include "wdl_table.hpp"

namespace tbf::gen {

// What the engines need from an indexer (index::Indexer's fast path): slots
// per side, the units in placement order, decode of a slot into one square
// per unit, and encode of such a placement (units of a kind in any order,
// symmetric images allowed; kNoSlot for a placement outside the table).
inline constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
inline constexpr int kMaxTableUnits = 8;

template <class Ix>
concept TableIndexer = requires(const Ix& ix, std::uint64_t i, Square* squares,
                                const Square* placement) {
    { ix.size() } -> std::convertible_to<std::uint64_t>;
    { ix.unit_count() } -> std::convertible_to<int>;
    { ix.unit(0) } -> std::convertible_to<Unit>;
    { ix.symmetry_group() } -> std::convertible_to<SymmetryGroup>;
    { ix.decode(i, squares) } -> std::same_as<bool>;
    { ix.encode(placement) } -> std::convertible_to<std::uint64_t>;
};

// An indexer that also knows the slots of the placements that differ from a
// decoded slot by one unit's square, faster than full encodes.
template <class Ix>
concept MoveIndexer = TableIndexer<Ix> && requires(const Ix& ix, std::uint64_t i, const Square* squares) {
    { typename Ix::Neighbours(ix, i, squares).moved(0, Square{}) } -> std::convertible_to<std::uint64_t>;
};

// An indexer whose leading units form a root (index::Indexer): a move of
// any other unit keeps the slot within the range of its root placement.
template <class Ix>
concept RootedIndexer = MoveIndexer<Ix> && requires(const Ix& ix, std::uint64_t i) {
    { ix.root_unit_count() } -> std::convertible_to<int>;
    { ix.root_range(i) } -> std::convertible_to<std::pair<std::uint64_t, std::uint64_t>>;
};

// A sub-table held in memory by its WDL (wdl_table.hpp), as found for one
// material: null if that material's table is not resident.
struct ResidentSubtable {
    const WdlTable* table = nullptr;
    bool color_flipped = false;  // the material is the table's colour flip
};

// The value (for its side to move) of a position a conversion reaches: a
// sub-table position or a terminal one. Optionally also the resident
// sub-tables by material, through which the initial pass values a capture
// from the slot's squares without building the child position (the values
// must be the ones the position path gives).
class ChildValue {
public:
    using ByPosition = std::function<probe::Value(const Position&)>;
    using ByMaterial = std::function<ResidentSubtable(const index::Material&)>;

    template <class F>
        requires std::is_invocable_r_v<probe::Value, F&, const Position&> &&
                 (!std::same_as<std::remove_cvref_t<F>, ChildValue>)
    ChildValue(F f) : by_position_(std::move(f)) {}
    // `release`, if given, frees the sub-tables behind both once no value is
    // asked any more.
    ChildValue(ByPosition by_position, ByMaterial by_material, std::function<void()> release = {})
        : by_position_(std::move(by_position)), by_material_(std::move(by_material)), release_(std::move(release)) {}

    probe::Value operator()(const Position& pos) const { return by_position_(pos); }
    ResidentSubtable resident(const index::Material& material) const {
        return by_material_ ? by_material_(material) : ResidentSubtable{};
    }
    void release() const {
        if (release_) release_();
    }

private:
    ByPosition by_position_;
    ByMaterial by_material_;
    std::function<void()> release_;
};
// Progress of a build: pass name, level (-1 outside the level passes), done of total.
using BuildProgress = std::function<void(const char* pass, int level, std::uint64_t done, std::uint64_t total)>;

namespace detail {

// Packed ids: index * 2 + side to move.
inline std::uint64_t pack(Color c, std::uint64_t index) { return index * 2 + to_index(c); }
inline Color packed_side(std::uint64_t p) { return static_cast<Color>(p & 1); }
inline std::uint64_t packed_index(std::uint64_t p) { return p >> 1; }

}  // namespace detail

// The slots one position reaches: a fixed buffer, since a side of at most
// kMaxTableUnits units has fewer than 256 un-moves.
class SlotList {
public:
    void clear() { size_ = 0; }
    void push_back(std::uint64_t slot) { slots_[size_++] = slot; }
    std::size_t size() const { return size_; }
    std::uint64_t operator[](std::size_t i) const { return slots_[i]; }
    std::uint64_t* begin() { return slots_; }
    std::uint64_t* end() { return slots_ + size_; }

private:
    std::uint64_t slots_[256];
    std::size_t size_ = 0;
};

// The initial pass's verdict on one slot.
struct SlotStart {
    std::uint16_t value = StateWord::kUndecided;  // working value (StateWord markers or a final code)
    std::uint8_t open = 0;                     // quiet moves still open, or kCannotLose
    std::int16_t level = -1;                   // frontier level of a decided value, -1 if none
    bool late_win = false;   // a win in 2 plies by a double push into en passant
    bool late_loss = false;  // undecided, but its longest known loss takes 2 plies
    std::uint8_t stabilizer = 1;  // table symmetries fixing the position (undecided slots only)

    std::uint16_t word() const { return StateWord::initial(value, open, stabilizer); }
};

template <Ruleset R, TableIndexer Ix>
class TableMoves {
public:
    // child_value gives the value (for its side to move) of any position a
    // conversion reaches: a sub-table position or a terminal one.
    TableMoves(const Ix& indexer, ChildValue child_value)
        : ix_(indexer), child_value_(std::move(child_value)) {
        // Every symmetry of the table's group but the identity.
        const std::uint8_t group = symmetry_mask(ix_.symmetry_group());
        for (int sym = 1; sym < kSymmetryCount; ++sym) {
            if (group >> sym & 1) symmetries_.push_back(sym);
        }
        for (std::size_t k = 0; k < symmetries_.size(); ++k) {
            for (int s = 0; s < 64; ++s) {
                transformed_[k][s] = transform_square(static_cast<Square>(s), symmetries_[k]);
                if (transformed_[k][s] == s) fixed_squares_[k] |= bit(static_cast<Square>(s));
            }
            fixed_by_any_ |= fixed_squares_[k];
        }
        // Units alone of their kind.
        for (int i = 0; i < ix_.unit_count(); ++i) {
            int same = 0;
            for (int k = 0; k < ix_.unit_count(); ++k) same += ix_.unit(k) == ix_.unit(i);
            if (same == 1) single_units_.push_back(ix_.unit(i));
        }
        if constexpr (kAttackSetStart) prepare_conversions();
    }

    const Ix& indexer() const { return ix_; }
    // Conversions are valued in the initial pass only; after it the
    // sub-tables behind them can go (the resident pointers conversions_
    // caches are not read again).
    void release_children() { child_value_.release(); }
    bool has_symmetries() const { return !symmetries_.empty(); }

    // The position of a slot, its squares in `squares`; false if not a position.
    bool decode(std::uint64_t index, Color side, Square* squares, Position& pos) const {
        if (!ix_.decode(index, squares)) return false;
        pos = Position();
        const int n = ix_.unit_count();
        for (int i = 0; i < n; ++i) pos.put(squares[i], ix_.unit(i));
        pos.set_side_to_move(side);
        return is_valid(pos);
    }

    // decode() of slots met in increasing order, as the passes scan them. On
    // the work index most slots share every digit but the last with the
    // slot before: only the last unit is placed again, not every unit.
    class Scan {
    public:
        explicit Scan(const TableMoves& moves) : moves_(moves) {}
        // False if `index` is not a position; else squares() and position().
        bool decode(std::uint64_t index, Color side) {
            if constexpr (!std::is_same_v<Ix, index::WorkIndex>) {
                return moves_.decode(index, side, squares_, pos_);
            } else {
                const index::WorkIndex& ix = moves_.ix_;
                const int last = ix.unit_count() - 1;
                if (const std::uint64_t prefix = index >> 6; prefix != prefix_) {
                    prefix_ = prefix;
                    prefix_valid_ = ix.decode_prefix(index, squares_);
                    if (!prefix_valid_) return false;
                    pos_ = Position();
                    for (int i = 0; i < last; ++i) pos_.put(squares_[i], ix.unit(i));
                    last_placed_ = false;
                } else if (!prefix_valid_) {
                    return false;
                }
                if (last_placed_) pos_.remove(squares_[last]);
                last_placed_ = ix.decode_last(index, squares_);
                if (!last_placed_) return false;
                pos_.put(squares_[last], ix.unit(last));
                pos_.set_side_to_move(side);
                return moves_.is_valid(pos_);
            }
        }
        const Square* squares() const { return squares_; }
        Position& position() { return pos_; }

    private:
        const TableMoves& moves_;
        std::uint64_t prefix_ = ~std::uint64_t{0};
        bool prefix_valid_ = false;
        bool last_placed_ = false;  // pos_ holds the last unit on squares_[last]
        Square squares_[kMaxTableUnits]{};
        Position pos_;
    };

    // Number of table symmetries that map the position onto itself.
    int stabilizer(const Position& pos) const {
        // A unit alone of its kind stays on its square under a symmetry
        // that fixes the position: most symmetries fix no square at all.
        Bitboard singles = 0;
        for (const Unit u : single_units_) singles |= pos.units(unit_color(u), unit_type(u));
        // Most positions: a single unit off the squares any symmetry fixes.
        if (singles & ~fixed_by_any_) return 1;
        int count = 1;
        for (std::size_t k = 0; k < symmetries_.size(); ++k) {
            if (singles & ~fixed_squares_[k]) continue;
            Bitboard occ = pos.occupied();
            bool fixed = true;
            while (occ && fixed) {
                const Square s = pop_lsb(occ);
                fixed = pos.unit_on(transformed_[k][s]) == pos.unit_on(s);
            }
            count += fixed;
        }
        return count;
    }

    // Terminal positions, conversions and en-passant double pushes of one slot.
    // Inlined into the passes: returned through memory, the verdict's
    // narrow fields cost a store-forwarding stall per slot.
    [[gnu::always_inline]] inline SlotStart start(Color side, std::uint64_t index) const;
    // start() of a decoded position (decode() true), its squares in `squares`.
    [[gnu::always_inline]] inline SlotStart start(const Position& pos, const Square* squares) const;

    // Slots of the predecessors of pos by quiet un-moves of the units before
    // `units_end`, repeated once per un-move, sorted if asked; under
    // compulsory captures, without those where the mover has a capture (the
    // initial pass decided them). `squares` holds pos's placement as
    // decoded from `index`.
    // Out: std::vector<std::uint64_t> or SlotList.
    template <class Out>
    void predecessors(std::uint64_t index, const Position& pos, Square* squares, Out& out,
                      bool sorted = true, int units_end = kMaxTableUnits) const;

    // Calls f(slot) for the child of each move of a unit from `first_unit`
    // on that start() counts as open (quiet, not promoting, not handing over
    // an en-passant capture), until f returns false. Without a royal king
    // every such move is legal.
    template <class F>
        requires MoveIndexer<Ix> && (!R::kRoyalKing)
    void open_children(std::uint64_t index, const Position& pos, const Square* squares, F&& f,
                       int first_unit = 0) const;

    // open_children() of the root unit (unit 0) alone.
    template <class F>
        requires MoveIndexer<Ix> && (!R::kRoyalKing)
    void open_root_children(std::uint64_t index, const Position& pos, const Square* squares, F&& f) const {
        if (unit_color(ix_.unit(0)) != pos.side_to_move()) return;
        typename Ix::Neighbours neighbours(ix_, index, squares);
        unit_open_children(0, pos, squares, neighbours, f);
    }

    // The open moves of 64 slots at once. On the work index the slots
    // block * 64 + x share every unit's square but the last unit's (on x).
    // Where that unit is alone of its kind, a move of another unit leads
    // every such slot to one block of children, read for all 64 slots at
    // once; the move is open for the x not on its target or in its path
    // (and, for a double push, not where an enemy pawn on x could take en
    // passant). `squares` holds the units before the last
    // (WorkIndex::decode_prefix); side s moves.
    //   middle(child_block, open_for, last): a move of a unit between the
    //     root and the last, its child child_block * 64 + last_square(x).
    //     With the root off the a1-h8 diagonal the last unit stays on x;
    //     on it, the child's slot is the smaller of its placement's and its
    //     transpose's (WorkIndex::diagonal_blocks), so x may be transposed;
    //   root(move, open_for): a move of the root, its child
    //     move.child_block() * 64 + move.square(x) (WorkIndex::RootMove).
    static bool block_moves_apply(const index::WorkIndex& ix) {
        const int n = ix.unit_count();
        return n >= 2 && ix.group_size(n - 1) == 1;
    }
    // Where the last unit stands in a child of a block pull, seen from x.
    enum class LastSquare : std::uint8_t {
        Same,        // x
        Transposed,  // transpose(x)
        Folded,      // min(x, transpose(x)); the other slot holds no position
    };
    static Square last_square(LastSquare last, Square x) {
        const Square t = transform_square(x, kTranspose);
        return last == LastSquare::Same ? x : last == LastSquare::Transposed ? t : std::min(x, t);
    }
    // A block's mask of slots as seen from x: bit x says what slot
    // last_square(last, x) holds (a slot holding no position reads 0).
    static Bitboard by_last_square(LastSquare last, Bitboard slots) {
        return last == LastSquare::Same         ? slots
               : last == LastSquare::Transposed ? transposed_bits(slots)
                                                : slots | transposed_bits(slots);
    }
    template <class Middle, class Root>
        requires std::same_as<Ix, index::WorkIndex> && (!R::kRoyalKing)
    void block_children(std::uint64_t block, Color s, const Square* squares, Middle&& middle, Root&& root) const {
        const int n = ix_.unit_count();
        const int last = n - 1;
        Bitboard occ = 0;
        Bitboard enemy_pawns = 0;
        for (int k = 0; k < last; ++k) {
            occ |= bit(squares[k]);
            if (ix_.unit(k) == make_unit(~s, UnitType::Pawn)) enemy_pawns |= bit(squares[k]);
        }
        const Bitboard empty = ~occ & R::kBoard;
        const bool last_is_enemy_pawn = ix_.unit(last) == make_unit(~s, UnitType::Pawn);
        const int forward = s == Color::White ? 8 : -8;
        const int start_rank = s == Color::White ? 1 : 6;
        const int last_rank = s == Color::White ? 7 : 0;
        const bool on_diagonal = ix_.root_on_diagonal(block << 6);
        typename index::WorkIndex::Neighbours neighbours(ix_, block << 6, squares);
        auto to_child = [&](int unit, Square to, Bitboard open_for) {
            if (unit == 0) {
                index::WorkIndex::RootMove move;
                [[maybe_unused]] const bool ok = ix_.root_moved(squares, to, move);
                assert(ok);
                root(move, open_for);
            } else if (on_diagonal) {
                Square moved[kMaxTableUnits];
                std::copy(squares, squares + last, moved);
                moved[unit] = to;
                index::Index plain = 0, transposed = 0;
                ix_.diagonal_blocks(moved, plain, transposed);
                if (plain < transposed) {
                    middle(plain, open_for, LastSquare::Same);
                } else if (transposed < plain) {
                    middle(transposed, open_for, LastSquare::Transposed);
                } else {
                    middle(plain, open_for, LastSquare::Folded);
                }
            } else {
                middle(neighbours.moved(unit, to) >> 6, open_for, LastSquare::Same);
            }
        };
        for (int unit = 0; unit < last; ++unit) {
            const Unit u = ix_.unit(unit);
            if (unit_color(u) != s) continue;
            const Square from = squares[unit];
            const UnitType type = unit_type(u);
            if (type != UnitType::Pawn) {
                Bitboard to = unit_attacks(type, from, occ) & empty;
                const bool slider = type == UnitType::Bishop || type == UnitType::Rook || type == UnitType::Queen;
                while (to) {
                    const Square b = pop_lsb(to);
                    Bitboard closed = bit(b);
                    if (slider) closed |= squares_between(from, b);
                    to_child(unit, b, ~closed);
                }
                continue;
            }
            const auto one = static_cast<Square>(from + forward);
            if (!(empty & bit(one)) || rank_of(one) == last_rank) continue;
            to_child(unit, one, ~bit(one));
            if (rank_of(from) != start_rank) continue;
            const auto two = static_cast<Square>(one + forward);
            if (!(empty & bit(two))) continue;
            Bitboard closed = bit(one) | bit(two);
            if constexpr (R::kPawnsCapture) {
                if (pawn_attacks(s, one) & enemy_pawns) continue;
                if (last_is_enemy_pawn) closed |= pawn_attacks(s, one);
            }
            to_child(unit, two, ~closed);
        }
    }
    // The last unit's open moves from each square x of a block, as squares
    // of the same block (the other side to move); none if the last unit is
    // not side s's. `squares` as for block_children().
    class LastUnitMoves {
    public:
        LastUnitMoves(const TableMoves& moves, Color s, std::uint64_t block, const Square* squares) {
            const auto& ix = moves.ix_;
            const int last = ix.unit_count() - 1;
            const Unit u = ix.unit(last);
            moves_ = unit_color(u) == s;
            type_ = unit_type(u);
            white_ = s == Color::White;
            Bitboard occ = 0;
            for (int k = 0; k < last; ++k) {
                occ |= bit(squares[k]);
                if (ix.unit(k) == make_unit(~s, UnitType::Pawn)) enemy_pawns_ |= bit(squares[k]);
            }
            occupied_ = occ;
            if (ix.root_on_diagonal(block << 6)) {
                index::Index plain = 0, transposed = 0;
                ix.diagonal_blocks(squares, plain, transposed);
                // The units before the last are their own transpose: the
                // last unit decides which of a placement and its transpose
                // is canonical.
                if (plain == transposed) lands_ = LastSquare::Folded;
            }
        }
        bool any() const { return moves_; }
        // Where the child of a move to t stands in the block, and the block's
        // masks as seen from the targets (see last_square, by_last_square).
        LastSquare lands() const { return lands_; }
        Square child(Square t) const { return last_square(lands_, t); }
        Bitboard by_target(Bitboard slots) const { return by_last_square(lands_, slots); }
        Bitboard targets(Square x) const {
            const Bitboard empty = ~occupied_ & R::kBoard;
            if (type_ != UnitType::Pawn) return unit_attacks(type_, x, occupied_) & empty;
            const int forward = white_ ? 8 : -8;
            const auto one = static_cast<Square>(x + forward);
            if (!(empty & bit(one)) || rank_of(one) == (white_ ? 7 : 0)) return 0;
            const Bitboard targets = bit(one);
            if (rank_of(x) != (white_ ? 1 : 6)) return targets;
            const auto two = static_cast<Square>(one + forward);
            if (!(empty & bit(two))) return targets;
            if constexpr (R::kPawnsCapture) {
                if (pawn_attacks(white_ ? Color::White : Color::Black, one) & enemy_pawns_) return targets;
            }
            return targets | bit(two);
        }

    private:
        bool moves_ = false;
        LastSquare lands_ = LastSquare::Same;
        bool white_ = true;
        UnitType type_ = UnitType::Pawn;
        Bitboard occupied_ = 0;
        Bitboard enemy_pawns_ = 0;
    };

    // A bitboard reflected in the a1-h8 diagonal (bit f + 8r to r + 8f).
    static constexpr Bitboard transposed_bits(Bitboard b) {
        constexpr Bitboard k1 = 0x5500550055005500ULL;
        constexpr Bitboard k2 = 0x3333000033330000ULL;
        constexpr Bitboard k4 = 0x0f0f0f0f00000000ULL;
        Bitboard t = k4 & (b ^ (b << 28));
        b ^= t ^ (t >> 28);
        t = k2 & (b ^ (b << 14));
        b ^= t ^ (t >> 14);
        t = k1 & (b ^ (b << 7));
        b ^= t ^ (t >> 7);
        return b;
    }

private:
    // The squares strictly between two squares on one line of a slider.
    static Bitboard squares_between(Square a, Square b) {
        const bool straight = rank_of(a) == rank_of(b) || file_of(a) == file_of(b);
        return straight ? rook_attacks(a, bit(b)) & rook_attacks(b, bit(a))
                        : bishop_attacks(a, bit(b)) & bishop_attacks(b, bit(a));
    }
    // open_children() of one unit; false once f returned false.
    template <class Neighbours, class F>
    bool unit_open_children(int unit, const Position& pos, const Square* squares, Neighbours& neighbours,
                            F& f) const {
        const Color s = pos.side_to_move();
        const Bitboard occ = pos.occupied();
        const Bitboard empty = ~occ & R::kBoard;
        const int forward = s == Color::White ? 8 : -8;
        const Square from = squares[unit];
        const UnitType type = unit_type(ix_.unit(unit));
        if (type != UnitType::Pawn) {
            Bitboard to = unit_attacks(type, from, occ) & empty;
            while (to) {
                if (!f(neighbours.moved(unit, pop_lsb(to)))) return false;
            }
            return true;
        }
        const auto one = static_cast<Square>(from + forward);
        if (!(empty & bit(one)) || rank_of(one) == (s == Color::White ? 7 : 0)) return true;
        if (!f(neighbours.moved(unit, one))) return false;
        if (rank_of(from) != (s == Color::White ? 1 : 6)) return true;
        const auto two = static_cast<Square>(one + forward);
        if (!(empty & bit(two)) || passes_enemy_pawn(pos, s, one)) return true;
        return f(neighbours.moved(unit, two));
    }

    // Compulsory captures without a royal king (losing chess): every move is
    // legal and either all moves capture or none does, so the attack sets of
    // the mover's units, computed once, give its captures and, without them,
    // its quiet moves, counted without listing them.
    static constexpr bool kAttackSetStart = R::kCapturesCompulsory && !R::kRoyalKing;
    static constexpr UnitType kPromotions[] = {UnitType::Queen, UnitType::Rook, UnitType::Bishop,
                                               UnitType::Knight, UnitType::King};

    // What start() gathers from the moves that leave the table.
    struct MoveSummary {
        int best_win = 0;    // shortest winning move outside the table, 0 if none
        int worst_loss = 0;  // longest losing move outside the table
        bool draw = false;
        int quiet = 0;       // moves to positions of this table; -1: no legal move
        // Adds one move valued outside the table; false once a win in 1
        // makes the rest irrelevant.
        bool add(probe::Value v) {
            if (v.wdl == Wdl::Win) {
                best_win = best_win == 0 ? v.dtc : std::min<int>(best_win, v.dtc);
                return best_win != 1;
            }
            if (v.wdl == Wdl::Loss) {
                worst_loss = std::max<int>(worst_loss, v.dtc);
            } else {
                draw = true;
            }
            return true;
        }
    };
    [[gnu::always_inline]] inline void summarize_listed(const Position& pos, MoveSummary& moves) const;
    [[gnu::always_inline]] inline bool summarize_by_attacks(const Position& pos, const Square* squares,
                                                            MoveSummary& moves) const;
    // Inlined like start(): a SlotStart returned through memory costs a
    // store-forwarding stall per slot.
    [[gnu::always_inline]] inline SlotStart finish_start(const Position& pos, const MoveSummary& moves) const;

    // A conversion seen from the slot's squares: the resident sub-table it
    // lands in and, per unit of that table's indexer, the unit of this
    // table that stands there (the mover on its target square).
    struct Conversion {
        const WdlTable* table = nullptr;  // null: valued through the child position
        bool terminal = false;            // took the opponent's last unit: the child has won
        bool color_flipped = false;
        // The child's side to move as the table sees it, and whether the
        // table answers that side by placement (fixed per conversion).
        Color child_side = Color::White;
        bool mapped = false;
        std::uint8_t units = 0;
        std::array<std::uint8_t, kMaxTableUnits> from{};
    };
    static constexpr int kNoCapture = kMaxTableUnits;
    static constexpr std::size_t conversion_slot(int mover, int captured, int promotion) {
        return (static_cast<std::size_t>(mover) * (kMaxTableUnits + 1) + static_cast<std::size_t>(captured)) *
                   (kUnitTypeCount + 1) +
               static_cast<std::size_t>(promotion);
    }
    void prepare_conversions();
    // The value for the mover of unit `mover` moving to `to`, capturing unit
    // `captured` (kNoCapture if none) and promoting to `promotion` (0: none,
    // else UnitType index + 1).
    probe::Value conversion_value(const Position& pos, const Square* squares, int mover, int captured,
                                  int promotion, Square to) const;

    bool is_valid(const Position& pos) const {
        if constexpr (R::kRoyalKing) {
            // The side that just moved cannot have left its king attacked.
            return !king_attacked<R>(pos, ~pos.side_to_move());
        } else {
            return true;
        }
    }

    // Does this quiet move give the opponent an en-passant capture?
    // (Position::after records the square exactly then.)
    static bool gives_en_passant(const Position& pos, Move m) {
        if ((m.from() ^ m.to()) != 16 || unit_type(pos.unit_on(m.from())) != UnitType::Pawn) return false;
        return passes_enemy_pawn(pos, pos.side_to_move(), static_cast<Square>((m.from() + m.to()) / 2));
    }
    // Would a double push by `mover` over `skipped` give the opponent an
    // en-passant capture? The positions it leads to are valued outside the
    // table, so neither the counters nor the un-moves include such pushes.
    static bool passes_enemy_pawn(const Position& pos, Color mover, Square skipped) {
        if constexpr (!R::kPawnsCapture) {
            return false;
        } else {
            return (pawn_attacks(mover, skipped) & pos.units(~mover, UnitType::Pawn)) != 0;
        }
    }

    probe::Value en_passant_child_value(const Position& child) const {
        // Captures are compulsory and one exists, so every move converts.
        MoveList list;
        generate_legal<R>(child, list);
        probe::Value best{Wdl::Loss, 0};
        for (Move m : list) {
            const probe::Value v = probe::move_value(child_value_(child.after(m)), true);
            if (probe::better_for_mover(v, best)) best = v;
        }
        return best;
    }

    const Ix& ix_;
    ChildValue child_value_;
    std::vector<Conversion> conversions_;  // by conversion_slot (attack-set starts only)
    // Symmetries of the table other than the identity (rules numbering),
    // with their square maps.
    std::vector<int> symmetries_;
    Square transformed_[kSymmetryCount][64]{};
    Bitboard fixed_squares_[kSymmetryCount]{};  // per entry of symmetries_: the squares it maps onto themselves
    Bitboard fixed_by_any_ = 0;                  // their union
    std::vector<Unit> single_units_;
};

template <Ruleset R, TableIndexer Ix>
SlotStart TableMoves<R, Ix>::start(Color side, std::uint64_t index) const {
    Position pos;
    Square squares[kMaxTableUnits];
    if (!decode(index, side, squares, pos)) {
        SlotStart out;
        out.value = StateWord::kInvalid;
        return out;
    }
    return start(pos, squares);
}

template <Ruleset R, TableIndexer Ix>
SlotStart TableMoves<R, Ix>::start(const Position& pos, const Square* squares) const {
    MoveSummary moves;
    if constexpr (kAttackSetStart) {
        if (summarize_by_attacks(pos, squares, moves)) return finish_start(pos, moves);
    }
    summarize_listed(pos, moves);
    return finish_start(pos, moves);
}

template <Ruleset R, TableIndexer Ix>
void TableMoves<R, Ix>::summarize_listed(const Position& pos, MoveSummary& moves) const {
    MoveList list;
    generate_legal<R>(pos, list);
    if (list.empty()) {
        // No move at all: finish_start() asks for the terminal value.
        moves.quiet = -1;
        return;
    }
    // Compulsory captures: either every move captures or none does, and
    // without pawns (no promotion, no en passant) every non-capture is quiet.
    const bool all_captures = R::kCapturesCompulsory && pos.is_capture(list[0]);
    const bool all_quiet = R::kCapturesCompulsory && !all_captures && pos.units(pos.side_to_move(), UnitType::Pawn) == 0;
    if (all_quiet) {
        moves.quiet = static_cast<int>(list.size());
        return;
    }
    for (Move m : list) {
        probe::Value v;
        if (all_captures || pos.is_conversion(m)) {
            v = probe::move_value(child_value_(pos.after(m)), true);
        } else if (!gives_en_passant(pos, m)) {
            ++moves.quiet;
            continue;
        } else {
            v = probe::move_value(en_passant_child_value(pos.after(m)), false);
        }
        if (!moves.add(v)) break;
    }
}

template <Ruleset R, TableIndexer Ix>
bool TableMoves<R, Ix>::summarize_by_attacks(const Position& pos, const Square* squares,
                                             MoveSummary& moves) const {
    const Color side = pos.side_to_move();
    const Bitboard enemy = pos.units(~side) & R::kBoard;
    if (pos.units(side) == 0 || pos.units(~side) == 0) return false;
    const Bitboard occ = pos.occupied();
    const Bitboard empty = ~occ & R::kBoard;
    const int n = ix_.unit_count();
    Bitboard attacks[kMaxTableUnits];
    Bitboard captures = 0;
    for (int k = 0; k < n; ++k) {
        const Unit u = ix_.unit(k);
        attacks[k] = 0;
        if (unit_color(u) != side) continue;
        const UnitType type = unit_type(u);
        if (type != UnitType::Pawn) {
            attacks[k] = unit_attacks(type, squares[k], occ);
        } else if constexpr (R::kPawnsCapture) {
            // Decoded positions have no en-passant square.
            attacks[k] = pawn_attacks(side, squares[k]);
        }
        captures |= attacks[k] & enemy;
    }
    const int last_rank = side == Color::White ? 7 : 0;
    if (captures) {
        for (int k = 0; k < n; ++k) {
            if (!(attacks[k] & enemy)) continue;
            const bool pawn = unit_type(ix_.unit(k)) == UnitType::Pawn;
            for (int j = 0; j < n; ++j) {
                const Square to = squares[j];
                if (unit_color(ix_.unit(j)) == side || !(attacks[k] & bit(to))) continue;
                if (!pawn || rank_of(to) != last_rank) {
                    if (!moves.add(probe::move_value(conversion_value(pos, squares, k, j, 0, to), true))) return true;
                    continue;
                }
                for (UnitType t : kPromotions) {
                    if (t == UnitType::King && !R::kPromoteToKing) continue;
                    if (!moves.add(probe::move_value(conversion_value(pos, squares, k, j, to_index(t) + 1, to), true))) {
                        return true;
                    }
                }
            }
        }
        return true;
    }
    int any = 0;  // moves of any kind
    const int forward = side == Color::White ? 8 : -8;
    const int start_rank = side == Color::White ? 1 : 6;
    for (int k = 0; k < n; ++k) {
        const Unit u = ix_.unit(k);
        if (unit_color(u) != side) continue;
        if (unit_type(u) != UnitType::Pawn) {
            const int count = popcount(attacks[k] & empty);
            moves.quiet += count;
            any += count;
            continue;
        }
        const Square from = squares[k];
        const auto one = static_cast<Square>(from + forward);
        if (!(empty & bit(one))) continue;
        ++any;
        if (rank_of(one) == last_rank) {
            for (UnitType t : kPromotions) {
                if (t == UnitType::King && !R::kPromoteToKing) continue;
                if (!moves.add(probe::move_value(conversion_value(pos, squares, k, kNoCapture, to_index(t) + 1, one), true))) {
                    return true;
                }
            }
            continue;
        }
        ++moves.quiet;
        if (rank_of(from) != start_rank) continue;
        const auto two = static_cast<Square>(one + forward);
        if (!(empty & bit(two))) continue;
        if (!passes_enemy_pawn(pos, side, one)) {
            ++moves.quiet;
            continue;
        }
        if (!moves.add(probe::move_value(en_passant_child_value(pos.after(Move(from, two))), false))) return true;
    }
    if (any == 0) moves.quiet = -1;
    return true;
}

template <Ruleset R, TableIndexer Ix>
SlotStart TableMoves<R, Ix>::finish_start(const Position& pos, const MoveSummary& moves) const {
    SlotStart out;
    if (moves.quiet < 0) {
        const Wdl wdl = *terminal_value<R>(pos, false);
        if (wdl == Wdl::Draw) {
            out.value = StateWord::kDrawFinal;
        } else {
            out.value = probe::encode_value({wdl, 0});
            out.level = 0;
        }
        return out;
    }
    const int best_win = moves.best_win;
    const int worst_loss = moves.worst_loss;
    const bool draw = moves.draw;
    const int quiet = moves.quiet;
    if (best_win == 1) {
        out.value = probe::encode_value({Wdl::Win, 1});
        out.level = 1;
        return out;
    }
    if (quiet == 0) {
        if (best_win) {
            out.value = probe::encode_value({Wdl::Win, static_cast<std::uint16_t>(best_win)});
            out.level = static_cast<std::int16_t>(best_win);
        } else if (draw) {
            out.value = StateWord::kDrawFinal;
        } else {
            out.value = probe::encode_value({Wdl::Loss, static_cast<std::uint16_t>(worst_loss)});
            out.level = static_cast<std::int16_t>(worst_loss);
        }
        return out;
    }
    out.open = (draw || best_win) ? StateWord::kCannotLose : static_cast<std::uint8_t>(quiet);
    out.late_win = best_win != 0;
    out.late_loss = !best_win && worst_loss > 1;
    if (!symmetries_.empty()) out.stabilizer = static_cast<std::uint8_t>(stabilizer(pos));
    return out;
}

template <Ruleset R, TableIndexer Ix>
void TableMoves<R, Ix>::prepare_conversions() {
    const int n = ix_.unit_count();
    conversions_.assign(conversion_slot(kMaxTableUnits - 1, kNoCapture, kUnitTypeCount) + 1, Conversion{});
    index::Material material;
    for (int k = 0; k < n; ++k) material.add(unit_color(ix_.unit(k)), unit_type(ix_.unit(k)));
    for (int mover = 0; mover < n; ++mover) {
        const Color side = unit_color(ix_.unit(mover));
        for (int captured = 0; captured <= kNoCapture; ++captured) {
            if (captured < n && unit_color(ix_.unit(captured)) == side) continue;
            if (captured >= n && captured != kNoCapture) continue;
            for (int promotion = 0; promotion <= kUnitTypeCount; ++promotion) {
                if (promotion != 0 && unit_type(ix_.unit(mover)) != UnitType::Pawn) continue;
                if (promotion == 0 && captured == kNoCapture) continue;
                Conversion& c = conversions_[conversion_slot(mover, captured, promotion)];
                // The units after the move, by unit of this table.
                std::array<Unit, kMaxTableUnits> after{};
                index::Material child = material;
                for (int k = 0; k < n; ++k) after[k] = ix_.unit(k);
                if (captured != kNoCapture) {
                    child.add(~side, unit_type(ix_.unit(captured)), -1);
                    after[captured] = Unit::None;
                    if (child.count(~side) == 0) {
                        c.terminal = true;
                        continue;
                    }
                }
                if (promotion != 0) {
                    const auto type = static_cast<UnitType>(promotion - 1);
                    child.add(side, UnitType::Pawn, -1);
                    child.add(side, type);
                    after[mover] = make_unit(side, type);
                }
                const ResidentSubtable resident = child_value_.resident(child);
                if (!resident.table) continue;
                const index::Indexer& sub = resident.table->indexer();
                std::array<bool, kMaxTableUnits> used{};
                bool complete = sub.unit_count() == child.total();
                for (int i = 0; i < sub.unit_count() && complete; ++i) {
                    Unit want = sub.unit(i);
                    if (resident.color_flipped) want = make_unit(~unit_color(want), unit_type(want));
                    int found = -1;
                    for (int k = 0; k < n && found < 0; ++k) {
                        if (!used[k] && after[k] == want) found = k;
                    }
                    complete = found >= 0;
                    if (complete) {
                        used[found] = true;
                        c.from[i] = static_cast<std::uint8_t>(found);
                    }
                }
                if (!complete) continue;
                c.table = resident.table;
                c.color_flipped = resident.color_flipped;
                // The mover hands the move over; a colour-flipped table sees it swapped.
                c.child_side = resident.color_flipped ? side : ~side;
                c.mapped = resident.table->maps_placements(c.child_side);
                c.units = static_cast<std::uint8_t>(sub.unit_count());
            }
        }
    }
}

template <Ruleset R, TableIndexer Ix>
probe::Value TableMoves<R, Ix>::conversion_value(const Position& pos, const Square* squares, int mover,
                                                 int captured, int promotion, Square to) const {
    const Conversion& c = conversions_[conversion_slot(mover, captured, promotion)];
    if (c.terminal) return {Wdl::Win, 0};
    if (c.table) {
        // The child's squares in the sub-table's unit order and orientation.
        const int mirror = c.color_flipped ? 56 : 0;
        Square placed[kMaxTableUnits];
        for (int i = 0; i < c.units; ++i) {
            const int k = c.from[i];
            placed[i] = static_cast<Square>((k == mover ? to : squares[k]) ^ mirror);
        }
        if (c.mapped) {
            probe::Value v;
            if (c.table->mapped_value(c.child_side, placed, v)) return v;
        } else if (const index::Index slot = c.table->indexer().encode(placed); slot != index::kNoIndex) {
            return c.table->value(c.child_side, slot);
        }
    }
    const Move m = promotion == 0 ? Move(squares[mover], to)
                                  : Move(squares[mover], to, static_cast<UnitType>(promotion - 1));
    return child_value_(pos.after(m));
}

template <Ruleset R, TableIndexer Ix>
template <class Out>
void TableMoves<R, Ix>::predecessors(std::uint64_t index, const Position& pos, Square* squares, Out& out,
                                     bool sorted, int units_end) const {
    out.clear();
    const Color s = pos.side_to_move();
    const Color p = ~s;  // the side that made the last move
    const Bitboard occ = pos.occupied();
    const Bitboard empty = ~occ & R::kBoard;
    [[maybe_unused]] auto neighbours = [&] {
        if constexpr (MoveIndexer<Ix>) {
            return typename Ix::Neighbours(ix_, index, squares);
        } else {
            return 0;
        }
    }();
    int unit = 0;
    const int n = ix_.unit_count();
    // Compulsory captures: a predecessor whose mover has a capture has
    // only captures, all conversions, so the initial pass decided it and
    // an update would be dropped. Skipping it saves the slot's encoding
    // and, out of core, most of the updates sent to other chunks.
    constexpr bool kSkipCaptures = R::kCapturesCompulsory && !R::kRoyalKing;
    [[maybe_unused]] const Bitboard victims = pos.units(s) & R::kBoard;
    // The mover's leapers and pawns attack the same squares whatever the
    // un-move, so their captures are known once: with two of them capturing,
    // no un-move is left; with one, only its own un-moves.
    [[maybe_unused]] int capturing_leapers = 0;
    [[maybe_unused]] int capturing_leaper = -1;
    [[maybe_unused]] int sliders[kMaxTableUnits];
    [[maybe_unused]] int slider_count = 0;
    [[maybe_unused]] auto capture_squares = [&](UnitType type, Square at, Bitboard occupied) -> Bitboard {
        if (type != UnitType::Pawn) return unit_attacks(type, at, occupied);
        if constexpr (R::kPawnsCapture) return pawn_attacks(p, at);
        return 0;
    };
    if constexpr (kSkipCaptures) {
        for (int k = 0; k < n; ++k) {
            const Unit w = ix_.unit(k);
            if (unit_color(w) != p) continue;
            const UnitType type = unit_type(w);
            if (type == UnitType::Bishop || type == UnitType::Rook || type == UnitType::Queen) {
                sliders[slider_count++] = k;
                continue;
            }
            if (capture_squares(type, squares[k], 0) & victims) {
                ++capturing_leapers;
                capturing_leaper = k;
            }
        }
        if (capturing_leapers >= 2) return;
    }
    // The moved unit from its origin, then the other sliders through the
    // occupancy before the move.
    auto mover_captures = [&](Square from, Square to) {
        if constexpr (!kSkipCaptures) {
            return false;
        } else {
            const Bitboard occ_before = occ ^ bit(to) ^ bit(from);
            if (capture_squares(unit_type(ix_.unit(unit)), from, occ_before) & victims) return true;
            for (int j = 0; j < slider_count; ++j) {
                const int k = sliders[j];
                if (k != unit && (unit_attacks(unit_type(ix_.unit(k)), squares[k], occ_before) & victims)) return true;
            }
            return false;
        }
    };
    auto add = [&](Square from, Square to) {
        if (mover_captures(from, to)) return;
        std::uint64_t q;
        if constexpr (MoveIndexer<Ix>) {
            q = neighbours.moved(unit, from);
        } else {
            squares[unit] = from;
            q = ix_.encode(squares);
            squares[unit] = to;
        }
        if (q != kNoSlot) out.push_back(q);
    };
    const int forward = p == Color::White ? 8 : -8;
    const int double_push_rank = p == Color::White ? 3 : 4;
    const int first_rank = p == Color::White ? 0 : 7;
    for (unit = 0; unit < std::min(n, units_end); ++unit) {
        const Unit u = ix_.unit(unit);
        if (unit_color(u) != p) continue;
        if constexpr (kSkipCaptures) {
            if (capturing_leapers == 1 && capturing_leaper != unit) continue;
        }
        const Square to = squares[unit];
        const UnitType type = unit_type(u);
        if (type != UnitType::Pawn) {
            Bitboard from = unit_attacks(type, to, occ) & empty;
            while (from) add(pop_lsb(from), to);
            continue;
        }
        const auto back = static_cast<Square>(to - forward);
        if (rank_of(back) == first_rank || !(empty & bit(back))) continue;
        add(back, to);
        if (rank_of(to) != double_push_rank) continue;
        const auto start = static_cast<Square>(back - forward);
        if (!(empty & bit(start))) continue;
        if (passes_enemy_pawn(pos, p, back)) continue;
        add(start, to);
    }
    // Sorted, repeated predecessors (several un-moves) stand together.
    if (sorted) std::sort(out.begin(), out.end());
}

template <Ruleset R, TableIndexer Ix>
template <class F>
    requires MoveIndexer<Ix> && (!R::kRoyalKing)
void TableMoves<R, Ix>::open_children(std::uint64_t index, const Position& pos, const Square* squares,
                                      F&& f, int first_unit) const {
    const Color s = pos.side_to_move();
    typename Ix::Neighbours neighbours(ix_, index, squares);
    const int n = ix_.unit_count();
    // From unit 0, its moves come last: a root unit's move re-maps the others
    // (Neighbours), the dearest slots to find, and a pull often stops at a
    // losing child before reaching them. The order changes no verdict.
    for (int step = first_unit; step < n; ++step) {
        const int unit = first_unit != 0 ? step : (step + 1) % n;
        if (unit_color(ix_.unit(unit)) != s) continue;
        if (!unit_open_children(unit, pos, squares, neighbours, f)) return;
    }
}

}  // namespace tbf::gen
