#pragma once
// Checks of compact value encodings shared by the probe and generator tests.
// The executable must link tbf::probe.

#include <doctest/doctest.h>

#include <cstdint>

#include "tbforge/probe/tablebase.hpp"

namespace tbf::test {

// How many slots off the table's DTC side store a code other than 0: none
// in a wdl-dtc/4 table that stores its DTC side alone.
inline std::uint64_t codes_off_dtc_side(const probe::Table& table) {
    std::uint64_t stored = 0;
    for (std::uint64_t i = 0; i < table.indexer().size(); ++i) {
        auto code = table.code(~table.dtc_side(), i);
        REQUIRE(code.ok());
        stored += *code != 0;
    }
    return stored;
}

}  // namespace tbf::test
