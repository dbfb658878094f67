#include "tbforge/index/indexer.hpp"

#include <algorithm>
#include <numeric>

#include "combinatorics.hpp"
#include "root_table.hpp"
#include "unit_order.hpp"
#include "tbforge/rules/movegen.hpp"

namespace tbf::index {

namespace detail {

namespace {

// Unranking tables for pairs and triples, the common group sizes; larger
// groups search the binomial table.
struct UnrankTables {
    std::vector<std::array<std::uint8_t, 2>> pairs;
    std::vector<std::array<std::uint8_t, 3>> triples;

    UnrankTables() {
        pairs.resize(binomial(64, 2));
        for (int b = 1; b < 64; ++b) {
            for (int a = 0; a < b; ++a) {
                const std::uint8_t v[2] = {static_cast<std::uint8_t>(a),
                                           static_cast<std::uint8_t>(b)};
                pairs[colex_rank(v, 2)] = {v[0], v[1]};
            }
        }
        triples.resize(binomial(64, 3));
        for (int c = 2; c < 64; ++c) {
            for (int b = 1; b < c; ++b) {
                for (int a = 0; a < b; ++a) {
                    const std::uint8_t v[3] = {static_cast<std::uint8_t>(a),
                                               static_cast<std::uint8_t>(b),
                                               static_cast<std::uint8_t>(c)};
                    triples[colex_rank(v, 3)] = {v[0], v[1], v[2]};
                }
            }
        }
    }
};

const UnrankTables& unrank_tables() {
    static const UnrankTables tables;
    return tables;
}

}  // namespace

void colex_unrank(std::uint64_t r, int k, std::uint8_t* out) {
    static const UnrankTables& tables = unrank_tables();
    switch (k) {
        case 0: return;
        case 1: out[0] = static_cast<std::uint8_t>(r); return;
        case 2:
            out[0] = tables.pairs[r][0];
            out[1] = tables.pairs[r][1];
            return;
        case 3:
            out[0] = tables.triples[r][0];
            out[1] = tables.triples[r][1];
            out[2] = tables.triples[r][2];
            return;
        default: break;
    }
    int a = 64;
    for (int i = k; i >= 1; --i) {
        // Largest a with C(a, i) <= r.
        while (binomial(a, i) > r) --a;
        out[i - 1] = static_cast<std::uint8_t>(a);
        r -= binomial(a, i);
    }
}

struct Node {
    int level = 0;  // the group this node places
    Index total = 0;
    std::vector<std::uint32_t> rank;                            // canonical colex ranks, ascending
    std::vector<Index> offset;                                  // rank.size() + 1 prefix sums
    std::vector<std::pair<std::uint32_t, std::int32_t>> child;  // (choice, node)

    std::int32_t child_of(std::uint32_t choice) const {
        const auto it = std::lower_bound(child.begin(), child.end(),
                                         std::pair<std::uint32_t, std::int32_t>{choice, -1});
        return it != child.end() && it->first == choice ? it->second : -1;
    }
};

struct NodeTree {
    std::vector<Node> nodes;
};

}  // namespace detail

namespace {

using detail::binomial;
using detail::kSymmetry;
using detail::mobility_rank;

constexpr Bitboard kPawnRanks = 0x00FFFFFFFFFFFF00ULL;
// The root takes further groups while its raw key space stays below
// kRootLimit; a single leading group may be as large as kLeadLimit.
constexpr std::uint64_t kRootLimit = std::uint64_t{1} << 18;
constexpr std::uint64_t kLeadLimit = std::uint64_t{1} << 23;
// Root choices outside the uniform block whose tail divisors are kept.
constexpr std::size_t kListedTailLimit = 4096;

Bitboard domain_of(const VariantTraits& rules, UnitType t) {
    if (t == UnitType::King) return rules.king_squares;
    return t == UnitType::Pawn ? (rules.board & kPawnRanks) : rules.board;
}

}  // namespace

std::string unit_label(Unit u) {
    const char label[2] = {unit_color(u) == Color::White ? 'w' : 'b', unit_type_char(unit_type(u))};
    return {label, 2};
}

int Indexer::symmetry_count() const { return std::popcount(symmetries_); }

namespace {

// The group order of Indexer::create(variant, material): without royal kings
// (losing chess) larger groups first, so the enumerated root absorbs them
// and the units left over symmetric roots are few; then fewer moves first.
std::vector<Unit> default_group_order(VariantId variant, const Material& material) {
    const bool king_root = variant_traits(variant).royal_king;
    std::vector<std::pair<Unit, int>> groups;
    for (const Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            const auto type = static_cast<UnitType>(t);
            if (material.count(c, type) != 0) groups.emplace_back(make_unit(c, type), material.count(c, type));
        }
    }
    auto order_key = [king_root](const std::pair<Unit, int>& g) {
        const UnitType t = unit_type(g.first);
        const int king_first = king_root && t == UnitType::King ? 0 : 1;
        return std::make_tuple(king_first, t == UnitType::Pawn ? 0 : 1, king_root ? 0 : -g.second,
                               mobility_rank(t), to_index(unit_color(g.first)));
    };
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const auto& a, const auto& b) { return order_key(a) < order_key(b); });
    std::vector<Unit> order;
    for (const auto& g : groups) order.push_back(g.first);
    return order;
}

}  // namespace

Result<Indexer> Indexer::create(VariantId variant, const Material& material) {
    if (auto why = material_error(material, variant)) {
        return invalid_argument("bad table " + material.name() + ": " + *why);
    }
    return create(variant, material, default_group_order(variant, material));
}

std::vector<Unit> Indexer::group_order() const {
    std::vector<Unit> order;
    for (int g = 0; g < group_count_; ++g) order.push_back(groups_[static_cast<std::size_t>(g)].unit);
    return order;
}

Result<Indexer> Indexer::create(VariantId variant, const Material& material, std::span<const Unit> group_order) {
    if (auto why = material_error(material, variant)) {
        return invalid_argument("bad table " + material.name() + ": " + *why);
    }
    if (!is_canonical(material)) {
        return invalid_argument("table " + material.name() + " is not in canonical orientation (use " +
                     canonical(material).name() + ")");
    }
    Indexer ix;
    ix.variant_ = variant;
    ix.material_ = material;
    const VariantTraits& rules = variant_traits(variant);
    ix.royal_king_ = rules.royal_king;
    // Royal kings lead the index as a pair (their exclusion is enumerated);
    // otherwise the root takes groups by size.
    const bool king_root = rules.royal_king;

    auto bad_order = [&](const std::string& why) {
        std::string listed;
        for (const Unit u : group_order) listed += (listed.empty() ? "" : " ") + unit_label(u);
        return invalid_argument("bad unit order '" + listed + "' for table " + material.name() + ": " + why);
    };
    std::vector<Group> groups;
    for (const Unit u : group_order) {
        if (u == Unit::None || static_cast<int>(u) > 16 || static_cast<int>(unit_type(u)) >= kUnitTypeCount) {
            return bad_order("not a unit");
        }
        const int count = material.count(unit_color(u), unit_type(u));
        if (count == 0) return bad_order(unit_label(u) + " is not in the table");
        for (const Group& g : groups) {
            if (g.unit == u) return bad_order(unit_label(u) + " is named twice");
        }
        groups.push_back({u, count, 0, domain_of(rules, unit_type(u))});
    }
    int named = 0;
    for (const Group& g : groups) named += g.count;
    if (named != material.total()) return bad_order("every kind of unit of the table must be named once");
    // Royal kings are the root: see "Scheme" in docs/index.md.
    if (king_root && (unit_type(groups[0].unit) != UnitType::King || unit_type(groups[1].unit) != UnitType::King)) {
        return bad_order("the kings come first");
    }

    ix.symmetry_group_ = table_symmetry(rules, material.has_pawns());
    ix.symmetries_ = symmetry_mask(ix.symmetry_group_);
    auto group_raw = [](const Group& g) { return binomial(detail::count_bits(g.domain), g.count); };
    if (!king_root && group_raw(groups[0]) > kLeadLimit) {
        // Six or more identical units: lead with the smallest group of the
        // same kind of squares instead of a huge root.
        auto smallest = groups.begin();
        for (auto it = groups.begin(); it != groups.end(); ++it) {
            if (it->domain == groups[0].domain && group_raw(*it) < group_raw(*smallest))
                smallest = it;
        }
        std::rotate(groups.begin(), smallest, smallest + 1);
    }
    for (const Group& g : groups) {
        // Enumerated roots and listed ranks are bounded; such tables (seven
        // identical pawns...) are far beyond what can be generated anyway.
        if (group_raw(g) >= (std::uint64_t{1} << 32) ||
            (!king_root && group_raw(groups[0]) > kLeadLimit)) {
            return invalid_argument("table " + material.name() + " has too many identical units to index");
        }
    }
    int first = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        groups[g].first = first;
        for (int i = 0; i < groups[g].count; ++i) {
            ix.unit_of_[static_cast<std::size_t>(first + i)] = groups[g].unit;
            ix.group_of_[static_cast<std::size_t>(first + i)] = static_cast<std::uint8_t>(g);
        }
        first += groups[g].count;
        ix.groups_[g] = groups[g];
    }
    ix.group_count_ = static_cast<int>(groups.size());
    ix.units_ = first;
    for (int g = 0; g < ix.group_count_; ++g) {
        ix.domain_index_[g].fill(0xFF);
        std::uint8_t n = 0;
        ix.domain_size_[g] = detail::count_bits(ix.groups_[g].domain);
        for (Bitboard b = ix.groups_[g].domain; b; ++n) {
            const Square s = pop_lsb(b);
            ix.domain_index_[g][s] = n;
            ix.domain_square_[g][n] = s;
        }
    }

    // Root: the royal kings (Four File: 42 pairs), otherwise as many leading
    // groups as fit a lookup table of kRootLimit entries.
    detail::RootShape shape;
    shape.symmetries = ix.symmetries_;
    shape.kings_apart = king_root;
    std::uint64_t raw = 1;
    for (int g = 0; g < ix.group_count_; ++g) {
        const std::uint64_t next = raw * group_raw(ix.groups_[g]);
        if (king_root ? g >= 2 : (g > 0 && next > kRootLimit)) break;
        raw = next;
        shape.count[g] = ix.groups_[g].count;
        shape.domain[g] = ix.groups_[g].domain;
        shape.groups = g + 1;
    }
    // Each tail group's domain must hold every earlier tail unit's square
    // (the radices stay fixed): in the tail, pawns before the other units.
    for (int g = shape.groups + 1; g < ix.group_count_; ++g) {
        if (unit_type(ix.groups_[g].unit) == UnitType::Pawn &&
            unit_type(ix.groups_[g - 1].unit) != UnitType::Pawn) {
            return bad_order("pawns outside the root come before the other units");
        }
    }
    ix.root_groups_ = shape.groups;
    ix.root_units_ = ix.groups_[shape.groups - 1].first + ix.groups_[shape.groups - 1].count;
    ix.root_ = detail::root_table(shape);
    const detail::RootTable& root = *ix.root_;

    // Slots per root choice; choices that keep a symmetry get a node tree
    // that lists the canonical placements of the next group.
    auto tree = std::make_shared<detail::NodeTree>();
    const auto choices = static_cast<std::uint32_t>(root.choices.size());
    std::vector<Index> sizes(choices);
    std::vector<std::int32_t> children(choices, -1);
    for (std::uint32_t c = 0; c < choices; ++c) {
        const Bitboard occ = root.occupied(c);
        if (root.stabilizer[c] != 1 && ix.root_groups_ < ix.group_count_) {
            children[c] = ix.build_node(ix.root_groups_, occ, root.stabilizer[c], *tree);
            sizes[c] = tree->nodes[static_cast<std::size_t>(children[c])].total;
        } else {
            sizes[c] = ix.tail_size(ix.root_groups_, occ);
        }
    }
    ix.tree_ = tree;
    ix.free_choices_ = root.free_count;
    bool uniform = root.free_count > 0;
    for (std::uint32_t c = 1; c < root.free_count && uniform; ++c) uniform = sizes[c] == sizes[0];
    ix.free_size_ = uniform ? sizes[0] : 0;
    ix.free_end_ = uniform ? static_cast<Index>(root.free_count) * sizes[0] : 0;
    ix.offset_base_ = uniform ? root.free_count : 0;
    Index next = ix.free_end_;
    for (std::uint32_t c = ix.offset_base_; c < choices; ++c) {
        ix.root_offset_.push_back(next);
        ix.root_child_.push_back(children[c]);
        next += sizes[c];
    }
    ix.size_ = next;
    // Buckets of equal width over the listed slots, each naming the first
    // listed choice that reaches into it, so decoding skips a binary search.
    if (!ix.root_offset_.empty()) {
        const std::size_t buckets = 4 * ix.root_offset_.size();
        const Index span = ix.size_ - ix.free_end_;
        const Index width = span / buckets + 1;
        ix.bucket_width_ = detail::make_fast_div(width);
        ix.bucket_first_.resize(static_cast<std::size_t>(span / width) + 1);
        std::size_t j = 0;
        for (std::size_t b = 0; b < ix.bucket_first_.size(); ++b) {
            const Index start = ix.free_end_ + b * width;
            while (j + 1 < ix.root_offset_.size() && ix.root_offset_[j + 1] <= start) ++j;
            ix.bucket_first_[b] = static_cast<std::uint32_t>(j);
        }
    }
    // Few root choices off the uniform block (Four File's 42 king pairs):
    // keep the divisors of their tails.
    const std::size_t listed = ix.root_child_.size();
    if (listed > 0 && listed <= kListedTailLimit) {
        ix.choice_below_.resize(listed * kMaxUnits);
        ix.choice_radix_.resize(listed * kMaxUnits);
        for (std::size_t j = 0; j < listed; ++j) {
            if (ix.root_child_[j] >= 0) continue;
            const Bitboard occ = root.occupied(static_cast<std::uint32_t>(ix.offset_base_ + j));
            std::array<Index, kMaxUnits> radix{};
            int used = 0;
            for (int g = ix.root_groups_; g < ix.group_count_; ++g) {
                const Group& grp = ix.groups_[g];
                radix[g] = binomial(detail::count_bits(grp.domain & ~occ) - used, grp.count);
                used += grp.count;
            }
            Index below = 1;
            for (int g = ix.group_count_ - 1; g >= ix.root_groups_; --g) {
                ix.choice_below_[j * kMaxUnits + g] = detail::make_fast_div(below);
                ix.choice_radix_[j * kMaxUnits + g] = radix[g];
                below *= radix[g];
            }
        }
    }
    if (uniform) {
        ix.free_div_ = detail::make_fast_div(ix.free_size_);
        const Bitboard occ = root.occupied(0);
        int used = 0;
        for (int g = ix.root_groups_; g < ix.group_count_; ++g) {
            const Group& grp = ix.groups_[g];
            ix.free_radix_[g] = detail::make_fast_div(
                binomial(detail::count_bits(grp.domain & ~occ) - used, grp.count));
            used += grp.count;
        }
        Index below = 1;
        for (int g = ix.group_count_ - 1; g >= ix.root_groups_; --g) {
            ix.free_below_[g] = detail::make_fast_div(below);
            below *= ix.free_radix_[g].divisor;
        }
    }
    return ix;
}

GroupOrders::GroupOrders(VariantId variant, const Material& material)
    : variant_(variant), material_(material), order_(default_group_order(variant, material)) {
    std::sort(order_.begin(), order_.end());  // the first permutation
    done_ = order_.empty();
}

std::optional<Indexer> GroupOrders::next() {
    while (!done_) {
        auto ix = Indexer::create(variant_, material_, order_);
        done_ = !std::next_permutation(order_.begin(), order_.end());
        if (ix.ok()) return std::move(*ix);
    }
    return std::nullopt;
}

Index Indexer::tail_size(int level, Bitboard occ) const {
    Index size = 1;
    int used = 0;
    for (int g = level; g < group_count_; ++g) {
        const Group& grp = groups_[g];
        // Tail groups come in growing domains, so every earlier tail unit
        // stands inside this group's domain.
        size *= binomial(detail::count_bits(grp.domain & ~occ) - used, grp.count);
        used += grp.count;
    }
    return size;
}

int Indexer::build_node(int level, Bitboard occ, std::uint8_t stab, detail::NodeTree& tree) const {
    const Group& g = groups_[level];
    const Bitboard free = g.domain & ~occ;
    const int k = g.count;
    const std::uint64_t count = binomial(detail::count_bits(free), k);
    const auto id = static_cast<int>(tree.nodes.size());
    tree.nodes.emplace_back();
    detail::Node node;
    node.level = level;
    Index running = 0;
    const int n = detail::count_bits(free);
    // Free squares by position and positions by square (0xFF: not free).
    std::array<Square, 64> free_square{};
    std::array<std::uint8_t, 64> free_rank{};
    free_rank.fill(0xFF);
    for (Bitboard b = free; b;) {
        const Square s = pop_lsb(b);
        free_rank[s] = static_cast<std::uint8_t>(detail::count_bits(free & detail::below(s)));
        free_square[free_rank[s]] = s;
    }
    std::uint8_t a[kMaxUnits];
    for (int i = 0; i < k; ++i) a[i] = static_cast<std::uint8_t>(i);
    for (std::uint64_t r = 0; r < count; ++r, detail::next_combination(a, k, n)) {
        Bitboard bits = 0;
        for (int i = 0; i < k; ++i) bits |= bit(free_square[a[i]]);
        bool canonical = true;
        std::uint8_t next_stab = 1;
        for (int s = 1; s < kSymmetryCount && canonical; ++s) {
            if (!(stab & (1U << s))) continue;
            std::uint8_t b[kMaxUnits];
            for (int i = 0; i < k; ++i) b[i] = free_rank[kSymmetry.square[s][free_square[a[i]]]];
            detail::sort_small(b, k);
            const std::uint64_t image = detail::colex_rank(b, k);
            if (image < r) canonical = false;
            if (image == r) next_stab = static_cast<std::uint8_t>(next_stab | (1U << s));
        }
        if (!canonical) continue;
        const auto choice = static_cast<std::uint32_t>(node.rank.size());
        node.rank.push_back(static_cast<std::uint32_t>(r));
        node.offset.push_back(running);
        if (level + 1 == group_count_) {
            running += 1;
        } else if (next_stab != 1) {
            const int child = build_node(level + 1, occ | bits, next_stab, tree);
            node.child.emplace_back(choice, child);
            running += tree.nodes[static_cast<std::size_t>(child)].total;
        } else {
            running += tail_size(level + 1, occ | bits);
        }
    }
    node.offset.push_back(running);
    node.total = running;
    tree.nodes[static_cast<std::size_t>(id)] = std::move(node);
    return id;
}

Index Indexer::encode(const Square* squares) const noexcept {
    const detail::RootTable& root = *root_;
    std::uint64_t raw = 0;
    for (int g = 0; g < root_groups_; ++g) {
        const Group& grp = groups_[g];
        std::uint8_t a[kMaxUnits];
        for (int i = 0; i < grp.count; ++i) {
            a[i] = domain_index_[g][squares[grp.first + i]];
            if (a[i] == 0xFF) return kNoIndex;
        }
        if (grp.count == 1) {
            raw += a[0] * root.multiplier[g];
            continue;
        }
        detail::sort_small(a, grp.count);
        raw += detail::colex_rank(a, grp.count) * root.multiplier[g];
    }
    const std::uint32_t entry = root.lookup[raw];
    if (entry == detail::RootTable::kNoEntry) return kNoIndex;
    const std::uint32_t choice = entry >> 3;
    const int sym = static_cast<int>(entry & 7);
    // The canonical root squares are the images of the given ones.
    Bitboard occ = 0;
    for (int i = 0; i < root_units_; ++i) occ |= bit(kSymmetry.square[sym][squares[i]]);
    if (choice < free_choices_ && free_size_ != 0) {
        const Index tail = encode_tail(squares, sym, occ, root_groups_);
        return tail == kNoIndex ? kNoIndex : choice * free_size_ + tail;
    }
    const std::size_t j = choice - offset_base_;
    const std::int32_t child = root_child_[j];
    Index rest;
    if (child < 0) {
        rest = encode_tail(squares, sym, occ, root_groups_);
    } else {
        // Every symmetry that maps the root onto its canonical form.
        std::uint8_t syms = 0;
        for (int s = 0; s < kSymmetryCount; ++s) {
            if (root.stabilizer[choice] & (1U << s)) {
                syms = static_cast<std::uint8_t>(syms | (1U << kSymmetry.compose[s][sym]));
            }
        }
        rest = encode_node(child, squares, syms, occ);
    }
    return rest == kNoIndex ? kNoIndex : root_offset_[j] + rest;
}

Index Indexer::encode_tail(const Square* squares, int sym, Bitboard occ, int level) const noexcept {
    Index idx = 0;
    const auto& map = kSymmetry.square[sym];
    for (int g = level; g < group_count_; ++g) {
        const Group& grp = groups_[g];
        const Bitboard taken = occ & grp.domain;
        std::uint8_t a[kMaxUnits];
        Bitboard bits = 0;
        for (int i = 0; i < grp.count; ++i) {
            const Square s = map[squares[grp.first + i]];
            const std::uint8_t d = domain_index_[g][s];
            if (d == 0xFF || (occ & bit(s))) return kNoIndex;
            // Position among the free squares of the domain.
            a[i] = static_cast<std::uint8_t>(d - detail::count_bits(taken & detail::below(s)));
            bits |= bit(s);
        }
        occ |= bits;
        const int free = domain_size_[g] - detail::count_bits(taken);
        if (grp.count == 1) {
            idx = idx * static_cast<Index>(free) + a[0];
            continue;
        }
        detail::sort_small(a, grp.count);
        idx = idx * binomial(free, grp.count) + detail::colex_rank(a, grp.count);
    }
    return idx;
}

Index Indexer::encode_node(int node_id, const Square* squares, std::uint8_t syms,
                           Bitboard occ) const noexcept {
    const detail::Node& node = tree_->nodes[static_cast<std::size_t>(node_id)];
    const int g = node.level;
    const Group& grp = groups_[g];
    const Bitboard taken = occ & grp.domain;
    std::uint64_t best = ~std::uint64_t{0};
    std::uint8_t best_syms = 0;
    Bitboard best_bits = 0;
    for (int s = 0; s < kSymmetryCount; ++s) {
        if (!(syms & (1U << s))) continue;
        std::uint8_t a[kMaxUnits];
        Bitboard bits = 0;
        for (int i = 0; i < grp.count; ++i) {
            const Square t = kSymmetry.square[s][squares[grp.first + i]];
            const std::uint8_t d = domain_index_[g][t];
            if (d == 0xFF || (occ & bit(t))) return kNoIndex;
            a[i] = static_cast<std::uint8_t>(d - detail::count_bits(taken & detail::below(t)));
            bits |= bit(t);
        }
        detail::sort_small(a, grp.count);
        const std::uint64_t r = detail::colex_rank(a, grp.count);
        if (r < best) {
            best = r;
            best_syms = static_cast<std::uint8_t>(1U << s);
            best_bits = bits;
        } else if (r == best) {
            best_syms = static_cast<std::uint8_t>(best_syms | (1U << s));
        }
    }
    const auto it = std::lower_bound(node.rank.begin(), node.rank.end(), best);
    if (it == node.rank.end() || *it != best) return kNoIndex;
    const auto choice = static_cast<std::uint32_t>(it - node.rank.begin());
    occ |= best_bits;
    const std::int32_t child = node.child_of(choice);
    const Index rest = child >= 0
                           ? encode_node(child, squares, best_syms, occ)
                           : encode_tail(squares, std::countr_zero(best_syms), occ, node.level + 1);
    return rest == kNoIndex ? kNoIndex : node.offset[choice] + rest;
}

// Puts the units of group g whose colex rank among the group's free squares
// is `rank`.
inline void Indexer::place_group(int g, std::uint64_t rank, Bitboard& occ,
                                 Square* squares) const noexcept {
    const Group& grp = groups_[g];
    std::uint8_t a[kMaxUnits];
    if (grp.count == 1) {
        a[0] = static_cast<std::uint8_t>(rank);
    } else {
        detail::colex_unrank(rank, grp.count, a);
    }
#if defined(__BMI2__)
    const Bitboard free = grp.domain & ~occ;
    for (int i = 0; i < grp.count; ++i) squares[grp.first + i] = detail::select_bit(free, a[i]);
#else
    // Step over the taken squares at or before each position, in ascending
    // order (few units: a short branch-free loop beats selecting bits).
    const Bitboard taken = occ & grp.domain;
    for (int i = 0; i < grp.count; ++i) {
        unsigned pos = a[i];
        for (Bitboard t = taken; t; t &= t - 1) pos += domain_index_[g][lsb(t)] <= pos ? 1U : 0U;
        squares[grp.first + i] = domain_square_[g][pos];
    }
#endif
    for (int i = 0; i < grp.count; ++i) occ |= bit(squares[grp.first + i]);
}

bool Indexer::decode(Index idx, Square* squares) const noexcept {
    if (idx >= size_) return false;
    const detail::RootTable& root = *root_;
    if (idx < free_end_) {
        const auto choice = static_cast<std::uint32_t>(detail::quotient(free_div_, idx));
        const auto& c = root.choices[choice];
        Bitboard occ = 0;
        for (int i = 0; i < root_units_; ++i) {
            squares[i] = c[static_cast<std::size_t>(i)];
            occ |= bit(squares[i]);
        }
        // Each digit from its own quotient idx / (radices below it), so the
        // divisions do not wait for each other.
        std::uint64_t higher = choice;
        for (int g = root_groups_; g < group_count_; ++g) {
            const std::uint64_t q = detail::quotient(free_below_[g], idx);
            place_group(g, q - higher * free_radix_[g].divisor, occ, squares);
            higher = q;
        }
        return true;
    }
    const std::size_t j = listed_choice(idx);
    const auto it = root_offset_.begin() + static_cast<std::ptrdiff_t>(j);
    const auto choice = static_cast<std::uint32_t>(offset_base_ + j);
    for (int i = 0; i < root_units_; ++i)
        squares[i] = root.choices[choice][static_cast<std::size_t>(i)];
    const Bitboard occ = root.occupied(choice);
    const Index rest = idx - *it;
    if (root_child_[j] >= 0) {
        decode_node(root_child_[j], rest, occ, squares);
    } else if (!choice_below_.empty()) {
        // Precomputed divisors of this root choice (Four File: the radices
        // depend on whether the kings stand on pawn squares).
        const std::size_t base = j * kMaxUnits;
        Bitboard taken = occ;
        std::uint64_t higher = 0;
        for (int g = root_groups_; g < group_count_; ++g) {
            const std::uint64_t q = detail::quotient(choice_below_[base + g], rest);
            place_group(g, q - higher * choice_radix_[base + g], taken, squares);
            higher = q;
        }
    } else {
        decode_tail(rest, occ, root_groups_, squares);
    }
    return true;
}

bool Indexer::decode_next(Index idx, Square* squares) const noexcept {
    const int g = group_count_ - 1;
    if (idx < free_end_ && idx != 0 && g >= root_groups_ && groups_[g].count == 1) {
        // The last digit has a fixed radix in the free choices; unless it
        // wraps to 0 here, the higher digits and the other units stay.
        const std::uint64_t radix = free_radix_[g].divisor;
        if (idx != detail::quotient(free_radix_[g], idx) * radix) {
            const int last = groups_[g].first;
            Bitboard others = 0;
            for (int i = 0; i < last; ++i) others |= bit(squares[i]);
            const Bitboard at = bit(squares[last]);
            squares[last] = lsb(groups_[g].domain & ~others & ~(at | (at - 1)));
            return true;
        }
    }
    return decode(idx, squares);
}

int Indexer::last_unit_run(Index idx, const Square* squares, Square* next, int max) const noexcept {
    const int g = group_count_ - 1;
    if (max <= 0 || idx >= free_end_ || g < root_groups_ || groups_[g].count != 1) return 0;
    // As in decode_next(): until the last digit wraps to 0, only that unit
    // moves, to its next free square.
    const std::uint64_t radix = free_radix_[g].divisor;
    const Index digit = idx - detail::quotient(free_radix_[g], idx) * radix;
    const Index after = std::min<Index>(radix - 1 - digit, free_end_ - 1 - idx);
    const int last = groups_[g].first;
    Bitboard others = 0;
    for (int i = 0; i < last; ++i) others |= bit(squares[i]);
    const Bitboard at = bit(squares[last]);
    Bitboard free = groups_[g].domain & ~others & ~(at | (at - 1));
    int count = 0;
    while (free && static_cast<Index>(count) < after && count < max) next[count++] = pop_lsb(free);
    return count;
}

std::pair<Index, Index> Indexer::root_range(Index idx) const noexcept {
    if (idx < free_end_) {
        const Index first = detail::quotient(free_div_, idx) * free_size_;
        return {first, first + free_size_};
    }
    const std::size_t j = listed_choice(idx);
    return {root_offset_[j], j + 1 < root_offset_.size() ? root_offset_[j + 1] : size_};
}

std::size_t Indexer::listed_choice(Index idx) const noexcept {
    // The bucket of idx names the first listed choice that may hold it.
    std::size_t j = bucket_first_[detail::quotient(bucket_width_, idx - free_end_)];
    while (j + 1 < root_offset_.size() && root_offset_[j + 1] <= idx) ++j;
    return j;
}

void Indexer::decode_tail(Index rest, Bitboard occ, int level, Square* squares) const noexcept {
    std::uint64_t digit[kMaxUnits];
    Index radix[kMaxUnits];
    int used = 0;
    for (int g = level; g < group_count_; ++g) {
        const Group& grp = groups_[g];
        radix[g] = binomial(detail::count_bits(grp.domain & ~occ) - used, grp.count);
        used += grp.count;
    }
    for (int g = group_count_ - 1; g >= level; --g) {
        const Index q = rest / radix[g];
        digit[g] = rest - q * radix[g];
        rest = q;
    }
    for (int g = level; g < group_count_; ++g) place_group(g, digit[g], occ, squares);
}

void Indexer::decode_node(int node_id, Index rest, Bitboard occ, Square* squares) const noexcept {
    const detail::Node& node = tree_->nodes[static_cast<std::size_t>(node_id)];
    const auto it = std::upper_bound(node.offset.begin(), node.offset.end(), rest) - 1;
    const auto choice = static_cast<std::uint32_t>(it - node.offset.begin());
    rest -= *it;
    place_group(node.level, node.rank[choice], occ, squares);
    const std::int32_t child = node.child_of(choice);
    if (child >= 0) {
        decode_node(child, rest, occ, squares);
    } else {
        decode_tail(rest, occ, node.level + 1, squares);
    }
}

bool Indexer::placement_of(const Position& pos, Square* squares) const {
    if (detail::count_bits(pos.occupied()) != units_) return false;
    for (int g = 0; g < group_count_; ++g) {
        const Group& grp = groups_[g];
        Bitboard b = pos.units(unit_color(grp.unit), unit_type(grp.unit));
        if (detail::count_bits(b) != grp.count) return false;
        for (int i = 0; i < grp.count; ++i) squares[grp.first + i] = pop_lsb(b);
    }
    return true;
}

Index Indexer::index(const Position& pos) const {
    Square squares[kMaxUnits];
    if (!placement_of(pos, squares)) return kNoIndex;
    return encode(squares);
}

std::optional<Slot> Indexer::locate(const Position& pos) const {
    const Material m = material_of(pos);
    Slot slot;
    if (m == material_) {
        slot.index = index_oriented(pos, false);
        slot.side_to_move = pos.side_to_move();
    } else if (m.flipped() == material_) {
        slot.index = index_oriented(pos, true);
        slot.side_to_move = ~pos.side_to_move();
        slot.color_flipped = true;
    }
    if (slot.index == kNoIndex) return std::nullopt;
    return slot;
}

Index Indexer::index_oriented(const Position& pos, bool color_flipped) const noexcept {
    // Flipped: the placement of pos.color_flipped(), read without building it.
    const Color swap = color_flipped ? Color::Black : Color::White;
    const int mirror = color_flipped ? 56 : 0;
    Square squares[kMaxUnits];
    for (int g = 0; g < group_count_; ++g) {
        const Group& grp = groups_[g];
        const auto colour = static_cast<Color>(to_index(unit_color(grp.unit)) ^ to_index(swap));
        Bitboard b = pos.units(colour, unit_type(grp.unit));
        for (int i = 0; i < grp.count; ++i) squares[grp.first + i] = static_cast<Square>(pop_lsb(b) ^ mirror);
    }
    return encode(squares);
}

std::optional<Position> Indexer::position(Index idx, Color side_to_move) const {
    Square squares[kMaxUnits];
    if (!decode(idx, squares)) return std::nullopt;
    Position pos;
    for (int i = 0; i < units_; ++i) pos.put(squares[i], unit_of_[static_cast<std::size_t>(i)]);
    pos.set_side_to_move(side_to_move);
    if (side_not_to_move_in_check(variant_, pos)) return std::nullopt;
    return pos;
}

bool Indexer::is_valid(Index idx, Color side_to_move) const {
    // Without a royal king every placement is a position.
    if (!royal_king_) return idx < size_;
    return position(idx, side_to_move).has_value();
}

std::string Indexer::describe() const {
    std::string s = std::string(variant_name(variant_)) + " " + material_.name() + ": " +
                    std::to_string(size_) + " slots, " + std::to_string(symmetry_count()) +
                    (symmetry_count() == 1 ? " symmetry" : " symmetries") + ", order";
    for (int i = 0; i < units_; ++i) {
        if (i == root_units_) s += " |";
        s += ' ';
        s += unit_label(unit_of_[static_cast<std::size_t>(i)]);
    }
    s += " (high digit first; root before '|')";
    return s;
}

}  // namespace tbf::index
