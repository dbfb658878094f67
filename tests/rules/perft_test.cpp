// Perft counts against tests/reference/perft (each row agreed by three or
// more independent engines).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/perft.hpp"
#include "test_support.hpp"

using namespace tbf;

namespace {

constexpr std::uint64_t kUnitNodeLimit = 6'000'000;
constexpr std::uint64_t kSanitizedNodeLimit = 200'000;

// Runs rows whose node count lies in [min_nodes, max_nodes].
void check_reference(const std::string& file, VariantId variant, std::uint64_t min_nodes,
                     std::uint64_t max_nodes) {
    const auto tsv = test::read_tsv(test::reference_path(file));
    const auto fen_col = tsv.column("fen");
    const auto depth_col = tsv.column("depth");
    const auto nodes_col = tsv.column("nodes");
    int checked = 0;
    for (const auto& row : tsv.rows) {
        const std::uint64_t expected = std::stoull(row[nodes_col]);
        if (expected < min_nodes || expected > max_nodes) continue;
        auto pos = parse_fen(row[fen_col], variant);
        REQUIRE_MESSAGE(pos.ok(), row[fen_col] << ": " << (pos.ok() ? "" : pos.status().message()));
        const int depth = std::stoi(row[depth_col]);
        INFO(row[0] << " " << row[fen_col] << " depth " << depth);
        CHECK(perft(*pos, variant, depth) == expected);
        ++checked;
    }
    MESSAGE(file << ": " << checked << " rows checked");
}

std::uint64_t unit_limit() { return test::kSanitized ? kSanitizedNodeLimit : kUnitNodeLimit; }

}  // namespace

TEST_CASE("antichess perft matches reference engines") {
    check_reference("perft/antichess.tsv", VariantId::Antichess, 0, unit_limit());
}

TEST_CASE("fourfile perft matches reference engines") {
    check_reference("perft/fourfile.tsv", VariantId::FourFile, 0, unit_limit());
}

TEST_SUITE("slow") {
    TEST_CASE("deep antichess perft matches reference engines") {
        check_reference("perft/antichess.tsv", VariantId::Antichess, unit_limit() + 1, UINT64_MAX);
    }
    TEST_CASE("deep fourfile perft matches reference engines") {
        check_reference("perft/fourfile.tsv", VariantId::FourFile, unit_limit() + 1, UINT64_MAX);
    }
}

TEST_CASE("the antichess rule sets share move generation") {
    // Stalemate rules change values, never moves.
    const auto pos = parse_fen("8/8/8/8/8/p1p1p1p1/P1P1P1P1/7K w - - 0 1", VariantId::Antichess);
    REQUIRE(pos.ok());
    for (int depth = 1; depth <= 8; ++depth) {
        const auto n = perft(*pos, VariantId::Antichess, depth);
        CHECK(perft(*pos, VariantId::AntichessFics, depth) == n);
        CHECK(perft(*pos, VariantId::AntichessJoint, depth) == n);
    }
}
