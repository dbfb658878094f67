#pragma once
// What the fuzz targets share (docs/fuzzing.md): a check that stops the run
// with a message, so that libFuzzer saves the input and CI prints it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

namespace tbf::fuzz {

// Stops the run: the input broke a property the code promises.
[[noreturn]] inline void fail(const char* file, int line, const char* condition,
                              const std::string& detail) {
    std::fprintf(stderr, "\nfuzz check failed at %s:%d: %s\n%s\n", file, line, condition,
                 detail.c_str());
    std::abort();
}

// FUZZ_CHECK(condition, detail): `detail` (a std::string expression) is only
// built when the check fails.
#define FUZZ_CHECK(condition, detail)                                                  \
    do {                                                                               \
        if (!(condition)) ::tbf::fuzz::fail(__FILE__, __LINE__, #condition, (detail)); \
    } while (0)

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

inline std::span<const std::uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace tbf::fuzz
