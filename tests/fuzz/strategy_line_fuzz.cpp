// One line of a strategy text file as strategy-import reads it
// (gen/src/strategy_line.hpp), under every variant and strategy side. A line
// is skipped exactly when it is blank or a comment; an entry is a position
// with the strategy side to move and a legal move there; and the line
// strategy-export would write for that entry reads back as the same entry.

#include <string>

#include "fuzz_chess.hpp"
#include "strategy_line.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line = tbf::fuzz::as_text(data, size);
    const std::size_t first = line.find_first_not_of(" \t\r");
    const bool skipped = first == std::string_view::npos || line[first] == '#';
    for (const tbf::VariantId variant : tbf::fuzz::kVariants) {
        for (const tbf::Color side : {tbf::Color::White, tbf::Color::Black}) {
            const auto context = [&] {
                return std::string(tbf::variant_name(variant)) +
                       (side == tbf::Color::White ? " white" : " black") + " line \"" +
                       std::string(line) + "\"";
            };
            auto parsed = tbf::gen::parse_strategy_line(line, variant, side);
            if (!parsed.ok()) {
                FUZZ_CHECK(!skipped && parsed.status().code() == tbf::StatusCode::InvalidArgument &&
                               !parsed.status().message().empty(),
                           context() + ": " + parsed.status().to_string());
                continue;
            }
            FUZZ_CHECK(parsed->has_value() == !skipped, context());
            if (!*parsed) continue;
            const tbf::Position& pos = (*parsed)->position;
            const tbf::Move move = (*parsed)->move;
            FUZZ_CHECK(pos.side_to_move() == side, context());
            bool legal = false;
            tbf::with_variant(variant, [&]<class R>() {
                tbf::MoveList list;
                tbf::generate_legal<R>(pos, list);
                for (const tbf::Move m : list) legal = legal || m == move;
            });
            FUZZ_CHECK(legal, context());

            const std::string exported = tbf::to_fen(pos) + "\t" + tbf::to_uci(move);
            auto again = tbf::gen::parse_strategy_line(exported, variant, side);
            FUZZ_CHECK(again.ok() && *again && (*again)->position == pos && (*again)->move == move,
                       context() + ": exported as \"" + exported + "\"");
        }
    }
    return 0;
}
