#pragma once
// Byte-level helpers for records and keys: little-endian integers inside
// values, big-endian integers in keys (so that key order is numeric order),
// a bounds-checked reader for strict parsing, and UTF-8 validation.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tbf::storage::detail {

template <class T>
void put_le(std::string& out, T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        out.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i)));
    }
}

inline void put_be64(std::string& out, std::uint64_t value) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(value >> (8 * i)));
}

template <class T>
T get_le(const char* p) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    }
    return static_cast<T>(v);
}

inline std::uint64_t get_be64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

// A u32 length followed by the bytes.
inline void put_string(std::string& out, std::string_view s) {
    put_le<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
    out.append(s);
}

[[nodiscard]] bool is_valid_utf8(std::string_view s);

// Reads fields front to back; any read past the end sets failed() and returns
// zero / empty, so a parser can check once at the end.
class ByteReader {
public:
    explicit ByteReader(std::string_view data) : data_(data) {}

    template <class T>
    T le() {
        if (!take(sizeof(T))) return T{};
        return get_le<T>(data_.data() + pos_ - sizeof(T));
    }

    std::string_view bytes(std::size_t n) {
        if (!take(n)) return {};
        return data_.substr(pos_ - n, n);
    }

    std::string string() {
        const auto n = le<std::uint32_t>();
        return std::string(bytes(n));
    }

    [[nodiscard]] bool failed() const { return failed_; }
    [[nodiscard]] std::size_t remaining() const { return data_.size() - pos_; }

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

}  // namespace tbf::storage::detail
