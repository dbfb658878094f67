// The two FEN parsers against each other: rules/ (parse_fen) and the
// verifier's own (verify::parse_fen), written independently from
// docs/ARCHITECTURE.md section 3. Under every variant they must agree on
// accepting the text and, when both accept, on the position: every square,
// the side to move, the en-passant right, and then on the legal moves and
// the game end. Castling rights and move counters are kept by neither.
//
// The documented differences (docs/fuzzing.md, tested in
// tests/e2e/fen_differential_test.cpp) are allowed for and nothing else:
// - rules/ accepts FENs of 2 or 3 fields (the missing ones default to "-"),
//   the verifier needs 4: the verifier must reject such a FEN and accept it,
//   equally, with the missing fields added;
// - the verifier keeps a possible en-passant square that no pawn can use
//   (its strategy check needs to see it), rules/ drops it: rules/'s square
//   must be the verifier's when some legal move takes en passant there, and
//   none otherwise.

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_chess.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/verify/board.hpp"

namespace {

namespace verify = tbf::verify;

verify::Unit verify_unit(tbf::Unit u) {
    if (u == tbf::Unit::None) return {};
    // rules' types run King..Pawn from 0, the verifier's from 1 (0 is None).
    const auto piece = static_cast<verify::Piece>(static_cast<int>(tbf::unit_type(u)) + 1);
    return {piece,
            tbf::unit_color(u) == tbf::Color::White ? verify::Color::White : verify::Color::Black};
}

// The en-passant square of the board as rules/ keeps it: only where a legal
// move takes en passant.
int usable_ep_square(const verify::Board& board) {
    const int ep = board.ep_square();
    if (ep == verify::kNoSquare) return ep;
    for (const verify::Move& m : board.legal_moves()) {
        if (m.to == ep && board.unit_on(m.from).piece == verify::Piece::Pawn &&
            verify::file_of(m.from) != verify::file_of(m.to)) {
            return ep;
        }
    }
    return verify::kNoSquare;
}

const char* outcome_text(std::optional<tbf::Wdl> w) {
    if (!w) return "not-terminal";
    return *w == tbf::Wdl::Win ? "win" : (*w == tbf::Wdl::Loss ? "loss" : "draw");
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += w + " ";
    return out;
}

void compare(std::string_view text, tbf::VariantId variant) {
    const std::size_t fields = tbf::fuzz::fen_field_count(text);
    auto ours = tbf::parse_fen(text, variant);
    auto theirs = verify::parse_fen(tbf::fuzz::verify_variant(variant), text);
    // Built only for a failure message.
    const auto context = [&, verify_first =
                                 theirs.ok() ? std::string("accepts") : theirs.status().message()] {
        return std::string(tbf::variant_name(variant)) + " FEN \"" + std::string(text) +
               "\"\n  rules:  " + (ours.ok() ? "accepts" : ours.status().message()) +
               "\n  verify: " + verify_first;
    };
    if (fields == 2 || fields == 3) {
        FUZZ_CHECK(!theirs.ok(), context());
        // The same FEN with the fields rules/ takes as "-" written out.
        std::string completed(text);
        completed += fields == 2 ? " - -" : " -";
        theirs = verify::parse_fen(tbf::fuzz::verify_variant(variant), completed);
    }
    FUZZ_CHECK(ours.ok() == theirs.ok(), context() + "\n  verify (fields completed): " +
                                             (theirs.ok() ? "accepts" : theirs.status().message()));
    if (!ours.ok()) return;

    const tbf::Position& pos = *ours;
    const verify::Board& board = *theirs;
    for (int sq = 0; sq < 64; ++sq) {
        FUZZ_CHECK(verify_unit(pos.unit_on(static_cast<tbf::Square>(sq))) == board.unit_on(sq),
                   context() + "\n  square " + verify::square_name(sq) + ": " + tbf::to_fen(pos) +
                       " vs " + board.fen());
    }
    FUZZ_CHECK(
        (pos.side_to_move() == tbf::Color::White) == (board.side_to_move() == verify::Color::White),
        context());
    const int rules_ep = pos.ep_square() == tbf::kNoSquare ? verify::kNoSquare : pos.ep_square();
    FUZZ_CHECK(rules_ep == usable_ep_square(board),
               context() + "\n  en passant: " + tbf::to_fen(pos) + " vs " + board.fen());

    std::vector<std::string> rules_moves;
    const auto end = tbf::with_variant(variant, [&]<class R>() {
        tbf::MoveList list;
        tbf::generate_legal<R>(pos, list);
        for (const tbf::Move m : list) rules_moves.push_back(tbf::to_uci(m));
        return tbf::terminal_value<R>(pos, !list.empty());
    });
    std::sort(rules_moves.begin(), rules_moves.end());
    const std::vector<std::string> verify_moves = board.legal_moves_uci();
    FUZZ_CHECK(rules_moves == verify_moves, context() + "\n  rules moves:  " + joined(rules_moves) +
                                                "\n  verify moves: " + joined(verify_moves));
    FUZZ_CHECK(std::string_view(outcome_text(end)) == verify::outcome_name(board.outcome()),
               context() + "\n  game end: " + outcome_text(end) + " vs " +
                   std::string(verify::outcome_name(board.outcome())));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = tbf::fuzz::as_text(data, size);
    for (const tbf::VariantId variant : tbf::fuzz::kVariants) compare(text, variant);
    return 0;
}
