#pragma once
// The verifier's board of a FEN, failing the test case on a parse error.

#include <doctest/doctest.h>

#include <string>

#include "tbforge/verify/board.hpp"

namespace tbf::test {

inline verify::Board board(verify::Variant v, const std::string& fen) {
    const Result<verify::Board> r = verify::parse_fen(v, fen);
    REQUIRE_MESSAGE(r, r.status().message());
    return *r;
}

}  // namespace tbf::test
