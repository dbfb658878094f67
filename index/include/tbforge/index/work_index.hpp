#pragma once
// A generation-time index for losing-chess tables: one "root" unit reduced by
// the table's symmetries, every other unit a raw base-64 digit. Moving a
// non-root unit changes the slot by a fixed stride, so the retrograde passes
// find predecessors with an addition instead of a full ranking; the price is
// unused slots (overlaps, pawns on the back ranks, symmetric duplicates),
// about 1.2-1.5 times the exact index. Tables are built on it and stored in
// the exact index (indexer.hpp).
//
// Slot = root_choice * 64^(n-1) + sum of square(i) * 64^(n-1-i). The root is
// a unit alone of its kind; pawnless tables put it in the triangle a1-d1-d4
// (8 symmetries), tables with pawns on files a-d (file mirror). A unit group
// of identical units takes its squares in ascending order. When the root
// stands on the a1-h8 diagonal, the smaller of the two transposed slots is
// the canonical one.
//
// Thread safety: immutable after create().

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/rules/symmetry.hpp"

namespace tbf::index {

class WorkIndex {
public:
    // nullopt where the scheme does not apply: a variant whose board is not
    // all 64 squares, with royal kings, or without the 8 symmetries (Four
    // File); or no unit alone of its kind.
    static std::optional<WorkIndex> create(VariantId variant, const Material& material);

    Index size() const { return size_; }
    int unit_count() const { return units_; }
    Unit unit(int i) const { return unit_of_[static_cast<std::size_t>(i)]; }
    // Full without pawns, FileMirror with.
    SymmetryGroup symmetry_group() const { return symmetry_group_; }
    int symmetry_count() const { return std::popcount(symmetry_mask(symmetry_group_)); }

    // Squares of a slot; false for an unused slot.
    bool decode(Index slot, Square* squares) const noexcept {
        return decode_prefix(slot, squares) && decode_last(slot, squares);
    }
    // decode() in two steps, for scans in slot order, where consecutive
    // slots mostly share every digit but the last: the units before the last
    // (false: every slot with these digits is unused), then the last unit,
    // the units before it in `squares` as decode_prefix() left them.
    bool decode_prefix(Index slot, Square* squares) const noexcept;
    bool decode_last(Index slot, Square* squares) const noexcept {
        const int last = units_ - 1;
        const auto s = static_cast<Square>(slot & 63);
        for (int i = 0; i < last; ++i) {
            if (squares[i] == s) return false;
        }
        if (pawn_[last] && (bit(s) & kBackRankSquares)) return false;
        if (last > group_first_[last] && s < squares[last - 1]) return false;
        squares[last] = s;
        return !choice_on_diagonal_[static_cast<std::size_t>(slot >> shift_)] || canonical_on_diagonal(squares);
    }
    // The units of the group `unit` belongs to (1: alone of its kind).
    int group_size(int unit) const { return group_count_[static_cast<std::size_t>(unit)]; }
    // Does the root of `slot` stand on the a1-h8 diagonal, where the
    // canonical slot of a placement is the smaller of it and its transpose?
    bool root_on_diagonal(Index slot) const { return choice_on_diagonal_[static_cast<std::size_t>(slot >> shift_)]; }
    // A move of the root to `to` seen from every square x of the last unit
    // at once (the last unit alone of its kind; `squares` holds the units
    // before the last): the other units are re-mapped by the symmetry that
    // brings the root home, so every x leads into one block of 64 slots, at
    // square(x). A root landing on the a1-h8 diagonal has two candidates:
    // the smaller slot wins, which is the smaller block, or, in one block,
    // the smaller square.
    struct RootMove {
        Index block = 0;
        const std::array<Square, 64>* map = nullptr;
        Index alt_block = 0;
        const std::array<Square, 64>* alt_map = nullptr;  // null: one candidate

        Index child_block() const { return alt_map && alt_block < block ? alt_block : block; }
        Square square(Square x) const {
            if (!alt_map || block < alt_block) return (*map)[x];
            if (alt_block < block) return (*alt_map)[x];
            return std::min((*map)[x], (*alt_map)[x]);
        }
    };
    // False if the move has no slot.
    bool root_moved(const Square* squares, Square to, RootMove& out) const noexcept;
    // With the root on the a1-h8 diagonal (pawnless tables): the block of
    // the units before the last as placed in `squares`, and the block of
    // their transpose. With the last unit on x the canonical slot is the
    // smaller of plain * 64 + x and transposed * 64 + transpose(x); equal
    // blocks leave the choice to x.
    void diagonal_blocks(const Square* squares, Index& plain, Index& transposed) const noexcept {
        const std::uint8_t choice = canonical_[squares[0]].choice;
        plain = encode_with(squares, 0, choice, units_ - 1) >> 6;
        transposed = encode_with(squares, kTranspose, choice, units_ - 1) >> 6;
    }
    // The canonical slot of a placement (distinct squares, identical units in
    // any order, any symmetric image); kNoIndex if a pawn stands on rank 1 or 8.
    Index encode(const Square* squares) const noexcept;
    class Neighbours;
    class Cursor;

private:
    struct Canonical {
        std::uint8_t choice = kNoChoice;
        std::int8_t sym = 0;
        std::int8_t alt_sym = -1;  // second symmetry onto the same root square (diagonal)
    };

    static constexpr std::uint8_t kNoChoice = 0xFF;
    static constexpr Bitboard kBackRankSquares = 0xFF000000000000FFULL;

    WorkIndex() = default;
    // The slot of a placement under symmetry `sym` with root choice `choice`,
    // from the units before `end` (the others' digits left 0).
    Index encode_with(const Square* squares, int sym, std::uint8_t choice, int end) const noexcept;
    Index encode_with(const Square* squares, int sym, std::uint8_t choice) const noexcept {
        return encode_with(squares, sym, choice, units_);
    }
    // A group's squares in ascending order (groups are small: insertion sort).
    static void sort_squares(Square* squares, int count) noexcept {
        for (int k = 1; k < count; ++k) {
            for (int j = k; j > 0 && squares[j] < squares[j - 1]; --j) std::swap(squares[j], squares[j - 1]);
        }
    }
    // The images of a group's squares under a square map, ascending.
    static void sorted_images(const Square* squares, int count, const std::array<Square, 64>& map,
                              Square* out) noexcept {
        for (int k = 0; k < count; ++k) out[k] = map[squares[k]];
        sort_squares(out, count);
    }
    // Is the decoded placement the smaller of itself and its transpose?
    bool canonical_on_diagonal(const Square* squares) const noexcept;

    bool pawnless_ = true;
    SymmetryGroup symmetry_group_ = SymmetryGroup::Full;
    int units_ = 0;
    int shift_ = 0;  // 6 * (units - 1)
    Index size_ = 0;
    std::array<Unit, kMaxUnits> unit_of_{};
    // Per unit: index of the first unit of its group and the group's size.
    std::array<std::uint8_t, kMaxUnits> group_first_{};
    std::array<std::uint8_t, kMaxUnits> group_count_{};
    std::array<bool, kMaxUnits> pawn_{};
    std::array<Canonical, 64> canonical_{};
    std::array<Square, 64> root_square_{};  // per choice
    int root_choices_ = 0;
    std::array<bool, 64> choice_on_diagonal_{};
    std::array<Square, 64> transposed_{};
};

// The slots of the placements one unit move away from one decoded slot. The
// moves of a position share most of their work: a non-root unit changes one
// digit (and, with the root on the a1-h8 diagonal, one digit of the
// transposed slot too); a root move re-maps the other units by the symmetry
// that brings the root's new square home, and each such image is computed
// once per position.
class WorkIndex::Neighbours {
public:
    // `squares` (as decoded from `slot`) must outlive this object.
    Neighbours(const WorkIndex& ix, Index slot, const Square* squares) noexcept
        : ix_(ix), slot_(slot), squares_(squares),
          on_diagonal_(ix.choice_on_diagonal_[static_cast<std::size_t>(slot >> ix.shift_)]) {}

    // The slot with unit `moved` on `to`, an empty square.
    Index moved(int moved, Square to) noexcept {
        if (ix_.pawn_[moved] && (rank_of(to) == 0 || rank_of(to) == 7)) return kNoIndex;
        if (moved == 0) return moved_root(to);
        if (ix_.group_count_[moved] != 1) return moved_in_group(moved, to);
        const int shift = ix_.shift_ - 6 * moved;
        const Index plain =
            slot_ - (static_cast<Index>(squares_[moved]) << shift) + (static_cast<Index>(to) << shift);
        if (!on_diagonal_) return plain;
        // The root stays on the diagonal: the canonical slot is the smaller
        // of the placement's and its transpose's.
        if (transposed_slot_ == kNotComputed) transposed_slot_ = compute_transposed_slot();
        const Index transposed = transposed_slot_ - (static_cast<Index>(ix_.transposed_[squares_[moved]]) << shift) +
                                 (static_cast<Index>(ix_.transposed_[to]) << shift);
        return std::min(plain, transposed);
    }

private:
    static constexpr Index kNotComputed = ~Index{0} - 1;

    // A unit of a group of identical units: the root stays home, so only
    // the group's digits change, to its other squares and `to` in ascending
    // order (in the transposed slot too, with the root on the diagonal).
    Index moved_in_group(int moved, Square to) noexcept {
        const int first = ix_.group_first_[moved];
        const int count = ix_.group_count_[moved];
        Square before[kMaxUnits];
        Square after[kMaxUnits];
        std::copy(squares_ + first, squares_ + first + count, after);
        after[moved - first] = to;
        sort_squares(after, count);
        const Index plain = slot_ - group_digits(squares_ + first, first, count) + group_digits(after, first, count);
        if (!on_diagonal_) return plain;
        if (transposed_slot_ == kNotComputed) transposed_slot_ = compute_transposed_slot();
        sorted_images(squares_ + first, count, ix_.transposed_, before);
        sorted_images(after, count, ix_.transposed_, after);
        const Index transposed =
            transposed_slot_ - group_digits(before, first, count) + group_digits(after, first, count);
        return std::min(plain, transposed);
    }
    // The slot digits of a group's squares (ascending) from unit `first` on.
    Index group_digits(const Square* squares, int first, int count) const noexcept {
        Index digits = 0;
        for (int k = 0; k < count; ++k) digits += static_cast<Index>(squares[k]) << (ix_.shift_ - 6 * (first + k));
        return digits;
    }
    // Out of line: a root move re-maps the other units.
    [[gnu::noinline]] Index moved_root(Square to) noexcept {
        const Canonical c = ix_.canonical_[to];
        if (c.choice == kNoChoice) return kNoIndex;
        const Index root = static_cast<Index>(c.choice) << ix_.shift_;
        const Index slot = root | image(c.sym);
        if (c.alt_sym < 0) return slot;
        return std::min(slot, root | image(c.alt_sym));
    }
    [[gnu::noinline]] Index compute_transposed_slot() const noexcept {
        return ix_.encode_with(squares_, kTranspose, static_cast<std::uint8_t>(slot_ >> ix_.shift_));
    }
    // The digits of the units after the root under one symmetry.
    Index image(int sym) noexcept {
        Index& digits = images_[static_cast<std::size_t>(sym)];
        if (!(computed_ & (1u << sym))) {
            digits = ix_.encode_with(squares_, sym, 0);
            computed_ |= 1u << sym;
        }
        return digits;
    }

    const WorkIndex& ix_;
    Index slot_;
    const Square* squares_;
    bool on_diagonal_;
    Index transposed_slot_ = kNotComputed;
    unsigned computed_ = 0;  // bit per symmetry: images_ entry filled
    std::array<Index, kSymmetryCount> images_;
};

// encode() of a sequence of placements that mostly differ from the one
// before by one unit's square (the exact index's slots in order: its last
// unit moves). The symmetry that brings the root home stays while the root
// stays, so a move of a non-root unit alone of its kind changes one digit of
// each image kept (two when the root is on the a1-h8 diagonal).
class WorkIndex::Cursor {
public:
    explicit Cursor(const WorkIndex& ix) noexcept : ix_(ix) {}

    // encode(squares) of a placement; later calls compare against it.
    Index encode(const Square* squares) noexcept {
        int changed = -1;
        if (valid_) {
            for (int i = 0; i < ix_.units_; ++i) {
                if (squares[i] == squares_[i]) continue;
                if (changed >= 0) {
                    changed = -2;
                    break;
                }
                changed = i;
            }
            if (changed == -1) return current();
        }
        if (changed > 0 && moves_one_digit(changed)) return moved(changed, squares[changed]);
        return reset(squares);
    }

    // Does moving `unit` from the last placement change one digit (the
    // placement encoded, a unit alone of its kind, not the root, not a pawn)?
    bool moves_one_digit(int unit) const noexcept {
        return valid_ && unit > 0 && ix_.group_count_[unit] == 1 && !ix_.pawn_[unit];
    }
    // encode() of the last placement with `unit` moved to `to`, where
    // moves_one_digit(unit).
    Index moved(int unit, Square to) noexcept {
        const int shift = ix_.shift_ - 6 * unit;
        const Square from = squares_[unit];
        squares_[unit] = to;
        image_ += (static_cast<Index>((*map_)[to]) << shift) - (static_cast<Index>((*map_)[from]) << shift);
        if (alt_map_) {
            alt_image_ +=
                (static_cast<Index>((*alt_map_)[to]) << shift) - (static_cast<Index>((*alt_map_)[from]) << shift);
        }
        return current();
    }

private:
    Index current() const noexcept { return alt_map_ ? std::min(image_, alt_image_) : image_; }
    Index reset(const Square* squares) noexcept;

    const WorkIndex& ix_;
    bool valid_ = false;  // squares_ and the images describe the last placement
    Square squares_[kMaxUnits]{};
    const std::array<Square, 64>* map_ = nullptr;      // the symmetry bringing the root home
    const std::array<Square, 64>* alt_map_ = nullptr;  // the second one, root on the diagonal
    Index image_ = 0;
    Index alt_image_ = 0;
};

}  // namespace tbf::index
