// Move generation and attacks, written straight from docs/ARCHITECTURE.md section 3:
// loop over the squares, walk each unit's direction table, then apply the
// variant's filters (compulsory captures, or royal-king legality). No
// bitboards on purpose.

#include "movegen.hpp"

namespace tbf::verify {
namespace {

struct Step {
    int file;
    int rank;
};

constexpr Step kKnightSteps[] = {{1, 2},   {2, 1},   {2, -1}, {1, -2},
                                 {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
constexpr Step kKingSteps[] = {{1, 0},  {1, 1},   {0, 1},  {-1, 1},
                               {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
constexpr Step kRookSteps[] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
constexpr Step kBishopSteps[] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};

constexpr Piece kLosingPromotions[] = {Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight,
                                       Piece::King};
constexpr Piece kChessPromotions[] = {Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight};

bool on_board(int file, int rank) { return file >= 0 && file < 8 && rank >= 0 && rank < 8; }

// Four File: a move may end only on files a, c, e, g; the others are passed over.
bool landable(const Ruleset& rules, int file) { return !rules.four_files || file % 2 == 0; }

Move make_move(int from, int to, Piece promotion = Piece::None) {
    return Move{static_cast<std::int8_t>(from), static_cast<std::int8_t>(to), promotion};
}

class Generator {
public:
    Generator(const Board& board, detail::MoveList& moves)
        : board_(board),
          moves_(moves),
          rules_(ruleset(board.variant())),
          us_(board.side_to_move()) {}

    void pseudo_legal() {
        for (int from = 0; from < 64; ++from) {
            const Unit u = board_.unit_on(from);
            if (u.empty() || u.color != us_) continue;
            switch (u.piece) {
                case Piece::Pawn: pawn(from); break;
                case Piece::Knight: leaper(from, kKnightSteps); break;
                case Piece::King: leaper(from, kKingSteps); break;
                case Piece::Bishop: slider(from, kBishopSteps); break;
                case Piece::Rook: slider(from, kRookSteps); break;
                case Piece::Queen:
                    slider(from, kRookSteps);
                    slider(from, kBishopSteps);
                    break;
                case Piece::None: break;
            }
        }
    }

private:
    // A target square is usable if it can be landed on and holds no own unit.
    bool can_land(int file, int rank) const {
        if (!on_board(file, rank) || !landable(rules_, file)) return false;
        const Unit target = board_.unit_on(square_at(file, rank));
        return target.empty() || target.color != us_;
    }

    template <std::size_t N>
    void leaper(int from, const Step (&steps)[N]) {
        for (const Step& s : steps) {
            const int file = file_of(from) + s.file;
            const int rank = rank_of(from) + s.rank;
            if (can_land(file, rank)) moves_.push(make_move(from, square_at(file, rank)));
        }
    }

    template <std::size_t N>
    void slider(int from, const Step (&steps)[N]) {
        for (const Step& s : steps) {
            int file = file_of(from) + s.file;
            int rank = rank_of(from) + s.rank;
            for (; on_board(file, rank); file += s.file, rank += s.rank) {
                // Four File's b/d/f/h squares are always empty: pass over them.
                if (!landable(rules_, file)) continue;
                const int to = square_at(file, rank);
                const Unit target = board_.unit_on(to);
                if (!target.empty()) {
                    if (target.color != us_) moves_.push(make_move(from, to));
                    break;
                }
                moves_.push(make_move(from, to));
            }
        }
    }

    void pawn_move(int from, int to) {
        const int last_rank = us_ == Color::White ? 7 : 0;
        if (rank_of(to) != last_rank) {
            moves_.push(make_move(from, to));
        } else if (rules_.promote_to_king) {
            for (Piece p : kLosingPromotions) moves_.push(make_move(from, to, p));
        } else {
            for (Piece p : kChessPromotions) moves_.push(make_move(from, to, p));
        }
    }

    void pawn(int from) {
        const int forward = us_ == Color::White ? 1 : -1;
        const int start_rank = us_ == Color::White ? 1 : 6;
        const int file = file_of(from);
        const int rank = rank_of(from);

        // Pushes: one square, or two from the start rank over an empty square.
        const int one = square_at(file, rank + forward);
        if (board_.unit_on(one).empty()) {
            pawn_move(from, one);
            if (rank == start_rank) {
                const int two = square_at(file, rank + 2 * forward);
                if (board_.unit_on(two).empty()) moves_.push(make_move(from, two));
            }
        }

        if (!rules_.pawns_capture) return;
        for (int side : {-1, 1}) {
            if (!on_board(file + side, rank + forward)) continue;
            const int to = square_at(file + side, rank + forward);
            const Unit target = board_.unit_on(to);
            if (!target.empty() && target.color != us_) {
                pawn_move(from, to);
            } else if (target.empty() && rules_.en_passant && to == board_.ep_square()) {
                moves_.push(make_move(from, to));
            }
        }
    }

    const Board& board_;
    detail::MoveList& moves_;
    Ruleset rules_;
    Color us_;
};

}  // namespace

// Attacks use the same tables, walked outwards from the attacked square: a
// unit that could move to it along a step, or slide to it, attacks it.
bool Board::is_attacked(int square, Color by) const {
    const auto holds = [&](int file, int rank, Piece piece) {
        return on_board(file, rank) && unit_on(square_at(file, rank)) == Unit{piece, by};
    };
    const int file = file_of(square);
    const int rank = rank_of(square);
    for (const Step& s : kKnightSteps) {
        if (holds(file + s.file, rank + s.rank, Piece::Knight)) return true;
    }
    for (const Step& s : kKingSteps) {
        if (holds(file + s.file, rank + s.rank, Piece::King)) return true;
    }
    const auto slider_on_line = [&](const Step& s, Piece piece) {
        for (int f = file + s.file, r = rank + s.rank; on_board(f, r); f += s.file, r += s.rank) {
            const Unit u = unit_on(square_at(f, r));
            if (u.empty()) continue;
            return u.color == by && (u.piece == piece || u.piece == Piece::Queen);
        }
        return false;
    };
    for (const Step& s : kRookSteps) {
        if (slider_on_line(s, Piece::Rook)) return true;
    }
    for (const Step& s : kBishopSteps) {
        if (slider_on_line(s, Piece::Bishop)) return true;
    }
    if (ruleset(variant_).pawns_capture) {
        // A pawn attacks diagonally forward, so an attacker stands one rank behind.
        const int behind = by == Color::White ? -1 : 1;
        if (holds(file - 1, rank + behind, Piece::Pawn)) return true;
        if (holds(file + 1, rank + behind, Piece::Pawn)) return true;
    }
    return false;
}

bool Board::in_check(Color c) const {
    if (!ruleset(variant_).royal_king) return false;
    for (int sq = 0; sq < 64; ++sq) {
        if (unit_on(sq) == Unit{Piece::King, c}) return is_attacked(sq, opposite(c));
    }
    return false;
}

namespace detail {

void generate_legal(const Board& board, MoveList& moves) {
    moves.clear();
    // A side without units has won: nobody moves any more.
    if (board.unit_count(Color::White) == 0 || board.unit_count(Color::Black) == 0) return;

    Generator(board, moves).pseudo_legal();
    const Ruleset rules = ruleset(board.variant());

    if (rules.captures_compulsory) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < moves.size(); ++i) {
            if (board.is_capture(moves[i])) moves[kept++] = moves[i];
        }
        // No capture at all: every move stays legal.
        if (kept > 0) moves.truncate(kept);
    }

    if (rules.royal_king) {
        const Color us = board.side_to_move();
        std::size_t kept = 0;
        for (std::size_t i = 0; i < moves.size(); ++i) {
            if (!board.after(moves[i]).in_check(us)) moves[kept++] = moves[i];
        }
        moves.truncate(kept);
    }
}

}  // namespace detail
}  // namespace tbf::verify
