#pragma once
// Keys and record encodings of format versions 1 and 2 (docs/storage-format.md is
// the reference; keep the two in step). Decoders are strict: any deviation is
// an error naming the record, never a guess.

#include <zstd.h>

#include <cstdint>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pair_codec.hpp"
#include "tbforge/base/status.hpp"
#include "tbforge/storage/strategy.hpp"
#include "tbforge/storage/table.hpp"

namespace tbf::storage::detail {

// Column families.
inline constexpr std::string_view kCatalogFamily = "catalog";
inline constexpr std::string_view kBlocksFamily = "blocks";
inline constexpr std::string_view kEntriesFamily = "strategy_entries";

// Keys in the default column family.
inline constexpr std::string_view kMarkerKey = "tbforge.format";
inline constexpr std::string_view kNextIdKey = "tbforge.next-storage-id";

// Catalog keys: one tag byte, then the name.
inline constexpr char kTableTag = 'T';
inline constexpr char kStrategyTag = 'S';

[[nodiscard]] std::string catalog_key(char tag, std::string_view name);
// be64(storage_id) | be64(block_no)
[[nodiscard]] std::string block_key(std::uint64_t storage_id, std::uint64_t block_no);
// The same key without a heap allocation, for reads.
struct BlockKey {
    char bytes[16];
    BlockKey(std::uint64_t storage_id, std::uint64_t block_no);
    std::string_view view() const { return {bytes, sizeof bytes}; }
};
// be64(storage_id): the common prefix of all keys of one storage id.
[[nodiscard]] std::string id_prefix(std::uint64_t storage_id);
[[nodiscard]] std::uint64_t id_of_key(std::string_view key);  // precondition: size >= 8

// Well-formed UTF-8: no overlong forms, surrogates or code points past U+10FFFF.
[[nodiscard]] bool is_valid_utf8(std::string_view s);

[[nodiscard]] std::string encode_marker(std::uint32_t format_version);
[[nodiscard]] Status decode_marker(std::string_view value, std::uint32_t& format_version);

[[nodiscard]] std::string encode_next_id(std::uint64_t next_id);
[[nodiscard]] Status decode_next_id(std::string_view value, std::uint64_t& next_id);

// Checks what a caller may choose: names, widths, string encodings.
[[nodiscard]] Status validate_table_spec(const TableSpec& spec);
[[nodiscard]] Status validate_statistics(const TableStatistics& statistics);
[[nodiscard]] Status validate_strategy_spec(const StrategySpec& spec);

[[nodiscard]] std::string encode_table_info(const TableInfo& info);
// `name` is the name taken from the catalog key, which must match the record.
[[nodiscard]] Status decode_table_info(std::string_view name, std::string_view value,
                                       TableInfo& info);

[[nodiscard]] std::string encode_strategy_info(const StrategyInfo& info);
[[nodiscard]] Status decode_strategy_info(std::string_view name, std::string_view value,
                                          StrategyInfo& info);

// Block records.
inline constexpr std::size_t kBlockHeaderBytes = kRecordHeaderBytes;
// Group: one record holding the payloads of several consecutive blocks
// (format 3, docs/storage-format.md section 4).
enum class BlockCodec : std::uint8_t { Raw = 0, Lz4 = 1, Zstd = 2, Group = 3 };
inline constexpr std::uint32_t kMaxBlocksPerRecord = 256;

struct ZstdCCtxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdCDictFree {
    void operator()(ZSTD_CDict* d) const { ZSTD_freeCDict(d); }
};
struct ZstdDDictFree {
    void operator()(ZSTD_DDict* d) const { ZSTD_freeDDict(d); }
};
using ZstdCCtx = std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree>;
using ZstdCDict = std::unique_ptr<ZSTD_CDict, ZstdCDictFree>;
using ZstdDDict = std::unique_ptr<ZSTD_DDict, ZstdDDictFree>;

// How a writer compresses its blocks. `cdict` (the table's dictionary at the
// table's level) is used with Compression::Zstd when the table has one.
struct BlockEncoding {
    Compression compression = Compression::Lz4;
    int lz4hc_level = 9;
    int zstd_level = 9;
    int zstd_min_match = 0;  // 0: the level's own, as the three below
    int zstd_strategy = 0;
    int zstd_search_log = 0;
    int zstd_target_length = 0;
    int zstd_retry_level = 0;  // TableWriteOptions::zstd_retry_level and _divisor
    std::size_t zstd_retry_divisor = 0;
    // zstd frames without their magic number and content size (format 4
    // group members): the record says both.
    bool bare_frames = false;
    // Fill members' values in the group directory, no payload (format 5).
    bool fills_in_directory = false;
    const ZSTD_CDict* cdict = nullptr;
};

// How a writer with `options` compresses its blocks (no dictionary yet):
// bare frames and fills in the directory where the options group blocks.
[[nodiscard]] BlockEncoding block_encoding(const TableWriteOptions& options);

// Whether the zstd linked in writes and reads bare frames (its magicless
// format, an advanced parameter of its API).
[[nodiscard]] bool zstd_has_bare_frames();

// The table's dictionary prepared for compressing with `encoding`'s level
// and parser settings.
[[nodiscard]] ZstdCDict make_cdict(const std::string& dictionary, const BlockEncoding& encoding);

// What a reader needs beyond the record to decode the blocks of one table:
// its zstd dictionary, prepared once (null when the table has none).
struct BlockDecoding {
    ZstdDDict ddict;
    bool bare_frames = false;         // format 4: see BlockEncoding
    bool fills_in_directory = false;  // format 5: see BlockEncoding
    // Format 6: the table's pair model; its compressed members (codec zstd
    // in the directory) are then pair-coded, not zstd frames.
    std::shared_ptr<const PairModel> pairs;
};
[[nodiscard]] std::shared_ptr<const BlockDecoding> make_block_decoding(const TableInfo& info);
// Whether the table's group records keep fill values in their directory
// (format 5), for open_group.
[[nodiscard]] bool fills_in_directory(const TableInfo& info);

// Trains a zstd dictionary of at most `capacity` bytes from `samples` (the
// byte-plane form of whole blocks, section 4 of docs/storage-format.md).
// Returns an empty string when the samples are too few or too uniform for
// a dictionary to help.
[[nodiscard]] std::string train_dictionary(const std::vector<std::string>& samples,
                                           std::size_t capacity);

// The byte planes of `raw` (values of `width` bytes): byte 0 of every value,
// then byte 1, ...; the form zstd compresses. Inverse: from_planes.
void to_planes(std::span<const std::uint8_t> raw, std::uint32_t width, std::uint8_t* out);
void from_planes(const std::uint8_t* planes, std::size_t values, std::uint32_t width,
                 std::uint8_t* out);

// Encodes `raw` (slot_count * width little-endian values) as the record stored
// under `key`. `scratch` is reused between calls to avoid allocations; `cctx`
// is needed for Compression::Zstd.
void encode_block(std::string_view key, std::span<const std::uint8_t> raw, std::uint32_t width,
                  const BlockEncoding& encoding, ZSTD_CCtx* cctx, std::string& scratch,
                  std::string& record);

// The record `record` (stored under another key, already checked) as it is
// stored under `key`: the same header and payload, the checksum recomputed.
void rekey_block(std::string_view key, std::string_view record, std::string& out);

// How a block is stored inside a group: as in a record of its own, or as
// one value repeated over all its slots (the payload is that value).
enum class MemberCodec : std::uint8_t { Raw = 0, Lz4 = 1, Zstd = 2, Fill = 3 };

// Group records. `members` are single-block records as encode_block makes
// them (their own keys and checksums are dropped), or fill_member's; the
// group keeps each member's codec and payload under one header and one
// checksum. `fills_in_directory` (format 5): a fill member's value takes
// the place of its payload size in the directory, and it has no payload.
// Returns the payload bytes the record holds.
std::uint64_t encode_group(std::string_view key, std::span<const std::string> members, std::uint32_t width,
                           std::string& record, bool fills_in_directory = false);
// Whether the values of `raw` (of `width` bytes) all equal its first one;
// if so, `member` becomes the block's fill member (untouched otherwise).
[[nodiscard]] bool fill_member(std::span<const std::uint8_t> raw, std::uint32_t width, std::string& member);
// A block's pair-coded payload (format 6) as a group member, or its raw
// values where the payload is not smaller.
void pair_coded_member(std::string_view payload, std::span<const std::uint8_t> raw, std::uint32_t width,
                       std::string& member);

// Where a table's blocks and records lie (docs/storage-format.md section
// 4): the slots of block `block_no`, and the blocks and slots of record
// `record_no`.
[[nodiscard]] std::uint32_t block_slots(const TableInfo& info, std::uint64_t block_no);
struct RecordLayout {
    std::uint64_t first_block = 0;
    std::uint32_t blocks = 0;
    std::uint64_t slots = 0;
};
[[nodiscard]] RecordLayout record_layout(const TableInfo& info, std::uint64_t record_no);

// A checked group record: the codec and payload of each member block.
struct GroupMember {
    MemberCodec codec = MemberCodec::Raw;
    std::string_view payload;
    // A fill of a format-5 group: its value, read from the directory.
    std::optional<std::uint32_t> fill_value;
};
struct GroupView {
    std::vector<GroupMember> members;
};

// Checks a group record stored under `key` (its blocks start at
// `first_block`): its checksum, header and directory, against
// `expected_members` blocks of `expected_slots` slots in all. Errors name
// the table, the block `block_no` being read and the record's blocks.
// `fills_in_directory`: the group is of format 5 (see encode_group).
[[nodiscard]] Status open_group(std::string_view table_name, std::uint64_t block_no,
                                std::uint64_t first_block, std::string_view key,
                                std::string_view record, std::uint32_t width,
                                std::uint32_t expected_members, std::uint64_t expected_slots,
                                GroupView& view, bool fills_in_directory = false);

// Decodes one member of an opened group into `out` (slots * width bytes).
[[nodiscard]] Status decode_member(std::string_view table_name, std::uint64_t block_no,
                                   const GroupMember& member, std::uint32_t width,
                                   std::uint32_t slots, const BlockDecoding* decoding,
                                   std::uint8_t* out);

// The value at `index` of one member of an opened group of a pair-coded
// table (format 6, `decoding.pairs` set): a pair-coded member decodes only
// the sub-block holding it, a fill or raw member nothing.
[[nodiscard]] Status member_value(std::string_view table_name, std::uint64_t block_no, const GroupMember& member,
                                  std::uint32_t width, std::uint32_t slots, const BlockDecoding& decoding,
                                  std::uint32_t index, std::uint32_t& value);

// Checks and decodes a block record into `out` (expected_slots * width bytes).
// `decoding` is the table's (may be null for tables without a dictionary).
// Errors name the table and block.
[[nodiscard]] Status decode_block(std::string_view table_name, std::uint64_t block_no,
                                  std::string_view key, std::string_view record,
                                  std::uint32_t width, std::uint32_t expected_slots,
                                  const BlockDecoding* decoding, std::uint8_t* out);

}  // namespace tbf::storage::detail
