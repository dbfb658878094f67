#include "pair_codec.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <queue>
#include <utility>

#include "tbforge/base/mix64.hpp"

namespace tbf::storage::detail {
namespace {

constexpr std::uint8_t kModelVersion = 1;
constexpr unsigned kMinSubBlockLog = 4;   // 16 bytes
constexpr unsigned kMaxSubBlockLog = 12;  // 4096 bytes
constexpr std::uint32_t kMaxSymbolIds = 65536;
// A round stops accepting pairs this rare once it has this many: their
// counts are worth recomputing after the frequent pairs are replaced.
constexpr std::size_t kRarePairsPerRound = 256;

Status bad_model(const std::string& problem) { return corruption("pair model: " + problem); }
Status bad_member(const std::string& problem) { return corruption("pair member: " + problem); }

void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

// Reads the varint at `pos` and moves past it; false when it is truncated,
// longer than 64 bits or not in its shortest form (one encoding a value).
bool get_varint(std::string_view in, std::size_t& pos, std::uint64_t& v) {
    v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (pos >= in.size()) return false;
        const auto byte = static_cast<std::uint8_t>(in[pos++]);
        if (shift == 63 && byte > 1) return false;
        v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0) return byte != 0 || shift == 0;
    }
    return false;
}

// Appends bit fields MSB-first; flush() completes the last byte with zeros.
class BitWriter {
public:
    explicit BitWriter(std::string& out) : out_(out) {}
    void put(std::uint32_t bits, unsigned n) {  // n <= 32
        pending_ = (pending_ << n) | bits;
        filled_ += n;
        while (filled_ >= 8) {
            filled_ -= 8;
            out_.push_back(static_cast<char>(pending_ >> filled_));
        }
    }
    void flush() {
        if (filled_ > 0) out_.push_back(static_cast<char>(pending_ << (8 - filled_)));
        filled_ = 0;
        pending_ = 0;
    }

private:
    std::string& out_;
    std::uint64_t pending_ = 0;
    unsigned filled_ = 0;
};

// Bytes of a directory entry: the first value index of a sub-block, < slots.
unsigned start_bytes(std::uint32_t slots) {
    return std::max(1u, (static_cast<unsigned>(std::bit_width(slots - 1)) + 7) / 8);
}

std::uint64_t load_be64(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
    return v;
}

// Whether the bits [bit, limit) of `bytes` are all zero (limit: a whole byte).
bool zero_bits(const std::uint8_t* bytes, std::uint64_t bit, std::uint64_t limit) {
    if ((bit & 7) != 0) {
        if ((bytes[bit >> 3] & (0xFFu >> (bit & 7))) != 0) return false;
        bit = (bit | 7) + 1;
    }
    for (std::uint64_t b = bit >> 3; b < limit >> 3; ++b) {
        if (bytes[b] != 0) return false;
    }
    return true;
}

// A member payload's directory, checked against the model's sub-block size.
struct MemberLayout {
    std::uint64_t sub_blocks = 0;
    unsigned start_bytes = 0;
    const char* starts = nullptr;  // first value of sub-blocks 1..K-1
    const std::uint8_t* data = nullptr;
    std::uint64_t data_bytes = 0;
    std::uint32_t slots = 0;

    // First value of sub-block k (k <= K; K: the member's end).
    [[nodiscard]] std::uint64_t start(std::uint64_t k) const {
        if (k == 0) return 0;
        if (k == sub_blocks) return slots;
        const char* p = starts + (k - 1) * start_bytes;
        std::uint64_t v = 0;
        for (unsigned i = 0; i < start_bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
        return v;
    }
};

Status open_member(const PairModel& model, std::string_view payload, std::uint32_t slots, MemberLayout& out) {
    if (slots == 0) return invalid_argument("pair member: no slots");
    if (model.symbols() == 0) return invalid_argument("pair member: empty model");
    std::size_t pos = 0;
    std::uint64_t k = 0;
    if (!get_varint(payload, pos, k)) return bad_member("sub-block count is truncated or malformed");
    if (k == 0 || k > slots) return bad_member("sub-block count " + std::to_string(k) + " for " + std::to_string(slots) + " slots");
    out.sub_blocks = k;
    out.slots = slots;
    out.start_bytes = start_bytes(slots);
    const std::uint64_t directory = (k - 1) * out.start_bytes;
    if (directory > payload.size() - pos) return bad_member("directory is truncated");
    out.starts = payload.data() + pos;
    pos += directory;
    out.data = reinterpret_cast<const std::uint8_t*>(payload.data()) + pos;
    out.data_bytes = payload.size() - pos;
    const std::uint64_t size = model.sub_block_bytes();
    if (out.data_bytes <= (k - 1) * size) return bad_member("sub-blocks are truncated");
    if (out.data_bytes > k * size) return bad_member("bytes after the last sub-block");
    return {};
}

// Sub-block k of a member with 8 readable bytes past its end: in place, or
// copied into `pad` (sub_block_bytes + 8 bytes) near the payload's end.
const std::uint8_t* sub_block(const MemberLayout& layout, std::uint64_t k, std::uint32_t sub_block_bytes,
                              std::uint8_t* pad, std::uint64_t& size) {
    const std::uint64_t begin = k * sub_block_bytes;
    size = k + 1 < layout.sub_blocks ? sub_block_bytes : layout.data_bytes - begin;
    if (begin + size + 8 <= layout.data_bytes) return layout.data + begin;
    std::memcpy(pad, layout.data + begin, size);
    std::memset(pad + size, 0, 8);
    return pad;
}

template <unsigned Width>
void put_value(std::uint8_t* out, std::uint32_t value) {
    for (unsigned i = 0; i < Width; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// Huffman code lengths of symbols of `weight` (0: absent, no code), at most
// kPairMaxCodeBits: weights are flattened until the longest code fits. One
// symbol present gets length 1.
std::vector<std::uint8_t> huffman_code_bits(std::vector<std::uint64_t> weight) {
    std::vector<std::uint8_t> bits(weight.size(), 0);
    std::vector<std::uint32_t> leaf_symbol;
    for (std::size_t s = 0; s < weight.size(); ++s) {
        if (weight[s] > 0) leaf_symbol.push_back(static_cast<std::uint32_t>(s));
    }
    if (leaf_symbol.size() == 1) {
        bits[leaf_symbol[0]] = 1;
        return bits;
    }
    using Node = std::pair<std::uint64_t, std::uint32_t>;  // weight, node id: ties go to the older node
    for (;;) {
        // Leaves are nodes 0..L-1; a merged node's id is above both of its children's.
        std::priority_queue<Node, std::vector<Node>, std::greater<>> heap;
        std::vector<std::uint32_t> parent(leaf_symbol.size(), 0);
        for (std::size_t k = 0; k < leaf_symbol.size(); ++k) heap.emplace(weight[leaf_symbol[k]], static_cast<std::uint32_t>(k));
        while (heap.size() > 1) {
            const Node a = heap.top();
            heap.pop();
            const Node b = heap.top();
            heap.pop();
            const auto id = static_cast<std::uint32_t>(parent.size());
            parent.push_back(0);
            parent[a.second] = id;
            parent[b.second] = id;
            heap.emplace(a.first + b.first, id);
        }
        std::vector<std::uint32_t> depth(parent.size(), 0);
        for (std::size_t k = parent.size() - 1; k-- > 0;) depth[k] = depth[parent[k]] + 1;
        std::uint32_t longest = 0;
        for (std::size_t k = 0; k < leaf_symbol.size(); ++k) longest = std::max(longest, depth[k]);
        if (longest <= kPairMaxCodeBits) {
            for (std::size_t k = 0; k < leaf_symbol.size(); ++k) bits[leaf_symbol[k]] = static_cast<std::uint8_t>(depth[k]);
            return bits;
        }
        for (auto& w : weight) {
            if (w > 0) w = (w + 1) / 2;
        }
    }
}

// Open-addressing map of 32-bit keys (an adjacent pair of symbols, left <<
// 16 | right) to nonzero 32-bit values (a count, saturating, or a symbol +
// 1), growing with its entries: its size follows the distinct pairs, not
// the sequence.
class PairTable {
public:
    PairTable() { reset(1024); }

    void reset(std::size_t capacity) {
        slots_.assign(capacity, 0);
        mask_ = capacity - 1;
        shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
        size_ = 0;
    }
    // Empties the table, keeping its capacity (the next round's pairs are about as many).
    void clear() {
        std::fill(slots_.begin(), slots_.end(), 0);
        size_ = 0;
    }

    void count(std::uint32_t key) {
        std::uint64_t& slot = find_slot(key);
        if (slot == 0) {
            slot = std::uint64_t{key} << 32 | 1;
            if (++size_ * 2 > slots_.size()) grow();
        } else if (static_cast<std::uint32_t>(slot) != 0xFFFFFFFF) {
            ++slot;
        }
    }
    void set(std::uint32_t key, std::uint32_t value) {
        std::uint64_t& slot = find_slot(key);
        const bool added = slot == 0;
        slot = std::uint64_t{key} << 32 | value;
        if (added && ++size_ * 2 > slots_.size()) grow();
    }
    // Brings the cache line where `key` is looked up first: the counting
    // pass of a large table misses the cache on most pairs otherwise.
    void prefetch(std::uint32_t key) const { __builtin_prefetch(slots_.data() + home(key)); }
    // The key's value, 0 when absent.
    [[nodiscard]] std::uint32_t get(std::uint32_t key) const {
        for (std::size_t h = home(key);; h = (h + 1) & mask_) {
            const std::uint64_t slot = slots_[h];
            if (slot == 0) return 0;
            if (slot >> 32 == key) return static_cast<std::uint32_t>(slot);
        }
    }
    // Each entry as key << 32 | value, in slot order.
    [[nodiscard]] const std::vector<std::uint64_t>& entries() const { return slots_; }

private:
    [[nodiscard]] std::size_t home(std::uint32_t key) const {
        return static_cast<std::size_t>((key * kGoldenGamma) >> shift_);
    }
    std::uint64_t& find_slot(std::uint32_t key) {
        for (std::size_t h = home(key);; h = (h + 1) & mask_) {
            std::uint64_t& slot = slots_[h];
            if (slot == 0 || slot >> 32 == key) return slot;
        }
    }
    void grow() {
        std::vector<std::uint64_t> old = std::move(slots_);
        reset(old.size() * 2);
        for (const std::uint64_t slot : old) {
            if (slot != 0) {
                find_slot(static_cast<std::uint32_t>(slot >> 32)) = slot;
                ++size_;
            }
        }
    }

    std::vector<std::uint64_t> slots_;
    std::size_t mask_ = 0;
    unsigned shift_ = 0;
    std::size_t size_ = 0;
};

// The distinct values of a table and their counts: a direct array for
// values of 1 or 2 bytes, an open-addressing hash (at most `max_distinct`
// entries, at most half full) for 4.
class ValueCounts {
public:
    ValueCounts(std::uint32_t width, std::uint32_t max_distinct) : direct_(width < 4) {
        const std::size_t capacity = direct_ ? std::size_t{1} << (8 * width) : std::bit_ceil(std::size_t{2} * max_distinct);
        value_.assign(capacity, 0);
        count_.assign(capacity, 0);
        shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
        max_distinct_ = max_distinct;
    }
    // The slot of `value`, added if new; false when that makes too many.
    bool add(std::uint32_t value) {
        const std::size_t slot = slot_of(value);
        if (count_[slot]++ == 0) {
            value_[slot] = value;
            if (++distinct_ > max_distinct_) return false;
        }
        return true;
    }
    // The slot of a value added before (or of an empty slot).
    [[nodiscard]] std::size_t slot_of(std::uint32_t value) const {
        if (direct_) return value;
        const std::size_t mask = value_.size() - 1;
        for (std::size_t h = (value * kGoldenGamma) >> shift_;; h = (h + 1) & mask) {
            if (count_[h] == 0 || value_[h] == value) return h;
        }
    }
    [[nodiscard]] std::size_t slots() const { return value_.size(); }
    [[nodiscard]] std::uint32_t value(std::size_t slot) const { return value_[slot]; }
    [[nodiscard]] std::uint64_t count(std::size_t slot) const { return count_[slot]; }

private:
    bool direct_;
    std::vector<std::uint32_t> value_;
    std::vector<std::uint64_t> count_;
    unsigned shift_ = 0;
    std::uint32_t max_distinct_ = 0;
    std::uint32_t distinct_ = 0;
};

std::uint32_t load_value(const std::uint8_t* p, std::uint32_t width) {
    std::uint32_t v = 0;
    for (std::uint32_t i = 0; i < width; ++i) v |= std::uint32_t{p[i]} << (8 * i);
    return v;
}

// The grammar of a table under construction: symbols < terminals are
// values, the others pairs; `sequence` is the table as symbols, member j
// being sequence[member_begin[j], member_begin[j + 1]).
struct Grammar {
    std::vector<std::uint32_t> terminal_value;
    std::vector<std::uint16_t> left, right;
    std::vector<std::uint16_t> sequence;
    std::vector<std::size_t> member_begin;
    [[nodiscard]] std::size_t symbols() const { return terminal_value.size() + left.size(); }
};

// Pair rounds over `g.sequence` until no pair occurs min_pair_count times
// (never across members) or the symbols reach max_symbols.
void build_pairs(Grammar& g, std::uint32_t max_symbols, std::uint32_t min_pair_count) {
    // How far ahead of the count the counting pass prefetches its slot.
    constexpr std::size_t kPrefetchAhead = 16;
    PairTable counts;
    PairTable replacement;  // accepted pair -> its symbol + 1
    std::vector<std::uint8_t> is_left(kMaxSymbolIds), is_right(kMaxSymbolIds);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> candidates;  // count, pair key
    std::vector<std::uint32_t> accepted;
    auto& s = g.sequence;
    while (g.symbols() < max_symbols) {
        // Occurrences a left-to-right replacement can all take: in a run
        // "aaa" the pair (a,a) counts once.
        counts.clear();
        for (std::size_t j = 0; j + 1 < g.member_begin.size(); ++j) {
            bool overlapped = false;
            const std::size_t end = g.member_begin[j + 1];
            for (std::size_t i = g.member_begin[j]; i + 1 < end; ++i) {
                if (i + kPrefetchAhead + 1 < end) {
                    counts.prefetch(std::uint32_t{s[i + kPrefetchAhead]} << 16 | s[i + kPrefetchAhead + 1]);
                }
                const bool same = s[i] == s[i + 1];
                if (same && overlapped) {
                    overlapped = false;
                    continue;
                }
                counts.count(std::uint32_t{s[i]} << 16 | s[i + 1]);
                overlapped = same;
            }
        }
        candidates.clear();
        for (const std::uint64_t entry : counts.entries()) {
            const auto count = static_cast<std::uint32_t>(entry);
            if (count >= min_pair_count) candidates.emplace_back(count, static_cast<std::uint32_t>(entry >> 32));
        }
        if (candidates.empty()) break;
        std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        // Pairs of one round never chain (no accepted pair starts with a
        // symbol another ends with), so their counts stay what the
        // replacement takes.
        std::fill(is_left.begin(), is_left.end(), 0);
        std::fill(is_right.begin(), is_right.end(), 0);
        accepted.clear();
        for (const auto& [count, key] : candidates) {
            if (g.symbols() + accepted.size() >= max_symbols) break;
            const std::uint32_t a = key >> 16, b = key & 0xFFFF;
            if (is_right[a] || is_left[b]) continue;
            is_left[a] = 1;
            is_right[b] = 1;
            accepted.push_back(key);
            if (count < 2 * std::uint64_t{min_pair_count} && accepted.size() >= kRarePairsPerRound) break;
        }
        replacement.clear();
        for (const std::uint32_t key : accepted) {
            replacement.set(key, static_cast<std::uint32_t>(g.symbols()) + 1);
            g.left.push_back(static_cast<std::uint16_t>(key >> 16));
            g.right.push_back(static_cast<std::uint16_t>(key & 0xFFFF));
        }
        std::size_t out = 0;
        for (std::size_t j = 0; j + 1 < g.member_begin.size(); ++j) {
            const std::size_t end = g.member_begin[j + 1];
            std::size_t i = g.member_begin[j];
            g.member_begin[j] = out;
            while (i < end) {
                if (i + 1 < end && is_left[s[i]]) {
                    const std::uint32_t r = replacement.get(std::uint32_t{s[i]} << 16 | s[i + 1]);
                    if (r != 0) {
                        s[out++] = static_cast<std::uint16_t>(r - 1);
                        i += 2;
                        continue;
                    }
                }
                s[out++] = s[i++];
            }
        }
        g.member_begin.back() = out;
        s.resize(out);
    }
}

std::string serialize_model(const Grammar& g, const std::vector<std::uint8_t>& code_bits, std::uint32_t sub_block_bytes) {
    std::string out;
    out.push_back(static_cast<char>(kModelVersion));
    out.push_back(static_cast<char>(std::countr_zero(sub_block_bytes)));
    put_varint(out, g.terminal_value.size());
    for (const std::uint32_t v : g.terminal_value) put_varint(out, v);
    put_varint(out, g.left.size());
    const unsigned id_bits = std::max(1u, static_cast<unsigned>(std::bit_width(g.symbols() - 1)));
    BitWriter pairs(out);
    for (std::size_t k = 0; k < g.left.size(); ++k) {
        pairs.put(g.left[k], id_bits);
        pairs.put(g.right[k], id_bits);
    }
    pairs.flush();
    for (const std::uint8_t bits : code_bits) out.push_back(static_cast<char>(bits));
    return out;
}

// The payload of one member: its symbols g.sequence[begin, end).
std::string pack_member(const Grammar& g, const PairModel& model, std::size_t begin, std::size_t end,
                        std::uint32_t slots) {
    const std::uint64_t capacity = 8ull * model.sub_block_bytes();
    std::vector<std::uint64_t> starts;  // of sub-blocks 1..K-1
    std::string data;
    BitWriter writer(data);
    std::size_t sub_block_begin = 0;
    std::uint64_t used = 0;  // bits of the current sub-block
    std::uint64_t value = 0;
    for (std::size_t i = begin; i < end; ++i) {
        const std::uint16_t symbol = g.sequence[i];
        const unsigned n = model.code_bits(symbol);
        if (used + n > capacity) {
            writer.flush();
            data.resize(sub_block_begin + model.sub_block_bytes(), '\0');
            sub_block_begin = data.size();
            used = 0;
            starts.push_back(value);
        }
        writer.put(model.code(symbol), n);
        used += n;
        value += model.expansion(symbol);
    }
    writer.flush();
    std::string payload;
    put_varint(payload, starts.size() + 1);
    const unsigned width = start_bytes(slots);
    for (const std::uint64_t start : starts) {
        for (unsigned b = 0; b < width; ++b) payload.push_back(static_cast<char>(start >> (8 * b)));
    }
    payload += data;
    return payload;
}

}  // namespace

// Decoding of sub-blocks, with access to the model's tables.
class PairSubBlockDecoder {
public:
    // The bits of a sub-block from `bit` on, MSB-first in a 64-bit window
    // refilled only when fewer than a longest code remain: one load every
    // few symbols instead of one a symbol.
    class BitWindow {
    public:
        explicit BitWindow(const std::uint8_t* bytes) : bytes_(bytes), window_(load_be64(bytes)) {}
        [[nodiscard]] std::uint64_t top() {
            if (available_ < kPairMaxCodeBits) {
                window_ = load_be64(bytes_ + (bit_ >> 3)) << (bit_ & 7);
                available_ = 64 - static_cast<unsigned>(bit_ & 7);
            }
            return window_;
        }
        void skip(unsigned n) {
            window_ <<= n;
            available_ -= n;
            bit_ += n;
        }
        [[nodiscard]] std::uint64_t bit() const { return bit_; }

    private:
        const std::uint8_t* bytes_;  // 8 bytes readable past any bit read
        std::uint64_t window_;
        unsigned available_ = 64;
        std::uint64_t bit_ = 0;
    };

    // The symbol whose code begins `window` (its first bit the highest),
    // the code's length and the symbol's expansion; false when the bits
    // are no code.
    static bool next_symbol(const PairModel& m, std::uint64_t window, std::uint32_t& symbol, unsigned& n,
                            std::uint64_t& expansion) {
        const std::uint64_t fast = m.fast_[window >> (64 - kPairFastBits)];
        if (fast != 0) {
            symbol = static_cast<std::uint32_t>(fast >> 4) & 0xFFFF;
            n = fast & 0xF;
            expansion = fast >> 20;
            return true;
        }
        for (n = kPairFastBits + 1; n <= m.longest_code_; ++n) {
            const auto code = static_cast<std::uint32_t>(window >> (64 - n));
            if (code - m.first_[n] < m.count_[n]) {
                symbol = m.by_code_[m.offset_[n] + code - m.first_[n]];
                expansion = m.expansion_[symbol];
                return true;
            }
        }
        return false;
    }

    // What read_symbol found wrong, if anything.
    enum class SymbolProblem : std::uint8_t { None, NoCode, PastEnd, TooMany };

    // The next symbol of a sub-block (`limit` bits long) and its expansion,
    // checked: a code of the model, ending inside the sub-block, expanding
    // to at most the `left` values its directory still gives it.
    static SymbolProblem read_symbol(const PairModel& m, BitWindow& bits, std::uint64_t limit, std::uint64_t left,
                                     std::uint32_t& symbol, std::uint64_t& expansion) {
        unsigned n = 0;
        if (!next_symbol(m, bits.top(), symbol, n, expansion)) return SymbolProblem::NoCode;
        bits.skip(n);
        if (bits.bit() > limit) return SymbolProblem::PastEnd;
        return expansion > left ? SymbolProblem::TooMany : SymbolProblem::None;
    }

    static Status symbol_error(SymbolProblem problem, std::uint64_t k) {
        const std::string sub_block = "sub-block " + std::to_string(k);
        switch (problem) {
            case SymbolProblem::NoCode: return bad_member("invalid code in " + sub_block);
            case SymbolProblem::PastEnd: return bad_member(sub_block + " ends inside a code");
            default: return bad_member(sub_block + " decodes to more values than its directory says");
        }
    }

    // The value at `pos` of sub-block `k` (`count` values, `size` bytes).
    static Status value_at(const PairModel& m, const std::uint8_t* bytes, std::uint64_t size, std::uint64_t k,
                           std::uint64_t count, std::uint64_t pos, std::uint32_t& value) {
        const std::uint64_t limit = 8 * size;
        BitWindow bits(bytes);
        std::uint32_t symbol = 0;
        std::uint64_t left_in_sub_block = count;
        // Set once the value (or a fault) lies within the codes of one
        // skip entry: those are read one by one, without another lookup.
        bool near = false;
        for (;;) {
            // Several whole codes before `pos` at once, with the checks
            // read_symbol makes of each (the sums bound every prefix);
            // where one fails, the codes are read one by one to name it.
            const std::uint32_t skip = near ? 0 : m.skip_[bits.top() >> (64 - kPairFastBits)];
            if (skip != 0) {
                const std::uint64_t sum = skip >> 4;
                const unsigned n = skip & 0xF;
                if (pos >= sum && sum <= left_in_sub_block && bits.bit() + n <= limit) {
                    bits.skip(n);
                    pos -= sum;
                    left_in_sub_block -= sum;
                    continue;
                }
                near = true;
            }
            std::uint64_t expansion = 0;
            const SymbolProblem problem = read_symbol(m, bits, limit, left_in_sub_block, symbol, expansion);
            if (problem != SymbolProblem::None) return symbol_error(problem, k);
            if (pos < expansion) break;
            pos -= expansion;
            left_in_sub_block -= expansion;
        }
        const std::size_t terminals = m.terminal_value_.size();
        while (symbol >= terminals) {
            const PairModel::Pair& pair = m.pairs_[symbol - terminals];
            if (pos < pair.left_expansion) {
                symbol = pair.left;
            } else {
                pos -= pair.left_expansion;
                symbol = pair.right;
            }
        }
        value = m.terminal_value_[symbol];
        return {};
    }

    // Expands sub-block `k` (`count` values, `size` bytes, the member's last
    // when `last`) into `out`; `stack` holds model depth + 1 symbols.
    template <unsigned Width>
    static Status decode(const PairModel& m, const std::uint8_t* bytes, std::uint64_t size, std::uint64_t k,
                         bool last, std::uint64_t count, std::uint8_t* out, std::uint32_t* stack) {
        const std::uint64_t limit = 8 * size;
        const std::size_t terminals = m.terminal_value_.size();
        BitWindow bits(bytes);
        std::uint64_t produced = 0;
        while (produced < count) {
            std::uint32_t symbol = 0;
            std::uint64_t expansion = 0;
            const SymbolProblem problem = read_symbol(m, bits, limit, count - produced, symbol, expansion);
            if (problem != SymbolProblem::None) return symbol_error(problem, k);
            produced += expansion;
            // Left to right through the symbol's pairs, the right halves waiting on the stack.
            std::size_t waiting = 0;
            for (;;) {
                while (symbol >= terminals) {
                    const PairModel::Pair& pair = m.pairs_[symbol - terminals];
                    stack[waiting++] = pair.right;
                    symbol = pair.left;
                }
                put_value<Width>(out, m.terminal_value_[symbol]);
                out += Width;
                if (waiting == 0) break;
                symbol = stack[--waiting];
            }
        }
        if (last && (bits.bit() + 7) / 8 != size) return bad_member("bytes after the last code of the last sub-block");
        if (!zero_bits(bytes, bits.bit(), limit)) return bad_member("nonzero bits after the last code of sub-block " + std::to_string(k));
        return {};
    }

    template <unsigned Width>
    static Status decode_member(const PairModel& m, const MemberLayout& layout, std::uint8_t* out) {
        std::vector<std::uint32_t> stack(m.depth_ + 1);
        std::vector<std::uint8_t> pad(m.sub_block_bytes_ + 8);
        std::uint64_t first = 0;
        for (std::uint64_t k = 0; k < layout.sub_blocks; ++k) {
            const std::uint64_t end = layout.start(k + 1);
            if (end <= first || end > layout.slots) return bad_member("sub-block directory is not increasing");
            std::uint64_t size = 0;
            const std::uint8_t* bytes = sub_block(layout, k, m.sub_block_bytes_, pad.data(), size);
            const bool last = k + 1 == layout.sub_blocks;
            if (Status s = decode<Width>(m, bytes, size, k, last, end - first, out + first * Width, stack.data()); !s.ok()) {
                return s;
            }
            first = end;
        }
        return {};
    }
};

Status PairModel::parse(std::string_view bytes, PairModel& out) {
    PairModel m;
    if (bytes.size() < 2) return bad_model("truncated");
    if (static_cast<std::uint8_t>(bytes[0]) != kModelVersion) {
        return bad_model("unknown version " + std::to_string(static_cast<std::uint8_t>(bytes[0])));
    }
    const auto log_size = static_cast<std::uint8_t>(bytes[1]);
    if (log_size < kMinSubBlockLog || log_size > kMaxSubBlockLog) {
        return bad_model("sub-block size 2^" + std::to_string(log_size) + " out of range");
    }
    m.sub_block_bytes_ = 1u << log_size;
    std::size_t pos = 2;
    std::uint64_t terminals = 0;
    if (!get_varint(bytes, pos, terminals)) return bad_model("terminal count is truncated or malformed");
    if (terminals == 0 || terminals > kMaxSymbolIds) return bad_model(std::to_string(terminals) + " terminals");
    m.terminal_value_.resize(terminals);
    for (auto& v : m.terminal_value_) {
        std::uint64_t value = 0;
        if (!get_varint(bytes, pos, value)) return bad_model("terminal value is truncated or malformed");
        if (value > 0xFFFFFFFF) return bad_model("terminal value past 32 bits");
        v = static_cast<std::uint32_t>(value);
        m.largest_value_ = std::max(m.largest_value_, v);
    }
    std::uint64_t pairs = 0;
    if (!get_varint(bytes, pos, pairs)) return bad_model("pair count is truncated or malformed");
    if (pairs > kMaxSymbolIds - terminals) return bad_model(std::to_string(pairs) + " pairs past 65536 symbols");
    const std::size_t symbols = terminals + pairs;
    const unsigned id_bits = std::max(1u, static_cast<unsigned>(std::bit_width(symbols - 1)));
    const std::uint64_t pair_bytes = (2 * pairs * id_bits + 7) / 8;
    if (bytes.size() - pos < pair_bytes + symbols) return bad_model("truncated");
    if (bytes.size() - pos > pair_bytes + symbols) return bad_model("trailing bytes");

    const auto* pair_data = reinterpret_cast<const std::uint8_t*>(bytes.data()) + pos;
    std::uint64_t bit = 0;
    const auto read_id = [&] {
        std::uint32_t id = 0;
        for (unsigned i = 0; i < id_bits; ++i, ++bit) id = (id << 1) | ((pair_data[bit >> 3] >> (7 - (bit & 7))) & 1);
        return id;
    };
    m.expansion_.assign(terminals, 1);
    std::vector<std::uint32_t> depth(terminals, 0);
    m.pairs_.resize(pairs);
    for (std::size_t k = 0; k < pairs; ++k) {
        const std::uint32_t left = read_id(), right = read_id();
        const std::size_t self = terminals + k;
        if (left >= self || right >= self) {
            return bad_model("pair symbol " + std::to_string(self) + " refers to itself or a later symbol");
        }
        const std::uint64_t expansion = m.expansion_[left] + m.expansion_[right];
        if (expansion > kPairMaxExpansion) return bad_model("symbol " + std::to_string(self) + " expands past 2^40 values");
        m.pairs_[k] = {m.expansion_[left], static_cast<std::uint16_t>(left), static_cast<std::uint16_t>(right)};
        m.expansion_.push_back(expansion);
        depth.push_back(std::max(depth[left], depth[right]) + 1);
        m.depth_ = std::max(m.depth_, depth.back());
    }
    if (!zero_bits(pair_data, bit, 8 * pair_bytes)) return bad_model("nonzero bits after the pairs");
    pos += pair_bytes;

    m.code_bits_.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos), bytes.end());
    std::uint64_t kraft = 0;  // in units of 2^-kPairMaxCodeBits
    std::size_t coded = 0;
    for (std::size_t s = 0; s < symbols; ++s) {
        const unsigned n = m.code_bits_[s];
        if (n == 0) continue;
        if (n > kPairMaxCodeBits) return bad_model("symbol " + std::to_string(s) + " has a code of " + std::to_string(n) + " bits");
        kraft += std::uint64_t{1} << (kPairMaxCodeBits - n);
        ++coded;
        ++m.count_[n];
        m.longest_code_ = std::max(m.longest_code_, n);
    }
    if (coded == 0) return bad_model("no symbol has a code");
    if (coded == 1 && m.longest_code_ != 1) return bad_model("a single coded symbol must have a 1-bit code");
    if (coded > 1 && kraft != std::uint64_t{1} << kPairMaxCodeBits) {
        return bad_model("code lengths are not a complete prefix code");
    }
    // Canonical code: by (length, symbol id), consecutive within a length.
    std::uint32_t next = 0;
    std::uint32_t offset = 0;
    for (unsigned n = 1; n <= kPairMaxCodeBits; ++n) {
        m.first_[n] = next;
        m.offset_[n] = offset;
        next = (next + m.count_[n]) << 1;
        offset += m.count_[n];
    }
    m.by_code_.resize(coded);
    std::array<std::uint32_t, kPairMaxCodeBits + 1> placed = m.offset_;
    for (std::size_t s = 0; s < symbols; ++s) {
        if (m.code_bits_[s] != 0) m.by_code_[placed[m.code_bits_[s]]++] = static_cast<std::uint16_t>(s);
    }
    m.code_.assign(symbols, 0);
    for (std::uint32_t k = 0; k < coded; ++k) {
        const std::uint16_t symbol = m.by_code_[k];
        const unsigned n = m.code_bits_[symbol];
        m.code_[symbol] = m.first_[n] + (k - m.offset_[n]);
    }
    m.fast_.assign(std::size_t{1} << kPairFastBits, 0);
    for (std::uint32_t k = 0; k < coded; ++k) {
        const std::uint32_t symbol = m.by_code_[k];
        const unsigned n = m.code_bits_[symbol];
        if (n > kPairFastBits) break;  // by_code_ is in order of length
        const std::uint32_t code = m.code_[symbol];
        const unsigned spare = kPairFastBits - n;
        std::fill_n(m.fast_.begin() + (std::size_t{code} << spare), std::size_t{1} << spare,
                    m.expansion_[symbol] << 20 | symbol << 4 | n);
    }
    m.skip_.assign(std::size_t{1} << kPairFastBits, 0);
    constexpr std::uint32_t kWindowMask = (std::uint32_t{1} << kPairFastBits) - 1;
    for (std::uint32_t window = 0; window <= kWindowMask; ++window) {
        unsigned used = 0, codes = 0;
        std::uint64_t sum = 0;
        for (;;) {
            // Bits past `used` shifted in as zeros: a code is read only if
            // it ends within the window's own bits.
            const std::uint64_t fast = m.fast_[(window << used) & kWindowMask];
            const unsigned n = fast & 0xF;
            if (fast == 0 || n == 0 || used + n > kPairFastBits) break;
            used += n;
            sum += fast >> 20;
            ++codes;
        }
        if (codes >= 2 && sum < (std::uint64_t{1} << 28)) m.skip_[window] = static_cast<std::uint32_t>(sum << 4 | used);
    }
    m.bytes_ = std::string(bytes);
    out = std::move(m);
    return {};
}

Result<PairEncoding> pair_encode(std::span<const std::uint8_t> raw, std::uint32_t width, std::uint32_t member_slots,
                                 const PairCodecLimits& limits) {
    if (width != 1 && width != 2 && width != 4) return invalid_argument("pair codec: value width " + std::to_string(width));
    if (raw.empty() || raw.size() % width != 0) return invalid_argument("pair codec: no values or a partial value");
    if (member_slots == 0) return invalid_argument("pair codec: members of 0 slots");
    if (limits.max_symbols == 0 || limits.max_symbols > kMaxSymbolIds) {
        return invalid_argument("pair codec: max_symbols " + std::to_string(limits.max_symbols));
    }
    if (limits.min_pair_count < 2) return invalid_argument("pair codec: min_pair_count below 2");
    if (!std::has_single_bit(limits.sub_block_bytes) || limits.sub_block_bytes < (1u << kMinSubBlockLog) ||
        limits.sub_block_bytes > (1u << kMaxSubBlockLog)) {
        return invalid_argument("pair codec: sub_block_bytes " + std::to_string(limits.sub_block_bytes));
    }
    const std::size_t count = raw.size() / width;

    // Terminals ranked by frequency (then value), so that small ids are the common values.
    ValueCounts values(width, limits.max_symbols);
    for (std::size_t i = 0; i < count; ++i) {
        if (!values.add(load_value(raw.data() + i * width, width))) {
            return invalid_argument("pair codec: more than " + std::to_string(limits.max_symbols) + " distinct values");
        }
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> ranked;  // count, slot
    for (std::size_t slot = 0; slot < values.slots(); ++slot) {
        if (values.count(slot) > 0) ranked.emplace_back(values.count(slot), static_cast<std::uint32_t>(slot));
    }
    std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : values.value(a.second) < values.value(b.second);
    });
    Grammar g;
    std::vector<std::uint16_t> symbol_of_slot(values.slots(), 0);
    for (std::size_t k = 0; k < ranked.size(); ++k) {
        g.terminal_value.push_back(values.value(ranked[k].second));
        symbol_of_slot[ranked[k].second] = static_cast<std::uint16_t>(k);
    }
    g.sequence.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        g.sequence[i] = symbol_of_slot[values.slot_of(load_value(raw.data() + i * width, width))];
    }
    for (std::size_t begin = 0; begin < count; begin += member_slots) g.member_begin.push_back(begin);
    g.member_begin.push_back(count);

    build_pairs(g, limits.max_symbols, limits.min_pair_count);

    std::vector<std::uint64_t> weight(g.symbols(), 0);
    for (const std::uint16_t symbol : g.sequence) ++weight[symbol];
    const std::vector<std::uint8_t> code_bits = huffman_code_bits(std::move(weight));

    PairEncoding encoding;
    if (Status s = PairModel::parse(serialize_model(g, code_bits, limits.sub_block_bytes), encoding.model); !s.ok()) {
        return Status(StatusCode::Internal, "pair codec: built an invalid model: " + s.message());
    }
    for (std::size_t j = 0; j + 1 < g.member_begin.size(); ++j) {
        const auto slots = static_cast<std::uint32_t>(std::min<std::size_t>(member_slots, count - j * member_slots));
        encoding.members.push_back(pack_member(g, encoding.model, g.member_begin[j], g.member_begin[j + 1], slots));
    }
    return encoding;
}

Status pair_decode_member(const PairModel& model, std::string_view payload, std::uint32_t slots, std::uint32_t width,
                          std::uint8_t* out) {
    if (width != 1 && width != 2 && width != 4) return invalid_argument("pair member: value width " + std::to_string(width));
    if (width < 4 && model.largest_value() >> (8 * width) != 0) {
        return bad_member("model value " + std::to_string(model.largest_value()) + " does not fit " +
                          std::to_string(width) + " bytes");
    }
    MemberLayout layout;
    if (Status s = open_member(model, payload, slots, layout); !s.ok()) return s;
    switch (width) {
        case 1: return PairSubBlockDecoder::decode_member<1>(model, layout, out);
        case 2: return PairSubBlockDecoder::decode_member<2>(model, layout, out);
        default: return PairSubBlockDecoder::decode_member<4>(model, layout, out);
    }
}

Status pair_member_value(const PairModel& model, std::string_view payload, std::uint32_t slots, std::uint32_t index,
                         std::uint32_t& value) {
    if (index >= slots) {
        return invalid_argument("pair member: index " + std::to_string(index) + " of " + std::to_string(slots) + " slots");
    }
    MemberLayout layout;
    if (Status s = open_member(model, payload, slots, layout); !s.ok()) return s;
    // The last sub-block starting at or before `index`.
    std::uint64_t low = 0, high = layout.sub_blocks;
    while (high - low > 1) {
        const std::uint64_t middle = (low + high) / 2;
        if (layout.start(middle) <= index) {
            low = middle;
        } else {
            high = middle;
        }
    }
    const std::uint64_t first = layout.start(low), end = layout.start(low + 1);
    if (first > index || index >= end || end > slots) return bad_member("sub-block directory is not increasing");
    std::uint8_t pad[(1u << kMaxSubBlockLog) + 8];
    std::uint64_t size = 0;
    const std::uint8_t* bytes = sub_block(layout, low, model.sub_block_bytes(), pad, size);
    return PairSubBlockDecoder::value_at(model, bytes, size, low, end - first, index - first, value);
}

}  // namespace tbf::storage::detail
