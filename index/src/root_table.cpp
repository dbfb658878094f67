#include "root_table.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "combinatorics.hpp"

namespace tbf::index::detail {

namespace {

struct Decoded {
    std::array<Square, kMaxUnits> squares{};
    Bitboard occupied = 0;
    bool overlap = false;
};

Decoded decode_raw(const RootTable& t, std::uint64_t raw) {
    Decoded d;
    int first = 0;
    for (int g = 0; g < t.shape.groups; ++g) {
        const std::uint64_t rank = raw / t.multiplier[g];
        raw %= t.multiplier[g];
        std::uint8_t a[kMaxUnits];
        const int k = t.shape.count[g];
        colex_unrank(rank, k, a);
        for (int i = 0; i < k; ++i) {
            const Square s = select_bit(t.shape.domain[g], a[i]);
            if (d.occupied & bit(s)) d.overlap = true;
            d.occupied |= bit(s);
            d.squares[first + i] = s;
        }
        first += k;
    }
    return d;
}

// Raw key of the image of a placement under symmetry `sym`.
std::uint64_t image_raw(const RootTable& t, const Square* squares, int sym) {
    std::uint64_t raw = 0;
    int first = 0;
    for (int g = 0; g < t.shape.groups; ++g) {
        const int k = t.shape.count[g];
        std::uint8_t a[kMaxUnits];
        for (int i = 0; i < k; ++i) {
            a[i] = t.domain_index[g][kSymmetry.square[sym][squares[first + i]]];
        }
        sort_small(a, k);
        raw += colex_rank(a, k) * t.multiplier[g];
        first += k;
    }
    return raw;
}

bool allowed(const RootTable& t, const Decoded& d) {
    if (d.overlap) return false;
    if (t.shape.kings_apart) {
        const int files = file_of(d.squares[0]) - file_of(d.squares[1]);
        const int ranks = rank_of(d.squares[0]) - rank_of(d.squares[1]);
        return files > 1 || files < -1 || ranks > 1 || ranks < -1;
    }
    return true;
}

std::shared_ptr<const RootTable> build(const RootShape& shape) {
    auto t = std::make_shared<RootTable>();
    t->shape = shape;
    std::uint64_t total = 1;
    for (int g = shape.groups - 1; g >= 0; --g) {
        t->multiplier[g] = total;
        total *= binomial(count_bits(shape.domain[g]), shape.count[g]);
        t->units += shape.count[g];
        std::uint8_t n = 0;
        for (int s = 0; s < 64; ++s) {
            t->domain_index[g][s] = (shape.domain[g] & bit(static_cast<Square>(s))) ? n++ : 0xFF;
        }
    }
    // First pass: the smallest raw key in each orbit and one symmetry that
    // reaches it (packed as key << 3 | symmetry).
    std::vector<std::uint64_t> best(total, ~std::uint64_t{0});
    std::vector<std::uint64_t> canonical_keys;
    // Walk the raw keys in order, advancing the groups' combinations like an
    // odometer (the colex successor adds one to a group's rank).
    std::array<std::array<std::uint8_t, kMaxUnits>, kMaxUnits> a{};
    std::array<std::array<Square, 64>, kMaxUnits> square_at{};
    std::array<int, kMaxUnits> size{};
    for (int g = 0; g < shape.groups; ++g) {
        for (int i = 0; i < shape.count[g]; ++i) a[g][i] = static_cast<std::uint8_t>(i);
        size[g] = count_bits(shape.domain[g]);
        for (int s = 0; s < 64; ++s) {
            if (t->domain_index[g][s] != 0xFF)
                square_at[g][t->domain_index[g][s]] = static_cast<Square>(s);
        }
    }
    for (std::uint64_t raw = 0; raw < total; ++raw) {
        Decoded d;
        for (int g = 0, first = 0; g < shape.groups; first += shape.count[g], ++g) {
            for (int i = 0; i < shape.count[g]; ++i) {
                const Square s = square_at[g][a[g][i]];
                if (d.occupied & bit(s)) d.overlap = true;
                d.occupied |= bit(s);
                d.squares[first + i] = s;
            }
        }
        for (int g = shape.groups - 1; g >= 0; --g) {
            if (next_combination(a[g].data(), shape.count[g], size[g])) break;
            for (int i = 0; i < shape.count[g]; ++i) a[g][i] = static_cast<std::uint8_t>(i);
        }
        if (!allowed(*t, d)) continue;
        std::uint64_t min_key = raw;
        int min_sym = 0;
        for (int s = 1; s < kSymmetryCount; ++s) {
            if (!(shape.symmetries & (1U << s))) continue;
            const std::uint64_t key = image_raw(*t, d.squares.data(), s);
            if (key < min_key) {
                min_key = key;
                min_sym = s;
            }
        }
        best[raw] = (min_key << 3) | static_cast<std::uint64_t>(min_sym);
        if (min_key == raw) canonical_keys.push_back(raw);
    }
    // Choices: trivial stabilizer first, so the common case is one uniform
    // block of slots.
    std::vector<RootTable::Squares> fixed;
    std::vector<std::uint8_t> fixed_stab;
    std::vector<std::uint64_t> free_keys;
    std::vector<std::uint64_t> fixed_keys;
    for (const std::uint64_t raw : canonical_keys) {
        const Decoded d = decode_raw(*t, raw);
        std::uint8_t stab = 1;
        for (int s = 1; s < kSymmetryCount; ++s) {
            if ((shape.symmetries & (1U << s)) && image_raw(*t, d.squares.data(), s) == raw) {
                stab = static_cast<std::uint8_t>(stab | (1U << s));
            }
        }
        if (stab == 1) {
            t->choices.push_back(d.squares);
            t->stabilizer.push_back(stab);
            free_keys.push_back(raw);
        } else {
            fixed.push_back(d.squares);
            fixed_stab.push_back(stab);
            fixed_keys.push_back(raw);
        }
    }
    t->free_count = static_cast<std::uint32_t>(t->choices.size());
    t->choices.insert(t->choices.end(), fixed.begin(), fixed.end());
    t->stabilizer.insert(t->stabilizer.end(), fixed_stab.begin(), fixed_stab.end());
    free_keys.insert(free_keys.end(), fixed_keys.begin(), fixed_keys.end());
    // Choice number of each canonical key, stored in place of its `best`.
    std::vector<std::uint32_t> choice_of(total, RootTable::kNoEntry);
    for (std::size_t i = 0; i < free_keys.size(); ++i) {
        choice_of[free_keys[i]] = static_cast<std::uint32_t>(i);
    }
    t->lookup.assign(total, RootTable::kNoEntry);
    for (std::uint64_t raw = 0; raw < total; ++raw) {
        if (best[raw] == ~std::uint64_t{0}) continue;
        const std::uint32_t choice = choice_of[best[raw] >> 3];
        t->lookup[raw] = (choice << 3) | static_cast<std::uint32_t>(best[raw] & 7);
    }
    return t;
}

}  // namespace

std::uint64_t raw_size(const RootShape& shape) {
    std::uint64_t total = 1;
    for (int g = 0; g < shape.groups; ++g) {
        total *= binomial(count_bits(shape.domain[g]), shape.count[g]);
    }
    return total;
}

std::shared_ptr<const RootTable> root_table(const RootShape& shape) {
    static std::mutex mutex;
    static std::map<RootShape, std::shared_ptr<const RootTable>> cache;
    const std::lock_guard lock(mutex);
    auto& entry = cache[shape];
    if (!entry) entry = build(shape);
    return entry;
}

}  // namespace tbf::index::detail
