#include "tbforge/index/material.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace tbf::index {

namespace {

constexpr std::array<UnitType, kUnitTypeCount> kAllTypes = {UnitType::King,   UnitType::Queen,
                                                            UnitType::Rook,   UnitType::Bishop,
                                                            UnitType::Knight, UnitType::Pawn};

// Syzygy's strength key of one side: unit count first, then counts K..P.
std::array<int, kUnitTypeCount + 1> strength(const Material& m, Color c) {
    std::array<int, kUnitTypeCount + 1> key{};
    key[0] = m.count(c);
    for (int t = 0; t < kUnitTypeCount; ++t) key[t + 1] = m.count(c, static_cast<UnitType>(t));
    return key;
}

int pawn_count(const Material& m) {
    return m.count(Color::White, UnitType::Pawn) + m.count(Color::Black, UnitType::Pawn);
}

bool dependency_less(const Material& a, const Material& b) {
    const auto ka = std::make_tuple(a.total(), pawn_count(a));
    const auto kb = std::make_tuple(b.total(), pawn_count(b));
    if (ka != kb) return ka < kb;
    return a.name() < b.name();
}

void add_if_table(std::set<Material>& out, const Material& m, VariantId variant) {
    if (!material_error(m, variant)) out.insert(canonical(m));
}

// All multisets of at most `left` units drawn from `types`, appended to `out`.
void multisets(std::span<const UnitType> types, int left, Color c, Material current,
               std::vector<Material>& out) {
    out.push_back(current);
    if (left == 0) return;
    for (std::size_t i = 0; i < types.size(); ++i) {
        Material next = current;
        next.add(c, types[i]);
        // Only types from i on, so each multiset is produced once.
        multisets(types.subspan(i), left - 1, c, next, out);
    }
}

}  // namespace

int Material::count(Color c) const {
    int n = 0;
    for (const auto k : counts_[to_index(c)]) n += k;
    return n;
}

Material Material::flipped() const {
    Material m;
    m.counts_[0] = counts_[1];
    m.counts_[1] = counts_[0];
    return m;
}

std::string Material::name() const {
    std::string s;
    for (const Color c : {Color::White, Color::Black}) {
        if (c == Color::Black) s += 'v';
        for (const UnitType t : kAllTypes)
            s.append(static_cast<std::size_t>(count(c, t)), unit_type_char(t));
    }
    return s;
}

Result<Material> parse_material(std::string_view name) {
    std::string quoted = "'";
    quoted.append(name).push_back('\'');
    const auto v = name.find('v');
    if (v == std::string_view::npos) {
        return invalid_argument("bad table name " + quoted + ": expected White's units, 'v', Black's units");
    }
    if (name.find('v', v + 1) != std::string_view::npos) {
        return invalid_argument("bad table name " + quoted + ": more than one 'v'");
    }
    Material m;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (i == v) continue;
        const char ch = name[i];
        Unit u{};
        if (ch < 'A' || ch > 'Z' || !unit_from_char(ch, u)) {
            return invalid_argument("bad table name " + quoted + ": unknown unit letter '" +
                         std::string(1, ch) + "' (use K Q R B N P)");
        }
        m.add(i < v ? Color::White : Color::Black, unit_type(u));
    }
    if (m.total() == 0) return invalid_argument("bad table name " + quoted + ": no units");
    if (m.total() > kMaxUnits) {
        return invalid_argument("bad table name " + quoted + ": more than " + std::to_string(kMaxUnits) +
                     " units");
    }
    return m;
}

std::optional<std::string> material_error(const Material& m, VariantId variant) {
    if (m.total() > kMaxUnits) return "more than " + std::to_string(kMaxUnits) + " units";
    const VariantTraits& rules = variant_traits(variant);
    if (!rules.royal_king) {
        if (m.count(Color::White) == 0 || m.count(Color::Black) == 0) {
            return std::string("a side without units has already won: not a table");
        }
        return std::nullopt;
    }
    if (m.count(Color::White, UnitType::King) != 1 || m.count(Color::Black, UnitType::King) != 1) {
        return std::string(rules.name) + " tables have exactly one king a side";
    }
    return std::nullopt;
}

Result<Material> parse_table(std::string_view name, VariantId variant) {
    auto m = parse_material(name);
    if (!m) return m;
    if (auto why = material_error(*m, variant)) {
        return invalid_argument("bad table '" + std::string(name) + "' for " +
                     std::string(variant_name(variant)) + ": " + *why);
    }
    return m;
}

Material material_of(const Position& pos) {
    Material m;
    for (const Color c : {Color::White, Color::Black}) {
        for (const UnitType t : kAllTypes) m.add(c, t, popcount(pos.units(c, t)));
    }
    return m;
}

bool is_canonical(const Material& m) {
    return strength(m, Color::White) >= strength(m, Color::Black);
}

Material canonical(const Material& m) { return is_canonical(m) ? m : m.flipped(); }

std::vector<Material> enumerate_tables(VariantId variant, int max_units) {
    // Royal kings: a king a side is fixed; the rest are drawn from Q R B N P.
    const bool royal_king = variant_traits(variant).royal_king;
    const std::span<const UnitType> types =
        royal_king ? std::span<const UnitType>(kAllTypes).subspan(1) : std::span(kAllTypes);
    Material base;
    if (royal_king) {
        base.add(Color::White, UnitType::King);
        base.add(Color::Black, UnitType::King);
    }
    const int free_units = std::min(max_units, kMaxUnits) - base.total();
    std::vector<Material> white;
    std::vector<Material> black;
    multisets(types, free_units, Color::White, Material{}, white);
    multisets(types, free_units, Color::Black, Material{}, black);
    std::set<Material> found;
    for (const Material& w : white) {
        for (const Material& b : black) {
            if (w.total() + b.total() > free_units) continue;
            Material m = base;
            for (const Color c : {Color::White, Color::Black}) {
                for (const UnitType t : kAllTypes) m.add(c, t, w.count(c, t) + b.count(c, t));
            }
            if (m.total() >= 2) add_if_table(found, m, variant);
        }
    }
    std::vector<Material> out(found.begin(), found.end());
    std::sort(out.begin(), out.end(), dependency_less);
    return out;
}

std::vector<Conversion> conversions(const Material& m, VariantId variant) {
    const VariantTraits& rules = variant_traits(variant);
    std::vector<UnitType> promotions = {UnitType::Queen, UnitType::Rook, UnitType::Bishop,
                                        UnitType::Knight};
    if (rules.promote_to_king) promotions.push_back(UnitType::King);
    std::set<Conversion> found;
    for (const Color us : {Color::White, Color::Black}) {
        const Color them = ~us;
        if (m.count(us) == 0) continue;
        const auto add = [&](const Material& after) {
            if (!material_error(after, variant)) found.insert({after, us});
        };
        // Captures: any unit of ours takes one of theirs (royal kings are
        // never taken; a king always has a capture somewhere on the board).
        for (const UnitType victim : kAllTypes) {
            if (m.count(them, victim) == 0) continue;
            if (rules.royal_king && victim == UnitType::King) continue;
            Material after = m;
            after.add(them, victim, -1);
            add(after);
            // A pawn takes a piece on the last rank and promotes. Their pawns
            // never stand on our last rank, so they are never taken this way.
            if (m.count(us, UnitType::Pawn) == 0 || victim == UnitType::Pawn) continue;
            if (!rules.pawns_capture) continue;
            for (const UnitType p : promotions) {
                Material promoted = after;
                promoted.add(us, UnitType::Pawn, -1);
                promoted.add(us, p);
                add(promoted);
            }
        }
        if (m.count(us, UnitType::Pawn) == 0) continue;
        for (const UnitType p : promotions) {
            Material promoted = m;
            promoted.add(us, UnitType::Pawn, -1);
            promoted.add(us, p);
            add(promoted);
        }
    }
    return {found.begin(), found.end()};
}

std::vector<Material> sub_tables(const Material& m, VariantId variant) {
    std::set<Material> found;
    for (const Conversion& c : conversions(m, variant)) found.insert(canonical(c.after));
    return {found.begin(), found.end()};
}

std::vector<Material> dependency_order(VariantId variant, std::span<const Material> tables) {
    std::set<Material> seen;
    std::vector<Material> stack;
    for (const Material& m : tables) {
        const Material c = canonical(m);
        if (seen.insert(c).second) stack.push_back(c);
    }
    while (!stack.empty()) {
        const Material m = stack.back();
        stack.pop_back();
        for (const Material& sub : sub_tables(m, variant)) {
            if (seen.insert(sub).second) stack.push_back(sub);
        }
    }
    std::vector<Material> out(seen.begin(), seen.end());
    std::sort(out.begin(), out.end(), dependency_less);
    return out;
}

}  // namespace tbf::index
