#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tbforge/base/xxh64.hpp"

using tbf::xxh64;
using tbf::Xxh64;

namespace {

// Input i of the vectors below: bytes (k * 131 + 7) mod 256 for k < length.
std::vector<std::uint8_t> pattern(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<std::uint8_t>(k * 131 + 7);
    return v;
}

struct Vector {
    std::size_t length;
    std::uint64_t seed;
    std::uint64_t hash;
};

// Computed with the reference implementation (libxxhash 0.8.1, XXH64), so
// every code path (short input, stripes, 8/4/1-byte tails) is pinned.
constexpr std::uint64_t kSeed = 0x9E3779B97F4A7C15ULL;
constexpr Vector kVectors[] = {
    {0, 0, 0xef46db3751d8e999ULL},   {0, kSeed, 0xc4349fc93c010000ULL},
    {1, 0, 0xa96c7f0ce858bbb7ULL},   {1, kSeed, 0x585882422a6165e7ULL},
    {3, 0, 0xbed43740ee6332bbULL},   {3, kSeed, 0x45fa1406538fa168ULL},
    {4, 0, 0xfa212ae44b3bb23dULL},   {4, kSeed, 0xa65107f22943365aULL},
    {7, 0, 0x2744460dd675d2c0ULL},   {7, kSeed, 0xc9b637e2c4599de2ULL},
    {8, 0, 0x994b676b71ce94ddULL},   {8, kSeed, 0xce592d5f53e192ecULL},
    {15, 0, 0x09e6451ed2ff8b1dULL},  {15, kSeed, 0x47a857d1f90c35e1ULL},
    {16, 0, 0x94ad0095e72b24d5ULL},  {16, kSeed, 0x3f8fea7c86a04013ULL},
    {31, 0, 0x6711d55e306b5d8fULL},  {31, kSeed, 0x24c4e99ab0404b5eULL},
    {32, 0, 0x07f7b8e3bc5d6e25ULL},  {32, kSeed, 0x046e99bbda1a814bULL},
    {33, 0, 0x09f85eeb4e1cbe9fULL},  {33, kSeed, 0xd7fe2bfee6e4cdedULL},
    {63, 0, 0xb7c9968c066cb6a5ULL},  {63, kSeed, 0xbd457f9ea47180c8ULL},
    {64, 0, 0x50d4159a0411632eULL},  {64, kSeed, 0xa768f350a8e4fcf6ULL},
    {100, 0, 0x9ddada11d3dc2d8fULL}, {100, kSeed, 0x35546bd9a4779ae4ULL},
    {255, 0, 0x15a6db05d4e83df4ULL}, {255, kSeed, 0xf91cb247d93dfe82ULL},
    {300, 0, 0xc68e7ef39b5ca10eULL}, {300, kSeed, 0xf740b6ba02e2a0bdULL},
};

}  // namespace

TEST_CASE("xxh64 matches the reference implementation") {
    CHECK(xxh64(std::string_view("abc")) == 0x44bc2cf5ad770999ULL);
    for (const Vector& v : kVectors) {
        CAPTURE(v.length);
        CAPTURE(v.seed);
        const auto data = pattern(v.length);
        CHECK(xxh64(data, v.seed) == v.hash);
    }
}

TEST_CASE("streaming xxh64 equals one-shot however the input is split") {
    const auto data = pattern(300);
    for (const Vector& v : kVectors) {
        const std::span<const std::uint8_t> all(data.data(), v.length);
        for (std::size_t piece : {1, 3, 7, 31, 32, 33, 64}) {
            CAPTURE(v.length);
            CAPTURE(piece);
            Xxh64 h(v.seed);
            for (std::size_t at = 0; at < all.size(); at += piece) {
                h.update(all.subspan(at, std::min(piece, all.size() - at)));
            }
            CHECK(h.digest() == v.hash);
        }
    }
}
