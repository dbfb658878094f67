#include "records.hpp"

#include <lz4.h>
#include <lz4hc.h>
#define ZDICT_STATIC_LINKING_ONLY  // fastCover training with fixed parameters
#include <zdict.h>
#define ZSTD_STATIC_LINKING_ONLY  // a dictionary prepared with the table's parser settings
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage::detail {
namespace {

constexpr std::string_view kMarkerMagic = "TBFD";
constexpr std::string_view kTableMagic = "TBFT";
constexpr std::string_view kStrategyMagic = "TBFS";
constexpr std::uint32_t kRecordVersion = 1;
// Table records of format 2 add the table's zstd dictionary, those of
// format 3 the blocks per record and the payload bytes.
constexpr std::uint32_t kTableRecordVersion = 4;

constexpr std::size_t kMaxNameBytes = 4096;
// Text fields (JSON statistics, roots) are metadata, not bulk data.
constexpr std::size_t kMaxTextBytes = std::size_t{64} << 20;

Status invalid(std::string message) { return {StatusCode::InvalidArgument, std::move(message)}; }

Status check_name(std::string_view what, std::string_view name) {
    if (name.empty()) return invalid(std::string(what) + " name is empty");
    if (name.size() > kMaxNameBytes) return invalid(std::string(what) + " name is too long");
    if (name.find('\0') != std::string_view::npos || !is_valid_utf8(name)) {
        return invalid(std::string(what) + " name is not UTF-8 text without NUL");
    }
    return {};
}

Status check_text(std::string_view field, std::string_view text) {
    if (text.size() > kMaxTextBytes) return invalid(std::string(field) + " is too long");
    if (!is_valid_utf8(text)) return invalid(std::string(field) + " is not valid UTF-8");
    return {};
}

// Checks magic, trailer checksum and version (in that order: a damaged magic
// is Corruption, not a checksum mismatch); returns the body after the version.
Status open_record(std::string_view what, std::string_view magic, std::string_view value,
                   std::string_view& body, std::uint32_t* version_out = nullptr,
                   std::uint32_t newest = kRecordVersion) {
    if (value.size() < magic.size() + 4 + kSealBytes) {
        return {StatusCode::Corruption, std::string(what) + ": record is truncated"};
    }
    if (value.substr(0, magic.size()) != magic) {
        return {StatusCode::Corruption, std::string(what) + ": bad record magic"};
    }
    auto sealed = unseal(value);
    if (!sealed.ok()) {
        return {sealed.status().code(), std::string(what) + ": record " + sealed.status().message()};
    }
    const auto version = get_le<std::uint32_t>(value.data() + magic.size());
    if (version == 0 || version > newest) {
        return {version > newest ? StatusCode::UnsupportedVersion : StatusCode::Corruption,
                std::string(what) + ": record version " + std::to_string(version) +
                    " (this library reads versions up to " + std::to_string(newest) + ")"};
    }
    if (version_out != nullptr) *version_out = version;
    body = sealed->substr(magic.size() + 4);
    return {};
}

Status corrupt(std::string_view what, std::string_view problem) {
    return {StatusCode::Corruption, std::string(what) + ": " + std::string(problem)};
}

bool is_valid_width(std::uint32_t w) { return w == 1 || w == 2 || w == 4; }

}  // namespace

bool is_valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len;
        std::uint32_t cp;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong forms, surrogates and code points past U+10FFFF are invalid.
        static constexpr std::uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += len;
    }
    return true;
}

std::string catalog_key(char tag, std::string_view name) {
    std::string key(1, tag);
    key.append(name);
    return key;
}

std::string block_key(std::uint64_t storage_id, std::uint64_t block_no) {
    return std::string(BlockKey(storage_id, block_no).view());
}

BlockKey::BlockKey(std::uint64_t storage_id, std::uint64_t block_no) {
    for (int i = 0; i < 8; ++i) {
        bytes[i] = static_cast<char>(storage_id >> (56 - 8 * i));
        bytes[8 + i] = static_cast<char>(block_no >> (56 - 8 * i));
    }
}

std::string id_prefix(std::uint64_t storage_id) {
    std::string key;
    put_be64(key, storage_id);
    return key;
}

std::uint64_t id_of_key(std::string_view key) { return get_be64(key.data()); }

std::string encode_marker(std::uint32_t format_version) {
    std::string out(kMarkerMagic);
    ByteWriter w(out);
    w.u32(format_version);
    w.seal();
    return out;
}

Status decode_marker(std::string_view value, std::uint32_t& format_version) {
    if (value.size() != kMarkerMagic.size() + 4 + kSealBytes ||
        value.substr(0, kMarkerMagic.size()) != kMarkerMagic || !unseal(value).ok()) {
        return {StatusCode::Corruption, "format marker record is damaged"};
    }
    format_version = get_le<std::uint32_t>(value.data() + kMarkerMagic.size());
    return {};
}

std::string encode_next_id(std::uint64_t next_id) {
    std::string out;
    ByteWriter w(out);
    w.u64(next_id);
    w.seal();
    return out;
}

Status decode_next_id(std::string_view value, std::uint64_t& next_id) {
    if (value.size() != 8 + kSealBytes || !unseal(value).ok()) {
        return {StatusCode::Corruption, "storage id counter record is damaged"};
    }
    next_id = get_le<std::uint64_t>(value.data());
    return {};
}

Status validate_table_spec(const TableSpec& spec) {
    if (Status s = check_name("table", spec.name); !s.ok()) return s;
    if (!is_valid_width(spec.value_width)) {
        return invalid("table '" + spec.name + "': value width " +
                       std::to_string(spec.value_width) + " (must be 1, 2 or 4 bytes)");
    }
    for (const auto& [field, text] :
         {std::pair<std::string_view, std::string_view>{"variant", spec.variant},
          {"material", spec.material},
          {"value encoding", spec.value_encoding},
          {"generator version", spec.generator_version}}) {
        if (Status s = check_text(field, text); !s.ok()) {
            return invalid("table '" + spec.name + "': " + s.message());
        }
    }
    return {};
}

Status validate_statistics(const TableStatistics& statistics) {
    for (const Counter& c : statistics.counters) {
        if (Status s = check_name("counter", c.name); !s.ok()) return s;
    }
    return check_text("statistics JSON", statistics.json);
}

Status validate_strategy_spec(const StrategySpec& spec) {
    if (Status s = check_name("strategy", spec.name); !s.ok()) return s;
    if (spec.side != Side::White && spec.side != Side::Black) return invalid("bad side");
    if (spec.kind != StrategyKind::NonLoss && spec.kind != StrategyKind::Winning) {
        return invalid("bad strategy kind");
    }
    Status s = check_text("variant", spec.variant);
    if (s.ok()) s = check_text("entry encoding", spec.entry_encoding);
    if (s.ok()) s = check_text("JSON", spec.json);
    for (std::size_t i = 0; s.ok() && i < spec.roots.size(); ++i) {
        s = check_text("root", spec.roots[i]);
    }
    if (!s.ok()) return invalid("strategy '" + spec.name + "': " + s.message());
    return {};
}

std::string encode_table_info(const TableInfo& info) {
    const TableSpec& spec = info.spec;
    std::string out(kTableMagic);
    ByteWriter w(out);
    // Tables of format 1 keep their record version, so a copy stays readable
    // by the libraries that wrote it.
    const bool v2 = info.format_version >= 2;
    const bool v3 = info.format_version >= 3;
    const bool v4 = info.format_version >= 6;
    w.u32(v4 ? 4 : v3 ? 3 : v2 ? 2 : kRecordVersion);
    w.string32(spec.name);
    w.string32(spec.variant);
    w.string32(spec.material);
    w.u64(spec.slot_count);
    w.u32(spec.value_width);
    w.string32(spec.value_encoding);
    w.string32(spec.generator_version);
    w.u32(info.format_version);
    w.u32(info.slots_per_block);
    w.u64(info.block_count);
    w.u64(info.stored_bytes);
    w.u64(info.values_checksum);
    w.u64(info.storage_id);
    w.u32(static_cast<std::uint32_t>(info.statistics.counters.size()));
    for (const Counter& c : info.statistics.counters) {
        w.string32(c.name);
        w.u64(c.value);
    }
    w.string32(info.statistics.json);
    if (v2) w.string32(info.dictionary);
    if (v3) {
        w.u32(info.blocks_per_record);
        w.u64(info.payload_bytes);
    }
    if (v4) w.string32(info.pair_model);
    w.seal();
    return out;
}

Status decode_table_info(std::string_view name, std::string_view value, TableInfo& info) {
    const std::string what = "metadata of table '" + std::string(name) + "'";
    std::string_view body;
    std::uint32_t record_version = 0;
    if (Status s = open_record(what, kTableMagic, value, body, &record_version, kTableRecordVersion);
        !s.ok()) {
        return s;
    }

    ByteReader r(body);
    TableInfo t;
    t.spec.name = r.string32();
    t.spec.variant = r.string32();
    t.spec.material = r.string32();
    t.spec.slot_count = r.le<std::uint64_t>();
    t.spec.value_width = r.le<std::uint32_t>();
    t.spec.value_encoding = r.string32();
    t.spec.generator_version = r.string32();
    t.format_version = r.le<std::uint32_t>();
    t.slots_per_block = r.le<std::uint32_t>();
    t.block_count = r.le<std::uint64_t>();
    t.stored_bytes = r.le<std::uint64_t>();
    t.values_checksum = r.le<std::uint64_t>();
    t.storage_id = r.le<std::uint64_t>();
    const auto counters = r.le<std::uint32_t>();
    // Each counter takes at least 12 bytes: bound the reservation by the input.
    if (counters > r.remaining() / 12) return corrupt(what, "counter count exceeds the record");
    t.statistics.counters.reserve(counters);
    for (std::uint32_t i = 0; i < counters && !r.failed(); ++i) {
        Counter c;
        c.name = r.string32();
        c.value = r.le<std::uint64_t>();
        t.statistics.counters.push_back(std::move(c));
    }
    t.statistics.json = r.string32();
    if (record_version >= 2) t.dictionary = r.string32();
    t.blocks_per_record = 1;
    t.payload_bytes = 0;
    if (record_version >= 3) {
        t.blocks_per_record = r.le<std::uint32_t>();
        t.payload_bytes = r.le<std::uint64_t>();
    }
    if (record_version >= 4) t.pair_model = r.string32();
    if (r.failed()) return corrupt(what, "record ends inside a field");
    if (r.remaining() != 0) return corrupt(what, "trailing bytes after the last field");

    if (t.spec.name != name) return corrupt(what, "record names table '" + t.spec.name + "'");
    if (Status s = validate_table_spec(t.spec); !s.ok()) return corrupt(what, s.message());
    if (Status s = validate_statistics(t.statistics); !s.ok()) return corrupt(what, s.message());
    if (t.format_version == 0 || t.format_version > kFormatVersion) {
        return {StatusCode::UnsupportedVersion,
                what + ": storage format version " + std::to_string(t.format_version)};
    }
    if ((record_version >= 2) != (t.format_version >= 2) ||
        (record_version >= 3) != (t.format_version >= 3) || (record_version >= 4) != (t.format_version >= 6)) {
        return corrupt(what, "record version " + std::to_string(record_version) +
                                 " with storage format version " + std::to_string(t.format_version));
    }
    if (!std::has_single_bit(t.slots_per_block) || t.slots_per_block < kMinSlotsPerBlock ||
        t.slots_per_block > kMaxSlotsPerBlock) {
        return corrupt(what, "bad slots per block " + std::to_string(t.slots_per_block));
    }
    const std::uint64_t blocks =
        t.spec.slot_count / t.slots_per_block + (t.spec.slot_count % t.slots_per_block != 0);
    if (t.block_count != blocks) return corrupt(what, "block count does not match slot count");
    if (record_version >= 3 && (!std::has_single_bit(t.blocks_per_record) || t.blocks_per_record < 2 ||
                                t.blocks_per_record > kMaxBlocksPerRecord)) {
        return corrupt(what, "bad blocks per record " + std::to_string(t.blocks_per_record));
    }
    if (t.payload_bytes > t.stored_bytes) return corrupt(what, "payload bytes exceed the stored bytes");
    if (!t.pair_model.empty()) {
        // Checked once here, so that every reader of the table can rely on it.
        if (t.blocks_per_record < 2) return corrupt(what, "a pair model in a table of single-block records");
        PairModel model;
        if (Status s = PairModel::parse(t.pair_model, model); !s.ok()) return corrupt(what, s.message());
    }
    info = std::move(t);
    return {};
}

std::string encode_strategy_info(const StrategyInfo& info) {
    const StrategySpec& spec = info.spec;
    std::string out(kStrategyMagic);
    ByteWriter w(out);
    w.u32(kRecordVersion);
    w.string32(spec.name);
    w.string32(spec.variant);
    w.u8(static_cast<std::uint8_t>(spec.side));
    w.u8(static_cast<std::uint8_t>(spec.kind));
    w.u32(static_cast<std::uint32_t>(spec.roots.size()));
    for (const std::string& root : spec.roots) w.string32(root);
    w.string32(spec.entry_encoding);
    w.string32(spec.json);
    w.u32(info.format_version);
    w.u64(info.entry_count);
    w.u64(info.entry_bytes);
    w.u64(info.storage_id);
    w.seal();
    return out;
}

Status decode_strategy_info(std::string_view name, std::string_view value, StrategyInfo& info) {
    const std::string what = "metadata of strategy '" + std::string(name) + "'";
    std::string_view body;
    if (Status s = open_record(what, kStrategyMagic, value, body); !s.ok()) return s;

    ByteReader r(body);
    StrategyInfo t;
    t.spec.name = r.string32();
    t.spec.variant = r.string32();
    const auto side = r.le<std::uint8_t>();
    const auto kind = r.le<std::uint8_t>();
    if (side > 1) return corrupt(what, "bad side " + std::to_string(side));
    if (kind > 1) return corrupt(what, "bad kind " + std::to_string(kind));
    t.spec.side = static_cast<Side>(side);
    t.spec.kind = static_cast<StrategyKind>(kind);
    const auto roots = r.le<std::uint32_t>();
    if (roots > r.remaining() / 4) return corrupt(what, "root count exceeds the record");
    t.spec.roots.reserve(roots);
    for (std::uint32_t i = 0; i < roots && !r.failed(); ++i) t.spec.roots.push_back(r.string32());
    t.spec.entry_encoding = r.string32();
    t.spec.json = r.string32();
    t.format_version = r.le<std::uint32_t>();
    t.entry_count = r.le<std::uint64_t>();
    t.entry_bytes = r.le<std::uint64_t>();
    t.storage_id = r.le<std::uint64_t>();
    if (r.failed()) return corrupt(what, "record ends inside a field");
    if (r.remaining() != 0) return corrupt(what, "trailing bytes after the last field");

    if (t.spec.name != name) return corrupt(what, "record names strategy '" + t.spec.name + "'");
    if (Status s = validate_strategy_spec(t.spec); !s.ok()) return corrupt(what, s.message());
    if (t.format_version == 0 || t.format_version > kFormatVersion) {
        return {StatusCode::UnsupportedVersion,
                what + ": storage format version " + std::to_string(t.format_version)};
    }
    info = std::move(t);
    return {};
}

namespace {

struct ZstdDCtxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_DCtx* thread_dctx() {
    thread_local std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> dctx(ZSTD_createDCtx());
    return dctx.get();
}

// Compresses `src` as set on `cctx` into `out` from `at` on; returns the
// frame's size.
std::size_t zstd_frame(ZSTD_CCtx* cctx, std::span<const std::uint8_t> src, std::string& out, std::size_t at) {
    out.resize(at + ZSTD_compressBound(src.size()));
    const std::size_t n =
        ZSTD_compress2(cctx, out.data() + at, out.size() - at, src.data(), src.size());
    // Only a bug (a bound too small) could fail here; a block is then stored raw.
    if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(at + n);
    return n;
}

void set_frame_format(ZSTD_CCtx* cctx, const BlockEncoding& encoding) {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
    if (encoding.bare_frames) {
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    }
}

// One zstd frame of `src`, with the dictionary when there is one; appended
// to `out`. The dictionary id is left out of the frame header: the table
// names its dictionaries.
void zstd_append(ZSTD_CCtx* cctx, const BlockEncoding& encoding, std::span<const std::uint8_t> src,
                 std::string& out) {
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    set_frame_format(cctx, encoding);
    if (encoding.cdict != nullptr) {
        ZSTD_CCtx_refCDict(cctx, encoding.cdict);
    } else {
        // 0 is zstd's own "the level's value" for each of these.
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, encoding.zstd_level);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, encoding.zstd_min_match);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy, encoding.zstd_strategy);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_searchLog, encoding.zstd_search_log);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, encoding.zstd_target_length);
    }
    const std::size_t at = out.size();
    const std::size_t n = zstd_frame(cctx, src, out, at);
    if (encoding.cdict != nullptr || encoding.zstd_retry_level == 0 || encoding.zstd_retry_divisor == 0 ||
        n * encoding.zstd_retry_divisor < src.size()) {
        return;
    }
    // The blocks that compress least hold most of a table's bytes: there a
    // slower parser pays for its time (docs/storage-format.md section 12).
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    set_frame_format(cctx, encoding);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, encoding.zstd_retry_level);
    const std::size_t retry = zstd_frame(cctx, src, out, at + n);
    if (retry < n) std::memmove(out.data() + at, out.data() + at + n, retry);
    out.resize(at + std::min(n, retry));
}

}  // namespace

BlockEncoding block_encoding(const TableWriteOptions& options) {
    BlockEncoding encoding;
    encoding.compression = options.compression;
    encoding.lz4hc_level = options.lz4hc_level;
    encoding.zstd_level = options.zstd_level;
    encoding.zstd_min_match = options.zstd_min_match;
    encoding.zstd_strategy = options.zstd_strategy;
    encoding.zstd_search_log = options.zstd_search_log;
    encoding.zstd_target_length = options.zstd_target_length;
    encoding.zstd_retry_level = options.zstd_retry_level;
    encoding.zstd_retry_divisor = options.zstd_retry_divisor;
    encoding.bare_frames = options.compression == Compression::Zstd && options.blocks_per_record > 1 &&
                           options.bare_zstd_frames;
    encoding.fills_in_directory = encoding.bare_frames && options.fills_in_directory;
    return encoding;
}

namespace {

bool zstd_decode(const ZSTD_DDict* ddict, bool bare_frame, std::string_view src, std::uint8_t* dst,
                 std::size_t expected) {
    ZSTD_DCtx* dctx = thread_dctx();
    if (dctx == nullptr) return false;
    // The thread's context serves tables of every format.
    if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_format,
                                            bare_frame ? ZSTD_f_zstd1_magicless : ZSTD_f_zstd1))) {
        return false;
    }
    const std::size_t n = ddict != nullptr
                              ? ZSTD_decompress_usingDDict(dctx, dst, expected, src.data(),
                                                           src.size(), ddict)
                              : ZSTD_decompressDCtx(dctx, dst, expected, src.data(), src.size());
    return !ZSTD_isError(n) && n == expected;
}

}  // namespace

void to_planes(std::span<const std::uint8_t> raw, std::uint32_t width, std::uint8_t* out) {
    const std::size_t n = raw.size() / width;
    for (std::uint32_t b = 0; b < width; ++b) {
        for (std::size_t i = 0; i < n; ++i) out[b * n + i] = raw[i * width + b];
    }
}

void from_planes(const std::uint8_t* planes, std::size_t values, std::uint32_t width,
                 std::uint8_t* out) {
    for (std::uint32_t b = 0; b < width; ++b) {
        for (std::size_t i = 0; i < values; ++i) out[i * width + b] = planes[b * values + i];
    }
}

std::string train_dictionary(const std::vector<std::string>& samples, std::size_t capacity) {
    std::string joined;
    std::vector<std::size_t> sizes;
    for (const std::string& sample : samples) {
        if (sample.size() < 8) continue;  // zstd's trainer ignores tiny samples anyway
        joined += sample;
        sizes.push_back(sample.size());
    }
    // Too little material: a dictionary would cost more than it saves.
    if (sizes.size() < 8 || joined.size() < 4 * capacity) return {};
    std::string dict(capacity, '\0');
    ZDICT_fastCover_params_t params{};
    params.k = 256;
    params.d = 8;
    params.f = 18;
    params.steps = 1;
    params.nbThreads = 1;
    params.splitPoint = 1.0;
    params.accel = 4;
    const std::size_t n = ZDICT_trainFromBuffer_fastCover(dict.data(), dict.size(), joined.data(),
                                                          sizes.data(),
                                                          static_cast<unsigned>(sizes.size()),
                                                          params);
    if (ZDICT_isError(n)) return {};
    dict.resize(n);
    return dict;
}

ZstdCDict make_cdict(const std::string& dictionary, const BlockEncoding& encoding) {
    const bool advanced = encoding.zstd_min_match != 0 || encoding.zstd_strategy != 0 ||
                          encoding.zstd_search_log != 0 || encoding.zstd_target_length != 0;
    if (!advanced) {
        // The level's own parameters: what tables with a dictionary always had.
        ZstdCDict cdict(ZSTD_createCDict(dictionary.data(), dictionary.size(), encoding.zstd_level));
        if (!cdict) throw std::bad_alloc();
        return cdict;
    }
    // A frame compressed with a CDict takes the CDict's parameters, not the
    // context's: a dictionary made from the level alone would drop the
    // table's parser settings (docs/storage-format.md section 12).
    std::unique_ptr<ZSTD_CCtx_params, decltype(&ZSTD_freeCCtxParams)> params(ZSTD_createCCtxParams(),
                                                                            &ZSTD_freeCCtxParams);
    if (!params) throw std::bad_alloc();
    ZSTD_CCtxParams_init(params.get(), encoding.zstd_level);
    ZSTD_CCtxParams_setParameter(params.get(), ZSTD_c_minMatch, encoding.zstd_min_match);
    ZSTD_CCtxParams_setParameter(params.get(), ZSTD_c_strategy, encoding.zstd_strategy);
    ZSTD_CCtxParams_setParameter(params.get(), ZSTD_c_searchLog, encoding.zstd_search_log);
    ZSTD_CCtxParams_setParameter(params.get(), ZSTD_c_targetLength, encoding.zstd_target_length);
    ZstdCDict cdict(ZSTD_createCDict_advanced2(dictionary.data(), dictionary.size(), ZSTD_dlm_byCopy,
                                               ZSTD_dct_auto, params.get(), ZSTD_defaultCMem));
    if (!cdict) throw std::bad_alloc();
    return cdict;
}

bool zstd_has_bare_frames() {
    const ZSTD_bounds c = ZSTD_cParam_getBounds(ZSTD_c_format);
    const ZSTD_bounds d = ZSTD_dParam_getBounds(ZSTD_d_format);
    return !ZSTD_isError(c.error) && !ZSTD_isError(d.error) && c.upperBound >= ZSTD_f_zstd1_magicless &&
           d.upperBound >= ZSTD_f_zstd1_magicless;
}

bool fills_in_directory(const TableInfo& info) { return info.format_version >= 5; }

std::shared_ptr<const BlockDecoding> make_block_decoding(const TableInfo& info) {
    auto decoding = std::make_shared<BlockDecoding>();
    decoding->bare_frames = info.format_version >= 4;
    decoding->fills_in_directory = fills_in_directory(info);
    if (!info.pair_model.empty()) {
        auto model = std::make_shared<PairModel>();
        // decode_table_info parsed it already.
        if (!PairModel::parse(info.pair_model, *model).ok()) throw std::logic_error("unchecked pair model");
        decoding->pairs = std::move(model);
    }
    if (!info.dictionary.empty()) {
        decoding->ddict.reset(ZSTD_createDDict(info.dictionary.data(), info.dictionary.size()));
        if (!decoding->ddict) throw std::bad_alloc();
    }
    return decoding;
}

void encode_block(std::string_view key, std::span<const std::uint8_t> raw, std::uint32_t width,
                  const BlockEncoding& encoding, ZSTD_CCtx* cctx, std::string& scratch,
                  std::string& record) {
    const auto raw_size = static_cast<int>(raw.size());
    const auto* src = reinterpret_cast<const char*>(raw.data());
    const Compression compression = encoding.compression;
    BlockCodec codec = BlockCodec::Raw;
    std::size_t compressed = 0;
    if (compression == Compression::Zstd) {
        std::span<const std::uint8_t> planes = raw;
        // Per call, not thread_local: the writer's OpenMP pool threads are
        // never joined, so their thread-local buffers would outlive the run.
        std::vector<std::uint8_t> transposed;
        if (width > 1) {
            transposed.resize(raw.size());
            to_planes(raw, width, transposed.data());
            planes = transposed;
        }
        scratch.clear();
        zstd_append(cctx, encoding, planes, scratch);
        compressed = scratch.size();
        codec = BlockCodec::Zstd;
    } else if (compression != Compression::None) {
        scratch.resize(static_cast<std::size_t>(LZ4_compressBound(raw_size)));
        const int n = compression == Compression::Lz4Hc
                          ? LZ4_compress_HC(src, scratch.data(), raw_size,
                                            static_cast<int>(scratch.size()), encoding.lz4hc_level)
                          : LZ4_compress_default(src, scratch.data(), raw_size,
                                                 static_cast<int>(scratch.size()));
        compressed = n > 0 ? static_cast<std::size_t>(n) : 0;
        codec = BlockCodec::Lz4;
    }
    // Keep the raw values when compression fails or does not pay.
    if (compressed == 0 || compressed >= raw.size()) codec = BlockCodec::Raw;
    const std::string_view payload = codec != BlockCodec::Raw
                                         ? std::string_view(scratch.data(), compressed)
                                         : std::string_view(src, raw.size());

    record.clear();
    record.reserve(kBlockHeaderBytes + payload.size());
    ByteWriter w(record);
    w.u8(static_cast<std::uint8_t>(codec));
    w.u8(static_cast<std::uint8_t>(width));
    w.u16(0);
    w.u32(static_cast<std::uint32_t>(raw.size() / width));
    Xxh64 hash;
    hash.update(key);
    hash.update(std::string_view(record));
    hash.update(payload);
    w.u64(hash.digest());
    w.bytes(payload);
}

void rekey_block(std::string_view key, std::string_view record, std::string& out) {
    const std::string_view header = record.substr(0, 8);
    const std::string_view payload = record.substr(kBlockHeaderBytes);
    Xxh64 hash;
    hash.update(key);
    hash.update(header);
    hash.update(payload);
    out.clear();
    out.reserve(record.size());
    out.append(header);
    ByteWriter w(out);
    w.u64(hash.digest());
    w.bytes(payload);
}

namespace {

Status block_error(std::string_view table_name, std::uint64_t block_no, StatusCode code,
                   const std::string& problem) {
    return Status(code, "table '" + std::string(table_name) + "' block " + std::to_string(block_no) +
                            ": " + problem);
}

// The payload of one block, of codec `codec`, into `out` (slots * width bytes).
Status decode_payload(std::string_view table_name, std::uint64_t block_no, std::uint8_t codec,
                      std::string_view payload, std::uint32_t width, std::uint32_t slots,
                      const BlockDecoding* decoding, std::uint8_t* out) {
    const auto fail = [&](const std::string& problem) {
        return block_error(table_name, block_no, StatusCode::Corruption, problem);
    };
    const std::size_t raw_size = static_cast<std::size_t>(slots) * width;
    if (codec == static_cast<std::uint8_t>(BlockCodec::Raw)) {
        if (payload.size() != raw_size) return fail("raw payload size");
        std::memcpy(out, payload.data(), raw_size);
        return {};
    }
    if (codec == static_cast<std::uint8_t>(BlockCodec::Lz4)) {
        const int n =
            LZ4_decompress_safe(payload.data(), reinterpret_cast<char*>(out),
                                static_cast<int>(payload.size()), static_cast<int>(raw_size));
        if (n < 0 || static_cast<std::size_t>(n) != raw_size) {
            return fail("LZ4 payload does not decode to the block size");
        }
        return {};
    }
    if (codec == static_cast<std::uint8_t>(BlockCodec::Zstd) && decoding != nullptr && decoding->pairs) {
        if (Status s = pair_decode_member(*decoding->pairs, payload, slots, width, out); !s.ok()) {
            return fail(s.message());
        }
        return {};
    }
    if (codec == static_cast<std::uint8_t>(BlockCodec::Zstd)) {
        const ZSTD_DDict* ddict = decoding != nullptr ? decoding->ddict.get() : nullptr;
        const bool bare_frame = decoding != nullptr && decoding->bare_frames;
        std::uint8_t* planes = out;
        thread_local std::vector<std::uint8_t> transposed;
        if (width > 1) {
            transposed.resize(raw_size);
            planes = transposed.data();
        }
        if (!zstd_decode(ddict, bare_frame, payload, planes, raw_size)) {
            return fail("zstd payload does not decode to the block size");
        }
        if (width > 1) from_planes(planes, slots, width, out);
        return {};
    }
    return fail("unknown codec " + std::to_string(codec));
}

// XXH64 of key, the first 8 header bytes and everything after the header:
// the checksum of single-block and group records alike.
std::uint64_t record_checksum(std::string_view key, std::string_view record) {
    Xxh64 hash;
    hash.update(key);
    hash.update(record.substr(0, 8));
    hash.update(record.substr(kBlockHeaderBytes));
    return hash.digest();
}

// What every record, single block or group, is checked for first: a whole
// header, and a checksum that fits key, header and payload. `fail` makes
// the error name the record.
template <class Fail>
Status check_seal(std::string_view key, std::string_view record, const Fail& fail) {
    if (record.size() < kBlockHeaderBytes) {
        return fail(StatusCode::Corruption, "record of " + std::to_string(record.size()) +
                                                " bytes is shorter than its header");
    }
    const std::uint64_t computed = record_checksum(key, record);
    const auto stored = get_le<std::uint64_t>(record.data() + 8);
    if (computed != stored) {
        return fail(StatusCode::ChecksumMismatch, "checksum mismatch (stored " + hex64(stored) +
                                                      ", computed " + hex64(computed) + ")");
    }
    return {};
}

// A member's directory entry: its payload size shifted left by 2, its codec
// (MemberCodec: 0 raw, 1 LZ4, 2 zstd, 3 fill) in the low 2 bits, as an
// unsigned LEB128 number.
void put_leb128(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>(0x80 | (v & 0x7F)));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

bool get_leb128(std::string_view in, std::size_t& at, std::uint64_t& v) {
    v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        if (at >= in.size()) return false;
        const auto byte = static_cast<std::uint8_t>(in[at++]);
        v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0) return true;
    }
    return false;  // longer than any payload size of a block can need
}

}  // namespace

std::uint64_t encode_group(std::string_view key, std::span<const std::string> members, std::uint32_t width,
                           std::string& record, bool fills_in_directory) {
    record.clear();
    ByteWriter w(record);
    w.u8(static_cast<std::uint8_t>(BlockCodec::Group));
    w.u8(static_cast<std::uint8_t>(width));
    w.u16(static_cast<std::uint16_t>(members.size()));
    std::uint32_t slots = 0;
    for (const std::string& m : members) slots += get_le<std::uint32_t>(m.data() + 4);
    w.u32(slots);
    w.u64(0);  // the checksum, once the rest is there
    const auto in_directory = [&](const std::string& m) {
        return fills_in_directory && static_cast<MemberCodec>(m[0]) == MemberCodec::Fill;
    };
    for (const std::string& m : members) {
        std::uint64_t field = m.size() - kBlockHeaderBytes;
        if (in_directory(m)) {
            field = 0;  // the value, little-endian after the member's header
            for (std::uint32_t i = 0; i < width; ++i) {
                field |= std::uint64_t{static_cast<std::uint8_t>(m[kBlockHeaderBytes + i])} << (8 * i);
            }
        }
        put_leb128(record, field << 2 | static_cast<std::uint8_t>(m[0]));
    }
    const std::size_t directory_end = record.size();
    for (const std::string& m : members) {
        if (!in_directory(m)) record.append(m, kBlockHeaderBytes);
    }
    const std::uint64_t sum = record_checksum(key, record);
    for (int i = 0; i < 8; ++i) record[8 + i] = static_cast<char>(sum >> (8 * i));
    return record.size() - directory_end;
}

Status open_group(std::string_view table_name, std::uint64_t block_no, std::uint64_t first_block,
                  std::string_view key, std::string_view record, std::uint32_t width,
                  std::uint32_t expected_members, std::uint64_t expected_slots, GroupView& view,
                  bool fills_in_directory) {
    const auto fail = [&](StatusCode code, const std::string& problem) {
        return Status(code, "table '" + std::string(table_name) + "' block " +
                                std::to_string(block_no) + " (record of blocks " +
                                std::to_string(first_block) + "-" +
                                std::to_string(first_block + expected_members - 1) + "): " + problem);
    };
    if (Status s = check_seal(key, record, fail); !s.ok()) return s;
    const auto codec = static_cast<std::uint8_t>(record[0]);
    const auto record_width = static_cast<std::uint8_t>(record[1]);
    const auto members = get_le<std::uint16_t>(record.data() + 2);
    const auto slots = get_le<std::uint32_t>(record.data() + 4);
    if (codec != static_cast<std::uint8_t>(BlockCodec::Group) || record_width != width ||
        members != expected_members || slots != expected_slots) {
        return fail(StatusCode::Corruption,
                    "header does not match the table (codec " + std::to_string(codec) + ", width " +
                        std::to_string(record_width) + ", " + std::to_string(members) + " blocks, " +
                        std::to_string(slots) + " slots)");
    }
    view.members.resize(members);
    std::size_t at = kBlockHeaderBytes;
    std::uint64_t payload_bytes = 0;
    for (GroupMember& m : view.members) {
        std::uint64_t entry = 0;
        if (!get_leb128(record, at, entry)) return fail(StatusCode::Corruption, "damaged directory");
        m.codec = static_cast<MemberCodec>(entry & 3);
        m.fill_value.reset();
        if (fills_in_directory && m.codec == MemberCodec::Fill) {
            // The value itself, no payload.
            const std::uint64_t value = entry >> 2;
            if (width > 4 || value >> (8 * width) != 0) {
                return fail(StatusCode::Corruption, "fill value " + std::to_string(value) + " wider than " +
                                                        std::to_string(width) + "-byte values");
            }
            m.fill_value = static_cast<std::uint32_t>(value);
            m.payload = {};
            continue;
        }
        const std::uint64_t size = entry >> 2;
        if (size > record.size()) return fail(StatusCode::Corruption, "directory past the record");
        payload_bytes += size;
        m.payload = record.substr(0, static_cast<std::size_t>(size));  // its size, placed below
    }
    if (payload_bytes != record.size() - at) {
        return fail(StatusCode::Corruption, "directory does not add up to the record's size");
    }
    for (GroupMember& m : view.members) {
        if (m.fill_value) continue;
        m.payload = record.substr(at, m.payload.size());
        at += m.payload.size();
    }
    return {};
}

std::uint32_t block_slots(const TableInfo& info, std::uint64_t block_no) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(
        info.slots_per_block, info.spec.slot_count - block_no * info.slots_per_block));
}

RecordLayout record_layout(const TableInfo& info, std::uint64_t record_no) {
    RecordLayout layout;
    layout.first_block = record_no * info.blocks_per_record;
    layout.blocks = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(info.blocks_per_record, info.block_count - layout.first_block));
    const std::uint64_t first_slot = layout.first_block * info.slots_per_block;
    layout.slots = std::min<std::uint64_t>(info.spec.slot_count - first_slot,
                                           std::uint64_t{layout.blocks} * info.slots_per_block);
    return layout;
}

namespace {

// A group member's header: like a single-block record's (codec, width,
// slots; no checksum), so that encode_group reads every member alike.
void member_header(MemberCodec codec, std::uint32_t width, std::uint32_t slots, std::string& member) {
    member.clear();
    ByteWriter w(member);
    w.u8(static_cast<std::uint8_t>(codec));
    w.u8(static_cast<std::uint8_t>(width));
    w.u16(0);
    w.u32(slots);
    w.u64(0);
}

}  // namespace

bool fill_member(std::span<const std::uint8_t> raw, std::uint32_t width, std::string& member) {
    if (raw.size() < width) return false;
    // Every value equal to the one before it: all equal to the first.
    for (std::size_t i = width; i < raw.size(); ++i) {
        if (raw[i] != raw[i - width]) return false;
    }
    member_header(MemberCodec::Fill, width, static_cast<std::uint32_t>(raw.size() / width), member);
    member.append(reinterpret_cast<const char*>(raw.data()), width);
    return true;
}

void pair_coded_member(std::string_view payload, std::span<const std::uint8_t> raw, std::uint32_t width,
                       std::string& member) {
    // Raw where the code does not pay, as encode_block keeps noise raw.
    const bool coded = payload.size() < raw.size();
    member_header(coded ? MemberCodec::Zstd : MemberCodec::Raw, width, static_cast<std::uint32_t>(raw.size() / width),
                  member);
    if (coded) {
        member.append(payload);
    } else {
        member.append(reinterpret_cast<const char*>(raw.data()), raw.size());
    }
}

Status decode_member(std::string_view table_name, std::uint64_t block_no, const GroupMember& member,
                     std::uint32_t width, std::uint32_t slots, const BlockDecoding* decoding,
                     std::uint8_t* out) {
    if (member.codec == MemberCodec::Fill) {
        // The value: the payload, or (format 5) the directory's, which
        // open_group checked fits `width`.
        std::uint8_t from_directory[4];
        const void* value = member.payload.data();
        if (member.fill_value) {
            for (std::uint32_t i = 0; i < width; ++i) from_directory[i] = static_cast<std::uint8_t>(*member.fill_value >> (8 * i));
            value = from_directory;
        } else if (member.payload.size() != width) {
            return block_error(table_name, block_no, StatusCode::Corruption,
                               "fill payload of " + std::to_string(member.payload.size()) +
                                   " bytes for " + std::to_string(width) + "-byte values");
        }
        // One value, then the bytes so far copied after themselves: a few
        // large copies instead of one per slot.
        const std::size_t size = std::size_t{slots} * width;
        if (size == 0) return {};
        std::memcpy(out, value, width);
        for (std::size_t done = width; done < size; done *= 2) {
            std::memcpy(out + done, out, std::min(done, size - done));
        }
        return {};
    }
    return decode_payload(table_name, block_no, static_cast<std::uint8_t>(member.codec),
                          member.payload, width, slots, decoding, out);
}

Status member_value(std::string_view table_name, std::uint64_t block_no, const GroupMember& member,
                    std::uint32_t width, std::uint32_t slots, const BlockDecoding& decoding, std::uint32_t index,
                    std::uint32_t& value) {
    const auto fail = [&](const std::string& problem) {
        return block_error(table_name, block_no, StatusCode::Corruption, problem);
    };
    if (member.fill_value) {
        value = *member.fill_value;
        return {};
    }
    if (member.codec == MemberCodec::Raw) {
        if (member.payload.size() != std::size_t{slots} * width) return fail("raw payload size");
        value = value_at(reinterpret_cast<const std::uint8_t*>(member.payload.data()), width, index);
        return {};
    }
    if (member.codec != MemberCodec::Zstd || !decoding.pairs) {
        return fail("member codec " + std::to_string(static_cast<int>(member.codec)) + " in a pair-coded table");
    }
    if (Status s = pair_member_value(*decoding.pairs, member.payload, slots, index, value); !s.ok()) {
        return fail(s.message());
    }
    return {};
}

Status decode_block(std::string_view table_name, std::uint64_t block_no, std::string_view key,
                    std::string_view record, std::uint32_t width, std::uint32_t expected_slots,
                    const BlockDecoding* decoding, std::uint8_t* out) {
    const auto fail = [&](StatusCode code, const std::string& problem) {
        return block_error(table_name, block_no, code, problem);
    };
    if (Status s = check_seal(key, record, fail); !s.ok()) return s;
    const auto codec = static_cast<std::uint8_t>(record[0]);
    const auto record_width = static_cast<std::uint8_t>(record[1]);
    const auto reserved = get_le<std::uint16_t>(record.data() + 2);
    const auto slots = get_le<std::uint32_t>(record.data() + 4);
    if (record_width != width || reserved != 0 || slots != expected_slots) {
        return fail(StatusCode::Corruption, "header does not match the table (width " +
                                               std::to_string(record_width) + ", " +
                                               std::to_string(slots) + " slots)");
    }
    if (codec == static_cast<std::uint8_t>(BlockCodec::Group)) {
        return fail(StatusCode::Corruption, "a group record where the table stores single blocks");
    }
    return decode_payload(table_name, block_no, codec, record.substr(kBlockHeaderBytes), width,
                          slots, decoding, out);
}

}  // namespace tbf::storage::detail
