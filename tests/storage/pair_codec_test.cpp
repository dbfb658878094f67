#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pair_codec.hpp"

using namespace tbf;
using namespace tbf::storage::detail;

// Named (not anonymous): the test folder is one unity translation unit.
namespace pair_codec_checks {

std::vector<std::uint8_t> little_endian(const std::vector<std::uint32_t>& values, std::uint32_t width) {
    std::vector<std::uint8_t> raw;
    for (const std::uint32_t v : values) {
        for (std::uint32_t b = 0; b < width; ++b) raw.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    }
    return raw;
}

std::uint32_t member_slots_of(std::size_t values, std::uint32_t member_slots, std::size_t member) {
    return static_cast<std::uint32_t>(std::min<std::size_t>(member_slots, values - member * member_slots));
}

// Every member decoded whole and every value alone, with `model`.
void check_decodes(const PairModel& model, const PairEncoding& encoding, const std::vector<std::uint32_t>& values,
                   std::uint32_t width, std::uint32_t member_slots) {
    const std::vector<std::uint8_t> raw = little_endian(values, width);
    std::size_t wrong_members = 0, wrong_values = 0;
    for (std::size_t j = 0; j < encoding.members.size(); ++j) {
        const std::uint32_t slots = member_slots_of(values.size(), member_slots, j);
        std::vector<std::uint8_t> out(std::size_t{slots} * width, 0xAA);
        const Status s = pair_decode_member(model, encoding.members[j], slots, width, out.data());
        REQUIRE_MESSAGE(s.ok(), s.to_string());
        if (!std::equal(out.begin(), out.end(), raw.begin() + static_cast<std::ptrdiff_t>(j * member_slots * width))) {
            ++wrong_members;
        }
        for (std::uint32_t i = 0; i < slots; ++i) {
            std::uint32_t v = 0;
            const Status vs = pair_member_value(model, encoding.members[j], slots, i, v);
            REQUIRE_MESSAGE(vs.ok(), vs.to_string());
            if (v != values[j * member_slots + i]) ++wrong_values;
        }
    }
    CHECK(wrong_members == 0);
    CHECK(wrong_values == 0);
}

// Encodes `values`, checks every decode through the built model and the
// model parsed back from its bytes, and that encoding again gives the same bytes.
PairEncoding round_trip(const std::vector<std::uint32_t>& values, std::uint32_t width, std::uint32_t member_slots,
                        const PairCodecLimits& limits = {}) {
    const std::vector<std::uint8_t> raw = little_endian(values, width);
    auto encoding = pair_encode(raw, width, member_slots, limits);
    REQUIRE_MESSAGE(encoding.ok(), encoding.status().to_string());
    CHECK(encoding->members.size() == (values.size() + member_slots - 1) / member_slots);
    CHECK(encoding->model.sub_block_bytes() == limits.sub_block_bytes);
    CHECK(encoding->model.symbols() <= limits.max_symbols);
    check_decodes(encoding->model, *encoding, values, width, member_slots);

    PairModel parsed;
    const Status s = PairModel::parse(encoding->model.serialized(), parsed);
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    CHECK(parsed.serialized() == encoding->model.serialized());
    CHECK(parsed.symbols() == encoding->model.symbols());
    check_decodes(parsed, *encoding, values, width, member_slots);

    auto again = pair_encode(raw, width, member_slots, limits);
    REQUIRE(again.ok());
    CHECK(again->model.serialized() == encoding->model.serialized());
    CHECK(again->members == encoding->members);
    return std::move(*encoding);
}

std::size_t encoded_bytes(const PairEncoding& encoding) {
    std::size_t n = encoding.model.serialized().size();
    for (const std::string& m : encoding.members) n += m.size();
    return n;
}

std::vector<std::uint32_t> runs_of(std::size_t count, std::uint32_t alphabet, std::uint32_t longest, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint32_t> values;
    while (values.size() < count) {
        const auto v = static_cast<std::uint32_t>(rng() % alphabet);
        const std::size_t run = 1 + rng() % longest;
        for (std::size_t k = 0; k < run && values.size() < count; ++k) values.push_back(v);
    }
    return values;
}

// A member as a sample for damage tests: the runs table's model and its first member.
struct DamageSample {
    std::vector<std::uint32_t> values;
    PairEncoding encoding;
    static constexpr std::uint32_t kSlots = 1024;
};

DamageSample damage_sample() {
    DamageSample d;
    d.values = runs_of(3 * DamageSample::kSlots, 6, 40, 11);
    auto encoding = pair_encode(little_endian(d.values, 1), 1, DamageSample::kSlots, {.sub_block_bytes = 16});
    REQUIRE(encoding.ok());
    d.encoding = std::move(*encoding);
    return d;
}

// A decode of damaged bytes: ok or Corruption, nothing else (and no crash
// or out-of-bounds read, which the sanitizers would report).
bool ok_or_corruption(const Status& s) { return s.ok() || s.code() == StatusCode::Corruption; }

}  // namespace pair_codec_checks

using namespace pair_codec_checks;

TEST_CASE("pair codec: round trips of runs, periods, small alphabets, single values") {
    SUBCASE("runs, 1-byte values, members of 1024 and a short last one") {
        const auto values = runs_of(20000, 5, 300, 1);
        round_trip(values, 1, 1024);
    }
    SUBCASE("periodic, 2-byte values") {
        std::vector<std::uint32_t> values(50000);
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1000 + 37 * static_cast<std::uint32_t>(i % 7);
        round_trip(values, 2, 4096);
    }
    SUBCASE("random small alphabet, 4-byte values, 16-byte sub-blocks") {
        const std::uint32_t alphabet[] = {0, 0xFFFFFFFF, 123456789, 7, 42};
        std::mt19937_64 rng(2);
        std::vector<std::uint32_t> values(30000);
        for (auto& v : values) v = alphabet[rng() % 5];
        round_trip(values, 4, 1024, {.sub_block_bytes = 16});
    }
    SUBCASE("random bytes, 4096-byte sub-blocks, members not a power of two") {
        std::mt19937_64 rng(3);
        std::vector<std::uint32_t> values(40000);
        for (auto& v : values) v = static_cast<std::uint32_t>(rng() & 0xFF);
        round_trip(values, 1, 1000, {.sub_block_bytes = 4096});
    }
    SUBCASE("a skewed alphabet of 3916 values: codes longer than the fast table") {
        std::mt19937_64 rng(4);
        std::vector<std::uint32_t> values(120000);
        for (auto& v : values) {
            // Geometric-like ranks: a few very common values, thousands of rare ones.
            const std::uint64_t r = rng();
            v = (r & 7) != 0 ? static_cast<std::uint32_t>(r >> 60) : static_cast<std::uint32_t>(16 + (r >> 8) % 3900);
        }
        const PairEncoding e = round_trip(values, 2, 16384);
        unsigned longest = 0;
        for (std::size_t s = 0; s < e.model.symbols(); ++s) longest = std::max(longest, e.model.code_bits(s));
        CHECK(longest > kPairFastBits);
    }
    SUBCASE("one value repeated, in several members") {
        const std::vector<std::uint32_t> values(5000, 513);
        const PairEncoding e = round_trip(values, 2, 1024);
        CHECK(e.model.terminals() == 1);
    }
    SUBCASE("one long run: a sub-block of more than 65535 values") {
        const std::vector<std::uint32_t> values(200000, 9);
        const PairEncoding e = round_trip(values, 1, 1u << 18);
        REQUIRE(e.members.size() == 1);
        CHECK(e.members[0].size() < 16);
    }
    SUBCASE("a table of one value") {
        const PairEncoding e = round_trip({0xDEADBEEF}, 4, 1024);
        CHECK(e.model.symbols() == 1);
        CHECK(e.model.code_bits(0) == 1);
    }
    SUBCASE("members of one slot") {
        round_trip(runs_of(300, 3, 5, 5), 2, 1);
    }
}

TEST_CASE("pair codec: too many distinct values and bad arguments are refused") {
    // 70000 distinct values, more than the 65536 symbols the code can have.
    std::vector<std::uint32_t> values(70000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i * 7919 % 70000);
    CHECK(pair_encode(little_endian(values, 4), 4, 1024).status().code() == StatusCode::InvalidArgument);
    // 17000 of them in 2 bytes, against a limit of 16384 symbols.
    values.resize(17000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i * 7919 % 17000);
    CHECK(pair_encode(little_endian(values, 2), 2, 1024, {.max_symbols = 16384}).status().code() ==
          StatusCode::InvalidArgument);
    // Exactly max_symbols distinct values still encode (no room for pairs).
    std::vector<std::uint32_t> sixteen(4000);
    for (std::size_t i = 0; i < sixteen.size(); ++i) sixteen[i] = static_cast<std::uint32_t>(i % 16) * 0x01010101u;
    const PairEncoding e = round_trip(sixteen, 4, 1024, {.max_symbols = 16});
    CHECK(e.model.symbols() == 16);
    sixteen.back() = 99;
    CHECK(pair_encode(little_endian(sixteen, 4), 4, 1024, {.max_symbols = 16}).status().code() ==
          StatusCode::InvalidArgument);

    // Values wider than the width asked of the decoder.
    auto wide = pair_encode(little_endian({300, 300, 301}, 2), 2, 3);
    REQUIRE(wide.ok());
    std::uint8_t narrow[3];
    CHECK(pair_decode_member(wide->model, wide->members[0], 3, 1, narrow).code() == StatusCode::Corruption);

    const std::vector<std::uint8_t> raw(100, 1);
    CHECK(pair_encode(raw, 3, 10).status().code() == StatusCode::InvalidArgument);
    CHECK(pair_encode({}, 1, 10).status().code() == StatusCode::InvalidArgument);
    CHECK(pair_encode(raw, 1, 0).status().code() == StatusCode::InvalidArgument);
    CHECK(pair_encode(raw, 1, 10, {.sub_block_bytes = 48}).status().code() == StatusCode::InvalidArgument);
    CHECK(pair_encode(raw, 1, 10, {.sub_block_bytes = 8192}).status().code() == StatusCode::InvalidArgument);
    CHECK(pair_encode(raw, 1, 10, {.max_symbols = 65537}).status().code() == StatusCode::InvalidArgument);
}

TEST_CASE("pair codec: a long periodic table compresses to a small fraction of its bytes") {
    std::vector<std::uint32_t> values(1u << 20);
    const std::uint32_t period[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = period[i % 11];
    auto encoding = pair_encode(little_endian(values, 1), 1, 16384);
    REQUIRE(encoding.ok());
    // 64 members of about a dozen long symbols each, and a grammar of some
    // hundred symbols: a few kilobytes for a megabyte.
    CHECK(encoded_bytes(*encoding) < values.size() / 200);
    std::uint32_t v = 0;
    REQUIRE(pair_member_value(encoding->model, encoding->members[5], 16384, 12345, v).ok());
    CHECK(v == period[(5 * 16384 + 12345) % 11]);
}

TEST_CASE("pair codec: damaged model bytes are Corruption or still decode safely") {
    const DamageSample d = damage_sample();
    const std::string& bytes = d.encoding.model.serialized();
    REQUIRE(bytes.size() < 200);
    std::vector<std::uint8_t> out(DamageSample::kSlots);
    std::size_t refused = 0, parsed = 0;
    for (std::size_t at = 0; at < bytes.size(); ++at) {
        for (const std::uint8_t mask : {0x01, 0x02, 0x10, 0x80, 0xFF}) {
            std::string damaged = bytes;
            damaged[at] = static_cast<char>(damaged[at] ^ mask);
            PairModel model;
            const Status s = PairModel::parse(damaged, model);
            if (!s.ok()) {
                CHECK(s.code() == StatusCode::Corruption);
                CHECK(s.message().find('\n') == std::string::npos);
                ++refused;
                continue;
            }
            ++parsed;
            for (const std::string& member : d.encoding.members) {
                CHECK(ok_or_corruption(pair_decode_member(model, member, DamageSample::kSlots, 1, out.data())));
                for (std::uint32_t i = 0; i < DamageSample::kSlots; i += 3) {
                    std::uint32_t v = 0;
                    CHECK(ok_or_corruption(pair_member_value(model, member, DamageSample::kSlots, i, v)));
                }
            }
        }
    }
    CHECK(refused > 0);
    CHECK(parsed > 0);  // e.g. a terminal's value changed
    // Every prefix is truncated, a byte more is trailing.
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        PairModel model;
        CHECK(PairModel::parse(std::string_view(bytes).substr(0, n), model).code() == StatusCode::Corruption);
    }
    PairModel model;
    CHECK(PairModel::parse(bytes + '\0', model).code() == StatusCode::Corruption);

    // Hand-made models against each rule.
    const auto parse_code = [](std::string b) {
        PairModel m;
        return PairModel::parse(b, m).code();
    };
    using std::string_literals::operator""s;
    CHECK(parse_code("\x01\x04\x01\x05\x00\x01"s) == StatusCode::Ok);              // one value, a 1-bit code
    CHECK(parse_code("\x02\x04\x01\x05\x00\x01"s) == StatusCode::Corruption);      // version
    CHECK(parse_code("\x01\x03\x01\x05\x00\x01"s) == StatusCode::Corruption);      // 8-byte sub-blocks
    CHECK(parse_code("\x01\x0D\x01\x05\x00\x01"s) == StatusCode::Corruption);      // 8192-byte sub-blocks
    CHECK(parse_code("\x01\x04\x01\x05\x00\x02"s) == StatusCode::Corruption);      // lone code of 2 bits
    CHECK(parse_code("\x01\x04\x01\x05\x00\x00"s) == StatusCode::Corruption);      // no code
    CHECK(parse_code("\x01\x04\x00\x00"s) == StatusCode::Corruption);              // no terminal
    CHECK(parse_code("\x01\x04\x01\x85\x00\x00\x01"s) == StatusCode::Corruption);  // overlong varint
    // Two terminals and pair 2 = (0, 1): ids of 2 bits, 0b00 0b01 -> 0x10.
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x10\x01\x02\x02"s) == StatusCode::Ok);
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x20\x01\x02\x02"s) == StatusCode::Corruption);  // pair refers to itself
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x30\x01\x02\x02"s) == StatusCode::Corruption);  // to a later symbol
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x11\x01\x02\x02"s) == StatusCode::Corruption);  // padding bits
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x10\x01\x02\x03"s) == StatusCode::Corruption);  // Kraft sum below 1
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x10\x01\x01\x02"s) == StatusCode::Corruption);  // Kraft sum above 1
    CHECK(parse_code("\x01\x04\x02\x05\x06\x01\x10\x19\x01\x01"s) == StatusCode::Corruption);  // a 25-bit code
    CHECK(parse_code("\x01\x04\x02\x05\x80\x80\x80\x80\x10\x00\x00\x01\x01"s) == StatusCode::Corruption);  // value past 32 bits
    // Symbol k + 1 = (k, k) over one terminal expands to 2^(k+1) values:
    // 40 doublings are allowed, 41 are not.
    const auto doublings = [](unsigned pairs) {
        std::string chain("\x01\x04\x01\x00"s);
        chain.push_back(static_cast<char>(pairs));
        const unsigned id_bits = static_cast<unsigned>(std::bit_width(pairs));
        std::vector<bool> bits;
        for (unsigned k = 0; k < pairs; ++k) {
            for (int half = 0; half < 2; ++half) {
                for (unsigned b = id_bits; b-- > 0;) bits.push_back(((k >> b) & 1) != 0);
            }
        }
        for (std::size_t b = 0; b < bits.size(); b += 8) {
            unsigned byte = 0;
            for (std::size_t i = b; i < b + 8; ++i) byte = byte << 1 | (i < bits.size() && bits[i] ? 1 : 0);
            chain.push_back(static_cast<char>(byte));
        }
        std::string lengths(pairs + 1, '\0');
        lengths[pairs] = 1;
        return chain + lengths;
    };
    CHECK(parse_code(doublings(40)) == StatusCode::Ok);
    CHECK(parse_code(doublings(41)) == StatusCode::Corruption);
}

TEST_CASE("pair codec: damaged and truncated payloads are Corruption, never a read out of bounds") {
    const DamageSample d = damage_sample();
    const PairModel& model = d.encoding.model;
    const std::string& member = d.encoding.members[1];
    const std::uint32_t slots = DamageSample::kSlots;
    REQUIRE(member.size() > 32);  // several sub-blocks of 16 bytes
    std::vector<std::uint8_t> out(slots);
    std::size_t refused = 0;
    for (std::size_t at = 0; at < member.size(); ++at) {
        for (const std::uint8_t mask : {0x01, 0x04, 0x20, 0x80, 0xFF}) {
            std::string damaged = member;
            damaged[at] = static_cast<char>(damaged[at] ^ mask);
            const Status s = pair_decode_member(model, damaged, slots, 1, out.data());
            CHECK(ok_or_corruption(s));
            if (!s.ok()) ++refused;
            for (std::uint32_t i = 0; i < slots; ++i) {
                std::uint32_t v = 0;
                CHECK(ok_or_corruption(pair_member_value(model, damaged, slots, i, v)));
            }
        }
    }
    CHECK(refused > 0);
    // Every prefix fails to decode whole; a value it still gives is the right one.
    for (std::size_t n = 0; n < member.size(); ++n) {
        const std::string cut = member.substr(0, n);  // its own allocation: a read past it is caught
        CHECK(pair_decode_member(model, cut, slots, 1, out.data()).code() == StatusCode::Corruption);
        for (std::uint32_t i = 0; i < slots; ++i) {
            std::uint32_t v = 0;
            const Status s = pair_member_value(model, cut, slots, i, v);
            CHECK(ok_or_corruption(s));
            if (s.ok()) CHECK(v == d.values[slots + i]);
        }
    }
    // A byte more, a slot count below the directory's, an index out of range.
    CHECK(pair_decode_member(model, member + '\0', slots, 1, out.data()).code() == StatusCode::Corruption);
    CHECK(pair_decode_member(model, member, slots - 1, 1, out.data()).code() == StatusCode::Corruption);
    std::uint32_t v = 0;
    CHECK(pair_member_value(model, member, slots, slots, v).code() == StatusCode::InvalidArgument);
}
