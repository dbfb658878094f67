// A UCI move on a position: "FEN<TAB>move". Under every variant where rules/
// accepts the FEN, parse_uci must accept exactly the text of a legal move
// (nothing else: no case folding, no trailing bytes), Position::after must
// give a position that reads back from its FEN, and the verifier, given the
// same FEN, must find the same move legal or not and reach the same child.

#include <string>

#include "fuzz_chess.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/verify/board.hpp"

namespace {

namespace verify = tbf::verify;

void check(std::string_view fen_text, std::string_view move_text, tbf::VariantId variant) {
    auto pos = tbf::parse_fen(fen_text, variant);
    if (!pos.ok()) return;
    const auto context = [&] {
        return std::string(tbf::variant_name(variant)) + " " + tbf::to_fen(*pos) + " move \"" +
               std::string(move_text) + "\"";
    };
    const auto move = tbf::parse_uci(*pos, variant, move_text);
    bool legal = false;
    tbf::with_variant(variant, [&]<class R>() {
        tbf::MoveList list;
        tbf::generate_legal<R>(*pos, list);
        for (const tbf::Move m : list) legal = legal || tbf::to_uci(m) == move_text;
    });
    FUZZ_CHECK(move.has_value() == legal, context());

    std::string rules_child;
    if (move) {
        FUZZ_CHECK(tbf::to_uci(*move) == move_text, context());
        const tbf::Position child = pos->after(*move);
        rules_child = tbf::to_fen(child);
        auto again = tbf::parse_fen(rules_child, variant);
        FUZZ_CHECK(again.ok() && *again == child, context() + " child " + rules_child);
    }

    // The verifier reads 4 to 6 fields; rules/ takes missing ones as "-".
    std::string verify_fen(fen_text);
    const std::size_t fields = tbf::fuzz::fen_field_count(fen_text);
    if (fields < 4) verify_fen += fields == 2 ? " - -" : " -";
    auto board = verify::parse_fen(tbf::fuzz::verify_variant(variant), verify_fen);
    FUZZ_CHECK(board.ok(), context() + ": verifier rejects the FEN: " + board.status().message());
    const auto child = board->after_uci(move_text);
    FUZZ_CHECK(child.has_value() == move.has_value(), context() + ": legal for one side only");
    if (child) {
        FUZZ_CHECK(child->fen() == rules_child,
                   context() + ": " + child->fen() + " vs " + rules_child);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = tbf::fuzz::as_text(data, size);
    const std::size_t tab = text.find('\t');
    if (tab == std::string_view::npos) return 0;
    for (const tbf::VariantId variant : tbf::fuzz::kVariants) {
        check(text.substr(0, tab), text.substr(tab + 1), variant);
    }
    return 0;
}
