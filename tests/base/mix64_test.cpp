#include <doctest/doctest.h>

#include <cstdint>
#include <unordered_set>

#include "tbforge/base/mix64.hpp"

TEST_CASE("mix64 gives splitmix64's published outputs") {
    // splitmix64 seeded with 0: state n is (n + 1) * gamma, output mix64(state).
    constexpr std::uint64_t kSeedZero[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
                                           0xf88bb8a8724c81ecULL};
    for (std::uint64_t n = 0; n < 4; ++n) CHECK(tbf::mix64((n + 1) * tbf::kGoldenGamma) == kSeedZero[n]);
    static_assert(tbf::mix64(0) == 0, "zero is its own image");
}

TEST_CASE("mix64 spreads neighbouring inputs over the low bits") {
    // Consecutive inputs land in distinct low 16-bit buckets far more often
    // than a multiplicative hash's low bits (which repeat with the input's).
    std::unordered_set<std::uint64_t> low;
    for (std::uint64_t i = 0; i < 4096; ++i) low.insert(tbf::mix64(i << 16) & 0xFFFF);
    CHECK(low.size() > 3900);  // 4096 draws from 65536 buckets: about 3,970 distinct
}
