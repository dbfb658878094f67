#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"

using namespace tbf;

TEST_CASE("record: fixed little-endian layout, whatever the host") {
    std::string out;
    ByteWriter w(out);
    w.u8(0x01);
    w.u16(0x0302);
    w.u32(0x07060504);
    w.u64(0x0f0e0d0c0b0a0908ull);
    w.string32("ab");
    w.string64("c");
    const std::string expected("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
                               "\x02\x00\x00\x00" "ab"
                               "\x01\x00\x00\x00\x00\x00\x00\x00" "c",
                               15 + 6 + 9);
    CHECK(out == expected);
    std::string key;
    put_be64(key, 0x0102030405060708ull);
    CHECK(key == std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
    CHECK(get_be64(key.data()) == 0x0102030405060708ull);
}

TEST_CASE("record: what is written reads back; reading past the end fails once") {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 50; ++round) {
        std::vector<std::uint32_t> words(rng() % 9);
        for (auto& x : words) x = static_cast<std::uint32_t>(rng());
        const std::uint64_t a = rng();
        const std::string text(rng() % 40, static_cast<char>('a' + round % 26));
        std::string out;
        ByteWriter w(out);
        w.u64(a);
        w.string32(text);
        w.u64(words.size());
        w.array(std::span<const std::uint32_t>(words));
        w.string64(text);
        ByteReader r(out);
        CHECK(r.u64() == a);
        CHECK(r.string32() == text);
        std::vector<std::uint32_t> back(r.u64());
        CHECK(r.array(std::span<std::uint32_t>(back)));
        CHECK(back == words);
        CHECK(r.string64() == text);
        CHECK(r.done());
        // Every truncation is noticed.
        const std::size_t cut = rng() % out.size();
        ByteReader t(std::string_view(out).substr(0, cut));
        (void)t.u64();
        (void)t.string32();
        std::vector<std::uint32_t> partial(t.u64() % 64);
        (void)t.array(std::span<std::uint32_t>(partial));
        (void)t.string64();
        CHECK(t.failed());
        CHECK_FALSE(t.done());
    }
    ByteReader huge(std::string_view("\xff\xff\xff\xff\xff\xff\xff\xff", 8));
    CHECK(huge.string64().empty());
    CHECK(huge.failed());
}

TEST_CASE("record: a sealed record checks itself") {
    std::string record = "TBFX payload";
    seal(record);
    REQUIRE(record.size() == 12 + kSealBytes);
    CHECK(get_le<std::uint64_t>(record.data() + 12) == xxh64(std::string_view("TBFX payload")));
    auto body = unseal(record);
    REQUIRE(body.ok());
    CHECK(*body == "TBFX payload");
    // Any one flipped bit is a checksum mismatch.
    for (std::size_t bit = 0; bit < record.size() * 8; ++bit) {
        std::string damaged = record;
        damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
        auto r = unseal(damaged);
        REQUIRE_FALSE(r.ok());
        CHECK(r.status().code() == StatusCode::ChecksumMismatch);
        CHECK(r.status().message().starts_with("checksum mismatch (stored 0x"));
    }
    auto shorter = unseal(std::string_view("1234567"));
    REQUIRE_FALSE(shorter.ok());
    CHECK(shorter.status().code() == StatusCode::Corruption);
    // The span form gives the same body.
    const std::vector<std::uint8_t> bytes(record.begin(), record.end());
    auto span_body = unseal(std::span<const std::uint8_t>(bytes));
    REQUIRE(span_body.ok());
    CHECK(span_body->size() == 12);
}

TEST_CASE("record: ByteWriter::seal equals seal") {
    std::string a = "abc", b = "abc";
    ByteWriter(a).seal();
    seal(b);
    CHECK(a == b);
    CHECK(hex64(0xabcull) == "0x0000000000000abc");
}
