// FEN -> board, the verifier's own parser (verify::parse_fen), under every
// variant. Besides never crashing: a rejected FEN gets a one-line
// InvalidArgument message naming the FEN; an accepted one is a board that
// prints back to a FEN of the same board, whose legal moves lead to boards
// that print and read back alike, and whose outcome agrees with its moves.

#include <string>

#include "fuzz_chess.hpp"
#include "tbforge/verify/board.hpp"

namespace {

namespace verify = tbf::verify;

void check_round_trip(const verify::Board& board, const std::string& context) {
    const std::string fen = board.fen();
    auto again = verify::parse_fen(board.variant(), fen);
    FUZZ_CHECK(again.ok(), context + ": own FEN " + fen + " rejected: " + again.status().message());
    FUZZ_CHECK(*again == board, context + ": own FEN " + fen + " reads back as " + again->fen());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = tbf::fuzz::as_text(data, size);
    for (const tbf::VariantId id : tbf::fuzz::kVariants) {
        const verify::Variant variant = tbf::fuzz::verify_variant(id);
        auto parsed = verify::parse_fen(variant, text);
        if (!parsed.ok()) {
            FUZZ_CHECK(parsed.status().code() == tbf::StatusCode::InvalidArgument &&
                           !parsed.status().message().empty(),
                       parsed.status().to_string());
            continue;
        }
        const verify::Board& board = *parsed;
        const std::string fen = std::string(verify::variant_name(variant)) + " " + board.fen();
        FUZZ_CHECK(board.unit_count(verify::Color::White) <= 16 &&
                       board.unit_count(verify::Color::Black) <= 16,
                   fen);
        check_round_trip(board, fen);

        const auto moves = board.legal_moves();
        const verify::Outcome outcome = board.outcome();
        FUZZ_CHECK(moves.empty() == (outcome != verify::Outcome::NotTerminal), fen);
        for (const verify::Move& m : moves) {
            const std::string uci = verify::to_uci(m);
            const auto child = board.after_uci(uci);
            FUZZ_CHECK(child && *child == board.after(m), fen + " move " + uci);
            check_round_trip(*child, fen + " after " + uci);
        }
    }
    return 0;
}
