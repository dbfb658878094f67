#pragma once
// A deliberately simple table builder for differential tests: one unit per
// square digit (64^n slots, no symmetry), identical units in ascending square
// order, every sub-table built on demand in memory in whatever colour
// orientation is reached. Its values must equal those of the real indexers.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "retrograde_impl.hpp"

namespace tbf::test {

// Units of a material in a fixed order: white K..P then black K..P.
struct NaiveIndexer {
    std::vector<Unit> units;
    std::uint64_t size() const { return std::uint64_t{1} << (6 * units.size()); }

    int unit_count() const { return static_cast<int>(units.size()); }
    SymmetryGroup symmetry_group() const { return SymmetryGroup::None; }
    Unit unit(int i) const { return units[static_cast<std::size_t>(i)]; }

    bool decode(std::uint64_t index, Square* squares) const {
        Bitboard occupied = 0;
        for (std::size_t i = 0; i < units.size(); ++i) {
            const auto s = static_cast<Square>((index >> (6 * i)) & 63);
            if (occupied & bit(s)) return false;
            if (unit_type(units[i]) == UnitType::Pawn && (rank_of(s) == 0 || rank_of(s) == 7)) {
                return false;
            }
            // Identical units: only ascending squares are canonical.
            if (i > 0 && units[i - 1] == units[i] && s < squares[i - 1]) return false;
            occupied |= bit(s);
            squares[i] = s;
        }
        return true;
    }

    std::uint64_t encode(const Square* squares) const {
        Square sorted[8];
        std::copy(squares, squares + units.size(), sorted);
        for (std::size_t i = 1; i < units.size(); ++i) {
            for (std::size_t j = i; j > 0 && units[j - 1] == units[j] && sorted[j - 1] > sorted[j]; --j) {
                std::swap(sorted[j - 1], sorted[j]);
            }
        }
        std::uint64_t index = 0;
        for (std::size_t i = 0; i < units.size(); ++i) index |= std::uint64_t{sorted[i]} << (6 * i);
        return index;
    }

    std::uint64_t encode(const Position& pos) const {
        Square squares[8];
        std::size_t i = 0;
        while (i < units.size()) {
            Bitboard b = pos.units(unit_color(units[i]), unit_type(units[i]));
            while (b) squares[i++] = pop_lsb(b);
        }
        return encode(squares);
    }
};

inline std::string material_key(const Position& pos) {
    std::string key;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            const int n = popcount(pos.units(c, static_cast<UnitType>(t)));
            key.append(static_cast<std::size_t>(n), unit_type_char(static_cast<UnitType>(t)));
        }
        if (c == Color::White) key += 'v';
    }
    return key;
}

inline std::vector<Unit> units_of(const std::string& material) {
    std::vector<Unit> units;
    Color color = Color::White;
    for (char ch : material) {
        if (ch == 'v') {
            color = Color::Black;
            continue;
        }
        Unit u{};
        unit_from_char(ch, u);
        units.push_back(make_unit(color, unit_type(u)));
    }
    return units;
}

template <Ruleset R>
class NaiveTables {
public:
    struct Table {
        NaiveIndexer indexer;
        gen::TableValues values;
    };

    const Table& table(const std::string& material) {
        auto it = tables_.find(material);
        if (it != tables_.end()) return *it->second;
        auto table = std::make_unique<Table>();
        table->indexer.units = units_of(material);
        gen::RetrogradeBuilder<R, NaiveIndexer> builder(
            table->indexer, [this](const Position& child) { return value(child); });
        table->values = builder.build();
        return *tables_.emplace(material, std::move(table)).first->second;
    }

    // Value of any position (no en-passant right) for its side to move.
    probe::Value value(const Position& pos) {
        if (auto terminal = terminal_if_empty(pos)) return *terminal;
        const Table& t = table(material_key(pos));
        const auto code = t.values.code(pos.side_to_move(), t.indexer.encode(pos));
        return probe::decode_value(code);
    }

private:
    static std::optional<probe::Value> terminal_if_empty(const Position& pos) {
        if constexpr (R::kCapturesCompulsory) {
            if (pos.units(pos.side_to_move()) == 0) return probe::Value{Wdl::Win, 0};
            if (pos.units(~pos.side_to_move()) == 0) return probe::Value{Wdl::Loss, 0};
        }
        return std::nullopt;
    }

    std::map<std::string, std::unique_ptr<Table>> tables_;
};

}  // namespace tbf::test
