// Indexer::Neighbours: the slots one unit move away from a decoded slot,
// equal to Indexer::encode (indexer.cpp) of the moved placement, with the
// work that a position's moves share done once.

#include <algorithm>

#include "combinatorics.hpp"
#include "root_table.hpp"
#include "tbforge/index/indexer.hpp"

namespace tbf::index {

namespace {

using detail::binomial;
using detail::count_bits;

// Colex rank of a group's positions given in any order.
std::uint64_t group_rank(std::uint8_t* a, int count) {
    detail::sort_small(a, count);
    return detail::colex_rank(a, count);
}

// Colex rank of a group of `count` positions: `rest` (count - 1 of them,
// ascending) and d. Each of the rest moves up one place if above d.
std::uint64_t rank_with(const std::uint8_t* rest, int count, std::uint8_t d) {
    std::uint64_t rank = 0;
    int below_d = 0;
    for (int i = 0; i + 1 < count; ++i) {
        const int above = rest[i] > d ? 1 : 0;
        rank += binomial(rest[i], i + 1 + above);
        below_d += 1 - above;
    }
    return rank + binomial(d, below_d + 1);
}

}  // namespace

Index Indexer::Neighbours::encode_moved(int moved, Square to) const noexcept {
    Square copy[kMaxUnits];
    std::copy(squares_, squares_ + ix_.units_, copy);
    copy[moved] = to;
    return ix_.encode(copy);
}

void Indexer::Neighbours::prepare_tail() noexcept {
    // A root without symmetry left maps onto itself by the identity only, so
    // its tail is ranked on the decoded squares as they stand; other roots
    // go through the listed nodes.
    const bool mixed_radix =
        slot_ < ix_.free_end_ || ix_.root_child_[ix_.listed_choice(slot_)] < 0;
    tail_ = mixed_radix ? TailState::Deltas : TailState::Encode;
    if (!mixed_radix) return;
    Bitboard occ = 0;
    for (int i = 0; i < ix_.root_units_; ++i) occ |= bit(squares_[i]);
    std::array<Index, kMaxUnits> radix{};
    for (int g = ix_.root_groups_; g < ix_.group_count_; ++g) {
        const Group& grp = ix_.groups_[g];
        occ_before_[g] = occ;
        const Bitboard taken = occ & grp.domain;
        Index digit = 0;
        // Decoded groups are ascending, so their ranks are too.
        for (int k = 0; k < grp.count; ++k) {
            const int i = grp.first + k;
            const Square s = squares_[i];
            rank_[i] = static_cast<std::uint8_t>(ix_.domain_index_[g][s] -
                                                 count_bits(taken & detail::below(s)));
            digit += binomial(rank_[i], k + 1);
            occ |= bit(s);
        }
        digit_[g] = digit;
        radix[g] = binomial(ix_.domain_size_[g] - count_bits(taken), grp.count);
    }
    Index below = 1;
    for (int g = ix_.group_count_ - 1; g >= ix_.root_groups_; --g) {
        below_[g] = below;
        below *= radix[g];
    }
}

Index Indexer::Neighbours::moved_in_tail(int moved, Square to) noexcept {
    const int g = ix_.group_of_[moved];
    const Group& grp = ix_.groups_[g];
    const std::uint8_t d = ix_.domain_index_[g][to];
    if (d == 0xFF) return kNoIndex;
    const auto rank = static_cast<std::uint8_t>(
        d - count_bits(occ_before_[g] & grp.domain & detail::below(to)));
    Index digit = rank;
    if (grp.count > 1) {
        std::uint8_t a[kMaxUnits];
        for (int k = 0; k < grp.count; ++k) {
            const int i = grp.first + k;
            a[k] = i == moved ? rank : rank_[i];
        }
        digit = group_rank(a, grp.count);
    }
    // Unsigned wrap-around: the differences may be negative, the sum is not.
    Index slot = slot_ + (digit - digit_[g]) * below_[g];
    // The tail's domains grow group by group, so both squares of the move
    // lie in every later domain: a later unit above `from` gains a free
    // square below it, one above `to` loses one. Their order is unchanged.
    const Square from = squares_[moved];
    for (int h = g + 1; h < ix_.group_count_; ++h) {
        const Group& later = ix_.groups_[h];
        if (later.count == 1) {
            const Square s = squares_[later.first];
            slot += (Index{s > from} - Index{s > to}) * below_[h];
            continue;
        }
        Index later_digit = 0;
        for (int k = 0; k < later.count; ++k) {
            const int i = later.first + k;
            const Square s = squares_[i];
            later_digit += binomial(rank_[i] + (s > from) - (s > to), k + 1);
        }
        slot += (later_digit - digit_[h]) * below_[h];
    }
    return slot;
}

void Indexer::Neighbours::prepare_root() noexcept {
    const detail::RootTable& root = *ix_.root_;
    std::uint64_t key = 0;
    std::array<std::uint64_t, kMaxUnits> share{};
    for (int r = 0; r < ix_.root_groups_; ++r) {
        const Group& grp = ix_.groups_[r];
        for (int k = 0; k < grp.count; ++k) {
            const int u = grp.first + k;
            std::uint8_t* rest = group_rest_[u].data();
            int n = 0;
            for (int i = grp.first; i < grp.first + grp.count; ++i) {
                if (i != u) rest[n++] = ix_.domain_index_[r][squares_[i]];
            }
            detail::sort_small(rest, n);
        }
        const int first = grp.first;
        share[r] = rank_with(group_rest_[first].data(), grp.count,
                             ix_.domain_index_[r][squares_[first]]) *
                   root.multiplier[r];
        key += share[r];
    }
    for (int u = 0; u < ix_.root_units_; ++u) key_rest_[u] = key - share[ix_.group_of_[u]];
    root_ready_ = true;
}

void Indexer::Neighbours::compute_image(int sym) noexcept {
    Image& im = images_[static_cast<std::size_t>(sym)];
    imaged_ = static_cast<std::uint8_t>(imaged_ | (1U << sym));
    const auto& map = detail::kSymmetry.square[sym];
    im.root = 0;
    for (int i = 0; i < ix_.root_units_; ++i) im.root |= bit(map[squares_[i]]);
    im.outside = false;
    Bitboard occ = 0;
    for (int g = ix_.root_groups_; g < ix_.group_count_; ++g) {
        const Group& grp = ix_.groups_[g];
        Square* group = im.square.data() + grp.first;
        for (int k = 0; k < grp.count; ++k) group[k] = map[squares_[grp.first + k]];
        detail::sort_small(group, grp.count);
        const Bitboard taken = occ & grp.domain;
        for (int k = 0; k < grp.count; ++k) {
            const std::uint8_t d = ix_.domain_index_[g][group[k]];
            im.outside = im.outside || d == 0xFF;
            im.rank[grp.first + k] =
                static_cast<std::uint8_t>(d - count_bits(taken & detail::below(group[k])));
            occ |= bit(group[k]);
        }
        im.free[g] = static_cast<std::uint8_t>(ix_.domain_size_[g] - count_bits(taken));
    }
}

Index Indexer::Neighbours::moved_in_root(int moved, Square to) noexcept {
    const Indexer& ix = ix_;
    const int r = ix.group_of_[moved];
    const int count = ix.groups_[r].count;
    const std::uint8_t d = ix.domain_index_[r][to];
    if (d == 0xFF) return kNoIndex;
    if (!root_ready_) prepare_root();
    const std::uint64_t share = count == 1 ? d : rank_with(group_rest_[moved].data(), count, d);
    const detail::RootTable& root = *ix.root_;
    const std::uint32_t entry = root.lookup[key_rest_[moved] + share * root.multiplier[r]];
    if (entry == detail::RootTable::kNoEntry) return kNoIndex;
    const std::uint32_t choice = entry >> 3;
    const int sym = static_cast<int>(entry & 7);
    Index base;
    if (choice < ix.free_choices_ && ix.free_size_ != 0) {
        base = choice * ix.free_size_;
    } else {
        const std::size_t j = choice - ix.offset_base_;
        if (ix.root_child_[j] >= 0) return encode_moved(moved, to);
        base = ix.root_offset_[j];
    }
    if (ix.root_groups_ == ix.group_count_) return base;
    const Image& im = image(sym);
    if (im.outside) return kNoIndex;
    const auto& map = detail::kSymmetry.square[sym];
    const Bitboard root_occ = (im.root ^ bit(map[squares_[moved]])) | bit(map[to]);
    // The image's ranks count the earlier tail units below each square; the
    // root squares below it come off here.
    Index tail = 0;
    for (int g = ix.root_groups_; g < ix.group_count_; ++g) {
        const Group& grp = ix.groups_[g];
        const Bitboard taken = root_occ & grp.domain;
        const int free = im.free[g] - count_bits(taken);
        if (grp.count == 1) {
            const int i = grp.first;
            tail = tail * static_cast<Index>(free) + im.rank[i] -
                   static_cast<Index>(count_bits(taken & detail::below(im.square[i])));
            continue;
        }
        Index digit = 0;
        for (int k = 0; k < grp.count; ++k) {
            const int i = grp.first + k;
            digit += binomial(im.rank[i] - count_bits(taken & detail::below(im.square[i])), k + 1);
        }
        tail = tail * binomial(free, grp.count) + digit;
    }
    return base + tail;
}

}  // namespace tbf::index
