#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tbforge/base/release.hpp"

TEST_CASE("release_memory: a vector's capacity goes, where assigning {} keeps it") {
    std::vector<std::uint32_t> assigned(1 << 16, 7);
    assigned = {};
    // What release_memory exists for: this library keeps the capacity.
    CHECK(assigned.empty());
    CHECK(assigned.capacity() >= (1u << 16));

    std::vector<std::uint32_t> released(1 << 16, 7);
    tbf::release_memory(released);
    CHECK(released.empty());
    CHECK(released.capacity() == 0);

    std::vector<std::vector<std::uint64_t>> nested(3, std::vector<std::uint64_t>(100));
    tbf::release_memory(nested);
    CHECK(nested.capacity() == 0);
}
