#pragma once
// XXH64 (xxHash, 64-bit variant, as specified in Yann Collet's
// xxhash_spec.md), used for block, record and whole-table checksums. It is
// public so that other programs (the verifier) can recompute a table checksum
// from values obtained elsewhere.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tbf {

// One-shot hash of `data`.
[[nodiscard]] std::uint64_t xxh64(std::span<const std::uint8_t> data, std::uint64_t seed = 0);
[[nodiscard]] std::uint64_t xxh64(std::string_view data, std::uint64_t seed = 0);

// Streaming hash: update() any number of times with consecutive pieces, then
// digest(). The result equals the one-shot hash of the concatenation, however
// the input was split.
class Xxh64 {
public:
    explicit Xxh64(std::uint64_t seed = 0);

    void update(std::span<const std::uint8_t> data);
    void update(std::string_view data);
    [[nodiscard]] std::uint64_t digest() const;

private:
    std::array<std::uint64_t, 4> acc_;
    std::array<std::uint8_t, 32> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_ = 0;
    std::uint64_t seed_;
};

}  // namespace tbf
