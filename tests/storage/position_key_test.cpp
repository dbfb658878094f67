// The "position/1 move/1" entry codec: exact bytes of a known position,
// round trips of random placements, key order, and strict decoding.
#include "tbforge/storage/position_key.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace tbf;
using namespace tbf::storage;

namespace {

std::string hex(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (char c : bytes) {
        out += kDigits[static_cast<unsigned char>(c) >> 4];
        out += kDigits[static_cast<unsigned char>(c) & 15];
    }
    return out;
}

std::string unhex(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
        out += static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16));
    }
    return out;
}

// Random placement of `units` units with random valid codes.
PlainPosition random_position(std::mt19937_64& rng, int units) {
    PlainPosition p;
    std::uniform_int_distribution<int> square(0, 63), colour(0, 1), type(0, kUnitTypes - 1);
    for (int placed = 0; placed < units;) {
        auto& cell = p.units[static_cast<std::size_t>(square(rng))];
        if (cell != kEmptySquare) continue;
        cell = unit_code(colour(rng), type(rng));
        ++placed;
    }
    p.side_to_move = static_cast<std::uint8_t>(colour(rng));
    p.ep_square = rng() % 3 == 0 ? static_cast<std::uint8_t>(square(rng)) : kNoEpSquare;
    return p;
}

}  // namespace

TEST_CASE("position key: documented bytes of a known position") {
    // 4k3/8/8/8/8/8/8/R3K3 w: Ra1 (code 3), Ke1 (code 1), ke8 (code 9).
    PlainPosition p;
    p.units[0] = unit_code(0, 2);
    p.units[4] = unit_code(0, 0);
    p.units[60] = unit_code(1, 0);
    auto key = encode_position_key(p);
    REQUIRE(key.ok());
    CHECK(hex(*key) ==
          "40"
          "1000000000000011"
          "3190");

    // Black to move, en passant on e3, one more unit (even count: no padding).
    p.side_to_move = 1;
    p.ep_square = 20;
    p.units[28] = unit_code(0, 5);  // white pawn e4
    key = encode_position_key(p);
    REQUIRE(key.ok());
    CHECK(hex(*key) ==
          "94"
          "1000000010000011"
          "3169");
    auto back = decode_position_key(*key);
    REQUIRE(back.ok());
    CHECK(*back == p);
}

TEST_CASE("position key: random placements round trip, length 9 + ceil(n / 2)") {
    std::mt19937_64 rng(20240607);
    for (int i = 0; i < 20000; ++i) {
        const int units = static_cast<int>(rng() % 33);
        const PlainPosition p = random_position(rng, units);
        auto key = encode_position_key(p);
        REQUIRE(key.ok());
        REQUIRE(key->size() == 9 + static_cast<std::size_t>(units + 1) / 2);
        auto back = decode_position_key(*key);
        REQUIRE_MESSAGE(back.ok(), back.status().to_string());
        REQUIRE(*back == p);
    }
    // The codec has no unit limit of its own: a full board.
    PlainPosition full;
    for (auto& cell : full.units) cell = unit_code(1, 5);
    auto key = encode_position_key(full);
    REQUIRE(key.ok());
    CHECK(key->size() == kMaxPositionKeyBytes);
    CHECK(*decode_position_key(*key) == full);
}

TEST_CASE("position key: different positions have different keys") {
    std::mt19937_64 rng(7);
    PlainPosition a = random_position(rng, 5);
    PlainPosition b = a;
    b.side_to_move ^= 1;
    CHECK(*encode_position_key(a) != *encode_position_key(b));
    b = a;
    b.ep_square = a.ep_square == 20 ? 21 : 20;
    CHECK(*encode_position_key(a) != *encode_position_key(b));
    // Same squares, one unit changed colour.
    b = a;
    for (auto& cell : b.units) {
        if (cell != kEmptySquare) {
            cell = static_cast<std::uint8_t>(cell ^ 8);
            break;
        }
    }
    CHECK(*encode_position_key(a) != *encode_position_key(b));
}

TEST_CASE("position key: encoding rejects out-of-range input") {
    PlainPosition p;
    p.units[10] = 7;
    CHECK(encode_position_key(p).status().code() == StatusCode::InvalidArgument);
    p.units[10] = 15;
    CHECK(!encode_position_key(p).ok());
    p.units[10] = unit_code(0, 1);
    p.side_to_move = 2;
    CHECK(!encode_position_key(p).ok());
    p.side_to_move = 0;
    p.ep_square = 65;
    CHECK(!encode_position_key(p).ok());
}

TEST_CASE("position key: decoding is strict") {
    const std::string good = unhex(
        "40"
        "1000000000000011"
        "3190");
    REQUIRE(decode_position_key(good).ok());
    const auto rejects = [](const std::string& key, const std::string& why) {
        auto r = decode_position_key(key);
        CHECK_MESSAGE(!r.ok(), why);
        if (!r.ok()) CHECK(r.status().code() == StatusCode::Corruption);
    };
    rejects("", "empty");
    rejects(good.substr(0, 8), "shorter than the header");
    rejects(good.substr(0, 10), "a nibble byte missing");
    rejects(good + '\0', "a trailing byte");
    rejects(unhex("40"
                  "1000000000000011"
                  "3191"),
            "padding nibble not zero");
    rejects(unhex("40"
                  "1000000000000011"
                  "3790"),
            "unit code 7");
    rejects(unhex("40"
                  "1000000000000011"
                  "0190"),
            "unit code 0 on an occupied square");
    rejects(unhex("41"
                  "1000000000000011"
                  "3190"),
            "en-passant field 65");
    rejects(unhex("7f"
                  "1000000000000011"
                  "3190"),
            "en-passant field 127");
    // Side bit set, ep 64: black to move, no en passant.
    auto black =
        decode_position_key(unhex("c0"
                                  "1000000000000011"
                                  "3190"));
    REQUIRE(black.ok());
    CHECK(black->side_to_move == 1);
    CHECK(black->ep_square == kNoEpSquare);
}

TEST_CASE("move value: round trips and strict decoding") {
    for (std::uint8_t promotion = 0; promotion <= 5; ++promotion) {
        for (std::uint8_t from : {0, 12, 63}) {
            const PlainMove m{from, static_cast<std::uint8_t>(63 - from), promotion};
            auto v = encode_move_value(m);
            REQUIRE(v.ok());
            CHECK(v->size() == kMoveValueBytes);
            CHECK(*decode_move_value(*v) == m);
        }
    }
    // e7e8q: from 52, to 60, promotion 2 (queen) -> 52 | 60 << 6 | 2 << 12 = 0x2f34.
    CHECK(hex(*encode_move_value({52, 60, 2})) == "342f");
    CHECK(!encode_move_value({64, 0, 0}).ok());
    CHECK(!encode_move_value({0, 0, 6}).ok());
    CHECK(!decode_move_value(unhex("3460")).ok());  // promotion code 6
    CHECK(!decode_move_value("").ok());
    CHECK(!decode_move_value(unhex("342f00")).ok());
}
