// A pair-coded block of format 6 (detail::PairModel::parse,
// detail::pair_decode_member and detail::pair_member_value,
// docs/storage-format.md sections 4 and 6): a table's pair model and one
// member's payload. Input: a byte with the value width (bits 0-1: 1, 2, 4,
// or the invalid 3), two bytes giving the member's slots - 1 (little-endian),
// two bytes giving the model's length, the model, then the payload.
// Whatever model parses, the member decodes or is refused inside its
// buffers; where the whole member decodes, every value read alone is the
// same, and the values coded again by the writer's encoder (where it takes
// them: at most 16384 distinct) decode back.

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "pair_codec.hpp"
#include "storage_fuzz_support.hpp"
#include "tbforge/storage/table.hpp"

namespace {

namespace detail = tbf::storage::detail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 5) return 0;
    const std::uint32_t width = tbf::fuzz::input_width(data[0]);
    const std::uint32_t slots = 1 + (data[1] | (std::uint32_t{data[2]} << 8));
    const std::size_t model_bytes = data[3] | (std::size_t{data[4]} << 8);
    if (size - 5 < model_bytes) return 0;
    const std::string model_text(reinterpret_cast<const char*>(data + 5), model_bytes);
    // A copy of exactly the payload's size: a read past it is the sanitizer's to see.
    const std::string payload(reinterpret_cast<const char*>(data + 5 + model_bytes), size - 5 - model_bytes);
    detail::PairModel model;
    if (!detail::PairModel::parse(model_text, model).ok()) return 0;
    FUZZ_CHECK(model.serialized() == model_text, "a parsed model that is not its own bytes");

    std::vector<std::uint8_t> decoded(std::size_t{slots} * (width == 3 ? 4 : width));
    const bool whole = width != 3 && detail::pair_decode_member(model, payload, slots, width, decoded.data()).ok();
    // Single values: a stride through the member, every one where it decoded whole.
    const std::uint32_t step = whole ? 1 : std::max<std::uint32_t>(1, slots / 64);
    for (std::uint32_t i = 0; i < slots; i += step) {
        std::uint32_t value = 0;
        const bool alone = detail::pair_member_value(model, payload, slots, i, value).ok();
        if (!whole) continue;
        FUZZ_CHECK(alone, "a value of a member that decodes whole is refused alone");
        FUZZ_CHECK(value == tbf::storage::value_at(decoded.data(), width, i), "a value read alone differs");
    }
    if (!whole) return 0;
    auto again = detail::pair_encode(decoded, width, slots);
    // A model may name more distinct values than the encoder codes.
    if (!again.ok()) return 0;
    std::vector<std::uint8_t> round(decoded.size());
    FUZZ_CHECK(again->members.size() == 1 &&
                   detail::pair_decode_member(again->model, again->members[0], slots, width, round.data()).ok(),
               "values coded again do not decode");
    FUZZ_CHECK(round == decoded, "values coded again decode to others");
    return 0;
}
