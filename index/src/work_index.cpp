#include "tbforge/index/work_index.hpp"

#include <algorithm>

#include "tbforge/rules/symmetry.hpp"
#include "unit_order.hpp"

namespace tbf::index {

namespace {

using detail::mobility_rank;

struct SquareMaps {
    std::array<std::array<Square, 64>, kSymmetryCount> image{};
    constexpr SquareMaps() {
        for (int sym = 0; sym < kSymmetryCount; ++sym) {
            for (int s = 0; s < 64; ++s) image[sym][s] = transform_square(static_cast<Square>(s), sym);
        }
    }
};
constexpr SquareMaps kMaps;

bool in_triangle(Square s) { return file_of(s) <= 3 && rank_of(s) <= file_of(s); }

// The scheme: every unit on any of the 64 squares, every placement a
// position (no royal king to leave in check), the 8 symmetries without pawns.
bool scheme_applies(const VariantTraits& rules) {
    switch (rules.symmetry) {
        case SymmetryGroup::Full: break;
        case SymmetryGroup::FileMirror:
        case SymmetryGroup::None: return false;
    }
    return rules.board == kAllSquares && rules.king_squares == kAllSquares && !rules.royal_king;
}

}  // namespace

std::optional<WorkIndex> WorkIndex::create(VariantId variant, const Material& material) {
    const VariantTraits& rules = variant_traits(variant);
    if (!scheme_applies(rules) || material.total() < 2 || material.total() > kMaxUnits) {
        return std::nullopt;
    }
    struct Group {
        Unit unit;
        int count;
    };
    std::vector<Group> groups;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            const auto type = static_cast<UnitType>(t);
            if (const int n = material.count(c, type)) groups.push_back({make_unit(c, type), n});
        }
    }
    std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
        return mobility_rank(unit_type(a.unit)) < mobility_rank(unit_type(b.unit));
    });
    const auto root = std::find_if(groups.begin(), groups.end(), [](const Group& g) { return g.count == 1; });
    if (root == groups.end()) return std::nullopt;
    std::rotate(groups.begin(), root, root + 1);
    // The last digit's unit alone of its kind where one is left: block pulls
    // (gen/) read a block of 64 slots for all the last unit's squares when
    // no re-sorting of a group moves it.
    if (groups.back().count > 1) {
        const auto single = std::find_if(groups.rbegin(), groups.rend() - 1, [](const Group& g) { return g.count == 1; });
        if (single != groups.rend() - 1) {
            const auto at = std::prev(single.base());
            std::rotate(at, at + 1, groups.end());
        }
    }

    WorkIndex ix;
    ix.pawnless_ = !material.has_pawns();
    ix.symmetry_group_ = table_symmetry(rules, material.has_pawns());
    for (const Group& g : groups) {
        const int first = ix.units_;
        for (int k = 0; k < g.count; ++k) {
            ix.unit_of_[ix.units_] = g.unit;
            ix.group_first_[ix.units_] = static_cast<std::uint8_t>(first);
            ix.group_count_[ix.units_] = static_cast<std::uint8_t>(g.count);
            ix.pawn_[ix.units_] = unit_type(g.unit) == UnitType::Pawn;
            ++ix.units_;
        }
    }
    ix.shift_ = 6 * (ix.units_ - 1);
    const bool root_pawn = ix.pawn_[0];
    // Canonical root squares, numbered in square order.
    std::array<std::uint8_t, 64> choice_of{};
    choice_of.fill(kNoChoice);
    for (int s = 0; s < 64; ++s) {
        const auto sq = static_cast<Square>(s);
        const bool canonical = ix.pawnless_ ? in_triangle(sq) : file_of(sq) <= 3;
        if (!canonical || (root_pawn && (bit(sq) & kBackRankSquares))) continue;
        choice_of[s] = static_cast<std::uint8_t>(ix.root_choices_);
        ix.root_square_[ix.root_choices_] = sq;
        ix.choice_on_diagonal_[ix.root_choices_] = ix.pawnless_ && file_of(sq) == rank_of(sq);
        ++ix.root_choices_;
    }
    const std::uint8_t symmetries = symmetry_mask(ix.symmetry_group_);
    for (int s = 0; s < 64; ++s) {
        Canonical& c = ix.canonical_[s];
        for (int sym = 0; sym < kSymmetryCount; ++sym) {
            if (!(symmetries >> sym & 1)) continue;
            const Square t = kMaps.image[sym][s];
            if (choice_of[t] == kNoChoice) continue;
            if (c.choice == kNoChoice) {
                c.choice = choice_of[t];
                c.sym = static_cast<std::int8_t>(sym);
            } else {
                c.alt_sym = static_cast<std::int8_t>(sym);
            }
        }
    }
    ix.transposed_ = kMaps.image[kTranspose];
    ix.size_ = static_cast<Index>(ix.root_choices_) << ix.shift_;
    return ix;
}

Index WorkIndex::encode_with(const Square* squares, int sym, std::uint8_t choice, int end) const noexcept {
    const auto& map = kMaps.image[sym];
    Index slot = static_cast<Index>(choice) << shift_;
    for (int i = 1; i < end;) {
        const int count = group_count_[i];
        if (count == 1) {
            const Square s = map[squares[i]];
            if (pawn_[i] && (bit(s) & kBackRankSquares)) return kNoIndex;
            slot |= static_cast<Index>(s) << (shift_ - 6 * i);
            ++i;
            continue;
        }
        Square g[kMaxUnits];
        sorted_images(squares + i, count, map, g);
        for (int k = 0; k < count; ++k) {
            if (pawn_[i] && (bit(g[k]) & kBackRankSquares)) return kNoIndex;
            slot |= static_cast<Index>(g[k]) << (shift_ - 6 * (i + k));
        }
        i += count;
    }
    return slot;
}

bool WorkIndex::root_moved(const Square* squares, Square to, RootMove& out) const noexcept {
    const Canonical c = canonical_[to];
    if (c.choice == kNoChoice) return false;
    Square moved[kMaxUnits];
    std::copy(squares, squares + units_ - 1, moved);
    moved[0] = to;
    const int last = units_ - 1;
    const Index slot = encode_with(moved, c.sym, c.choice, last);
    if (slot == kNoIndex) return false;
    out.block = slot >> 6;
    out.map = &kMaps.image[static_cast<std::size_t>(c.sym)];
    out.alt_map = nullptr;
    if (c.alt_sym < 0) return true;
    const Index alt = encode_with(moved, c.alt_sym, c.choice, last);
    if (alt == kNoIndex) return false;
    out.alt_block = alt >> 6;
    out.alt_map = &kMaps.image[static_cast<std::size_t>(c.alt_sym)];
    return true;
}

Index WorkIndex::encode(const Square* squares) const noexcept {
    const Canonical c = canonical_[squares[0]];
    if (c.choice == kNoChoice) return kNoIndex;
    const Index slot = encode_with(squares, c.sym, c.choice);
    if (c.alt_sym < 0) return slot;
    return std::min(slot, encode_with(squares, c.alt_sym, c.choice));
}

Index WorkIndex::Cursor::reset(const Square* squares) noexcept {
    valid_ = false;
    const Canonical c = ix_.canonical_[squares[0]];
    if (c.choice == kNoChoice) return kNoIndex;
    image_ = ix_.encode_with(squares, c.sym, c.choice);
    if (image_ == kNoIndex) return kNoIndex;
    map_ = &kMaps.image[static_cast<std::size_t>(c.sym)];
    alt_map_ = nullptr;
    if (c.alt_sym >= 0) {
        alt_image_ = ix_.encode_with(squares, c.alt_sym, c.choice);
        if (alt_image_ == kNoIndex) return kNoIndex;
        alt_map_ = &kMaps.image[static_cast<std::size_t>(c.alt_sym)];
    }
    std::copy(squares, squares + ix_.units_, squares_);
    valid_ = true;
    return current();
}

bool WorkIndex::decode_prefix(Index slot, Square* squares) const noexcept {
    const Index choice = slot >> shift_;
    if (choice >= static_cast<Index>(root_choices_)) return false;
    squares[0] = root_square_[choice];
    Bitboard occ = bit(squares[0]);
    for (int i = 1; i < units_ - 1; ++i) {
        const auto s = static_cast<Square>((slot >> (shift_ - 6 * i)) & 63);
        if (occ & bit(s)) return false;
        if (pawn_[i] && (bit(s) & kBackRankSquares)) return false;
        if (i > group_first_[i] && s < squares[i - 1]) return false;
        occ |= bit(s);
        squares[i] = s;
    }
    return true;
}

bool WorkIndex::canonical_on_diagonal(const Square* squares) const noexcept {
    // The digits compared from the most significant: the first unit group
    // that differs from its transpose decides.
    for (int i = 1; i < units_;) {
        const int count = group_count_[i];
        if (count == 1) {
            const Square t = transposed_[squares[i]];
            if (t != squares[i]) return squares[i] < t;
            ++i;
            continue;
        }
        Square g[kMaxUnits];
        sorted_images(squares + i, count, transposed_, g);
        for (int k = 0; k < count; ++k) {
            if (g[k] != squares[i + k]) return squares[i + k] < g[k];
        }
        i += count;
    }
    return true;  // the placement is its own transpose
}

}  // namespace tbf::index
