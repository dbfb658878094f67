// FEN -> position, rules/ (parse_fen), under every variant. Besides never
// crashing: a rejected FEN gets an InvalidArgument message; an accepted one is
// a position as docs/ARCHITECTURE.md section 3 defines it (units on the
// variant's board, at most 16 a side, no pawn on rank 1 or 8, an en-passant
// square only where a pawn of the side to move can take) that prints back to
// a FEN of the same position, and whose legal moves, colour flip and children
// are positions of the same kind.

#include <string>

#include "fuzz_chess.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

namespace {

using tbf::Position;
using tbf::VariantId;

// The position parsed back from its own FEN.
void check_round_trip(const Position& pos, VariantId variant, const std::string& context) {
    const std::string fen = tbf::to_fen(pos);
    auto again = tbf::parse_fen(fen, variant);
    FUZZ_CHECK(again.ok(), context + ": own FEN " + fen + " rejected: " + again.status().message());
    FUZZ_CHECK(*again == pos,
               context + ": own FEN " + fen + " reads back as " + tbf::to_fen(*again));
}

void check_shape(const Position& pos, VariantId variant, const std::string& fen) {
    const tbf::VariantTraits& traits = tbf::variant_traits(variant);
    FUZZ_CHECK(pos.occupied() != 0, fen);
    FUZZ_CHECK((pos.occupied() & ~traits.board) == 0, fen);
    FUZZ_CHECK(pos.unit_count(tbf::Color::White) <= tbf::kMaxUnitsPerSide, fen);
    FUZZ_CHECK(pos.unit_count(tbf::Color::Black) <= tbf::kMaxUnitsPerSide, fen);
    FUZZ_CHECK((pos.units(tbf::UnitType::Pawn) & (tbf::rank_bb(0) | tbf::rank_bb(7))) == 0, fen);
    const tbf::Square ep = pos.ep_square();
    if (ep != tbf::kNoSquare) {
        const tbf::Color us = pos.side_to_move();
        FUZZ_CHECK(ep < 64 && tbf::rank_of(ep) == (us == tbf::Color::White ? 5 : 2), fen);
        FUZZ_CHECK(traits.pawns_capture &&
                       (tbf::pawn_attacks(~us, ep) & pos.units(us, tbf::UnitType::Pawn)),
                   fen + ": en-passant square no pawn can use");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = tbf::fuzz::as_text(data, size);
    for (const VariantId variant : tbf::fuzz::kVariants) {
        auto parsed = tbf::parse_fen(text, variant);
        if (!parsed.ok()) {
            FUZZ_CHECK(parsed.status().code() == tbf::StatusCode::InvalidArgument &&
                           !parsed.status().message().empty(),
                       parsed.status().to_string());
            continue;
        }
        const Position& pos = *parsed;
        const std::string fen = std::string(tbf::variant_name(variant)) + " " + tbf::to_fen(pos);
        check_shape(pos, variant, fen);
        check_round_trip(pos, variant, fen);

        const Position flipped = pos.color_flipped();
        FUZZ_CHECK(flipped.color_flipped() == pos, fen);
        check_round_trip(flipped, variant, fen + " colour-flipped");

        tbf::with_variant(variant, [&]<class R>() {
            tbf::MoveList moves;
            tbf::generate_legal<R>(pos, moves);
            FUZZ_CHECK(moves.size() < tbf::MoveList::kCapacity, fen);
            const auto end = tbf::terminal_value<R>(pos, !moves.empty());
            FUZZ_CHECK(moves.empty() == end.has_value(), fen);
            for (const tbf::Move m : moves) {
                const std::string uci = tbf::to_uci(m);
                const auto again = tbf::parse_uci(pos, variant, uci);
                FUZZ_CHECK(again && *again == m, fen + " move " + uci);
                const Position child = pos.after(m);
                check_shape(child, variant, fen + " after " + uci);
                check_round_trip(child, variant, fen + " after " + uci);
            }
        });
    }
    return 0;
}
