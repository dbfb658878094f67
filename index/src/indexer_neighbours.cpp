// Indexer::Neighbours: the slots one unit move away from a decoded slot,
// equal to Indexer::encode of the moved placement (indexer.cpp) step by step.

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

}  // namespace

Index Indexer::Neighbours::moved(int moved, Square to) noexcept {
    if (moved < ix_.root_units_) return moved_in_root(moved, to);
    if (tail_ == TailState::Unknown) prepare_tail();
    return tail_ == TailState::Deltas ? moved_in_tail(moved, to) : encode_moved(moved, to);
}

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
    root_key_ = 0;
    for (int r = 0; r < ix_.root_groups_; ++r) {
        const Group& grp = ix_.groups_[r];
        std::uint8_t a[kMaxUnits];
        for (int k = 0; k < grp.count; ++k) a[k] = ix_.domain_index_[r][squares_[grp.first + k]];
        key_part_[r] = group_rank(a, grp.count) * root.multiplier[r];
        root_key_ += key_part_[r];
    }
    root_ready_ = true;
}

const Indexer::Neighbours::Image& Indexer::Neighbours::image(int sym) noexcept {
    Image& im = images_[static_cast<std::size_t>(sym)];
    if (imaged_ & (1U << sym)) return im;
    imaged_ = static_cast<std::uint8_t>(imaged_ | (1U << sym));
    const auto& map = detail::kSymmetry.square[sym];
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
    return im;
}

Index Indexer::Neighbours::moved_in_root(int moved, Square to) noexcept {
    const int r = ix_.group_of_[moved];
    const Group& grp = ix_.groups_[r];
    const std::uint8_t d = ix_.domain_index_[r][to];
    if (d == 0xFF) return kNoIndex;
    if (!root_ready_) prepare_root();
    const detail::RootTable& root = *ix_.root_;
    std::uint64_t part = d;
    if (grp.count > 1) {
        std::uint8_t a[kMaxUnits];
        for (int k = 0; k < grp.count; ++k) {
            const int i = grp.first + k;
            a[k] = i == moved ? d : ix_.domain_index_[r][squares_[i]];
        }
        part = group_rank(a, grp.count);
    }
    const std::uint32_t entry = root.lookup[root_key_ - key_part_[r] + part * root.multiplier[r]];
    if (entry == detail::RootTable::kNoEntry) return kNoIndex;
    const std::uint32_t choice = entry >> 3;
    const int sym = static_cast<int>(entry & 7);
    Index base;
    if (choice < ix_.free_choices_ && ix_.free_size_ != 0) {
        base = choice * ix_.free_size_;
    } else {
        const std::size_t j = choice - ix_.offset_base_;
        if (ix_.root_child_[j] >= 0) return encode_moved(moved, to);
        base = ix_.root_offset_[j];
    }
    if (ix_.root_groups_ == ix_.group_count_) return base;
    const Image& im = image(sym);
    if (im.outside) return kNoIndex;
    const auto& map = detail::kSymmetry.square[sym];
    Bitboard root_occ = 0;
    for (int i = 0; i < ix_.root_units_; ++i) root_occ |= bit(map[i == moved ? to : squares_[i]]);
    // The image's ranks count the earlier tail units below each square; the
    // root squares below it come off here.
    Index tail = 0;
    for (int g = ix_.root_groups_; g < ix_.group_count_; ++g) {
        const Group& tail_group = ix_.groups_[g];
        const Bitboard taken = root_occ & tail_group.domain;
        const int free = im.free[g] - count_bits(taken);
        Index digit = 0;
        for (int k = 0; k < tail_group.count; ++k) {
            const int i = tail_group.first + k;
            digit += binomial(im.rank[i] - count_bits(taken & detail::below(im.square[i])), k + 1);
        }
        tail = tail * binomial(free, tail_group.count) + digit;
    }
    return base + tail;
}

}  // namespace tbf::index
