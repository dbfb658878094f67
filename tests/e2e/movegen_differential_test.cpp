// rules/ (bitboards) against verify/ (mailbox), written independently from
// docs/ARCHITECTURE.md section 3: on random playouts and random placements, every variant, both
// must accept the same FENs, generate the same legal moves, reach the same
// children and report the same game end.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/verify/board.hpp"
#include "test_support.hpp"

namespace {

int scale(int n) { return tbf::test::kSanitized ? n / 10 : n; }

tbf::verify::Variant verify_variant(tbf::VariantId id) {
    switch (id) {
        case tbf::VariantId::Antichess: return tbf::verify::Variant::Antichess;
        case tbf::VariantId::AntichessFics: return tbf::verify::Variant::AntichessFics;
        case tbf::VariantId::AntichessJoint: return tbf::verify::Variant::AntichessJoint;
        case tbf::VariantId::FourFile: break;
    }
    return tbf::verify::Variant::FourFile;
}

const char* outcome_text(std::optional<tbf::Wdl> w) {
    if (!w) return "not-terminal";
    return *w == tbf::Wdl::Win ? "win" : (*w == tbf::Wdl::Loss ? "loss" : "draw");
}

struct Differ {
    tbf::VariantId variant;
    std::uint64_t compared = 0;

    // Compares one position given as FEN; returns the rules position if both
    // accept it.
    std::optional<tbf::Position> compare(const std::string& fen) {
        auto ours = tbf::parse_fen(fen, variant);
        auto theirs = tbf::verify::parse_fen(verify_variant(variant), fen);
        INFO(fen << "  rules: " << (ours.ok() ? "ok" : ours.status().message())
                 << "  verify: " << (theirs ? "ok" : theirs.status().message()));
        REQUIRE(ours.ok() == static_cast<bool>(theirs));
        if (!ours.ok()) return std::nullopt;
        ++compared;
        REQUIRE(tbf::to_fen(*ours) == theirs->fen());
        std::vector<std::string> rules_moves;
        auto outcome = tbf::with_variant(variant, [&]<class R>() {
            tbf::MoveList list;
            tbf::generate_legal<R>(*ours, list);
            for (tbf::Move m : list) rules_moves.push_back(tbf::to_uci(m));
            return tbf::terminal_value<R>(*ours, !list.empty());
        });
        std::sort(rules_moves.begin(), rules_moves.end());
        const auto verify_moves = theirs->legal_moves_uci();
        if (rules_moves != verify_moves) {
            std::string a, b;
            for (const auto& m : rules_moves) a += m + " ";
            for (const auto& m : verify_moves) b += m + " ";
            FAIL("moves differ\n  rules:  " << a << "\n  verify: " << b);
        }
        REQUIRE(std::string(outcome_text(outcome)) ==
                std::string(tbf::verify::outcome_name(theirs->outcome())));
        return *ours;
    }
};

const char* start_fen(tbf::VariantId v) {
    return v == tbf::VariantId::FourFile ? "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1"
                                         : "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
}

void random_playouts(tbf::VariantId variant, int games, std::uint32_t seed) {
    std::mt19937 rng(seed);
    Differ differ{variant};
    for (int game = 0; game < games; ++game) {
        std::string fen = start_fen(variant);
        for (int ply = 0; ply < 300; ++ply) {
            auto pos = differ.compare(fen);
            REQUIRE(pos.has_value());
            tbf::MoveList list;
            tbf::with_variant(variant, [&]<class R>() { tbf::generate_legal<R>(*pos, list); });
            if (list.empty()) break;
            const tbf::Move m = list[rng() % list.size()];
            const std::string next = tbf::to_fen(pos->after(m));
            // The verifier's own child must be the same position.
            auto theirs = tbf::verify::parse_fen(verify_variant(variant), fen);
            auto child = theirs->after_uci(tbf::to_uci(m));
            REQUIRE(child.has_value());
            REQUIRE(child->fen() == next);
            fen = next;
        }
    }
    MESSAGE(tbf::variant_name(variant) << ": " << differ.compared << " playout positions compared");
}

// Random placements of 2-6 units; Four File mostly on its own squares with
// kings on the e-file, sometimes anywhere (both must then reject alike).
void random_placements(tbf::VariantId variant, int count, std::uint32_t seed) {
    std::mt19937 rng(seed);
    Differ differ{variant};
    int accepted = 0;
    const bool four_file = variant == tbf::VariantId::FourFile;
    for (int i = 0; i < count; ++i) {
        tbf::Position pos;
        const bool anywhere = rng() % 10 == 0;
        auto random_square = [&](bool king) {
            for (;;) {
                auto s = static_cast<tbf::Square>(rng() % 64);
                if (four_file && !anywhere) {
                    if (king) s = tbf::make_square(4, static_cast<int>(rng() % 8));
                    else if (!(tbf::bit(s) & tbf::kFourFileSquares)) continue;
                }
                if (pos.unit_on(s) == tbf::Unit::None) return s;
            }
        };
        const int units = 2 + static_cast<int>(rng() % 5);
        int placed = 0;
        if (four_file) {
            pos.put(random_square(true), tbf::make_unit(tbf::Color::White, tbf::UnitType::King));
            pos.put(random_square(true), tbf::make_unit(tbf::Color::Black, tbf::UnitType::King));
            placed = 2;
        }
        for (; placed < units; ++placed) {
            const auto color = static_cast<tbf::Color>(rng() % 2);
            auto type = static_cast<tbf::UnitType>(rng() % 6);
            if (four_file && type == tbf::UnitType::King) type = tbf::UnitType::Queen;
            tbf::Square s = random_square(false);
            // Mostly keep pawns off the back ranks, as tables do.
            if (type == tbf::UnitType::Pawn && rng() % 8 != 0) {
                while (tbf::rank_of(s) == 0 || tbf::rank_of(s) == 7) s = random_square(false);
            }
            pos.put(s, tbf::make_unit(color, type));
        }
        pos.set_side_to_move(static_cast<tbf::Color>(rng() % 2));
        if (differ.compare(tbf::to_fen(pos))) ++accepted;
    }
    MESSAGE(tbf::variant_name(variant) << ": " << accepted << " of " << count
                                       << " random placements accepted and compared");
    CHECK(accepted > count / 2);
}

}  // namespace

TEST_CASE_TEMPLATE("rules and verify agree on random playouts", R, tbf::Antichess, tbf::AntichessFics,
                   tbf::AntichessJoint, tbf::FourFile) {
    random_playouts(R::kId, scale(300), 1234);
}

TEST_CASE_TEMPLATE("rules and verify agree on random placements", R, tbf::Antichess,
                   tbf::AntichessFics, tbf::AntichessJoint, tbf::FourFile) {
    random_placements(R::kId, scale(25000), 99);
}

TEST_CASE("rules and verify agree on en-passant positions") {
    // Double pushes next to enemy pawns, from a crafted start.
    Differ differ{tbf::VariantId::Antichess};
    std::mt19937 rng(5);
    for (int i = 0; i < scale(3000); ++i) {
        tbf::Position pos;
        const int file = static_cast<int>(rng() % 8);
        const bool white = rng() % 2;
        const int rank = white ? 3 : 4;  // the pushed pawn's rank
        pos.put(tbf::make_square(file, rank),
                tbf::make_unit(white ? tbf::Color::White : tbf::Color::Black, tbf::UnitType::Pawn));
        const int side_file = file + ((rng() % 2) ? 1 : -1);
        if (side_file < 0 || side_file > 7) continue;
        pos.put(tbf::make_square(side_file, rank),
                tbf::make_unit(white ? tbf::Color::Black : tbf::Color::White, tbf::UnitType::Pawn));
        for (int extra = 0; extra < 3; ++extra) {
            const auto s = static_cast<tbf::Square>(8 + rng() % 48);
            if (pos.unit_on(s) != tbf::Unit::None) continue;
            pos.put(s, tbf::make_unit(static_cast<tbf::Color>(rng() % 2), static_cast<tbf::UnitType>(rng() % 6)));
        }
        std::string fen = tbf::to_fen(pos);
        const std::string ep = tbf::square_name(tbf::make_square(file, white ? 2 : 5));
        fen.replace(fen.find(" w - - "), 7, std::string(white ? " b - " : " w - ") + ep + " ");
        differ.compare(fen);
    }
    CHECK(differ.compared > 100);
}
