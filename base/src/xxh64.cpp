// XXH64 following xxhash_spec.md: four accumulator lanes over 32-byte
// stripes, then a merge, then the tail in 8-, 4- and 1-byte steps and a final
// avalanche. Inputs are read as little-endian words whatever the host order.

#include "tbforge/base/xxh64.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tbf {
namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

inline std::uint64_t read64(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    return v;
}

inline std::uint32_t read32(const std::uint8_t* p) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    return v;
}

inline std::uint64_t round(std::uint64_t acc, std::uint64_t lane) {
    acc += lane * kPrime2;
    acc = std::rotl(acc, 31);
    return acc * kPrime1;
}

inline std::uint64_t merge_round(std::uint64_t acc, std::uint64_t lane) {
    acc ^= round(0, lane);
    return acc * kPrime1 + kPrime4;
}

inline std::array<std::uint64_t, 4> initial_lanes(std::uint64_t seed) {
    return {seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1};
}

// Consumes whole 32-byte stripes; returns the number of bytes consumed.
inline std::size_t consume_stripes(std::array<std::uint64_t, 4>& acc, const std::uint8_t* p,
                                   std::size_t n) {
    std::size_t done = 0;
    for (; done + 32 <= n; done += 32) {
        acc[0] = round(acc[0], read64(p + done));
        acc[1] = round(acc[1], read64(p + done + 8));
        acc[2] = round(acc[2], read64(p + done + 16));
        acc[3] = round(acc[3], read64(p + done + 24));
    }
    return done;
}

// Everything after the stripes: lane merge (or the short-input start), length,
// tail and avalanche.
std::uint64_t finish(const std::array<std::uint64_t, 4>& acc, bool had_stripe, std::uint64_t seed,
                     std::uint64_t total, const std::uint8_t* tail, std::size_t tail_len) {
    std::uint64_t h;
    if (had_stripe) {
        h = std::rotl(acc[0], 1) + std::rotl(acc[1], 7) + std::rotl(acc[2], 12) +
            std::rotl(acc[3], 18);
        for (const std::uint64_t lane : acc) h = merge_round(h, lane);
    } else {
        h = seed + kPrime5;
    }
    h += total;

    std::size_t i = 0;
    for (; i + 8 <= tail_len; i += 8) {
        h ^= round(0, read64(tail + i));
        h = std::rotl(h, 27) * kPrime1 + kPrime4;
    }
    if (i + 4 <= tail_len) {
        h ^= static_cast<std::uint64_t>(read32(tail + i)) * kPrime1;
        h = std::rotl(h, 23) * kPrime2 + kPrime3;
        i += 4;
    }
    for (; i < tail_len; ++i) {
        h ^= static_cast<std::uint64_t>(tail[i]) * kPrime5;
        h = std::rotl(h, 11) * kPrime1;
    }

    h ^= h >> 33;
    h *= kPrime2;
    h ^= h >> 29;
    h *= kPrime3;
    h ^= h >> 32;
    return h;
}

std::span<const std::uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::uint64_t xxh64(std::span<const std::uint8_t> data, std::uint64_t seed) {
    auto acc = initial_lanes(seed);
    const std::size_t done = consume_stripes(acc, data.data(), data.size());
    return finish(acc, done > 0, seed, data.size(), data.data() + done, data.size() - done);
}

std::uint64_t xxh64(std::string_view data, std::uint64_t seed) {
    return xxh64(as_bytes(data), seed);
}

Xxh64::Xxh64(std::uint64_t seed) : acc_(initial_lanes(seed)), seed_(seed) {}

void Xxh64::update(std::span<const std::uint8_t> data) {
    const std::uint8_t* p = data.data();
    std::size_t n = data.size();
    total_ += n;
    if (buffered_ > 0) {
        const std::size_t take = std::min(n, buffer_.size() - buffered_);
        std::memcpy(buffer_.data() + buffered_, p, take);
        buffered_ += take;
        p += take;
        n -= take;
        if (buffered_ < buffer_.size()) return;
        consume_stripes(acc_, buffer_.data(), buffer_.size());
        buffered_ = 0;
    }
    const std::size_t done = consume_stripes(acc_, p, n);
    if (done < n) {
        std::memcpy(buffer_.data(), p + done, n - done);
        buffered_ = n - done;
    }
}

void Xxh64::update(std::string_view data) { update(as_bytes(data)); }

std::uint64_t Xxh64::digest() const {
    return finish(acc_, total_ >= 32, seed_, total_, buffer_.data(), buffered_);
}

}  // namespace tbf
