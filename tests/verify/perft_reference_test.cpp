// Every row of the reference perft tables (tests/reference/perft), counted
// with the verifier's move generator. Rows above kSlowNodes run in the "slow"
// suite; sanitizer builds skip rows above kSanitizedNodes.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "tbforge/verify/board.hpp"
#include "tbforge/verify/perft.hpp"
#include "test_support.hpp"

namespace {

using tbf::verify::Variant;

constexpr std::uint64_t kSlowNodes = 5'000'000;
constexpr std::uint64_t kSanitizedNodes = 200'000;

// Small: only rows up to kSanitizedNodes, for repeating a table under another rule set.
enum class Rows { Small, Fast, Slow };

bool selected(std::uint64_t nodes, Rows rows) {
    if (tbf::test::kSanitized && nodes > kSanitizedNodes) return false;
    switch (rows) {
        case Rows::Small: return nodes <= kSanitizedNodes;
        case Rows::Fast: return nodes <= kSlowNodes;
        case Rows::Slow: return nodes > kSlowNodes;
    }
    return false;
}

// Runs the selected rows of one table; returns how many ran.
int check_table(const std::string& file, Variant variant, Rows rows) {
    const tbf::test::Tsv tsv = tbf::test::read_tsv(tbf::test::reference_path("perft/" + file));
    const std::size_t id_col = tsv.column("id");
    const std::size_t fen_col = tsv.column("fen");
    const std::size_t depth_col = tsv.column("depth");
    const std::size_t nodes_col = tsv.column("nodes");
    int ran = 0;
    for (const auto& row : tsv.rows) {
        const std::uint64_t expected = std::stoull(row[nodes_col]);
        if (!selected(expected, rows)) continue;
        const int depth = std::stoi(row[depth_col]);
        INFO(file, " ", row[id_col], " depth ", depth, " (", tbf::verify::variant_name(variant),
             ")");
        const tbf::Result<tbf::verify::Board> root = tbf::verify::parse_fen(variant, row[fen_col]);
        REQUIRE_MESSAGE(root, root.status().message());
        std::uint64_t total = 0;
        for (const auto& entry : tbf::verify::perft_divide(*root, depth)) {
            total += entry.nodes;
        }
        CHECK(total == expected);
        ++ran;
    }
    return ran;
}

}  // namespace

TEST_CASE("reference perft: antichess") {
    CHECK(check_table("antichess.tsv", Variant::Antichess, Rows::Fast) > 40);
}

TEST_CASE("reference perft: the antichess stalemate rules do not change the moves") {
    // Only the value of a stalemate differs between the three rule sets, never
    // the moves, so the same counts hold.
    for (Variant v : {Variant::AntichessFics, Variant::AntichessJoint}) {
        CHECK(check_table("antichess.tsv", v, Rows::Small) > 40);
    }
}

TEST_CASE("reference perft: fourfile") {
    CHECK(check_table("fourfile.tsv", Variant::FourFile, Rows::Fast) > 30);
}

TEST_SUITE("slow") {
    TEST_CASE("reference perft: antichess, deep rows") {
        check_table("antichess.tsv", Variant::Antichess, Rows::Slow);
    }
    TEST_CASE("reference perft: fourfile, deep rows") {
        check_table("fourfile.tsv", Variant::FourFile, Rows::Slow);
    }
}
