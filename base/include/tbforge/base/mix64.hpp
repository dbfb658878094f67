#pragma once
// A 64-bit scrambler for sampling and hash tables: the output function of
// the splitmix64 generator (Steele, Lea and Flood's constants). It is a
// bijection, cheap (two multiplies), and every input bit reaches every
// output bit, which a multiplicative hash alone does not give the low bits.

#include <cstdint>

namespace tbf {

// 2^64 divided by the golden ratio: splitmix64's step between states, and
// the multiplier of the Fibonacci hashes of the hash tables (the high bits of
// x * kGoldenGamma spread consecutive keys evenly).
inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

}  // namespace tbf
