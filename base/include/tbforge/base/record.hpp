#pragma once
// The checksummed record codec: fields written little-endian whatever the
// host (big-endian only where key order must be numeric order), a reader that
// checks bounds, and a sealing XXH64 trailer over everything before it. Used
// by the database records of storage/ and the work files of out-of-core
// builds; on a little-endian host its fields have the layout of a memcpy.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "tbforge/base/status.hpp"

namespace tbf {

template <class T>
void put_le(std::string& out, T value) {
    static_assert(std::is_integral_v<T>);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        out.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i)));
    }
}

template <class T>
[[nodiscard]] T get_le(const char* p) {
    static_assert(std::is_integral_v<T>);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    }
    return static_cast<T>(v);
}

// Big-endian, for keys: byte order is then numeric order.
inline void put_be64(std::string& out, std::uint64_t value) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(value >> (8 * i)));
}

[[nodiscard]] inline std::uint64_t get_be64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

// Appends fields to a byte string the caller owns (and may reuse).
class ByteWriter {
public:
    explicit ByteWriter(std::string& out) : out_(out) {}

    template <class T>
    void le(T value) {
        put_le(out_, value);
    }
    void u8(std::uint8_t v) { le(v); }
    void u16(std::uint16_t v) { le(v); }
    void u32(std::uint32_t v) { le(v); }
    void u64(std::uint64_t v) { le(v); }
    void bytes(std::string_view data) { out_.append(data); }
    void bytes(std::span<const std::uint8_t> data) {
        out_.append(reinterpret_cast<const char*>(data.data()), data.size());
    }
    // Integers of an array, each little-endian.
    template <class T>
    void array(std::span<const T> values) {
        static_assert(std::is_integral_v<T>);
        if constexpr (std::endian::native == std::endian::little) {
            out_.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
        } else {
            for (T v : values) le(v);
        }
    }
    // A length (u32 or u64), then the bytes.
    void string32(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        bytes(s);
    }
    void string64(std::string_view s) {
        u64(s.size());
        bytes(s);
    }
    // Appends the XXH64 of everything in the string: the record checks itself.
    void seal();

    [[nodiscard]] std::size_t size() const { return out_.size(); }

private:
    std::string& out_;
};

// Reads fields front to back. A read past the end sets failed() and returns
// zero / empty, so a parser checks once, at the end.
class ByteReader {
public:
    explicit ByteReader(std::string_view data) : data_(data) {}
    explicit ByteReader(std::span<const std::uint8_t> data)
        : data_(reinterpret_cast<const char*>(data.data()), data.size()) {}

    template <class T>
    T le() {
        if (!take(sizeof(T))) return T{};
        return get_le<T>(data_.data() + pos_ - sizeof(T));
    }
    std::uint8_t u8() { return le<std::uint8_t>(); }
    std::uint16_t u16() { return le<std::uint16_t>(); }
    std::uint32_t u32() { return le<std::uint32_t>(); }
    std::uint64_t u64() { return le<std::uint64_t>(); }

    std::string_view bytes(std::size_t n) {
        if (!take(n)) return {};
        return data_.substr(pos_ - n, n);
    }
    // Fills `out` with little-endian integers; false (and failed()) if the
    // data ends first.
    template <class T>
    bool array(std::span<T> out) {
        static_assert(std::is_integral_v<T>);
        if (out.size() > remaining() / sizeof(T)) return take(remaining() + 1);
        const char* p = data_.data() + pos_;
        take(out.size_bytes());
        if constexpr (std::endian::native == std::endian::little) {
            if (!out.empty()) std::memcpy(out.data(), p, out.size_bytes());
        } else {
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = get_le<T>(p + i * sizeof(T));
        }
        return true;
    }
    std::string string32() { return std::string(bytes(u32())); }
    std::string string64() {
        const std::uint64_t n = u64();
        if (n > remaining()) {
            take(remaining() + 1);
            return {};
        }
        return std::string(bytes(static_cast<std::size_t>(n)));
    }

    [[nodiscard]] bool failed() const { return failed_; }
    [[nodiscard]] std::size_t remaining() const { return data_.size() - pos_; }
    // Every byte read, none past the end.
    [[nodiscard]] bool done() const { return !failed_ && pos_ == data_.size(); }

private:
    bool take(std::size_t n) {
        if (failed_ || n > data_.size() - pos_) {
            failed_ = true;
            return false;
        }
        pos_ += n;
        return true;
    }

    std::string_view data_;
    std::size_t pos_ = 0;
    bool failed_ = false;
};

inline constexpr std::size_t kSealBytes = 8;

// Appends the XXH64 of `record` (as ByteWriter::seal).
void seal(std::string& record);

// The record without its trailer, once the trailer matches: Corruption
// "truncated" when shorter than a trailer, ChecksumMismatch "checksum mismatch
// (stored 0x..., computed 0x...)" otherwise. Callers add what the record is.
[[nodiscard]] Result<std::string_view> unseal(std::string_view record);
[[nodiscard]] Result<std::span<const std::uint8_t>> unseal(std::span<const std::uint8_t> record);

// "0x0123456789abcdef": checksums in messages.
[[nodiscard]] std::string hex64(std::uint64_t value);

}  // namespace tbf
