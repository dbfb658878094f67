#include "tbforge/rules/san.hpp"

#include "tbforge/rules/movegen.hpp"

namespace tbf {

namespace {

template <Ruleset R>
std::string san_of(const Position& pos, Move move, const MoveList& legal) {
    const Unit unit = pos.unit_on(move.from());
    const UnitType type = unit_type(unit);
    const bool capture = pos.is_capture(move);
    std::string san;
    if (type == UnitType::Pawn) {
        if (capture) san += static_cast<char>('a' + file_of(move.from()));
    } else {
        san += unit_type_char(type);
        // Other units of the same type reaching the same square decide how
        // much of the origin square the reader needs.
        bool ambiguous = false;
        bool same_file = false;
        bool same_rank = false;
        for (Move other : legal) {
            if (other.to() != move.to() || other.from() == move.from()) continue;
            if (pos.unit_on(other.from()) != unit) continue;
            ambiguous = true;
            same_file = same_file || file_of(other.from()) == file_of(move.from());
            same_rank = same_rank || rank_of(other.from()) == rank_of(move.from());
        }
        if (ambiguous && (!same_file || same_rank)) {
            san += static_cast<char>('a' + file_of(move.from()));
        }
        if (same_file) san += static_cast<char>('1' + rank_of(move.from()));
    }
    if (capture) san += 'x';
    san += square_name(move.to());
    if (move.is_promotion()) {
        san += '=';
        san += unit_type_char(move.promotion());
    }
    const Position after = pos.after(move);
    const std::optional<Wdl> end = terminal_value<R>(after);
    if (end && *end != Wdl::Draw) {
        san += '#';
    } else if (in_check<R>(after)) {
        san += '+';
    }
    return san;
}

}  // namespace

std::string to_san(const Position& pos, VariantId variant, Move move) {
    return with_variant(variant, [&]<class R>() {
        MoveList legal;
        generate_legal<R>(pos, legal);
        return san_of<R>(pos, move, legal);
    });
}

}  // namespace tbf
