#pragma once
// Perfect hashing of the positions of one table (docs/ARCHITECTURE.md section 5): a
// bijection between the slots [0, size()) and the canonical placements of the
// table's units. The index holds neither the side to move nor en passant: a
// table keeps one slot array per side to move.
//
// Losing chess: pawnless tables use the 8 board symmetries, tables with pawns
// the file mirror; every slot is a distinct legal placement up to symmetry,
// so size() is exactly the number of positions per side to move. Four File:
// no symmetry, kings on the e-file never on the same or adjacent squares,
// other units on files a, c, e, g; pawns always on ranks 2-7. A Four File
// slot whose side not to move is in check is not a position (position()
// says so); everything else is.
//
// Unit order: units are grouped by (colour, type); the groups are ordered
// pawns first, then (losing chess) larger groups first, then by how few moves
// the type has (N, K, B, R, Q), White before Black; Four File puts the two
// kings first and ignores group sizes. The first group(s) are
// the high-order digits of the index and the last group the low-order ones,
// so moves of the most mobile units change the index least. docs/index.md
// describes the scheme.
//
// Thread safety: an Indexer is immutable after create(); all const member
// functions may be called from any number of threads. Copies are cheap (the
// tables behind them are shared).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tbforge/index/material.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/result.hpp"
#include "tbforge/rules/symmetry.hpp"
#include "tbforge/rules/types.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::index {

using Index = std::uint64_t;
inline constexpr Index kNoIndex = ~Index{0};

// One square per unit, in the indexer's unit order (Indexer::unit(i)).
using Placement = std::array<Square, kMaxUnits>;

// Where a position lives: its slot and its side to move, both in the
// canonical colour orientation of the table.
struct Slot {
    Index index = kNoIndex;
    Color side_to_move = Color::White;
    bool color_flipped = false;  // the position was colour-flipped to get here
};

namespace detail {
struct RootTable;
struct NodeTree;
// A divisor with its reciprocal, for quotients without a hardware division.
struct FastDiv {
    std::uint64_t divisor = 1;
    double inverse = 1.0;
};
}  // namespace detail

class Indexer {
public:
    // `material` must be a table of `variant` in canonical orientation.
    static Result<Indexer> create(VariantId variant, const Material& material);
    // The same table with the groups of identical units in the given order,
    // high digit first, each (colour, type) of the material named once. The
    // order must keep pawns before the other units (Four File: the kings,
    // then pawns), which the tail's fixed radices need; any such order is
    // a bijection onto [0, size()) with the same size. Error otherwise.
    static Result<Indexer> create(VariantId variant, const Material& material, std::span<const Unit> group_order);
    // The groups' units, high digit first (what create() was given, or the
    // default order).
    std::vector<Unit> group_order() const;

    VariantId variant() const { return variant_; }
    const Material& material() const { return material_; }
    // Number of slots N.
    Index size() const { return size_; }
    int unit_count() const { return units_; }
    // The unit whose square is placement[i].
    Unit unit(int i) const { return unit_of_[static_cast<std::size_t>(i)]; }
    // The symmetries used (table_symmetry() of the variant and material) and
    // their number: 8, 2 or 1.
    SymmetryGroup symmetry_group() const { return symmetry_group_; }
    int symmetry_count() const;

    // ---- Fast path (no Position, no allocation) ----
    // Squares of the canonical placement of slot `index`, each group of
    // identical units in ascending square order. False if `index` >= size().
    bool decode(Index index, Square* squares) const noexcept;
    // decode(index, squares) for `squares` holding the decoded placement of
    // index - 1, as a scan of consecutive slots has it: within a run of the
    // last unit's digit only that unit moves, to its next free square.
    bool decode_next(Index index, Square* squares) const noexcept;
    // The slots after `index` that differ from it only by the last unit's
    // square (those decode_next() reaches by moving that unit alone), at most
    // `max`: their count, and the last unit's square in each in `next`.
    // `squares` holds the decoded placement of `index`. 0 where the last
    // unit's digit has no fixed radix (a listed root choice, a group).
    int last_unit_run(Index index, const Square* squares, Square* next, int max) const noexcept;
    // The slot of a placement or of any of its symmetric images; units of a
    // group may come in any order. Squares must be distinct. kNoIndex if a
    // unit stands outside its allowed squares (pawns off ranks 2-7, Four File
    // off files a/c/e/g, Four File kings off the e-file or touching).
    Index encode(const Square* squares) const noexcept;
    // The slots of the placements one unit move away from a decoded slot,
    // without a full encode for most moves (below).
    class Neighbours;
    // The first root_unit_count() units are the root (whole groups). A move
    // of any later unit keeps the slot inside root_range(slot), the slots of
    // its root choice: [first, end). idx must be < size().
    int root_unit_count() const noexcept { return root_units_; }
    std::pair<Index, Index> root_range(Index idx) const noexcept;

    // ---- Position path ----
    // The placement of a position with exactly this material (same colour
    // orientation), in unit order; false if the material differs.
    bool placement_of(const Position& pos, Square* squares) const;
    // Slot of a position with exactly this material, or kNoIndex. Does not
    // look at the side to move, en passant or checks.
    Index index(const Position& pos) const;
    // Slot and side to move of a position of this table in either colour
    // orientation; nullopt if the material belongs to another table or the
    // placement is outside the table (see encode).
    std::optional<Slot> locate(const Position& pos) const;
    // Slot of a position whose material is known to be this table's, in the
    // given colour orientation (locate without the material check); kNoIndex
    // if the placement is outside the table.
    Index index_oriented(const Position& pos, bool color_flipped) const noexcept;
    // The canonical position of a slot with the given side to move, or
    // nullopt for "not a position" (index out of range; Four File: the side
    // not to move is in check). No en-passant square.
    std::optional<Position> position(Index index, Color side_to_move) const;
    // position(index, side).has_value() without building the Position where
    // the answer does not depend on it.
    bool is_valid(Index index, Color side_to_move) const;
    // True when is_valid holds for every slot below size() (losing chess):
    // counting positions then needs no pass over the slots.
    bool every_slot_valid() const noexcept { return !royal_king_; }

    // One line naming the size, symmetry and unit order, for reports and
    // docs, e.g. "antichess KQRvKB: 114369360 slots, 8 symmetries, order wK
    // bK bB | wR wQ (high digit first; root before '|')".
    std::string describe() const;

private:
    struct Group {
        Unit unit{};
        int count = 0;
        int first = 0;  // index of the group's first square in a placement
        Bitboard domain = 0;
    };

    Indexer() = default;
    // Index into root_offset_ of the listed root choice holding slot `idx`
    // (idx >= free_end_).
    std::size_t listed_choice(Index idx) const noexcept;
    Index encode_tail(const Square* squares, int sym, Bitboard occ, int level) const noexcept;
    void decode_tail(Index rest, Bitboard occ, int level, Square* squares) const noexcept;
    void place_group(int g, std::uint64_t rank, Bitboard& occ, Square* squares) const noexcept;
    Index encode_node(int node, const Square* squares, std::uint8_t syms,
                      Bitboard occ) const noexcept;
    void decode_node(int node, Index rest, Bitboard occ, Square* squares) const noexcept;
    Index tail_size(int level, Bitboard occ) const;
    int build_node(int level, Bitboard occ, std::uint8_t stab, detail::NodeTree& tree) const;

    VariantId variant_ = VariantId::Antichess;
    Material material_;
    std::array<Group, kMaxUnits> groups_{};
    std::array<Unit, kMaxUnits> unit_of_{};
    std::array<std::uint8_t, kMaxUnits> group_of_{};  // per unit
    // Per group: position of a square in the group's domain (0xFF outside)
    // and the square at each position.
    std::array<std::array<std::uint8_t, 64>, kMaxUnits> domain_index_{};
    std::array<std::array<Square, 64>, kMaxUnits> domain_square_{};
    std::array<int, kMaxUnits> domain_size_{};
    int group_count_ = 0;
    int units_ = 0;
    bool royal_king_ = false;       // slots may hold placements that are not positions
    SymmetryGroup symmetry_group_ = SymmetryGroup::None;
    std::uint8_t symmetries_ = 1;  // bit s set: symmetry s is used
    std::shared_ptr<const detail::RootTable> root_;
    int root_groups_ = 0;
    int root_units_ = 0;
    Index size_ = 0;
    // Root choices [0, free_choices_) have no symmetry left and, when
    // free_size_ != 0, all span free_size_ slots: slot = choice * free_size_ +
    // tail, the tail digits having the radices free_radix_. The other choices
    // start at root_offset_[choice - offset_base_].
    std::uint32_t free_choices_ = 0;
    Index free_size_ = 0;
    Index free_end_ = 0;
    detail::FastDiv free_div_{};
    std::array<detail::FastDiv, kMaxUnits> free_radix_{};
    std::array<detail::FastDiv, kMaxUnits> free_below_{};  // product of the radices after g
    std::uint32_t offset_base_ = 0;
    std::vector<Index> root_offset_;
    std::vector<std::int32_t> root_child_;
    detail::FastDiv bucket_width_{};
    std::vector<std::uint32_t> bucket_first_;
    // For few listed root choices: per choice and group, the product of the
    // later radices and the group's radix (see decode).
    std::vector<detail::FastDiv> choice_below_;
    std::vector<std::uint64_t> choice_radix_;
    std::shared_ptr<const detail::NodeTree> tree_;
};

// The slots of the placements that differ from one decoded slot by one
// unit's square, each exactly what encode() returns for that placement.
//
// A tail unit's move changes its group's digit and, for the units of later
// groups standing between its two squares, their positions among the free
// squares: a few additions to the slot instead of a full encode. A root
// unit's move gives a new root choice and symmetry; the tail's image under
// that symmetry is worked out once per position and only re-ranked around
// the new root squares. Full encodes remain for roots that keep a symmetry
// (listed nodes): tail moves of a slot whose root has one, and root moves
// onto one.
//
// Cheap to construct (one per position in the retrograde passes); the work
// behind each kind of move is done on its first use. Not thread-safe: one
// object per thread.
class Indexer::Neighbours {
public:
    // `squares` is the placement decoded from `slot` (Indexer::decode); it
    // must outlive this object.
    Neighbours(const Indexer& ix, Index slot, const Square* squares) noexcept
        : ix_(ix), slot_(slot), squares_(squares) {}

    // The slot of the placement with unit `moved` on `to`, an empty square
    // (kNoIndex where encode() gives it).
    Index moved(int moved, Square to) noexcept {
        if (moved < ix_.root_units_) return moved_in_root(moved, to);
        if (tail_ == TailState::Unknown) prepare_tail();
        return tail_ == TailState::Deltas ? moved_in_tail(moved, to) : encode_moved(moved, to);
    }

private:
    enum class TailState : std::uint8_t { Unknown, Deltas, Encode };

    // The tail units mapped by one symmetry, ranked among the squares of
    // their domains that earlier tail units leave free; the root squares
    // are taken off per move.
    struct Image {
        Bitboard root;                             // the mapped root squares
        std::array<Square, kMaxUnits> square;      // per unit, ascending within a group
        std::array<std::uint8_t, kMaxUnits> rank;  // per unit
        std::array<std::uint8_t, kMaxUnits> free;  // per group
        bool outside;  // a unit off its domain: encode gives kNoIndex
    };

    Index moved_in_tail(int moved, Square to) noexcept;
    Index moved_in_root(int moved, Square to) noexcept;
    Index encode_moved(int moved, Square to) const noexcept;
    void prepare_tail() noexcept;
    void prepare_root() noexcept;
    const Image& image(int sym) noexcept {
        if (!(imaged_ & (1U << sym))) compute_image(sym);
        return images_[static_cast<std::size_t>(sym)];
    }
    void compute_image(int sym) noexcept;

    const Indexer& ix_;
    Index slot_;
    const Square* squares_;
    // The arrays below are filled when first needed and never zeroed: the
    // passes build one object per position.

    // Tail moves of a slot whose root has no symmetry left: slot = base +
    // sum over tail groups of digit * below, below being the product of
    // the later radices.
    TailState tail_ = TailState::Unknown;
    std::array<Index, kMaxUnits> digit_;            // per group
    std::array<Index, kMaxUnits> below_;            // per group
    std::array<Bitboard, kMaxUnits> occ_before_;    // per group: root and earlier tail squares
    std::array<std::uint8_t, kMaxUnits> rank_;      // per unit: position among its free squares

    // Root moves: per root unit, the raw root key without its group's share
    // and the domain positions of the rest of its group, ascending.
    bool root_ready_ = false;
    std::array<std::uint64_t, kMaxUnits> key_rest_;
    std::array<std::array<std::uint8_t, kMaxUnits - 1>, kMaxUnits> group_rest_;
    std::uint8_t imaged_ = 0;                        // bit per symmetry: images_ entry filled
    std::array<Image, kSymmetryCount> images_;
};

// Every group order Indexer::create accepts for a table, as its indexer:
// the permutations of the table's groups in lexicographic order of their
// units. Each indexer is built when asked for, as a large table's take
// memory:
//     for (GroupOrders orders(variant, material); auto ix = orders.next();) ...
class GroupOrders {
public:
    GroupOrders(VariantId variant, const Material& material);
    // The indexer of the next order accepted; nullopt after the last.
    std::optional<Indexer> next();

private:
    VariantId variant_;
    Material material_;
    std::vector<Unit> order_;  // the next permutation to try
    bool done_ = false;
};

// Printable name of a unit in a placement, e.g. "wK", "bP".
std::string unit_label(Unit u);

}  // namespace tbf::index
