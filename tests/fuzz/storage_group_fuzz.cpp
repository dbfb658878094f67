// A group record of format 3, 4 or 5 (detail::open_group and
// detail::decode_member, docs/storage-format.md section 4): several blocks
// under one header, directory and checksum. Input: a byte with the value
// width (bits 0-1: 1, 2, 4, or the invalid 3), the "reseal" option (bit 2:
// the checksum is recomputed so that the fuzzer reaches the header and the
// directory) and the table's format (bit 3: 4, zstd blocks as bare frames;
// bits 3 and 4: 5, fill values in the directory), a
// byte giving the blocks the table expects in the record (1 to 8), a byte
// giving the slots of each (1 to 256), then the record. Whatever opens must
// have a matching checksum and header and a directory that covers the
// record exactly; every member decodes or is refused inside its buffer, and
// the decoded values survive grouping again (a block of one repeated value
// as a fill member).

#include <cstring>
#include <memory>
#include <string>
#include <vector>

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
    detail::BlockDecoding decoding;
    decoding.bare_frames = (data[0] & 8) != 0;
    decoding.fills_in_directory = decoding.bare_frames && (data[0] & 16) != 0;
    const std::uint32_t members = 1 + (data[1] & 7);
    const std::uint32_t slots = 1 + data[2];
    std::string record(reinterpret_cast<const char*>(data + 3), size - 3);
    const std::string key = detail::block_key(7, 2);
    if (resealed) tbf::test::reseal_record(key, record);

    detail::GroupView view;
    if (!detail::open_group("antichess/KQvK", 16, 16, key, record, width, members,
                            std::uint64_t{members} * slots, view, decoding.fills_in_directory)
             .ok()) {
        return 0;
    }
    FUZZ_CHECK(tbf::get_le<std::uint64_t>(record.data() + 8) == tbf::test::record_checksum(key, record),
               "group accepted with a bad checksum");
    FUZZ_CHECK(static_cast<std::uint8_t>(record[0]) == 3 &&
                   static_cast<std::uint8_t>(record[1]) == width &&
                   tbf::get_le<std::uint16_t>(record.data() + 2) == members &&
                   tbf::get_le<std::uint32_t>(record.data() + 4) == members * slots,
               "group accepted with a header that does not match");
    FUZZ_CHECK(view.members.size() == members, "wrong number of members");
    // The payloads follow one another after the directory and end with the record.
    const char* end = record.data() + record.size();
    for (std::size_t i = view.members.size(); i-- > 0;) {
        if (view.members[i].fill_value) {
            FUZZ_CHECK(decoding.fills_in_directory && view.members[i].codec == detail::MemberCodec::Fill &&
                           view.members[i].payload.empty(),
                       "a fill value outside a format-5 fill");
            continue;
        }
        const std::string_view p = view.members[i].payload;
        FUZZ_CHECK(p.data() >= record.data() + detail::kBlockHeaderBytes && p.data() + p.size() == end,
                   "payloads not contiguous up to the record's end");
        end = p.data();
    }

    // Each member into a buffer of exactly its size; the decoded ones are
    // grouped again (as zstd blocks) and must read back the same.
    const std::size_t raw_size = std::size_t{slots} * width;
    std::vector<std::unique_ptr<std::uint8_t[]>> decoded;
    for (std::uint32_t i = 0; i < members; ++i) {
        auto out = std::make_unique<std::uint8_t[]>(raw_size);
        if (!detail::decode_member("antichess/KQvK", 16 + i, view.members[i], width, slots, &decoding,
                                   out.get())
                 .ok()) {
            return 0;
        }
        if (view.members[i].codec == detail::MemberCodec::Fill) {
            for (std::size_t at = 0; at < raw_size; at += width) {
                std::uint32_t value = 0;
                for (std::uint32_t b = 0; b < width; ++b) value |= std::uint32_t{out[at + b]} << (8 * b);
                const bool same = view.members[i].fill_value
                                      ? value == *view.members[i].fill_value
                                      : std::memcmp(out.get() + at, view.members[i].payload.data(), width) == 0;
                FUZZ_CHECK(same, "a fill member decoded to other values");
            }
        }
        decoded.push_back(std::move(out));
    }
    static const detail::ZstdCCtx cctx(ZSTD_createCCtx());
    detail::BlockEncoding encoding;
    encoding.compression = storage::Compression::Zstd;
    encoding.bare_frames = decoding.bare_frames;
    std::vector<std::string> singles(members);
    std::string scratch, again;
    for (std::uint32_t i = 0; i < members; ++i) {
        if (!detail::fill_member({decoded[i].get(), raw_size}, width, singles[i])) {
            detail::encode_block("", {decoded[i].get(), raw_size}, width, encoding, cctx.get(),
                                 scratch, singles[i]);
        }
    }
    detail::encode_group(key, singles, width, again, decoding.fills_in_directory);
    detail::GroupView reopened;
    FUZZ_CHECK(detail::open_group("antichess/KQvK", 16, 16, key, again, width, members,
                                  std::uint64_t{members} * slots, reopened, decoding.fills_in_directory)
                   .ok(),
               "a group made again does not open");
    for (std::uint32_t i = 0; i < members; ++i) {
        auto back = std::make_unique<std::uint8_t[]>(raw_size);
        FUZZ_CHECK(detail::decode_member("antichess/KQvK", 16 + i, reopened.members[i], width, slots,
                                         &decoding, back.get())
                           .ok() &&
                       std::memcmp(back.get(), decoded[i].get(), raw_size) == 0,
                   "values do not survive grouping again");
    }
    return 0;
}
