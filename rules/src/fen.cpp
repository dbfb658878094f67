#include "tbforge/rules/fen.hpp"

#include <vector>

#include "tbforge/rules/movegen.hpp"

namespace tbf {

namespace {

std::vector<std::string_view> split_fields(std::string_view text) {
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        const std::size_t start = i;
        while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
        if (i > start) fields.push_back(text.substr(start, i - start));
    }
    return fields;
}

const char* color_name(Color c) { return c == Color::White ? "White" : "Black"; }

// A move counter: 1 to 9 decimal digits, at least `minimum` (the full-move
// number starts at 1). Not kept; the verifier reads counters alike.
bool parse_counter(std::string_view field, unsigned minimum) {
    if (field.empty() || field.size() > 9) return false;
    unsigned value = 0;
    for (char c : field) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value >= minimum;
}

bool valid_castling(std::string_view field) {
    if (field == "-") return true;
    for (char c : field) {
        const bool ok = c == 'K' || c == 'Q' || c == 'k' || c == 'q' || (c >= 'A' && c <= 'H') ||
                        (c >= 'a' && c <= 'h');
        if (!ok) return false;
    }
    return !field.empty();
}

// "files a, c, e, g", "the e-file" or "the squares a1 c1 ..." for messages.
std::string squares_text(Bitboard squares) {
    std::string files;
    int whole = 0;
    for (int f = 0; f < 8; ++f) {
        if ((squares & file_bb(f)) == 0) continue;
        if ((squares & file_bb(f)) != file_bb(f)) whole = -1;
        if (whole < 0) break;
        files += files.empty() ? "" : ", ";
        files += static_cast<char>('a' + f);
        ++whole;
    }
    if (whole == 1) return "the " + files + "-file";
    if (whole > 1) return "files " + files;
    std::string out = "the squares";
    for (Bitboard b = squares; b;) {
        out += ' ';
        out += square_name(pop_lsb(b));
    }
    return out;
}

Status fen_error(std::string message) { return invalid_argument("bad FEN: " + std::move(message)); }

// Fills pos from the board field, or returns an error message.
std::string parse_board(std::string_view board, Position& pos) {
    int rank = 7;
    int file = 0;
    int ranks_seen = 1;
    for (char c : board) {
        if (c == '/') {
            if (file != 8) {
                return "rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
                       " squares, expected 8";
            }
            if (rank == 0) return "board has more than 8 ranks";
            --rank;
            file = 0;
            ++ranks_seen;
        } else if (c >= '1' && c <= '8') {
            file += c - '0';
            if (file > 8) return "rank " + std::to_string(rank + 1) + " has more than 8 squares";
        } else {
            Unit u{};
            if (!unit_from_char(c, u)) {
                return std::string("bad piece letter '") + c + "' in rank " + std::to_string(rank + 1);
            }
            if (file > 7) return "rank " + std::to_string(rank + 1) + " has more than 8 squares";
            pos.put(make_square(file, rank), u);
            ++file;
        }
    }
    if (file != 8) {
        return "rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
               " squares, expected 8";
    }
    if (ranks_seen != 8) return "board has " + std::to_string(ranks_seen) + " ranks, expected 8";
    return {};
}

std::string check_units(const Position& pos, VariantId variant) {
    Bitboard pawns_on_edge = pos.units(UnitType::Pawn) & (rank_bb(0) | rank_bb(7));
    if (pawns_on_edge) {
        const Square s = lsb(pawns_on_edge);
        return "pawn on rank " + std::to_string(rank_of(s) + 1) + " (" + square_name(s) + ")";
    }
    for (Color c : {Color::White, Color::Black}) {
        if (pos.unit_count(c) > kMaxUnitsPerSide) {
            return std::string(color_name(c)) + " has " + std::to_string(pos.unit_count(c)) +
                   " units, at most 16 allowed";
        }
    }
    const VariantTraits& rules = variant_traits(variant);
    if (const Bitboard off = pos.occupied() & ~rules.board) {
        const Square s = lsb(off);
        return std::string("unit ") + unit_char(pos.unit_on(s)) + " on " + square_name(s) + ": " +
               std::string(rules.name) + " uses only " + squares_text(rules.board);
    }
    for (Color c : {Color::White, Color::Black}) {
        const Bitboard kings = pos.units(c, UnitType::King);
        if (rules.royal_king && popcount(kings) != 1) {
            return std::string(color_name(c)) + " has " + std::to_string(popcount(kings)) +
                   " kings, " + std::string(rules.name) + " needs exactly one";
        }
        if (const Bitboard off = kings & ~rules.king_squares) {
            return std::string(color_name(c)) + " king on " + square_name(lsb(off)) + ": " +
                   std::string(rules.name) + " kings stay on " + squares_text(rules.king_squares);
        }
    }
    if (pos.occupied() == 0) return "no units on the board";
    return {};
}

}  // namespace

Result<Position> parse_fen(std::string_view fen, VariantId variant) {
    const auto fields = split_fields(fen);
    if (fields.size() < 2 || fields.size() > 6) {
        return fen_error("expected 2 to 6 fields, got " + std::to_string(fields.size()));
    }
    Position pos;
    if (auto message = parse_board(fields[0], pos); !message.empty()) return fen_error(message);

    if (fields[1] == "w") {
        pos.set_side_to_move(Color::White);
    } else if (fields[1] == "b") {
        pos.set_side_to_move(Color::Black);
    } else {
        return fen_error("side to move must be 'w' or 'b', got '" + std::string(fields[1]) + "'");
    }
    if (fields.size() > 2 && !valid_castling(fields[2])) {
        return fen_error("bad castling field '" + std::string(fields[2]) + "'");
    }
    if (fields.size() > 4 && !parse_counter(fields[4], 0)) {
        return fen_error("bad halfmove clock '" + std::string(fields[4]) + "'");
    }
    if (fields.size() > 5 && !parse_counter(fields[5], 1)) {
        return fen_error("bad fullmove number '" + std::string(fields[5]) + "'");
    }
    if (auto message = check_units(pos, variant); !message.empty()) return fen_error(message);

    if (fields.size() > 3 && fields[3] != "-") {
        const std::string_view ep = fields[3];
        if (ep.size() != 2 || ep[0] < 'a' || ep[0] > 'h' || ep[1] < '1' || ep[1] > '8') {
            return fen_error("bad en-passant field '" + std::string(ep) + "'");
        }
        const Square s = make_square(ep[0] - 'a', ep[1] - '1');
        const Color us = pos.side_to_move();
        const int expected_rank = us == Color::White ? 5 : 2;
        const int dir = us == Color::White ? 8 : -8;
        // The square a pawn of the other side just skipped: empty, with that pawn
        // in front of it and its start square behind it empty.
        const auto pawn_square = static_cast<Square>(s - dir);
        const auto start_square = static_cast<Square>(s + dir);
        const bool possible = rank_of(s) == expected_rank && pos.unit_on(s) == Unit::None &&
                              pos.unit_on(start_square) == Unit::None &&
                              pos.unit_on(pawn_square) == make_unit(~us, UnitType::Pawn);
        if (!possible) {
            return fen_error("impossible en-passant square " + std::string(ep) + " with " +
                             (us == Color::White ? "white" : "black") + " to move");
        }
        // Recorded only where a pawn of the side to move can take en passant.
        const VariantTraits& rules = variant_traits(variant);
        const Bitboard takers = pawn_attacks(~us, s) & pos.units(us, UnitType::Pawn) & rules.board;
        if (rules.pawns_capture && takers != 0) {
            pos.set_ep_square(s);
        }
    }
    if (side_not_to_move_in_check(variant, pos)) {
        return fen_error(std::string("side not to move (") + color_name(~pos.side_to_move()) +
                         ") is in check");
    }
    return pos;
}

std::string to_fen(const Position& pos) {
    std::string out;
    for (int rank = 7; rank >= 0; --rank) {
        int empty = 0;
        for (int file = 0; file < 8; ++file) {
            const Unit u = pos.unit_on(make_square(file, rank));
            if (u == Unit::None) {
                ++empty;
                continue;
            }
            if (empty) out += static_cast<char>('0' + empty);
            empty = 0;
            out += unit_char(u);
        }
        if (empty) out += static_cast<char>('0' + empty);
        if (rank) out += '/';
    }
    out += pos.side_to_move() == Color::White ? " w - " : " b - ";
    out += square_name(pos.ep_square());
    out += " 0 1";
    return out;
}

}  // namespace tbf
