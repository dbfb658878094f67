// Board: checked construction, making moves, outcomes and FEN output.

#include "tbforge/verify/board.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "movegen.hpp"

namespace tbf::verify {
namespace {

constexpr int kMaxUnitsPerSide = 16;

int color_index(Color c) { return c == Color::White ? 0 : 1; }

std::string_view color_name(Color c) { return c == Color::White ? "white" : "black"; }

char piece_letter(Piece p) {
    switch (p) {
        case Piece::King: return 'k';
        case Piece::Queen: return 'q';
        case Piece::Rook: return 'r';
        case Piece::Bishop: return 'b';
        case Piece::Knight: return 'n';
        case Piece::Pawn: return 'p';
        case Piece::None: break;
    }
    return '?';
}

char unit_letter(const Unit& u) {
    const char c = piece_letter(u.piece);
    return u.color == Color::White ? static_cast<char>(c - 'a' + 'A') : c;
}

bool has_unit(const std::array<Unit, 64>& cells, int file, int rank, Unit wanted) {
    if (file < 0 || file > 7 || rank < 0 || rank > 7) return false;
    return cells[static_cast<std::size_t>(square_at(file, rank))] == wanted;
}

// Why an en-passant square cannot belong to this placement, or "" if it can:
// it must be the square a pawn of the side not to move just skipped.
std::string ep_problem(const std::array<Unit, 64>& cells, Color side, int ep) {
    const int skipped_rank = side == Color::White ? 5 : 2;
    const int direction = side == Color::White ? 1 : -1;  // towards the pawn's start
    const Color them = opposite(side);
    if (rank_of(ep) != skipped_rank) {
        return std::string(color_name(side)) + " to move needs one on rank " +
               std::to_string(skipped_rank + 1);
    }
    const int file = file_of(ep);
    if (!cells[static_cast<std::size_t>(ep)].empty()) return "the square is occupied";
    if (!has_unit(cells, file, skipped_rank + direction, Unit{})) {
        return "the pawn's start square " + square_name(square_at(file, skipped_rank + direction)) +
               " is occupied";
    }
    if (!has_unit(cells, file, skipped_rank - direction, Unit{Piece::Pawn, them})) {
        return "no " + std::string(color_name(them)) + " pawn on " +
               square_name(square_at(file, skipped_rank - direction));
    }
    return "";
}

}  // namespace

std::string_view variant_name(Variant v) {
    switch (v) {
        case Variant::Antichess: return "antichess";
        case Variant::AntichessFics: return "antichess-fics";
        case Variant::AntichessJoint: return "antichess-joint";
        case Variant::FourFile: return "fourfile";
    }
    return "?";
}

std::optional<Variant> variant_from_name(std::string_view name) {
    for (Variant v : kAllVariants) {
        if (variant_name(v) == name) return v;
    }
    return std::nullopt;
}

std::string_view outcome_name(Outcome o) {
    switch (o) {
        case Outcome::NotTerminal: return "not-terminal";
        case Outcome::Win: return "win";
        case Outcome::Draw: return "draw";
        case Outcome::Loss: return "loss";
    }
    return "?";
}

std::string square_name(int square) {
    if (square < 0 || square > 63) return "-";
    return {static_cast<char>('a' + file_of(square)), static_cast<char>('1' + rank_of(square))};
}

std::optional<int> square_from_name(std::string_view name) {
    if (name.size() != 2 || name[0] < 'a' || name[0] > 'h' || name[1] < '1' || name[1] > '8') {
        return std::nullopt;
    }
    return square_at(name[0] - 'a', name[1] - '1');
}

std::string to_uci(const Move& m) {
    std::string s = square_name(m.from) + square_name(m.to);
    if (m.promotion != Piece::None) s += piece_letter(m.promotion);
    return s;
}

Result<Board> make_board(Variant variant, const std::array<Unit, 64>& units, Color side_to_move,
                         int ep_square) {
    const Ruleset rules = ruleset(variant);
    Board board;
    board.variant_ = variant;
    board.rules_ = rules;
    board.side_ = side_to_move;

    std::array<int, 2> counts{};
    for (const Unit& u : units) {
        if (!u.empty()) ++counts[static_cast<std::size_t>(color_index(u.color))];
    }
    // Checked before the unit lists (16 a side) are filled.
    for (Color c : {Color::White, Color::Black}) {
        if (counts[static_cast<std::size_t>(color_index(c))] > kMaxUnitsPerSide) {
            return invalid_argument(std::string(color_name(c)) + " has " +
                                    std::to_string(counts[static_cast<std::size_t>(color_index(c))]) +
                                    " units (at most 16)");
        }
    }

    std::array<int, 2> kings{};
    std::array<int, 2> king_square{kNoSquare, kNoSquare};
    for (int sq = 0; sq < 64; ++sq) {
        const Unit u = units[static_cast<std::size_t>(sq)];
        if (u.empty()) continue;
        const int c = color_index(u.color);
        board.put(sq, u);
        if (u.piece == Piece::Pawn && (rank_of(sq) == 0 || rank_of(sq) == 7)) {
            return invalid_argument("pawn on " + square_name(sq) +
                                    " (pawns cannot stand on rank 1 or 8)");
        }
        if (rules.four_files && file_of(sq) % 2 != 0) {
            return invalid_argument("unit on " + square_name(sq) +
                                    " (Four File uses only files a, c, e, g)");
        }
        if (u.piece == Piece::King) {
            ++kings[static_cast<std::size_t>(c)];
            king_square[static_cast<std::size_t>(c)] = sq;
        }
    }
    if (board.unit_count(Color::White) + board.unit_count(Color::Black) == 0) {
        return invalid_argument("no units on the board");
    }
    if (rules.royal_king) {
        for (Color c : {Color::White, Color::Black}) {
            const auto i = static_cast<std::size_t>(color_index(c));
            if (kings[i] != 1) {
                return invalid_argument(std::string(color_name(c)) + " has " +
                                        std::to_string(kings[i]) +
                                        " kings (exactly one per side is required)");
            }
            if (rules.four_files && file_of(king_square[i]) != 4) {
                return invalid_argument(std::string(color_name(c)) + " king on " +
                                        square_name(king_square[i]) +
                                        " (Four File kings stay on the e-file)");
            }
        }
    }
    if (ep_square != kNoSquare) {
        const std::string problem = ep_square < 0 || ep_square > 63
                                        ? std::string("not a square")
                                        : ep_problem(board.cells_, side_to_move, ep_square);
        if (!problem.empty()) {
            return invalid_argument("impossible en-passant square " + square_name(ep_square) +
                                    ": " + problem);
        }
        // Without en passant the square means nothing; dropping it keeps one
        // board per position.
        if (rules.en_passant) board.ep_ = ep_square;
    }
    if (rules.royal_king && board.in_check(opposite(side_to_move))) {
        return invalid_argument("side not to move (" +
                                std::string(color_name(opposite(side_to_move))) + ") is in check");
    }
    return board;
}

std::vector<Move> Board::legal_moves() const {
    detail::MoveList list;
    detail::generate_legal(*this, list);
    return {list.begin(), list.end()};
}

std::vector<std::string> Board::legal_moves_uci() const {
    detail::MoveList list;
    detail::generate_legal(*this, list);
    std::vector<std::string> ucis;
    ucis.reserve(list.size());
    for (const Move& m : list) ucis.push_back(to_uci(m));
    std::sort(ucis.begin(), ucis.end());
    return ucis;
}

bool Board::is_capture(const Move& m) const {
    const Unit mover = unit_on(m.from);
    if (!unit_on(m.to).empty()) return true;
    return mover.piece == Piece::Pawn && m.to == ep_ && file_of(m.from) != file_of(m.to);
}

bool Board::is_conversion(const Move& m) const {
    return m.promotion != Piece::None || is_capture(m);
}

Board Board::after(const Move& m) const {
    Board next = *this;
    detail::BoardEditor::make(next, m);
    return next;
}

std::optional<Board> Board::after_uci(std::string_view uci) const {
    detail::MoveList list;
    detail::generate_legal(*this, list);
    for (const Move& m : list) {
        if (to_uci(m) == uci) return after(m);
    }
    return std::nullopt;
}

Outcome Board::outcome() const {
    const int ours = unit_count(side_);
    const int theirs = unit_count(opposite(side_));
    // A side with no units has won.
    if (ours == 0) return Outcome::Win;
    if (theirs == 0) return Outcome::Loss;

    detail::MoveList list;
    detail::generate_legal(*this, list);
    if (!list.empty()) return Outcome::NotTerminal;

    const Ruleset rules = ruleset(variant_);
    if (rules.royal_king && in_check(side_)) return Outcome::Loss;  // checkmate
    switch (rules.stalemate) {
        case StalemateRule::SideToMoveWins: return Outcome::Win;
        case StalemateRule::FewerUnitsWins:
            if (ours < theirs) return Outcome::Win;
            return ours > theirs ? Outcome::Loss : Outcome::Draw;
        case StalemateRule::FewerUnitsWinsOnly: return ours < theirs ? Outcome::Win : Outcome::Draw;
        case StalemateRule::Draw: return Outcome::Draw;
    }
    return Outcome::Draw;
}

std::string Board::fen() const {
    std::string s;
    for (int rank = 7; rank >= 0; --rank) {
        int empty = 0;
        for (int file = 0; file < 8; ++file) {
            const Unit u = unit_on(square_at(file, rank));
            if (u.empty()) {
                ++empty;
                continue;
            }
            if (empty > 0) s += static_cast<char>('0' + empty);
            empty = 0;
            s += unit_letter(u);
        }
        if (empty > 0) s += static_cast<char>('0' + empty);
        if (rank > 0) s += '/';
    }
    s += side_ == Color::White ? " w - " : " b - ";
    s += square_name(ep_);
    s += " 0 1";
    return s;
}

}  // namespace tbf::verify
