#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "tbforge/base/byte_size.hpp"

using tbf::parse_byte_size;

namespace {

std::uint64_t bytes(const std::string& text) {
    auto r = parse_byte_size(text);
    REQUIRE_MESSAGE(r.ok(), text);
    return *r;
}

}  // namespace

TEST_CASE("byte size: every form of one unit means the same count") {
    constexpr std::uint64_t kGi = std::uint64_t{1} << 30;
    for (const char* form : {"4G", "4g", "4GB", "4gb", "4GiB", "4gib", "4Gib"}) {
        CHECK_MESSAGE(bytes(form) == 4 * kGi, form);
    }
    CHECK(bytes("512M") == 512ull << 20);
    CHECK(bytes("72M") == 72ull << 20);
    CHECK(bytes("72MiB") == 72ull << 20);
    CHECK(bytes("64K") == 64ull << 10);
    CHECK(bytes("2T") == 2ull << 40);
    CHECK(bytes("1048576") == 1048576);
    CHECK(bytes("100B") == 100);
    CHECK(bytes("0") == 0);
    CHECK(bytes("16777215T") == 16777215ull << 40);
}

TEST_CASE("byte size: anything else is an error naming the text") {
    for (const char* bad : {"", "G", "4X", "4 G", "-1", "4.5G", "4GiBs", "4iB", "0x10", " 4G",
                            "18446744073709551616", "16777216T"}) {
        auto r = parse_byte_size(bad);
        CHECK_MESSAGE(!r.ok(), bad);
        if (!r.ok()) {
            CHECK(r.status().code() == tbf::StatusCode::InvalidArgument);
            CHECK(r.status().message().find("'" + std::string(bad) + "'") != std::string::npos);
        }
    }
}

TEST_CASE("byte size: differential against a straightforward multiplication") {
    const char* units[] = {"", "K", "M", "G", "T"};
    for (std::uint64_t n : {0ull, 1ull, 3ull, 1000ull, 123456ull}) {
        for (int u = 0; u < 5; ++u) {
            std::uint64_t expected = n;
            for (int k = 0; k < u; ++k) expected *= 1024;
            const std::string text = std::to_string(n) + units[u];
            CHECK_MESSAGE(bytes(text) == expected, text);
            if (u > 0) CHECK(bytes(text + "iB") == expected);
        }
    }
}
