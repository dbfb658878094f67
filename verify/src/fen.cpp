// FEN reading: the syntax is checked here, the position itself by make_board.
// Every error is one line that names the offending field.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/verify/board.hpp"

namespace tbf::verify {
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

bool unit_from_letter(char c, Unit& out) {
    const bool white = c >= 'A' && c <= 'Z';
    const char lower = white ? static_cast<char>(c - 'A' + 'a') : c;
    Piece p = Piece::None;
    switch (lower) {
        case 'k': p = Piece::King; break;
        case 'q': p = Piece::Queen; break;
        case 'r': p = Piece::Rook; break;
        case 'b': p = Piece::Bishop; break;
        case 'n': p = Piece::Knight; break;
        case 'p': p = Piece::Pawn; break;
        default: return false;
    }
    out = Unit{p, white ? Color::White : Color::Black};
    return true;
}

bool is_number(std::string_view s) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

// Fills `units` from the placement field; returns an error or "".
std::string parse_placement(std::string_view field, std::array<Unit, 64>& units) {
    int rank = 7;
    int file = 0;
    for (char c : field) {
        if (c == '/') {
            if (file != 8) {
                return "rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
                       " squares (expected 8)";
            }
            if (rank == 0) return "more than 8 ranks";
            --rank;
            file = 0;
            continue;
        }
        if (c >= '1' && c <= '8') {
            file += c - '0';
        } else {
            Unit u;
            if (!unit_from_letter(c, u)) {
                return "bad unit letter '" + std::string(1, c) + "' in rank " +
                       std::to_string(rank + 1);
            }
            // A rank that runs long is reported once it ends.
            if (file < 8) units[static_cast<std::size_t>(square_at(file, rank))] = u;
            ++file;
        }
    }
    if (file != 8) {
        return "rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
               " squares (expected 8)";
    }
    if (rank != 0) return "only " + std::to_string(8 - rank) + " ranks (expected 8)";
    return "";
}

bool valid_castling(std::string_view field) {
    if (field == "-") return true;
    for (char c : field) {
        const bool standard = c == 'K' || c == 'Q' || c == 'k' || c == 'q';
        const bool shredder = (c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h');
        if (!standard && !shredder) return false;
    }
    return true;
}

}  // namespace

Result<Board> parse_fen(Variant variant, std::string_view fen) {
    const auto fail = [&](const std::string& why) -> Result<Board> {
        return invalid_argument("bad FEN \"" + std::string(fen) + "\": " + why);
    };

    const std::vector<std::string_view> fields = split_fields(fen);
    if (fields.size() < 4 || fields.size() > 6) {
        return fail(std::to_string(fields.size()) + " fields (expected 4 to 6)");
    }

    std::array<Unit, 64> units{};
    if (const std::string error = parse_placement(fields[0], units); !error.empty()) {
        return fail(error);
    }

    Color side = Color::White;
    if (fields[1] == "b") {
        side = Color::Black;
    } else if (fields[1] != "w") {
        return fail("side to move \"" + std::string(fields[1]) + "\" (expected w or b)");
    }

    // Castling rights have no meaning in these variants; only their syntax is checked.
    if (!valid_castling(fields[2])) {
        return fail("castling field \"" + std::string(fields[2]) + "\"");
    }

    int ep = kNoSquare;
    if (fields[3] != "-") {
        const std::optional<int> square = square_from_name(fields[3]);
        if (!square) return fail("en-passant field \"" + std::string(fields[3]) + "\"");
        ep = *square;
    }

    if (fields.size() >= 5 && !is_number(fields[4])) {
        return fail("halfmove clock \"" + std::string(fields[4]) + "\"");
    }
    // The fullmove number starts at 1.
    if (fields.size() == 6 &&
        (!is_number(fields[5]) || fields[5].find_first_not_of('0') == std::string_view::npos)) {
        return fail("fullmove number \"" + std::string(fields[5]) + "\"");
    }

    Result<Board> checked = make_board(variant, units, side, ep);
    if (!checked) return fail(checked.status().message());
    return checked;
}

}  // namespace tbf::verify
