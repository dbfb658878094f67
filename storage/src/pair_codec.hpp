#pragma once
// A random-access codec for the values of a table: a grammar of pairs
// (the most frequent adjacent pair of symbols becomes a new symbol, round
// after round) whose final symbols are Huffman-coded and packed into
// sub-blocks of a fixed small byte size, no symbol across a sub-block. One
// value is then read by decoding one sub-block and descending one symbol's
// pairs, instead of a whole zstd frame (bench/storage/pair_study.cpp
// measured the idea). Decoders are strict: any inconsistency is Corruption,
// never a read outside the bytes given.
//
// Byte layouts (varint: unsigned LEB128, 7 bits a byte, low group first,
// minimal length, at most 64 bits).
//
// Model (one per table, shared by its members):
//   u8      version = 1
//   u8      log2(sub_block_bytes), 4..12 (16..4096 bytes)
//   varint  T, terminal symbols, 1..65536
//   T x varint  the terminals' values (< 2^32), most frequent first:
//               symbol t < T stands for value t of this list
//   varint  P, pair symbols, T + P <= 65536
//   pairs   symbol T + k (k < P) is the pair (left_k, right_k); the 2P ids
//           left_0, right_0, left_1, ... are packed MSB-first at
//           B = max(1, bit_width(T + P - 1)) bits each, zero bits up to the
//           next byte. Both ids are < T + k (earlier symbols).
//   (T + P) x u8  code length of each symbol, 0..24 (0: not coded, the
//           symbol only occurs inside pairs). Lengths define a canonical
//           Huffman code: codes assigned in order of (length, symbol id),
//           consecutive within a length. With one coded symbol its length
//           is 1 and its code is the bit 0; with more the code is complete
//           (Kraft sum exactly 1). A symbol expands to at most 2^40 values.
//   nothing after.
//
// Member payload (one block of `slots` values; `slots` is known to the reader):
//   varint  K, sub-blocks, 1..slots
//   (K - 1) x uintW  little-endian, W = bytes of slots - 1 (at least 1):
//           the index of the first value of sub-blocks 1..K-1 (sub-block 0
//           starts at 0), strictly increasing, below `slots`. Fixed width so
//           that a lookup finds its sub-block by binary search.
//   K sub-blocks, each exactly sub_block_bytes except the last, trimmed to
//           the bytes its codes use. A sub-block holds the codes of whole
//           symbols, MSB-first, whose expansions are exactly its values;
//           the bits after its last code are zero.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/status.hpp"

namespace tbf::storage::detail {

struct PairCodecLimits {
    std::uint32_t max_symbols = 65536;   // terminals + pairs, <= 65536
    std::uint32_t min_pair_count = 8;    // a pair must occur this often to become a symbol (>= 2)
    std::uint32_t sub_block_bytes = 64;  // bytes of one independently decodable sub-block (power of two, 16..4096)
};

inline constexpr unsigned kPairMaxCodeBits = 24;
inline constexpr unsigned kPairFastBits = 12;
inline constexpr std::uint64_t kPairMaxExpansion = std::uint64_t{1} << 40;

// A table-wide grammar (terminal values, pairs of earlier symbols) and a
// canonical Huffman code of the symbols, with the sub-block size. Immutable
// once built or parsed; shared by all blocks ("members") of one table.
class PairModel {
public:
    // Strict parse of serialized() bytes: any inconsistency is Corruption
    // with a one-line message. `out` is left unchanged on failure.
    static Status parse(std::string_view bytes, PairModel& out);

    [[nodiscard]] const std::string& serialized() const { return bytes_; }
    [[nodiscard]] std::uint32_t sub_block_bytes() const { return sub_block_bytes_; }
    [[nodiscard]] std::size_t symbols() const { return expansion_.size(); }
    [[nodiscard]] std::size_t terminals() const { return terminal_value_.size(); }
    [[nodiscard]] std::uint32_t largest_value() const { return largest_value_; }
    // Code length of `symbol` (0: not coded).
    [[nodiscard]] unsigned code_bits(std::size_t symbol) const { return code_bits_[symbol]; }
    // Canonical code of `symbol` (its code_bits() low bits).
    [[nodiscard]] std::uint32_t code(std::size_t symbol) const { return code_[symbol]; }
    [[nodiscard]] std::uint64_t expansion(std::size_t symbol) const { return expansion_[symbol]; }

private:
    friend class PairSubBlockDecoder;

    std::string bytes_;
    std::uint32_t sub_block_bytes_ = 0;
    std::uint32_t largest_value_ = 0;
    std::vector<std::uint32_t> terminal_value_;
    // Pair symbol T + k is pairs_[k]: one load a step of a descent.
    struct Pair {
        std::uint64_t left_expansion;
        std::uint16_t left, right;
    };
    std::vector<Pair> pairs_;
    std::vector<std::uint64_t> expansion_;  // values a symbol expands to
    std::vector<std::uint8_t> code_bits_;
    std::vector<std::uint32_t> code_;
    std::uint32_t depth_ = 0;  // longest chain of pairs from a symbol down to a terminal
    unsigned longest_code_ = 0;
    // Canonical decoding: codes of length L are [first_[L], first_[L] +
    // count_[L]), standing for by_code_[offset_[L]...] in order.
    std::array<std::uint32_t, kPairMaxCodeBits + 1> first_{};
    std::array<std::uint32_t, kPairMaxCodeBits + 1> count_{};
    std::array<std::uint32_t, kPairMaxCodeBits + 1> offset_{};
    std::vector<std::uint16_t> by_code_;
    // The top kPairFastBits bits of the input -> expansion << 20 | symbol <<
    // 4 | code length, 0 when the code is longer (or invalid): the symbol's
    // expansion comes with it, without a second dependent load.
    std::vector<std::uint64_t> fast_;
    // The top kPairFastBits bits of the input -> the codes that lie whole in
    // them, when two or more do, as their expansions' sum << 4 | their
    // lengths' sum; else 0. A read of one value passes most of its
    // sub-block's codes before the one holding it: this passes several a
    // lookup.
    std::vector<std::uint32_t> skip_;
};

struct PairEncoding {
    PairModel model;
    std::vector<std::string> members;  // one payload per block, in block order
};

// Builds the grammar over the values of a whole table (`raw`: count*width
// bytes, little-endian values of `width` = 1, 2 or 4 bytes), cut into blocks
// of `member_slots` values (the last block may be shorter). No symbol spans
// two blocks. InvalidArgument when the table has more distinct values than
// limits.max_symbols allows (the caller then falls back to zstd), is empty,
// or the arguments are out of range. Deterministic.
Result<PairEncoding> pair_encode(std::span<const std::uint8_t> raw, std::uint32_t width,
                                 std::uint32_t member_slots, const PairCodecLimits& limits = {});

// Decodes a whole member (`slots` values) into `out` (slots*width bytes,
// little-endian). Corruption on any inconsistency of the payload.
Status pair_decode_member(const PairModel& model, std::string_view payload, std::uint32_t slots,
                          std::uint32_t width, std::uint8_t* out);

// The value at `index` (< slots) of a member, decoding only the sub-block
// holding it. Corruption as above for whatever it reads.
Status pair_member_value(const PairModel& model, std::string_view payload, std::uint32_t slots,
                         std::uint32_t index, std::uint32_t& value);

}  // namespace tbf::storage::detail
