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

#include <array>
#include <cstdint>
#include <optional>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"

namespace tbf::index {

class WorkIndex {
public:
    // nullopt where the scheme does not apply: Four File, or no unit alone
    // of its kind.
    static std::optional<WorkIndex> create(VariantId variant, const Material& material);

    Index size() const { return size_; }
    int unit_count() const { return units_; }
    Unit unit(int i) const { return unit_of_[static_cast<std::size_t>(i)]; }
    int symmetry_count() const { return pawnless_ ? 8 : 2; }

    // Squares of a slot; false for an unused slot.
    bool decode(Index slot, Square* squares) const noexcept;
    // The canonical slot of a placement (distinct squares, identical units in
    // any order, any symmetric image); kNoIndex if a pawn stands on rank 1 or 8.
    Index encode(const Square* squares) const noexcept;
    // The slot of `squares` (as decoded from `slot`) with unit `moved` on
    // `to`, an empty square.
    Index encode_moved(Index slot, const Square* squares, int moved, Square to) const noexcept {
        const auto choice = static_cast<std::size_t>(slot >> shift_);
        if (moved == 0 || group_count_[moved] != 1 ||
            (pawn_[moved] && (rank_of(to) == 0 || rank_of(to) == 7))) {
            return encode_moved_slow(squares, moved, to);
        }
        // A root on the diagonal leaves the transposition to the next unit,
        // which decides it while it stands off the diagonal and stays.
        if (choice_on_diagonal_[choice] &&
            (moved == 1 || group_count_[1] != 1 || file_of(squares[1]) == rank_of(squares[1]))) {
            return encode_moved_slow(squares, moved, to);
        }
        // The root and with it the symmetry stay: one digit changes.
        const int shift = shift_ - 6 * moved;
        return slot - (static_cast<Index>(squares[moved]) << shift) + (static_cast<Index>(to) << shift);
    }

private:
    struct Canonical {
        std::uint8_t choice = kNoChoice;
        std::int8_t sym = 0;
        std::int8_t alt_sym = -1;  // second symmetry onto the same root square (diagonal)
    };

    static constexpr std::uint8_t kNoChoice = 0xFF;

    WorkIndex() = default;
    Index encode_with(const Square* squares, int sym, std::uint8_t choice) const noexcept;
    Index encode_moved_slow(const Square* squares, int moved, Square to) const noexcept;

    bool pawnless_ = true;
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
};

}  // namespace tbf::index
