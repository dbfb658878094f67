#pragma once
// The exhaustively enumerated leading units of an indexer ("root"): every
// placement of the first groups, reduced by symmetry to one canonical
// representative per orbit. Shared by all tables whose leading groups have
// the same shape (counts, allowed squares, symmetries).

#include <array>
#include <compare>
#include <cstdint>
#include <memory>
#include <vector>

#include "tbforge/index/material.hpp"
#include "tbforge/rules/types.hpp"

namespace tbf::index::detail {

struct RootShape {
    int groups = 0;
    std::array<int, kMaxUnits> count{};
    std::array<Bitboard, kMaxUnits> domain{};
    std::uint8_t symmetries = 1;  // bit s: symmetry s is used
    bool kings_apart = false;     // royal kings: groups 0 and 1 are kings, never adjacent

    friend auto operator<=>(const RootShape&, const RootShape&) = default;
};

struct RootTable {
    static constexpr std::uint32_t kNoEntry = ~std::uint32_t{0};

    using Squares = std::array<Square, kMaxUnits>;

    RootShape shape;
    int units = 0;
    // raw key of a placement = sum over groups of colex rank (over the
    // group's domain) * multiplier.
    std::array<std::uint64_t, kMaxUnits> multiplier{};
    // Position of a square inside a group's domain, 0xFF outside.
    std::array<std::array<std::uint8_t, 64>, kMaxUnits> domain_index{};
    // raw key -> (choice << 3) | symmetry mapping the placement to the
    // choice's canonical representative; kNoEntry for overlapping or
    // forbidden placements.
    std::vector<std::uint32_t> lookup;
    // Canonical representatives: first those with a trivial stabilizer, then
    // the others, each part in increasing raw key.
    std::vector<Squares> choices;
    // Per choice: the symmetries that map it onto itself (bit 0 always set).
    std::vector<std::uint8_t> stabilizer;
    std::uint32_t free_count = 0;

    Bitboard occupied(std::uint32_t choice) const {
        Bitboard occ = 0;
        for (int i = 0; i < units; ++i) occ |= bit(choices[choice][static_cast<std::size_t>(i)]);
        return occ;
    }
};

// Number of raw keys of a shape (product of binomials), for choosing how
// many groups go into the root.
std::uint64_t raw_size(const RootShape& shape);

// The root table of a shape, built on first use and cached (thread-safe).
std::shared_ptr<const RootTable> root_table(const RootShape& shape);

}  // namespace tbf::index::detail
