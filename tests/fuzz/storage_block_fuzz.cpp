// A stored value block (detail::decode_block, docs/storage-format.md), the
// record a table read decodes before any value leaves storage. Input: a
// byte with the value width (bits 0-1: 1, 2, 4, or the invalid 3) and the
// "reseal" option (bit 2: the checksum field is recomputed so that the
// fuzzer reaches the header and the LZ4 payload), two bytes giving the slot
// count the table expects (1 to 4096), then the record. The decoder writes
// into a buffer of exactly that many values, so that any write past it is
// caught. Whatever it accepts must have a matching checksum and header, and
// its values must survive encoding again, raw and with LZ4.

#include <cstring>
#include <memory>
#include <string>

#include "fuzz_support.hpp"
#include "storage_fuzz_support.hpp"
#include "records.hpp"
#include "tbforge/base/record.hpp"

namespace {

namespace storage = tbf::storage;
namespace detail = tbf::storage::detail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const std::uint32_t width = tbf::fuzz::input_width(data[0]);
    const bool resealed = tbf::fuzz::input_resealed(data[0]);
    const std::uint32_t slots = 1 + ((data[1] | data[2] << 8) & 4095);
    std::string record(reinterpret_cast<const char*>(data + 3), size - 3);
    const std::string key = detail::block_key(7, 3);
    if (resealed) tbf::test::reseal_record(key, record);

    const std::size_t raw_size = std::size_t{slots} * width;
    auto out = std::make_unique<std::uint8_t[]>(raw_size);
    if (!detail::decode_block("antichess/KQvK", 3, key, record, width, slots, nullptr, out.get())
             .ok()) {
        return 0;
    }

    // Accepted: the checksum and the header are those of this table's block.
    FUZZ_CHECK(record.size() >= detail::kBlockHeaderBytes, "short record accepted");
    FUZZ_CHECK(tbf::get_le<std::uint64_t>(record.data() + 8) == tbf::test::record_checksum(key, record),
               "block accepted with a bad checksum");
    const auto codec = static_cast<std::uint8_t>(record[0]);
    FUZZ_CHECK(codec <= 2 && static_cast<std::uint8_t>(record[1]) == width &&
                   tbf::get_le<std::uint16_t>(record.data() + 2) == 0 &&
                   tbf::get_le<std::uint32_t>(record.data() + 4) == slots,
               "block accepted with a header that does not match");
    const std::span<const std::uint8_t> values(out.get(), raw_size);
    if (codec == static_cast<std::uint8_t>(detail::BlockCodec::Raw)) {
        FUZZ_CHECK(record.size() == detail::kBlockHeaderBytes + raw_size &&
                       std::string_view(record).substr(detail::kBlockHeaderBytes) ==
                           std::string_view(reinterpret_cast<const char*>(out.get()), raw_size),
                   "raw block decoded to other values");
    }

    static const detail::ZstdCCtx cctx(ZSTD_createCCtx());
    for (const auto compression :
         {storage::Compression::None, storage::Compression::Lz4, storage::Compression::Zstd}) {
        std::string scratch, again;
        detail::BlockEncoding encoding;
        encoding.compression = compression;
        detail::encode_block(key, values, width, encoding, cctx.get(), scratch, again);
        auto back = std::make_unique<std::uint8_t[]>(raw_size);
        FUZZ_CHECK(
            detail::decode_block("antichess/KQvK", 3, key, again, width, slots, nullptr, back.get())
                    .ok() &&
                std::memcmp(back.get(), out.get(), raw_size) == 0,
            "values do not survive encoding again");
    }
    return 0;
}
