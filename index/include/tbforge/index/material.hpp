#pragma once
// Material signatures: which units each side has. Names follow Syzygy
// ("KQvR": White's units, 'v', Black's units, each side in the order
// K Q R B N P). XvY and YvX are one table; the canonical orientation puts the
// stronger side (Syzygy's rule, see is_canonical) on White.

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/rules/position.hpp"
#include "tbforge/rules/result.hpp"
#include "tbforge/rules/types.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf::index {

// Largest number of units in one table that the library handles.
inline constexpr int kMaxUnits = 8;

class Material {
public:
    constexpr Material() = default;

    int count(Color c, UnitType t) const { return counts_[to_index(c)][to_index(t)]; }
    int count(Color c) const;
    int total() const { return count(Color::White) + count(Color::Black); }
    bool has_pawns() const {
        return count(Color::White, UnitType::Pawn) + count(Color::Black, UnitType::Pawn) > 0;
    }
    void add(Color c, UnitType t, int n = 1) {
        counts_[to_index(c)][to_index(t)] = static_cast<std::uint8_t>(count(c, t) + n);
    }
    // Colours swapped: the same table seen from the other side.
    Material flipped() const;
    // "KQvR"; a side without units prints as nothing ("KQv").
    std::string name() const;

    friend auto operator<=>(const Material&, const Material&) = default;

private:
    std::array<std::array<std::uint8_t, kUnitTypeCount>, 2> counts_{};
};

// Syntax only: letters K Q R B N P in any order on each side, exactly one
// 'v', at most kMaxUnits units. Errors name the problem.
Result<Material> parse_material(std::string_view name);
// Syntax plus the variant's rules for a table (see material_error).
Result<Material> parse_table(std::string_view name, VariantId variant);
// Why the material is not a table of the variant, or nullopt if it is one.
// Without a royal king (losing chess): each side has at least one unit (a
// side without units has won: terminal, not a table). With royal kings
// (Four File): exactly one king a side.
std::optional<std::string> material_error(const Material& m, VariantId variant);

Material material_of(const Position& pos);

// Syzygy's rule: the side with more units is White; with equal counts the side
// whose unit counts (K, Q, R, B, N, P) are lexicographically larger. A
// material equal to its own flip (KvK, BBvBB) is canonical.
bool is_canonical(const Material& m);
Material canonical(const Material& m);
// True when positions of this material must be colour-flipped to be found in
// the canonical table.
inline bool needs_color_flip(const Material& m) { return !is_canonical(m); }

// Every table of the variant with 2..max_units units, canonical orientation,
// in dependency order (see dependency_order).
std::vector<Material> enumerate_tables(VariantId variant, int max_units);

// The tables reached by one conversion (capture, promotion, capture with
// promotion) by either side, canonical, sorted, without duplicates. Results
// where a side has no units are terminal positions, not tables, and are left
// out. Royal kings are never captured; pawn captures and promotions as the
// variant's traits say (Four File: pawns never capture, no king promotion).
std::vector<Material> sub_tables(const Material& m, VariantId variant);

// One conversion of a table: the material after it, in the table's colours
// (not made canonical), and the side that made it.
struct Conversion {
    Material after;
    Color mover;
    friend auto operator<=>(const Conversion&, const Conversion&) = default;
};
// Every conversion of `m` by either side whose result is a table (the
// conversions behind sub_tables), sorted, without duplicates.
std::vector<Conversion> conversions(const Material& m, VariantId variant);

// The given tables and everything they convert into, transitively, each table
// after all the tables it can convert into. Order: by unit count, then number
// of pawns (a promotion keeps the count but removes a pawn), then name.
std::vector<Material> dependency_order(VariantId variant, std::span<const Material> tables);

}  // namespace tbf::index
